# expect: cat-size-mismatch
import torch
import torch.nn as nn


class TinyViTEmbed(nn.Module):
    def __init__(self, dim=32, num_patches=16):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, kernel_size=4, stride=4)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, num_patches + 1, dim))

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)       # B, N, dim
        x = torch.cat([self.cls_token, x], dim=1)
        return x + self.pos


torch.manual_seed(0)
emb = TinyViTEmbed()
tokens = emb(torch.randn(5, 3, 16, 16))

assert tokens.shape == (5, 17, 32)
assert torch.equal(tokens[:, 0], torch.zeros(5, 32))
