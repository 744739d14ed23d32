# expect: view-invalid-shape
# change: here
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(15)
BATCH_SIZE = 32


class PatchEncoder(nn.Module):
    def __init__(self, n_out=5):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 3 * 3, n_out)

    def forward(self, x):
        x = self.pool(F.relu(self.conv(x)))
        x = x.view(BATCH_SIZE, -1)
        return self.fc(x)


images = torch.randn(106, 3, 8, 8)  # 106 is not a multiple of the batch size
loader = DataLoader(TensorDataset(images), batch_size=BATCH_SIZE)
model = PatchEncoder().eval()

outputs = []
with torch.no_grad():
    for (x,) in loader:
        outputs.append(model(x))
    embeddings = torch.cat(outputs)
    single = model(images[100:101])

assert embeddings.shape == (106, 5)
# each row must depend only on its own image
assert torch.allclose(embeddings[100], single[0], atol=1e-5)
