# expect: bce-target-size-mismatch
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class FraudDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)


torch.manual_seed(0)
x = torch.randn(96, 8)
y = (x[:, :2].sum(dim=1) > 0).float()
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True, num_workers=0)
model = FraudDetector()
criterion = nn.BCEWithLogitsLoss()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

losses = []
for epoch in range(10):
    for xb, yb in loader:
        logits = model(xb)
        loss = criterion(logits, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

assert sum(losses[-3:]) < sum(losses[:3])
