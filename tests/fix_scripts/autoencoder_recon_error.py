# expect: backward-non-scalar-output
import torch
import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(20, 4)
        self.dec = nn.Linear(4, 20)

    def forward(self, x):
        return self.dec(torch.relu(self.enc(x)))


def reconstruction_error(model, batch):
    recon = model(batch)
    return ((recon - batch) ** 2).mean(dim=1)      # one error per sample (also used for anomaly scores)


torch.manual_seed(0)
ae = AutoEncoder()
opt = torch.optim.Adam(ae.parameters(), lr=1e-2)
data = torch.randn(64, 20)
initial = reconstruction_error(ae, data).mean().item()
for it in range(50):
    err = reconstruction_error(ae, data)
    opt.zero_grad()
    err.backward()
    opt.step()

assert reconstruction_error(ae, data).mean().item() < initial
