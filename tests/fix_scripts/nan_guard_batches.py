# expect: bool-value-ambiguous
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(48, 3)
y = x[:, :1] * 2 - x[:, 1:2]
loader = DataLoader(TensorDataset(x, y), batch_size=12, num_workers=0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)

skipped, steps = 0, 0
for epoch in range(5):
    for xb, yb in loader:
        out = model(xb)
        if torch.isnan(out):        # guard against a diverging run
            skipped += 1
            continue
        loss = nn.functional.mse_loss(out, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1

assert skipped == 0
assert steps == 20
