# expect: backward-graph-freed
# change: elsewhere
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(9)

# character-level model trained with truncated BPTT over one long stream
vocab, hidden, seq_len = 12, 32, 20
emb = nn.Embedding(vocab, 16)
rnn = nn.GRU(16, hidden, batch_first=True)
head = nn.Linear(hidden, vocab)
params = list(emb.parameters()) + list(rnn.parameters()) + list(head.parameters())
opt = torch.optim.Adam(params, lr=1e-2)

stream = torch.arange(241) % vocab  # repeating pattern 0, 1, ..., 11, 0, 1, ...
losses = []
for epoch in range(4):
    h = torch.zeros(1, 1, hidden)
    for start in range(0, len(stream) - 1, seq_len):
        x = stream[start : start + seq_len].unsqueeze(0)
        y = stream[start + 1 : start + seq_len + 1].unsqueeze(0)
        out, h = rnn(emb(x), h)
        loss = F.cross_entropy(head(out).view(-1, vocab), y.view(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

with torch.no_grad():
    out, _ = rnn(emb(stream[:24].unsqueeze(0)))
    pred = head(out).argmax(-1).squeeze(0)
assert torch.equal(pred[4:], stream[5:25]), pred
assert losses[-1] < 0.1 * losses[0], (losses[0], losses[-1])
