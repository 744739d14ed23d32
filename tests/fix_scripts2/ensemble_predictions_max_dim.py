# expect: dim-out-of-range
# change: here
import torch
import torch.nn as nn

torch.manual_seed(42)

# average the class probabilities of a 3-model ensemble
models = [nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4)).eval() for _ in range(3)]
x = torch.randn(10, 6)

with torch.no_grad():
    probs = [m(x).softmax(dim=-1) for m in models]  # each (10, 4)
avg = torch.stack(probs).mean(dim=0)  # (10, 4)
confidence, pred = avg.max(dim=2)

assert pred.shape == (10,) and confidence.shape == (10,)
assert torch.equal(pred, avg.argmax(dim=1))
assert torch.allclose(avg.sum(dim=1), torch.ones(10), atol=1e-5)
assert torch.all((confidence >= 0.25) & (confidence <= 1.0))
