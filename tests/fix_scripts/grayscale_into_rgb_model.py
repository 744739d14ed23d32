# expect: conv-channel-mismatch
import torch
import torch.nn as nn


def make_backbone():
    # stands in for a pretrained ImageNet backbone: RGB in
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    )


torch.manual_seed(0)
backbone = make_backbone().eval()
xray = torch.rand(4, 1, 64, 64)          # grayscale scans
with torch.no_grad():
    emb = backbone(xray)

assert emb.shape == (4, 16)
