# expect: cross-entropy-target-dtype
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
X = rng.normal(size=(120, 4)).astype(np.float32)
y = (X[:, 0] + X[:, 1] > 0).astype(np.float32)        # 0.0 / 1.0 class labels

ds = TensorDataset(torch.from_numpy(X), torch.from_numpy(y))
loader = DataLoader(ds, batch_size=40, shuffle=True, num_workers=0)

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)

epoch_losses = []
for epoch in range(15):
    total = 0.0
    for xb, yb in loader:
        logits = model(xb)
        loss = criterion(logits, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    epoch_losses.append(total)

assert epoch_losses[-1] < epoch_losses[0]
