# expect: loss-batch-size-mismatch
# change: here
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(23)

# toy transliteration decoder with teacher forcing: predict target token t from source token t
V, B, T = 7, 4, 6


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 16)
        self.gru = nn.GRU(16, 32, batch_first=True)
        self.out = nn.Linear(32, V)

    def forward(self, src):
        h, _ = self.gru(self.emb(src))
        return self.out(h)  # (B, T, V)


src = torch.randint(0, V, (B, T))
tgt = (src + 3) % V
model = Decoder()


def token_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, V), targets)


logits = model(src)
manual = -logits.log_softmax(-1).gather(-1, tgt.unsqueeze(-1)).mean()
assert torch.allclose(token_loss(logits, tgt), manual, atol=1e-5)

opt = torch.optim.Adam(model.parameters(), lr=0.02)
for step in range(80):
    loss = token_loss(model(src), tgt)
    opt.zero_grad()
    loss.backward()
    opt.step()
assert torch.equal(model(src).argmax(-1), tgt)
