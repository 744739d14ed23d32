# expect: backward-graph-freed
import torch
import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self, vocab=20, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, 16)
        self.rnn = nn.GRU(16, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, h=None):
        out, h = self.rnn(self.embed(x), h)
        return self.head(out), h


torch.manual_seed(0)
text = torch.randint(0, 20, (4, 201))
model = CharRNN()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
hidden = None
losses = []
for epoch in range(3):
    for start in range(0, 200, 25):
        inp = text[:, start:start + 25]
        tgt = text[:, start + 1:start + 26]
        logits, hidden = model(inp, hidden)
        loss = nn.functional.cross_entropy(logits.reshape(-1, 20), tgt.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

assert len(losses) == 24
assert sum(losses[-8:]) < sum(losses[:8])
