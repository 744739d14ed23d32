# expect: scalar-conversion-multi-element
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(32, 4)
y = x @ torch.tensor([[1.0], [2.0], [-1.0], [0.5]])
loss_fn = nn.L1Loss(reduction="none")

log = []
for epoch in range(20):
    per_sample = loss_fn(model(x), y)
    loss = per_sample.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    log.append(float(per_sample))

assert len(log) == 20
assert all(isinstance(v, float) for v in log)
assert log[-1] < log[0]
