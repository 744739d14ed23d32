# expect: leaf-inplace-requires-grad
# change: here
import torch

torch.manual_seed(21)

# linear regression with hand-written gradient descent
X = torch.randn(100, 3)
true_w = torch.tensor([2.0, -1.0, 0.5])
y = X @ true_w + 0.7

w = torch.zeros(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.1
for step in range(200):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    w -= lr * w.grad
    b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()

assert w.is_leaf and w.requires_grad
assert torch.allclose(w.detach(), true_w, atol=1e-3)
assert abs(b.item() - 0.7) < 1e-3
