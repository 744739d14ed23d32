# expect: optimizer-params-not-iterable
# change: here
import torch
import torch.nn as nn

torch.manual_seed(32)


class AutoEncoder(nn.Module):
    def __init__(self, d=20, code=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d, 12), nn.ReLU(), nn.Linear(12, code))
        self.decoder = nn.Sequential(nn.Linear(code, 12), nn.ReLU(), nn.Linear(12, d))

    def forward(self, x):
        return self.decoder(self.encoder(x))


# data lives on a 4-dimensional subspace of R^20
basis = torch.randn(4, 20)
data = torch.randn(128, 4) @ basis

model = AutoEncoder()
optimizer = torch.optim.Adam(model.parameters, lr=1e-2)
criterion = nn.MSELoss()
losses = []
for epoch in range(80):
    recon = model(data)
    loss = criterion(recon, data)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

assert recon.shape == data.shape
assert losses[-1] < 0.2 * losses[0], (losses[0], losses[-1])
