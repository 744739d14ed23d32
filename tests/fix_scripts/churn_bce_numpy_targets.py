# expect: loss-dtype-found-expected
import numpy as np
import torch
import torch.nn as nn


class ChurnModel(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.linear = nn.Linear(n_features, 1)

    def forward(self, x):
        return torch.sigmoid(self.linear(x)).squeeze(-1)


def train_epoch(model, opt, x, y):
    pred = model(x)
    loss = nn.functional.binary_cross_entropy(pred, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


rng = np.random.default_rng(42)
usage = rng.uniform(-1, 1, size=(200, 3)).astype(np.float32)
churned = (usage @ np.array([3.0, -1.0, 2.0]) > 0) * 1.0       # float64 0/1 labels

inputs = torch.from_numpy(usage)
targets = torch.from_numpy(churned)

torch.manual_seed(0)
model = ChurnModel(3)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
losses = [train_epoch(model, opt, inputs, targets) for _ in range(40)]

assert losses[-1] < losses[0] / 2
