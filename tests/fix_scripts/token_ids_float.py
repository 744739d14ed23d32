# expect: embedding-index-dtype
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Reviews(Dataset):
    def __init__(self):
        self.seqs = [[4, 8, 15, 16], [23, 42, 7, 1], [3, 3, 9, 2], [11, 12, 13, 14]]
        self.labels = [1, 0, 1, 0]

    def __len__(self):
        return len(self.seqs)

    def __getitem__(self, i):
        return torch.tensor(self.seqs[i], dtype=torch.float32), torch.tensor(self.labels[i])


class BagOfEmbeddings(nn.Module):
    def __init__(self, vocab=50, dim=8):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, 2)

    def forward(self, ids):
        vecs = self.embedding(ids)
        return self.out(vecs.mean(dim=1))


torch.manual_seed(0)
model = BagOfEmbeddings()
for ids, y in DataLoader(Reviews(), batch_size=2, num_workers=0):
    logits = model(ids)
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()

assert logits.shape == (2, 2)
assert model.embedding.weight.grad is not None
