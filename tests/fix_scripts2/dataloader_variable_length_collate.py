# expect: stack-unequal-size
# change: elsewhere
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(14)


class SentenceDataset(Dataset):
    def __init__(self, sentences, labels):
        self.sentences, self.labels = sentences, labels

    def __len__(self):
        return len(self.sentences)

    def __getitem__(self, i):
        return torch.tensor(self.sentences[i]), torch.tensor(self.labels[i])


def pad_collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    padded = pad_sequence(seqs, batch_first=True, padding_value=0)
    return padded, lengths, torch.stack(labels)


sentences = [[5, 3, 8], [2, 9], [4, 4, 6, 7, 1], [3], [8, 2, 2, 5], [6, 1]]
ds = SentenceDataset(sentences, [1, 0, 1, 0, 1, 0])
loader = DataLoader(ds, batch_size=3, shuffle=False)

seen = 0
for tokens, lengths, labels in loader:
    assert tokens.shape == (3, int(lengths.max()))
    for row, n in zip(tokens, lengths):
        assert (row[n:] == 0).all(), "padding must be zeros"
        assert (row[:n] != 0).all()
    seen += len(labels)

assert seen == len(sentences)
assert tokens.dtype == torch.long
