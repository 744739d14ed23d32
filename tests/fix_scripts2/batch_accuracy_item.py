# expect: item-multi-element
# change: here
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(28)


def evaluate(model, loader):
    model.eval()
    accs = []
    with torch.no_grad():
        for x, y in loader:
            preds = model(x).argmax(dim=1)
            acc = (preds == y).float().item()
            accs.append(acc)
    return sum(accs) / len(accs)


# a fixed "model" whose predictions we know: class = sign of the first feature
model = nn.Linear(3, 2)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]))
    model.bias.zero_()

x = torch.tensor([[1.0, 0, 0], [-1.0, 0, 0], [2.0, 0, 0], [-3.0, 0, 0]] * 5)
y = torch.tensor([1, 0, 0, 0] * 5)  # 3 of every 4 labels agree with the model
loader = DataLoader(TensorDataset(x, y), batch_size=4)

val_acc = evaluate(model, loader)
assert isinstance(val_acc, float)
assert abs(val_acc - 0.75) < 1e-6, val_acc
