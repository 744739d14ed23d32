# expect: dim-out-of-range
import torch
import torch.nn as nn
import torch.nn.functional as F


class SentimentHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 3)

    def forward(self, features):
        logits = self.fc(features)
        return F.softmax(logits, dim=1)


torch.manual_seed(0)
head = SentimentHead()
sentence_vec = torch.randn(12)          # one sentence at inference time
probs = head(sentence_vec)

assert probs.shape == (3,)
assert torch.isclose(probs.sum(), torch.tensor(1.0))
