# expect: cross-entropy-target-out-of-bounds
# change: elsewhere
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(26)

NUM_CLASSES = 5  # 1 to 5 stars
reviews = torch.randn(50, 12)
# star rating of each review, 1..5 (derived from the review's features here)
stars = (reviews[:, :5].argmax(dim=1) + 1).tolist()
labels = torch.tensor(stars)

model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, NUM_CLASSES))
opt = torch.optim.Adam(model.parameters(), lr=2e-2)
for step in range(80):
    logits = model(reviews)
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()

predicted_stars = logits.argmax(dim=1) + 1
assert logits.shape == (50, NUM_CLASSES)
assert (predicted_stars == torch.tensor(stars)).float().mean() > 0.95
assert predicted_stars.min() >= 1 and predicted_stars.max() <= 5
