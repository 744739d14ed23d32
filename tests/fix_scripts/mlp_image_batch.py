# expect: matmul-shape-mismatch
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(28 * 28, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        return self.fc2(x)


torch.manual_seed(0)
model = MLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
images = torch.rand(32, 1, 28, 28)
labels = torch.randint(0, 10, (32,))
losses = []
for step in range(10):
    out = model(images)
    loss = nn.functional.cross_entropy(out, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())

assert out.shape == (32, 10)
assert losses[-1] < losses[0]
