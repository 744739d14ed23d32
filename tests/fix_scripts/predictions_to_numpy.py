# expect: numpy-on-requires-grad
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 10), nn.ReLU(), nn.Linear(10, 1))
X_test = np.random.default_rng(1).normal(size=(25, 3)).astype(np.float32)

model.eval()
preds = model(torch.from_numpy(X_test)).squeeze(1).numpy()
rmse = float(np.sqrt(np.mean((preds - X_test.sum(axis=1)) ** 2)))

assert isinstance(preds, np.ndarray)
assert preds.shape == (25,)
assert np.isfinite(rmse)
