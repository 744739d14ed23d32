# expect: optimizer-non-leaf-tensor
# change: elsewhere
import torch
import torch.nn.functional as F

torch.manual_seed(30)

# spam filter: logistic regression on 5 hand-crafted features
X = torch.randn(200, 5)
true_w = torch.tensor([[2.0], [-1.0], [0.0], [1.5], [0.5]])
y = (X @ true_w > 0).float()

w = torch.randn(5, 1, requires_grad=True) * 0.01
b = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.5)
w_init = w.detach().clone()

for epoch in range(100):
    logits = X @ w + b
    loss = F.binary_cross_entropy_with_logits(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()

accuracy = ((X @ w + b > 0).float() == y).float().mean().item()
assert not torch.equal(w.detach(), w_init), "weights must be trained"
assert accuracy > 0.95, accuracy
