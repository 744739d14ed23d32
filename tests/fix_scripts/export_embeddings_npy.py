# expect: numpy-on-requires-grad
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn


class WordVectors(nn.Module):
    def __init__(self, vocab_size=100, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim)

    def export(self, path):
        vectors = self.emb.weight.numpy()
        np.save(path, vectors)


torch.manual_seed(0)
wv = WordVectors()
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "vectors.npy")
    wv.export(out)
    loaded = np.load(out)

assert loaded.shape == (100, 16)
assert np.allclose(loaded, wv.emb.weight.detach().numpy())
