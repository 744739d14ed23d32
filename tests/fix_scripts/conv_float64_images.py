# expect: expected-scalar-type-mismatch
import numpy as np
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        x = self.conv(x)
        return torch.relu(self.bn(x))


scans = np.random.default_rng(0).random((4, 1, 16, 16))      # float64, as numpy makes them
batch = torch.from_numpy(scans)
enc = Encoder()
feat = enc(batch)

assert feat.shape == (4, 8, 16, 16)
assert feat.dtype == torch.float32
