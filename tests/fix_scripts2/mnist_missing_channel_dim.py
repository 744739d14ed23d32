# expect: conv-channel-mismatch
# change: elsewhere
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(11)
rng = np.random.default_rng(11)

# 64 grayscale 28x28 images stored as an (N, H, W) array
np_images = rng.random((64, 28, 28), dtype=np.float32)
np_labels = rng.integers(0, 10, size=64)

images = torch.from_numpy(np_images)
labels = torch.from_numpy(np_labels).long()
loader = DataLoader(TensorDataset(images, labels), batch_size=16, shuffle=False)

model = nn.Sequential(
    nn.Conv2d(1, 8, kernel_size=5),
    nn.ReLU(),
    nn.MaxPool2d(4),
    nn.Flatten(),
    nn.Linear(8 * 6 * 6, 10),
)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
epoch_losses = []
for epoch in range(25):
    total = 0.0
    for x, y in loader:
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    epoch_losses.append(total / len(loader))

assert logits.shape == (16, 10)
assert epoch_losses[-1] < 0.5 * epoch_losses[0], epoch_losses
