# expect: conv-input-dim
import numpy as np
import torch
import torch.nn as nn


class DigitNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 14 * 14, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.conv(x)))
        x = torch.flatten(x, 1)
        return self.fc(x)


torch.manual_seed(0)
net = DigitNet().eval()
digit = np.random.default_rng(0).random((28, 28), dtype=np.float32)   # one grayscale image
with torch.no_grad():
    logits = net(torch.from_numpy(digit))

assert logits.shape == (1, 10)
