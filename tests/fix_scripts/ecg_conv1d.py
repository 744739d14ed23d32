# expect: conv-channel-mismatch
import torch
import torch.nn as nn


class ECGNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(1, 8, kernel_size=5, padding=2)
        self.conv2 = nn.Conv1d(8, 8, kernel_size=5, padding=2)
        self.fc = nn.Linear(8, 2)

    def forward(self, x):            # x: (batch, samples)
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.fc(x.mean(dim=-1))


torch.manual_seed(0)
beats = torch.randn(16, 180)
out = ECGNet()(beats)

assert out.shape == (16, 2)
