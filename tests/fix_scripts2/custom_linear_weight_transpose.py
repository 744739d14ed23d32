# expect: matmul-shape-mismatch
# change: here
import math
import torch
import torch.nn as nn

torch.manual_seed(1)


class MyLinear(nn.Module):
    """Drop-in replacement for nn.Linear; weight is stored as [out, in] like PyTorch's."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))

    def forward(self, x):
        return x @ self.weight + self.bias


layer = MyLinear(20, 6)
ref = nn.Linear(20, 6)
with torch.no_grad():
    ref.weight.copy_(layer.weight)
    ref.bias.copy_(layer.bias)

x = torch.randn(4, 20)
out = layer(x)

assert out.shape == (4, 6)
# must compute exactly what nn.Linear computes with the same weights
assert torch.allclose(out, ref(x), atol=1e-5)
out.sum().backward()
assert layer.weight.grad.shape == (6, 20)
assert torch.allclose(layer.weight.grad, x.sum(0).expand(6, 20), atol=1e-5)
