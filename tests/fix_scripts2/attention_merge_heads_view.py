# expect: view-non-contiguous
# change: here
import math
import torch
import torch.nn as nn

torch.manual_seed(16)


class SelfAttention(nn.Module):
    def __init__(self, d_model=16, n_heads=4):
        super().__init__()
        self.h, self.dh = n_heads, d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(B, T, self.h, self.dh).transpose(1, 2)  # (B, h, T, dh)
        k = k.view(B, T, self.h, self.dh).transpose(1, 2)
        v = v.view(B, T, self.h, self.dh).transpose(1, 2)
        att = (q @ k.transpose(-2, -1) / math.sqrt(self.dh)).softmax(dim=-1)
        out = att @ v  # (B, h, T, dh)
        out = out.transpose(1, 2).view(B, T, D)
        return self.proj(out)


attn = SelfAttention()
x = torch.randn(2, 5, 16)
y = attn(x)

# reference: PyTorch's own multi-head attention with the same weights
ref = nn.MultiheadAttention(16, 4, batch_first=True)
with torch.no_grad():
    ref.in_proj_weight.copy_(attn.qkv.weight)
    ref.in_proj_bias.copy_(attn.qkv.bias)
    ref.out_proj.weight.copy_(attn.proj.weight)
    ref.out_proj.bias.copy_(attn.proj.bias)
    expected, _ = ref(x, x, x)

assert y.shape == (2, 5, 16)
assert torch.allclose(y, expected, atol=1e-5)
