# expect: item-multi-element
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(64, 6)
y = (x[:, 0] > 0).long()
val_loader = DataLoader(TensorDataset(x, y), batch_size=16, num_workers=0)
model = nn.Linear(6, 2)


def accuracy(model, loader):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for xb, yb in loader:
            pred = model(xb).argmax(dim=1)
            correct += (pred == yb).item()
            total += yb.size(0)
    return correct / total


acc = accuracy(model, val_loader)
assert isinstance(acc, float)
assert 0.0 <= acc <= 1.0
