# expect: optimizer-empty-parameter-list
# change: elsewhere
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(31)


class DeepMLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = []
        for n_in, n_out in zip(sizes[:-1], sizes[1:]):
            self.layers.append(nn.Linear(n_in, n_out))

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        return self.layers[-1](x)


model = DeepMLP([4, 16, 16, 3])
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

X = torch.randn(90, 4)
y = X[:, :3].argmax(dim=1)
losses = []
for step in range(100):
    loss = F.cross_entropy(model(X), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())

assert len(list(model.parameters())) == 6
assert len(model.state_dict()) == 6, "all layers must be saved in checkpoints"
assert losses[-1] < 0.3 * losses[0], (losses[0], losses[-1])
