# expect: requires-grad-non-float
# change: here
import torch
import torch.nn.functional as F

torch.manual_seed(29)

# post-hoc calibration (temperature scaling) of an over-confident classifier
true_logits = torch.randn(2000, 4)
labels = torch.multinomial(true_logits.softmax(dim=1), 1).squeeze(1)
model_logits = 3.0 * true_logits  # the network is 3x too confident

temperature = torch.tensor(1, requires_grad=True)
opt = torch.optim.Adam([temperature], lr=0.1)
nll_before = F.cross_entropy(model_logits, labels).item()
for step in range(150):
    loss = F.cross_entropy(model_logits / temperature, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()

assert temperature.dtype == torch.float32
assert 2.0 < temperature.item() < 4.0, temperature.item()
assert loss.item() < nll_before - 0.1
