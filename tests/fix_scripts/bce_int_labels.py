# expect: loss-dtype-found-expected
import torch
import torch.nn as nn

torch.manual_seed(0)
features = torch.randn(64, 10)
is_spam = (features[:, 0] > 0).long()          # 0/1 labels

model = nn.Sequential(nn.Linear(10, 1), nn.Sigmoid())
loss_fn = nn.BCELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.5)

history = []
for step in range(30):
    prob = model(features).squeeze(1)
    loss = loss_fn(prob, is_spam)
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(loss.item())

assert history[-1] < history[0]
