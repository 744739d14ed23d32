# expect: backward-graph-freed
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
cls_head = nn.Linear(16, 3)
reg_head = nn.Linear(16, 1)
params = list(encoder.parameters()) + list(cls_head.parameters()) + list(reg_head.parameters())
opt = torch.optim.SGD(params, lr=0.05)

x = torch.randn(32, 8)
cls_target = torch.randint(0, 3, (32,))
reg_target = torch.randn(32, 1)

start = None
for step in range(20):
    h = encoder(x)
    loss_cls = nn.functional.cross_entropy(cls_head(h), cls_target)
    loss_reg = nn.functional.mse_loss(reg_head(h), reg_target)
    opt.zero_grad()
    loss_cls.backward()
    loss_reg.backward()
    opt.step()
    total = loss_cls.item() + loss_reg.item()
    start = total if start is None else start

assert total < start
assert encoder[0].weight.grad is not None
