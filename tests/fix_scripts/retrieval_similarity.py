# expect: matmul-shape-mismatch
import torch
import torch.nn.functional as F

torch.manual_seed(1)
doc_embeddings = F.normalize(torch.randn(50, 64), dim=1)     # 50 documents
query_embeddings = F.normalize(torch.randn(5, 64), dim=1)    # 5 queries

scores = torch.mm(query_embeddings, doc_embeddings)
best = scores.argmax(dim=1)

assert scores.shape == (5, 50)
assert best.shape == (5,)
assert torch.allclose(scores[0, 3], (query_embeddings[0] * doc_embeddings[3]).sum())
