# expect: backward-no-grad-fn
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.backbone(x))


torch.manual_seed(0)
model = Classifier()
# fine-tune only the new head: freeze everything
for p in model.parameters():
    p.requires_grad = False

optimizer = torch.optim.Adam(model.head.parameters(), lr=1e-2)
x, y = torch.randn(16, 10), torch.randint(0, 4, (16,))
head_before = model.head.weight.clone()
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
optimizer.step()

assert model.head.weight.grad is not None
assert model.backbone[0].weight.grad is None
assert not torch.equal(model.head.weight, head_before)
