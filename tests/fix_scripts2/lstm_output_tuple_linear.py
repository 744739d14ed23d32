# expect: argument-must-be-tensor
# change: elsewhere
import torch
import torch.nn as nn

torch.manual_seed(35)


class SineForecaster(nn.Module):
    """Predict the next value of a sine wave from the previous 20 values."""

    def __init__(self, hidden=32):
        super().__init__()
        self.lstm = nn.LSTM(input_size=1, hidden_size=hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        output = self.lstm(x)
        y = self.head(output)
        return y[:, -1]


t = torch.linspace(0, 20, 400)
wave = torch.sin(t)
windows = torch.stack([wave[i : i + 20] for i in range(0, 360, 6)]).unsqueeze(-1)
targets = torch.stack([wave[i + 20] for i in range(0, 360, 6)]).unsqueeze(-1)

model = SineForecaster()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(60):
    loss = nn.functional.mse_loss(model(windows), targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())

assert model(windows).shape == (60, 1)
assert losses[-1] < 0.1 * losses[0], (losses[0], losses[-1])
