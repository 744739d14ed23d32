# expect: bce-target-size-mismatch
# change: elsewhere
import torch
import torch.nn as nn

torch.manual_seed(24)


class SentimentHead(nn.Module):
    """Binary sentiment classifier on top of pooled sentence embeddings."""

    def __init__(self, d=32):
        super().__init__()
        self.hidden = nn.Linear(d, 32)
        self.classifier = nn.Linear(32, 2)

    def forward(self, x):
        return self.classifier(torch.relu(self.hidden(x)))


direction = torch.randn(32)
sent_emb = torch.randn(64, 32)
labels = (sent_emb @ direction > 0).float().unsqueeze(1)  # (64, 1), 1 = positive

model = SentimentHead()
criterion = nn.BCEWithLogitsLoss()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(100):
    logits = model(sent_emb)
    loss = criterion(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()

probs = torch.sigmoid(model(sent_emb))
assert probs.shape == (64, 1)
accuracy = ((probs > 0.5).float() == labels).float().mean().item()
assert accuracy > 0.95, accuracy
