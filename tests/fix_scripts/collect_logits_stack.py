# expect: stack-unequal-size
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(100, 7))
model = nn.Linear(7, 3).eval()

batch_logits = []
with torch.no_grad():
    for (xb,) in DataLoader(data, batch_size=16, num_workers=0):
        batch_logits.append(model(xb))
all_logits = torch.stack(batch_logits)

assert all_logits.shape == (100, 3)
