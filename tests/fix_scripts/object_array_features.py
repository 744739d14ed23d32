# expect: numpy-object-array
import numpy as np
import torch

rows = [
    ("alice", 34, 72.5, 1),
    ("bob", 51, 88.0, 0),
    ("carol", 27, 60.2, 1),
]
table = np.array(rows, dtype=object)
features = table[:, 1:3]            # age, weight
labels = table[:, 3]

x = torch.from_numpy(features)

assert x.shape == (3, 2)
assert x.dtype in (torch.float32, torch.float64)
assert abs(float(x[1, 1]) - 88.0) < 1e-6
