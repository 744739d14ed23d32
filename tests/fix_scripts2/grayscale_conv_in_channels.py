# expect: conv-channel-mismatch
# change: elsewhere
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(10)


class DigitNet(nn.Module):
    """Small CNN for 28x28 grayscale digits."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        return self.fc(x.flatten(1))


images = torch.rand(8, 1, 28, 28)
labels = torch.arange(8) % 10
model = DigitNet()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
losses = []
for step in range(20):
    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())

assert logits.shape == (8, 10)
assert losses[-1] < 0.5 * losses[0], (losses[0], losses[-1])
