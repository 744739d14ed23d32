# expect: backward-non-scalar-output
# change: here
import torch
import torch.nn as nn

torch.manual_seed(18)

# importance-weighted regression: recent samples count more
X = torch.linspace(-2, 2, 50).unsqueeze(1)
y = 3 * X.squeeze(1) - 1 + 0.05 * torch.randn(50)
weights = torch.linspace(0.5, 1.5, 50)

model = nn.Linear(1, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
history = []
for step in range(100):
    pred = model(X).squeeze(1)
    per_sample = weights * (pred - y) ** 2
    opt.zero_grad()
    per_sample.backward()
    opt.step()
    history.append(per_sample.mean().item())

assert history[-1] < 0.01 * history[0], (history[0], history[-1])
assert abs(model.weight.item() - 3.0) < 0.1
assert abs(model.bias.item() + 1.0) < 0.1
