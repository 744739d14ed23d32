# expect: cat-size-mismatch
# change: here
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(19)


class TinyUNet(nn.Module):
    def __init__(self, in_ch=1, n_classes=3):
        super().__init__()
        self.enc = nn.Conv2d(in_ch, 8, 3, padding=1)
        self.down = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(16, 16, 2, stride=2)
        self.dec = nn.Conv2d(16 + 8, 8, 3, padding=1)
        self.out = nn.Conv2d(8, n_classes, 1)

    def forward(self, x):
        skip = F.relu(self.enc(x))  # (B, 8, H, W)
        h = F.relu(self.down(skip))  # (B, 16, H/2, W/2)
        h = self.up(h)  # (B, 16, H, W)
        h = torch.cat([h, skip], dim=0)
        return self.out(F.relu(self.dec(h)))


model = TinyUNet().eval()
x = torch.randn(2, 1, 16, 16)
with torch.no_grad():
    masks = model(x)
    first_alone = model(x[:1])

assert masks.shape == (2, 3, 16, 16)
# each image is segmented independently of the rest of the batch
assert torch.allclose(masks[:1], first_alone, atol=1e-5)
