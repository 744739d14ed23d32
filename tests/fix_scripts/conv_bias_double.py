# expect: input-weight-type-mismatch
import numpy as np
import torch
import torch.nn as nn

model = nn.Sequential(
    nn.Conv2d(3, 16, kernel_size=3, stride=2),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(16, 5),
)
model.eval()

photo = np.random.default_rng(7).random((32, 32, 3))        # H, W, C in [0, 1), float64
x = torch.from_numpy(photo).permute(2, 0, 1).unsqueeze(0)
with torch.no_grad():
    scores = model(x)

assert scores.shape == (1, 5)
assert scores.dtype == torch.float32
