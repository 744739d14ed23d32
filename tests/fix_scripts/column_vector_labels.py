# expect: cross-entropy-multi-target
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(0)
X = rng.normal(size=(60, 5)).astype(np.float32)
y = rng.integers(0, 3, size=(60, 1))              # labels read as a column

inputs = torch.from_numpy(X)
labels = torch.from_numpy(y)

torch.manual_seed(0)
clf = nn.Linear(5, 3)
opt = torch.optim.SGD(clf.parameters(), lr=0.5)
start = None
for it in range(20):
    loss = nn.CrossEntropyLoss()(clf(inputs), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    start = loss.item() if start is None else start

assert loss.item() < start
