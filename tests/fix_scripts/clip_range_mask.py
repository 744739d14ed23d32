# expect: bool-value-ambiguous
import torch

torch.manual_seed(0)
depth = torch.rand(4, 8, 8) * 12.0        # metres
near, far = 0.5, 10.0

valid = depth > near and depth < far
mean_depth = depth[valid].mean()

assert valid.shape == depth.shape
assert valid.dtype == torch.bool
assert near < mean_depth.item() < far
