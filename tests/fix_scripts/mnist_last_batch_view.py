# expect: view-invalid-shape
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

BATCH_SIZE = 32


class FakeMNIST(Dataset):
    def __init__(self, n=101):
        g = torch.Generator().manual_seed(0)
        self.images = torch.rand(n, 1, 28, 28, generator=g)
        self.labels = torch.randint(0, 10, (n,), generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


model = nn.Sequential(nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(FakeMNIST(), batch_size=BATCH_SIZE, shuffle=False, num_workers=0)
seen = 0
for epoch in range(2):
    for images, labels in loader:
        x = images.view(BATCH_SIZE, -1)
        loss = nn.functional.cross_entropy(model(x), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        seen += labels.numel()

assert seen == 202
