# expect: state-dict-missing-unexpected-keys
import os
import tempfile

import torch
import torch.nn as nn


def build():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


torch.manual_seed(0)
model = build()
opt = torch.optim.Adam(model.parameters())
with tempfile.TemporaryDirectory() as ckpt_dir:
    path = os.path.join(ckpt_dir, "last.pt")
    torch.save({"epoch": 5, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict()}, path)

    restored = build()
    restored.load_state_dict(torch.load(path))

x = torch.randn(3, 4)
assert torch.equal(restored(x), model(x))
