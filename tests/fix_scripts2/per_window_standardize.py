# expect: broadcast-size-mismatch
# change: here
import torch
import torch.nn as nn

torch.manual_seed(41)

# 16 sensor windows of 24 steps each, with very different offsets and scales
scales = torch.rand(16, 1) * 10 + 0.5
offsets = torch.randn(16, 1) * 100
windows = torch.randn(16, 24) * scales + offsets

# z-score every window on its own before handing it to the forecaster
normed = (windows - windows.mean(dim=1)) / windows.std(dim=1)

forecaster = nn.Linear(24, 1)
with torch.no_grad():
    pred = forecaster(normed)

assert normed.shape == (16, 24)
assert torch.allclose(normed.mean(dim=1), torch.zeros(16), atol=1e-4)
assert torch.allclose(normed.std(dim=1), torch.ones(16), atol=1e-4)
assert pred.shape == (16, 1) and torch.isfinite(pred).all()
