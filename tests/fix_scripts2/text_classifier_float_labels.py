# expect: cross-entropy-target-dtype
# change: elsewhere
import torch
import torch.nn as nn

torch.manual_seed(13)

# bag-of-words topic classifier: 3 topics, token ids in [0, 30)
docs = [
    # sports
    [1, 2, 3, 4],
    [2, 3, 5, 1],
    [1, 4, 5, 2],
    # politics
    [11, 12, 13, 14],
    [12, 15, 11, 13],
    [14, 11, 15],
    # science
    [21, 22, 23],
    [24, 25, 21, 22],
    [23, 25, 24, 21],
]
topic_ids = [0, 0, 0, 1, 1, 1, 2, 2, 2]

flat = torch.tensor([t for d in docs for t in d])
offsets = torch.tensor([0] + [len(d) for d in docs[:-1]]).cumsum(0)
labels = torch.tensor(topic_ids, dtype=torch.float32)

model = nn.ModuleDict({"bag": nn.EmbeddingBag(30, 16, mode="mean"), "out": nn.Linear(16, 3)})
criterion = nn.CrossEntropyLoss()
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for step in range(40):
    logits = model["out"](model["bag"](flat, offsets))
    loss = criterion(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()

preds = logits.argmax(dim=1)
assert logits.shape == (9, 3)
assert preds.tolist() == topic_ids
assert loss.item() < 0.2
