# expect: state-dict-missing-unexpected-keys
# change: here
import torch
import torch.nn as nn

torch.manual_seed(3)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.features(x))


# The training script wrapped the model in DataParallel before saving.
trained = nn.DataParallel(Classifier())
checkpoint = {"epoch": 12, "model_state": trained.state_dict()}

# --- inference script ---
model = Classifier()
state = checkpoint["model_state"]
model.load_state_dict(state)
model.eval()

x = torch.randn(3, 10)
with torch.no_grad():
    expected = trained.module(x)
    got = model(x)

assert torch.equal(got, expected), "restored model must reproduce the trained model"
for name, value in model.state_dict().items():
    assert torch.equal(value, trained.module.state_dict()[name]), name
