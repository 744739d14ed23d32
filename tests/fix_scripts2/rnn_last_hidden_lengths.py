# expect: index-out-of-bounds
# change: here
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence

torch.manual_seed(33)

# variable-length event sequences, zero-padded to the longest one
seqs = [torch.randn(5, 3), torch.randn(3, 3), torch.randn(2, 3)]
lengths = torch.tensor([len(s) for s in seqs])
padded = pad_sequence(seqs, batch_first=True)  # (3, 5, 3)

lstm = nn.LSTM(3, 8, batch_first=True)
with torch.no_grad():
    out, _ = lstm(padded)  # (3, 5, 8)
    # summary vector = output at the last real (non-padding) step of each sequence
    last = torch.stack([out[i, lengths[i]] for i in range(len(seqs))])

    # reference: the final hidden state of a packed run
    _, (h_n, _) = lstm(pack_padded_sequence(padded, lengths, batch_first=True))

assert last.shape == (3, 8)
assert torch.allclose(last, h_n[-1], atol=1e-6)
