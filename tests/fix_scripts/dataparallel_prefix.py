# expect: state-dict-missing-unexpected-keys
import os
import tempfile

import torch
import torch.nn as nn


class Wrapper(nn.Module):
    """What the training script used around the model (like nn.DataParallel: it adds `module.`)."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, x):
        return self.module(x)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 6)
        self.fc2 = nn.Linear(6, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


torch.manual_seed(0)
trained = Wrapper(Regressor())
tmp = tempfile.mkdtemp()
weights = os.path.join(tmp, "regressor.pth")
torch.save(trained.state_dict(), weights)

# inference script: plain model, no wrapper
model = Regressor()
state = torch.load(weights, map_location="cpu")
model.load_state_dict(state)

x = torch.randn(2, 6)
assert torch.equal(model(x), trained(x))
