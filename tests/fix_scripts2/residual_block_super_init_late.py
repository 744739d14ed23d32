# expect: module-init-not-called
# change: elsewhere
import torch
import torch.nn as nn

torch.manual_seed(40)


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        self.dim = dim
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        super().__init__()

    def forward(self, x):
        return self.norm(x + self.fc2(torch.relu(self.fc1(x))))


model = nn.Sequential(ResidualBlock(8), ResidualBlock(8), nn.Linear(8, 1))
X = torch.randn(64, 8)
y = X[:, :1] * 2 - X[:, 1:2]
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(100):
    loss = nn.functional.mse_loss(model(X), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())

assert len(list(model[0].parameters())) == 6  # fc1, fc2, norm weights and biases
assert losses[-1] < 0.1 * losses[0], (losses[0], losses[-1])
