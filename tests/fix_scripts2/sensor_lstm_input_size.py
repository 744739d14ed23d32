# expect: rnn-input-size-mismatch
# change: elsewhere
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(39)

# activity recognition from a 3-axis accelerometer, plus first differences as extra features
raw = torch.randn(32, 25, 3)
labels = (raw[:, :, 0].mean(dim=1) > 0).long()
features = torch.cat([raw, raw.diff(dim=1, prepend=raw[:, :1])], dim=-1)  # (32, 25, 6)


class ActivityRNN(nn.Module):
    def __init__(self, n_features, hidden=24, n_classes=2):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, n_classes)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out.mean(dim=1))


model = ActivityRNN(n_features=raw.shape[-1])
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(40):
    loss = F.cross_entropy(model(features), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())

assert model.lstm.input_size == 6
assert losses[-1] < 0.5 * losses[0], (losses[0], losses[-1])
