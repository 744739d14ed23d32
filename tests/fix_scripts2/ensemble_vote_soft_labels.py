# expect: kernel-not-implemented-for-dtype
# change: here
import torch
import torch.nn.functional as F

torch.manual_seed(43)

# turn the hard votes of 5 annotators into soft targets for distillation
n_items, n_classes, n_annotators = 6, 3, 5
votes = torch.randint(0, n_classes, (n_items, n_annotators))
vote_counts = F.one_hot(votes, n_classes).sum(dim=1)  # (6, 3) integer counts

soft_targets = F.softmax(vote_counts, dim=1)

student_logits = torch.zeros(n_items, n_classes, requires_grad=True)
loss = F.cross_entropy(student_logits, soft_targets)
loss.backward()

assert soft_targets.dtype == torch.float32
assert torch.allclose(soft_targets.sum(dim=1), torch.ones(n_items), atol=1e-5)
# the majority class gets the largest soft probability
assert torch.equal(soft_targets.argmax(dim=1), vote_counts.argmax(dim=1))
assert student_logits.grad is not None
