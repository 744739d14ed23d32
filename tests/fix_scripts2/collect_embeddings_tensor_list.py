# expect: scalar-conversion-multi-element
# change: here
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(20)

# build a small retrieval index: one embedding per product
encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 8)).eval()
products = torch.randn(12, 10)

embeddings = []
with torch.no_grad():
    for features in products:
        embeddings.append(F.normalize(encoder(features), dim=0))
index = torch.tensor(embeddings)

# query with slightly perturbed products: each should retrieve itself
queries = products + 0.01 * torch.randn_like(products)
with torch.no_grad():
    q = F.normalize(encoder(queries), dim=1)
scores = q @ index.T
nearest = scores.argmax(dim=1)

assert index.shape == (12, 8)
assert torch.allclose(index.norm(dim=1), torch.ones(12), atol=1e-5)
assert torch.equal(nearest, torch.arange(12))
