# expect: tensor-numpy-method
# change: here
import numpy as np
import torch

torch.manual_seed(38)


def dice_score(logits, target, eps=1e-6):
    """Dice coefficient between thresholded predictions and a binary mask."""
    pred = (torch.sigmoid(logits) > 0.5).astype(np.float32)
    inter = (pred * target).sum()
    return (2 * inter + eps) / (pred.sum() + target.sum() + eps)


target = torch.zeros(1, 1, 8, 8)
target[..., 2:6, 2:6] = 1.0

perfect = torch.where(target > 0, 5.0, -5.0)
half = perfect.clone()
half[..., 2:4, 2:6] = -5.0  # misses half of the object
disjoint = -perfect

assert torch.is_tensor(dice_score(perfect, target))
assert abs(dice_score(perfect, target).item() - 1.0) < 1e-5
assert abs(dice_score(half, target).item() - 2 * 8 / (8 + 16)) < 1e-5
assert dice_score(disjoint, target).item() < 1e-3
