# expect: numpy-on-requires-grad
# change: here
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(12)


def r2_score(y_true, y_pred):
    ss_res = np.sum((y_true - y_pred) ** 2)
    ss_tot = np.sum((y_true - y_true.mean()) ** 2)
    return 1.0 - ss_res / ss_tot


model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))
X = torch.randn(40, 5)
y = X.sum(dim=1, keepdim=True)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(200):
    loss = nn.functional.mse_loss(model(X), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

# evaluation with sklearn-style numpy metrics
preds = model(X).numpy()
score = r2_score(y.numpy(), preds)

assert isinstance(preds, np.ndarray) and preds.shape == (40, 1)
assert score > 0.9, score
