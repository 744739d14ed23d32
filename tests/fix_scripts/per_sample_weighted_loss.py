# expect: backward-non-scalar-output
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(5, 3)
criterion = nn.CrossEntropyLoss(reduction="none")
opt = torch.optim.SGD(model.parameters(), lr=0.5)

x = torch.randn(40, 5)
y = torch.randint(0, 3, (40,))
sample_weight = torch.where(y == 0, 2.0, 1.0)   # class 0 is rare: count it twice

before = criterion(model(x), y).mean().item()
for step in range(25):
    loss = criterion(model(x), y) * sample_weight
    opt.zero_grad()
    loss.backward()
    opt.step()
after = criterion(model(x), y).mean().item()

assert model.weight.grad is not None
assert after < before
