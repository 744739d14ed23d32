# expect: state-dict-size-mismatch
# change: elsewhere
import torch
import torch.nn as nn

torch.manual_seed(4)


def make_model(num_classes):
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(8, num_classes),
    )


CLASS_NAMES = ["cat", "dog", "bird", "fish", "horse"]

# checkpoint produced by the training run
train_model = make_model(len(CLASS_NAMES))
ckpt = {k: v.clone() for k, v in train_model.state_dict().items()}

# --- evaluation script ---
NUM_CLASSES = 4
model = make_model(NUM_CLASSES)
model.load_state_dict(ckpt)
model.eval()

images = torch.randn(6, 3, 16, 16)
with torch.no_grad():
    logits = model(images)
    ref = train_model(images)
preds = [CLASS_NAMES[i] for i in logits.argmax(dim=1).tolist()]

assert logits.shape == (6, len(CLASS_NAMES))
assert torch.allclose(logits, ref, atol=1e-6)
assert len(preds) == 6
