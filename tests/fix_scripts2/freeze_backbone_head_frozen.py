# expect: backward-no-grad-fn
# change: elsewhere
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(7)


class TransferModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 24), nn.ReLU())
        self.head = nn.Linear(24, 2)

    def forward(self, x):
        return self.head(self.backbone(x))


model = TransferModel()
# linear probing: keep the pretrained backbone fixed, train only the new head
for p in model.parameters():
    p.requires_grad = False

backbone_before = [p.detach().clone() for p in model.backbone.parameters()]
head_before = model.head.weight.detach().clone()
opt = torch.optim.SGD(model.head.parameters(), lr=0.1)

x = torch.randn(32, 12)
y = torch.randint(0, 2, (32,))
for step in range(20):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

assert not torch.equal(model.head.weight, head_before), "head must be trained"
for p, p0 in zip(model.backbone.parameters(), backbone_before):
    assert torch.equal(p, p0), "backbone must stay frozen"
    assert p.grad is None
