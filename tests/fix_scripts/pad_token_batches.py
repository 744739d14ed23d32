# expect: tensor-from-ragged-list
import torch

vocab = {"<pad>": 0, "the": 1, "cat": 2, "sat": 3, "on": 4, "mat": 5, "a": 6, "dog": 7}
sentences = ["the cat sat on the mat", "a dog sat", "the dog"]
token_ids = [[vocab[w] for w in s.split()] for s in sentences]

batch = torch.tensor(token_ids)

assert batch.shape == (3, 6)
assert batch[1].tolist() == [6, 7, 3, 0, 0, 0]
