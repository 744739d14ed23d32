# expect: cross-entropy-multi-target
# change: elsewhere
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(27)
rng = np.random.default_rng(27)

# iris-style table: 4 feature columns followed by the class id column
centers = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.5, 2.0]])
cls = rng.integers(0, 3, size=90)
table = np.hstack([centers[cls] + 0.2 * rng.normal(size=(90, 4)), cls[:, None]])

features = torch.tensor(table[:, :-1], dtype=torch.float32)
targets = torch.tensor(table[:, -1:], dtype=torch.long)
loader = DataLoader(TensorDataset(features, targets), batch_size=30, shuffle=True)

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
criterion = nn.CrossEntropyLoss()
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(30):
    for xb, yb in loader:
        loss = criterion(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()

preds = model(features).argmax(dim=1)
assert preds.shape == (90,)
assert (preds == torch.from_numpy(cls)).float().mean() > 0.9
