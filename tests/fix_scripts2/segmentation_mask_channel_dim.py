# expect: cross-entropy-spatial-target-dim
# change: here
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(36)

# foreground/background segmentation; masks are stored like images: (B, 1, H, W)
images = torch.rand(4, 1, 12, 12)
masks = (images > 0.5).long()

model = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1),
    nn.ReLU(),
    nn.Conv2d(8, 2, 1),
)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
losses = []
for step in range(30):
    logits = model(images)  # (B, 2, H, W)
    loss = F.cross_entropy(logits, masks)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())

pred = logits.argmax(dim=1, keepdim=True)
pixel_acc = (pred == masks).float().mean().item()
assert pred.shape == masks.shape
assert pixel_acc > 0.95, pixel_acc
assert losses[-1] < 0.5 * losses[0]
