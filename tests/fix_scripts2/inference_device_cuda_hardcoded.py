# expect: torch-not-compiled-with-cuda
# change: elsewhere
import torch
import torch.nn as nn

torch.manual_seed(2)

# run the intent classifier on whatever hardware is there
device = "cuda"

model = nn.Sequential(
    nn.Linear(16, 32),
    nn.ReLU(),
    nn.Linear(32, 3),
)
model.to(device)
model.eval()

batch = torch.randn(5, 16)
with torch.no_grad():
    logits = model(batch.to(device))
    probs = logits.softmax(dim=-1).cpu()

labels = ["greeting", "question", "complaint"]
predicted = [labels[i] for i in probs.argmax(dim=-1).tolist()]

assert probs.shape == (5, 3)
assert torch.allclose(probs.sum(dim=-1), torch.ones(5), atol=1e-5)
assert (probs >= 0).all()
assert len(predicted) == 5
