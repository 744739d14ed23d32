# expect: cross-entropy-target-dtype
import torch
import torch.nn as nn
import torch.nn.functional as F


def segmentation_loss(logits, mask):
    # logits: (B, C, H, W), mask: (B, H, W) with the class of each pixel
    return F.cross_entropy(logits, mask, ignore_index=255)


torch.manual_seed(0)
net = nn.Conv2d(3, 4, kernel_size=3, padding=1)
image = torch.rand(2, 3, 8, 8)
mask = (torch.rand(2, 8, 8) * 4).floor()      # class ids 0..3, computed as floats
out = net(image)
loss = segmentation_loss(out, mask)
loss.backward()

assert loss.dim() == 0
assert net.weight.grad is not None
