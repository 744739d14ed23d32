# expect: backward-graph-freed
# change: elsewhere
import torch
import torch.nn as nn

torch.manual_seed(8)

latent_dim, data_dim = 4, 2
G = nn.Sequential(nn.Linear(latent_dim, 16), nn.ReLU(), nn.Linear(16, data_dim))
D = nn.Sequential(nn.Linear(data_dim, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()

g_before = [p.detach().clone() for p in G.parameters()]
d_before = [p.detach().clone() for p in D.parameters()]

for step in range(5):
    real = torch.randn(16, data_dim) * 0.5 + 2.0
    z = torch.randn(16, latent_dim)
    fake = G(z)

    # discriminator step: real -> 1, fake -> 0
    opt_d.zero_grad()
    d_loss = bce(D(real), torch.ones(16, 1)) + bce(D(fake), torch.zeros(16, 1))
    d_loss.backward()
    opt_d.step()

    # generator step: try to fool D
    opt_g.zero_grad()
    g_loss = bce(D(fake), torch.ones(16, 1))
    g_loss.backward()
    opt_g.step()

assert all(not torch.equal(p, p0) for p, p0 in zip(G.parameters(), g_before))
assert all(not torch.equal(p, p0) for p, p0 in zip(D.parameters(), d_before))
assert torch.isfinite(g_loss) and torch.isfinite(d_loss)
