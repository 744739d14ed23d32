# expect: matmul-dtype-mismatch
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class CSVRows(Dataset):
    def __init__(self):
        rng = np.random.default_rng(3)
        self.x = rng.normal(size=(50, 6))
        self.y = (self.x.sum(axis=1) > 0).astype(np.int64)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return torch.tensor(self.x[i]), torch.tensor(self.y[i])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(6, 12)
        self.out = nn.Linear(12, 2)

    def forward(self, x):
        h = torch.relu(self.hidden(x))
        return self.out(h)


torch.manual_seed(0)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for xb, yb in DataLoader(CSVRows(), batch_size=10, num_workers=0):
    loss = nn.functional.cross_entropy(net(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()

assert net.hidden.weight.grad is not None
assert net.hidden.weight.dtype == torch.float32
