# expect: masked-fill-non-bool-mask
# change: elsewhere
import math
import torch
import torch.nn as nn

torch.manual_seed(34)

PAD = 0
tokens = torch.tensor(
    [
        [5, 7, 2, 0, 0],
        [3, 4, 9, 8, 1],
    ]
)
emb = nn.Embedding(10, 8, padding_idx=PAD)
query_proj = nn.Linear(8, 8)

# attention pooling over the tokens of each sentence
pad_mask = (tokens == PAD).int()  # 1 where the position is padding
x = emb(tokens)  # (B, T, 8)
scores = query_proj(x) @ x.transpose(1, 2) / math.sqrt(8)  # (B, T, T)
scores = scores.masked_fill(pad_mask[:, None, :], float("-inf"))
weights = scores.softmax(dim=-1)
context = weights @ x

assert weights.shape == (2, 5, 5)
assert torch.allclose(weights.sum(dim=-1), torch.ones(2, 5), atol=1e-5)
# padded keys receive no attention, real tokens do
assert torch.all(weights[0, :, 3:] == 0)
assert torch.all(weights[0, :, :3] > 0)
assert torch.all(weights[1] > 0)
