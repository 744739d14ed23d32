# expect: bool-value-ambiguous
# change: here
import torch
import torch.nn as nn

torch.manual_seed(22)


def ppo_clip_loss(new_logp, old_logp, advantages, clip=0.2):
    ratio = torch.exp(new_logp - old_logp)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1 - clip, 1 + clip) * advantages
    return -min(unclipped, clipped).mean()


# elementwise check against the textbook formula
new_lp = torch.log(torch.tensor([0.9, 0.5, 0.2, 0.6]))
old_lp = torch.log(torch.tensor([0.5, 0.5, 0.5, 0.3]))
adv = torch.tensor([1.0, -2.0, 1.0, 3.0])
r = (new_lp - old_lp).exp()
expected = -torch.stack([min(ri * ai, max(min(ri, 1.2), 0.8) * ai) for ri, ai in zip(r, adv)]).mean()
assert torch.allclose(ppo_clip_loss(new_lp, old_lp, adv), expected, atol=1e-6)

# a few policy updates on a 2-action bandit: action 1 has positive advantage
policy = nn.Linear(4, 2)
obs = torch.randn(32, 4)
actions = torch.randint(0, 2, (32,))
advantages = torch.where(actions == 1, 1.0, -1.0)
with torch.no_grad():
    old_logp = policy(obs).log_softmax(-1).gather(1, actions[:, None]).squeeze(1)
    p1_before = policy(obs).softmax(-1)[:, 1].mean()
opt = torch.optim.Adam(policy.parameters(), lr=0.05)
for epoch in range(10):
    new_logp = policy(obs).log_softmax(-1).gather(1, actions[:, None]).squeeze(1)
    loss = ppo_clip_loss(new_logp, old_logp, advantages)
    opt.zero_grad()
    loss.backward()
    opt.step()
with torch.no_grad():
    p1_after = policy(obs).softmax(-1)[:, 1].mean()
assert p1_after > p1_before + 0.05, (p1_before, p1_after)
