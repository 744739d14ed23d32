# expect: view-non-contiguous
import torch


def image_to_patches(images, patch=4):
    """(B, C, H, W) -> (B, num_patches, C * patch * patch)"""
    b, c, h, w = images.shape
    x = images.unfold(2, patch, patch).unfold(3, patch, patch)   # B, C, H/p, W/p, p, p
    x = x.permute(0, 2, 3, 1, 4, 5)
    return x.view(b, (h // patch) * (w // patch), c * patch * patch)


imgs = torch.rand(3, 3, 16, 16)
patches = image_to_patches(imgs)

assert patches.shape == (3, 16, 48)
# the first patch of the first image is its top-left 4x4 block, channel by channel
assert torch.equal(patches[0, 0], imgs[0, :, :4, :4].reshape(-1))
