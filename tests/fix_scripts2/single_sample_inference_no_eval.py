# expect: batchnorm-single-value-training
# change: elsewhere
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(25)


class ChurnModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.bn1 = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        x = F.relu(self.bn1(self.fc1(x)))
        return torch.sigmoid(self.fc2(x))


model = ChurnModel()
X = torch.randn(128, 6)
y = (X[:, 0] + X[:, 1] > 0).float().unsqueeze(1)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(50):
    loss = F.binary_cross_entropy(model(X), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

# serve one customer at a time
running_mean = model.bn1.running_mean.clone()
customer = torch.tensor([[2.0, 1.5, 0.0, 0.0, 0.0, 0.0]])
with torch.no_grad():
    churn_prob = model(customer)
    in_batch = model(torch.cat([customer, X[:7]]))[0]

assert churn_prob.shape == (1, 1)
assert churn_prob.item() > 0.5
assert torch.allclose(churn_prob[0], in_batch, atol=1e-6), "prediction must not depend on the batch"
assert torch.equal(model.bn1.running_mean, running_mean), "serving must not update BN statistics"
