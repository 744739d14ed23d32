# expect: leaf-inplace-requires-grad
import torch

torch.manual_seed(0)
X = torch.randn(64, 3)
true_w = torch.tensor([[0.5], [-1.0], [2.0]])
Y = X @ true_w

W = torch.randn(3, 1, requires_grad=True)
lr = 0.1
for epoch in range(100):
    loss = ((X @ W - Y) ** 2).mean()
    loss.backward()
    W -= lr * W.grad
    W.grad.zero_()

assert torch.allclose(W, true_w, atol=1e-2)
