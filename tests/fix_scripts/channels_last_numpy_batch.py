# expect: conv-channel-mismatch
import numpy as np
import torch
import torch.nn as nn


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


rng = np.random.default_rng(0)
images = rng.random((6, 32, 32, 3), dtype=np.float32)   # as loaded with PIL / cv2: N, H, W, C
labels = torch.randint(0, 10, (6,))

torch.manual_seed(0)
model = SmallCNN()
logits = model(torch.from_numpy(images))
loss = nn.functional.cross_entropy(logits, labels)
loss.backward()

assert logits.shape == (6, 10)
assert model.features[0].weight.grad is not None
