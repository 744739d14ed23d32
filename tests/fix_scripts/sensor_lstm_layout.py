# expect: rnn-input-size-mismatch
import torch
import torch.nn as nn


class ActivityLSTM(nn.Module):
    def __init__(self, n_sensors=6, hidden=24, n_classes=4):
        super().__init__()
        self.lstm = nn.LSTM(input_size=n_sensors, hidden_size=hidden, batch_first=True)
        self.cls = nn.Linear(hidden, n_classes)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.cls(h[-1])


torch.manual_seed(0)
# recordings stored as (batch, sensors, time) like the Conv1d baseline used
windows = torch.randn(8, 6, 50)
model = ActivityLSTM()
scores = model(windows)

assert scores.shape == (8, 4)
