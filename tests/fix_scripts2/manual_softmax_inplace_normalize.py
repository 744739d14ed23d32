# expect: inplace-modified-for-grad
# change: elsewhere
import torch
import torch.nn as nn

torch.manual_seed(6)


class SoftmaxClassifier(nn.Module):
    def __init__(self, d_in, n_cls):
        super().__init__()
        self.fc = nn.Linear(d_in, n_cls)

    def forward(self, x):
        logits = self.fc(x)
        e = torch.exp(logits - logits.max(dim=1, keepdim=True).values.detach())
        e /= e.sum(dim=1, keepdim=True)
        return e


X = torch.randn(60, 4)
y = (X[:, 0] > 0).long() + (X[:, 1] > 0).long()  # 3 classes
model = SoftmaxClassifier(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=1.0)
losses = []
for step in range(50):
    probs = model(X)
    loss = -torch.log(probs[torch.arange(len(y)), y] + 1e-9).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())

assert torch.allclose(probs.sum(dim=1), torch.ones(60), atol=1e-5)
assert losses[-1] < 0.75 * losses[0], (losses[0], losses[-1])
