# expect: embedding-index-out-of-range
# change: elsewhere
import torch
import torch.nn as nn

torch.manual_seed(17)

# (user_id, item_id, rating) with 1-based ids, as exported from the ratings database
ratings = torch.tensor(
    [
        [1, 1, 5.0],
        [1, 3, 3.0],
        [2, 2, 4.0],
        [3, 5, 1.0],
        [4, 4, 2.0],
        [5, 1, 4.0],
        [6, 2, 5.0],
        [6, 5, 3.0],
    ]
)
num_users, num_items = 6, 5
user_ids = ratings[:, 0].long()
item_ids = ratings[:, 1].long()
target = ratings[:, 2]


class MatrixFactorization(nn.Module):
    def __init__(self, n_users, n_items, dim=8):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, dim)
        self.item_emb = nn.Embedding(n_items, dim)

    def forward(self, u, i):
        return (self.user_emb(u) * self.item_emb(i)).sum(-1) + 3.0


model = MatrixFactorization(num_users, num_items)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(300):
    loss = ((model(user_ids, item_ids) - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

assert loss.item() < 0.05, loss.item()
pred = model(user_ids[6:7], item_ids[6:7]).item()  # user 6 rated item 2 with 5 stars
assert abs(pred - 5.0) < 0.5, pred
