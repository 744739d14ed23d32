# expect: view-non-contiguous
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_model=32, n_heads=4):
        super().__init__()
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        k = k.view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        v = v.view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / self.d_head ** 0.5
        out = att.softmax(dim=-1) @ v
        out = out.transpose(1, 2).view(b, t, d)
        return self.proj(out)


torch.manual_seed(0)
layer = SelfAttention()
tokens = torch.randn(2, 10, 32)
y = layer(tokens)

assert y.shape == (2, 10, 32)
assert torch.isfinite(y).all()
