# expect: leaf-inplace-requires-grad
import math

import torch
import torch.nn as nn


class NoisyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        bound = 1 / math.sqrt(in_features)
        self.weight.uniform_(-bound, bound)
        self.bias.zero_()

    def forward(self, x):
        return x @ self.weight.t() + self.bias


torch.manual_seed(0)
layer = NoisyLinear(10, 4)
out = layer(torch.randn(3, 10))
out.sum().backward()

assert out.shape == (3, 4)
assert layer.weight.abs().max() <= 1 / math.sqrt(10)
assert layer.weight.grad is not None and layer.weight.requires_grad
