# expect: stack-unequal-size
import torch
from torch.utils.data import DataLoader, Dataset


class Sentences(Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.items = [torch.randint(1, 50, (n,), generator=g) for n in (7, 5, 9, 3, 6, 8)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


loader = DataLoader(Sentences(), batch_size=3, shuffle=False, num_workers=0)
batches = []
for batch in loader:
    batches.append(batch)

assert len(batches) == 2
assert all(b.shape[0] == 3 for b in batches)
