# expect: cat-size-mismatch
import torch
import torch.nn as nn


class LateFusion(nn.Module):
    def __init__(self):
        super().__init__()
        self.img_proj = nn.Linear(512, 128)
        self.txt_proj = nn.Linear(300, 64)
        self.classifier = nn.Linear(128 + 64, 2)

    def forward(self, img_feat, txt_feat):
        a = self.img_proj(img_feat)
        b = self.txt_proj(txt_feat)
        fused = torch.cat([a, b])
        return self.classifier(fused)


torch.manual_seed(0)
m = LateFusion()
logits = m(torch.randn(8, 512), torch.randn(8, 300))

assert logits.shape == (8, 2)
