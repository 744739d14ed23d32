# expect: loss-batch-size-mismatch
import torch
import torch.nn as nn

VOCAB = 30


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 16)
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.out = nn.Linear(32, VOCAB)

    def forward(self, ids):
        h, _ = self.lstm(self.emb(ids))
        return self.out(h)


torch.manual_seed(0)
lm = TinyLM()
opt = torch.optim.Adam(lm.parameters(), lr=1e-2)
seq = torch.randint(0, VOCAB, (4, 13))
inputs, targets = seq[:, :-1], seq[:, 1:]
first = None
for step in range(15):
    logits = lm(inputs)                        # (4, 12, VOCAB)
    loss = nn.functional.cross_entropy(logits.view(-1, VOCAB), targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
    first = loss.item() if first is None else first

assert loss.item() < first
