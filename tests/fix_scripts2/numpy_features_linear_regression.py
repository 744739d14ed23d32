# expect: matmul-dtype-mismatch
# change: elsewhere
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(5)
rng = np.random.default_rng(5)

# features arrive as a float64 numpy array (e.g. from pandas)
features = rng.normal(size=(200, 3))
targets = features @ np.array([1.5, -2.0, 0.5]) + 0.3

X = torch.from_numpy(features)
y = torch.from_numpy(targets).float().unsqueeze(1)

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(200):
    opt.zero_grad()
    pred = model(X)
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    opt.step()

assert model.weight.dtype == torch.float32
assert torch.allclose(model.weight.detach(), torch.tensor([[1.5, -2.0, 0.5]]), atol=0.05)
assert abs(model.bias.item() - 0.3) < 0.05
