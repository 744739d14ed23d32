# expect: pack-padded-not-sorted
# change: here
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(37)

# a batch of tokenised reviews in dataset order (not sorted by length)
reviews = [torch.tensor([4, 2, 9]), torch.tensor([7, 1, 3, 3, 8]), torch.tensor([5, 6])]
lengths = torch.tensor([len(r) for r in reviews])
padded = pad_sequence(reviews, batch_first=True)

emb = nn.Embedding(10, 6)
gru = nn.GRU(6, 8, batch_first=True)

with torch.no_grad():
    packed = pack_padded_sequence(emb(padded), lengths, batch_first=True)
    out, h_n = gru(packed)
    out, out_lengths = pad_packed_sequence(out, batch_first=True)

    # each review's final state must equal running the GRU on that review alone
    for i, review in enumerate(reviews):
        _, h_alone = gru(emb(review).unsqueeze(0))
        assert torch.allclose(h_n[0, i], h_alone[0, 0], atol=1e-6), i

assert out.shape == (3, 5, 8)
assert torch.equal(out_lengths, lengths)
