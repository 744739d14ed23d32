# expect: broadcast-size-mismatch
import torch
from torch.utils.data import Dataset

MEAN = torch.tensor([0.485, 0.456, 0.406])
STD = torch.tensor([0.229, 0.224, 0.225])


class RandomImages(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        img = torch.rand(3, 24, 24, generator=g)          # C, H, W
        img = (img - MEAN) / STD
        return img


ds = RandomImages()
sample = ds[0]

assert sample.shape == (3, 24, 24)
raw = torch.rand(3, 24, 24, generator=torch.Generator().manual_seed(0))
assert torch.allclose(sample[1], (raw[1] - 0.456) / 0.224)
