# expect: matmul-shape-mismatch
# change: elsewhere
import torch
import torch.nn as nn

torch.manual_seed(0)


# Predict house prices from 8 tabular features.
class PriceRegressor(nn.Module):
    def __init__(self, n_features=8):
        super().__init__()
        self.hidden1 = nn.Linear(n_features, 64)
        self.hidden2 = nn.Linear(64, 32)
        self.out = nn.Linear(64, 1)
        self.act = nn.ReLU()

    def forward(self, x):
        x = self.act(self.hidden1(x))
        x = self.act(self.hidden2(x))
        return self.out(x)


X = torch.randn(128, 8)
true_w = torch.randn(8, 1)
y = X @ true_w + 0.1 * torch.randn(128, 1)

model = PriceRegressor()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(100):
    opt.zero_grad()
    pred = model(X)
    loss = nn.functional.mse_loss(pred, y)
    loss.backward()
    opt.step()
    losses.append(loss.item())

assert pred.shape == (128, 1)
assert losses[-1] < 0.2 * losses[0], (losses[0], losses[-1])
