# expect: requires-grad-non-float
import torch

torch.manual_seed(0)
x = torch.randn(100, 2)
y = x @ torch.tensor([2.0, -3.0]) + 1.0

w = torch.tensor([0, 0], requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for step in range(200):
    pred = x @ w + b
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
        w.grad.zero_()
        b.grad.zero_()

assert torch.allclose(w, torch.tensor([2.0, -3.0]), atol=1e-2)
assert torch.allclose(b, torch.tensor([1.0]), atol=1e-2)
