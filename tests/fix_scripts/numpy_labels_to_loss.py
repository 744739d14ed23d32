# expect: argument-must-be-tensor
import numpy as np
import torch
import torch.nn.functional as F

torch.manual_seed(0)
layer = torch.nn.Linear(4, 3)
batch = torch.randn(10, 4)
gold = np.array([0, 2, 1, 1, 0, 2, 2, 1, 0, 0])

logits = layer(batch)
loss = F.cross_entropy(logits, gold)
loss.backward()

assert loss.dim() == 0
assert layer.weight.grad is not None
