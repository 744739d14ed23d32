# expect: backward-no-grad-fn
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(50, 4)
y = x.sum(dim=1, keepdim=True)


def evaluate(m):
    with torch.no_grad():
        return nn.functional.mse_loss(m(x), y).item()


def step(m):
    with torch.no_grad():
        pred = m(x)
    loss = nn.functional.mse_loss(pred, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


start = evaluate(model)
for _ in range(30):
    step(model)

assert evaluate(model) < start
