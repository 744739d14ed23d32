# expect: broadcast-size-mismatch
import torch


def masked_attention(q, k, v, pad_mask):
    # q, k, v: (B, H, T, D); pad_mask: (B, T), True where the token is padding
    scores = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5
    scores = scores.masked_fill(pad_mask, float("-inf"))
    return scores.softmax(dim=-1) @ v


torch.manual_seed(0)
B, H, T, D = 2, 4, 6, 8
q, k, v = (torch.randn(B, H, T, D) for _ in range(3))
lengths = torch.tensor([6, 4])
pad_mask = torch.arange(T)[None, :] >= lengths[:, None]
out = masked_attention(q, k, v, pad_mask)

assert out.shape == (B, H, T, D)
assert torch.isfinite(out).all()
