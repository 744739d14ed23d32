"""Uncurated PyTorch errors across many areas, one statement each (the long tail's real-message test).

Only the snippets are stored, never their output: the test runs them under the pinned torch with
TORCH_SHOW_CPP_STACKTRACES=1 and takes the true raise site from what torch itself reports."""

SNIPPETS = {
    # linalg
    "linalg-cross-dim": "torch.linalg.cross(torch.randn(2), torch.randn(2))",
    "linalg-inv-nonsquare": "torch.linalg.inv(torch.randn(2, 3))",
    "linalg-cholesky-1d": "torch.linalg.cholesky(torch.randn(3))",
    "linalg-det-int": "torch.linalg.det(torch.ones(2, 2, dtype=torch.long))",
    "linalg-solve-shape": "torch.linalg.solve(torch.randn(3, 3), torch.randn(4))",
    "linalg-norm-ord": "torch.linalg.matrix_norm(torch.randn(3, 3), ord=3)",
    "linalg-vander-0d": "torch.linalg.vander(torch.tensor(1.0))",
    "linalg-qr-mode": "torch.linalg.qr(torch.randn(3, 3), mode='bogus')",
    "linalg-eigh-uplo": "torch.linalg.eigh(torch.randn(3, 3), UPLO='X')",
    "linalg-lstsq-driver": "torch.linalg.lstsq(torch.randn(3, 3), torch.randn(3, 1), driver='nope')",
    "linalg-pinv-1d": "torch.linalg.pinv(torch.randn(3))",
    "linalg-householder": "torch.linalg.householder_product(torch.randn(3, 2), torch.randn(3))",
    # fft
    "fft-norm": "torch.fft.fft(torch.randn(4), norm='bogus')",
    "fft-dim-dup": "torch.fft.fftn(torch.randn(4, 4), dim=(0, 0))",
    "fft-n-zero": "torch.fft.rfft(torch.randn(4), n=0)",
    "stft-window": "torch.stft(torch.randn(100), 16, window=torch.ones(8), return_complex=True)",
    # sparse
    "sparse-coo-ndim": "torch.sparse_coo_tensor(torch.tensor([0, 1]), torch.tensor([1.0, 2.0]), (2, 2))",
    "sparse-to-dense-dim": "torch.randn(2, 2).to_sparse(sparse_dim=3)",
    # nested
    "nested-dim-mismatch": "torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4)])",
    "nested-size": "torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4, 3)]).size(1)",
    # distributions
    "dist-normal-scale": "torch.distributions.Normal(torch.tensor(0.0), torch.tensor(-1.0))",
    "dist-categorical-probs": "torch.distributions.Categorical(probs=torch.tensor([[-1.0, 2.0]]))",
    "dist-both-args": "torch.distributions.Bernoulli(probs=torch.tensor(0.5), logits=torch.tensor(0.0))",
    "dist-uniform-low-high": "torch.distributions.Uniform(torch.tensor(1.0), torch.tensor(0.0))",
    "dist-multinomial-count": "torch.distributions.Multinomial(total_count=2.5, probs=torch.tensor([0.5, 0.5]))",
    # nn.functional and modules
    "pad-mode": "torch.nn.functional.pad(torch.randn(1, 2, 3), (1, 1), mode='bogus')",
    "pad-reflect-size": "torch.nn.functional.pad(torch.randn(1, 2, 3), (5, 5), mode='reflect')",
    "grid-sample-mode": "torch.nn.functional.grid_sample(torch.randn(1, 1, 4, 4), torch.randn(1, 2, 2, 2), mode='bogus')",
    "unfold-kernel": "torch.nn.functional.unfold(torch.randn(1, 1, 4, 4), kernel_size=(0, 2))",
    "pixel-shuffle": "torch.nn.functional.pixel_shuffle(torch.randn(1, 3, 4, 4), 2)",
    "avgpool-padding": "torch.nn.functional.avg_pool2d(torch.randn(1, 1, 4, 4), kernel_size=2, padding=2)",
    "maxpool-kernel-zero": "torch.nn.functional.max_pool2d(torch.randn(1, 1, 4, 4), kernel_size=0)",
    "dropout-p": "torch.nn.Dropout(p=1.5)",
    "conv-padding-str": "torch.nn.Conv2d(1, 1, 3, padding='bogus')",
    "conv-groups": "torch.nn.Conv2d(3, 4, 3, groups=2)",
    "embedding-max-norm-type": "torch.nn.functional.embedding(torch.tensor([0]), torch.randn(2, 2), padding_idx=5)",
    "ctc-reduction": "torch.nn.functional.ctc_loss(torch.randn(5, 1, 3).log_softmax(2), torch.tensor([[1]]), [5], [1], reduction='bogus')",
    "kl-div-reduction": "torch.nn.functional.kl_div(torch.randn(2), torch.randn(2), reduction='bogus')",
    "softmax-dim-none-glu": "torch.nn.functional.glu(torch.randn(3), dim=0)",
    "interpolate-mode": "torch.nn.functional.interpolate(torch.randn(1, 1, 4), scale_factor=2, mode='bogus')",
    "transformer-nhead": "torch.nn.TransformerEncoderLayer(d_model=10, nhead=3)",
    "rnn-nonlinearity": "torch.nn.RNN(4, 4, nonlinearity='gelu')",
    "module-register-dot": "torch.nn.Module().register_buffer('a.b', torch.zeros(1))",
    "module-add-module-type": "torch.nn.Module().add_module('m', 3)",
    "sequential-index": "torch.nn.Sequential(torch.nn.ReLU())[5]",
    "parameterlist-type": "torch.nn.ParameterDict({'a': 1}).__setitem__(3, torch.nn.Parameter(torch.zeros(1)))",
    # indexing, shapes, factories
    "index-select-dim": "torch.index_select(torch.randn(3), 0, torch.tensor([[0]]))",
    "gather-dims": "torch.gather(torch.randn(3, 3), 1, torch.tensor([0]))",
    "scatter-reduce": "torch.zeros(3).scatter_reduce(0, torch.tensor([0]), torch.ones(1), reduce='bogus')",
    "take-along-dim": "torch.take_along_dim(torch.randn(3, 3), torch.tensor([0]), dim=5)",
    "repeat-dims": "torch.randn(2, 3).repeat(2)",
    "expand-negative": "torch.randn(3).expand(-2, 3)",
    "narrow-length": "torch.randn(5).narrow(0, 3, 4)",
    "chunk-zero": "torch.randn(5).chunk(0)",
    "split-size-list": "torch.randn(5).split([2, 2])",
    "arange-step-zero": "torch.arange(0, 5, 0)",
    "linspace-steps": "torch.linspace(0, 1, steps=-1)",
    "full-size-neg": "torch.full((-1,), 1.0)",
    "multinomial-num": "torch.multinomial(torch.tensor([0.5, 0.5]), 3)",
    "flip-dims-dup": "torch.randn(3, 3).flip(0, 0)",
    "roll-shifts": "torch.roll(torch.randn(3, 3), shifts=(1, 2), dims=(0,))",
    "diag-embed-dims": "torch.diag_embed(torch.randn(3), dim1=0, dim2=0)",
    "tril-indices": "torch.randn(3).tril()",
    "kthvalue-k": "torch.randn(3).kthvalue(5)",
    "topk-k": "torch.randn(3).topk(5)",
    "bucketize-dims": "torch.bucketize(torch.randn(3), torch.randn(2, 2), right=True, out_int32=True, out=torch.empty(3))",
    "searchsorted-side": "torch.searchsorted(torch.tensor([1.0, 2.0]), torch.tensor([1.5]), side='middle')",
    "cumsum-dim": "torch.randn(3).cumsum(dim=3)",
    "histc-bins": "torch.histc(torch.randn(3), bins=-1)",
    "unique-dim": "torch.unique(torch.randn(3), dim=4)",
    "einsum-operands": "torch.einsum('ij,jk->ik', torch.randn(2, 2))",
    "tensordot-dims": "torch.tensordot(torch.randn(2, 3), torch.randn(3, 2), dims=-1)",
    "cdist-p": "torch.cdist(torch.randn(2, 3), torch.randn(2, 3), p=-1)",
    "polar-dtype": "torch.polar(torch.ones(2, dtype=torch.long), torch.ones(2, dtype=torch.long))",
    "complex-dtype": "torch.complex(torch.ones(2, dtype=torch.long), torch.ones(2, dtype=torch.long))",
    "view-as-complex": "torch.view_as_complex(torch.randn(3, 3))",
    "bincount-neg": "torch.bincount(torch.tensor([-1, 2]))",
    "clamp-none": "torch.clamp(torch.randn(3))",
    "random-from-to": "torch.empty(3).random_(5, 2)",
    "normal-std": "torch.normal(torch.zeros(3), torch.tensor([-1.0, 1.0, 1.0]))",
    # quantization, serialization, autograd.Function, jit
    "quantize-dtype": "torch.quantize_per_tensor(torch.randn(3), 0.1, 0, torch.float32)",
    "autograd-function-outputs": "FnWrongGrads.apply(torch.randn(2, requires_grad=True)).sum().backward()",
    "autograd-grad-outputs-len": "torch.autograd.grad([torch.randn(2, requires_grad=True).sum()], [torch.randn(2, requires_grad=True)], grad_outputs=[torch.ones(()), torch.ones(())])",
    "checkpoint-reentrant": "torch.utils.checkpoint.checkpoint(lambda x: x, torch.randn(2), use_reentrant=True, bogus=1)",
    "jit-script-lambda": "torch.jit.script(lambda x: x)",
    "optimizer-lr": "torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=-1.0)",
    "optimizer-betas": "torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], betas=(1.5, 0.9))",
    "scheduler-gamma": "torch.optim.lr_scheduler.OneCycleLR(torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1), max_lr=0.1)",
    "dataloader-batch-size": "torch.utils.data.DataLoader([1, 2], batch_size=0)",
    "random-split-lengths": "torch.utils.data.random_split(range(10), [3, 3])",
    "sampler-num-samples": "torch.utils.data.RandomSampler(range(3), num_samples=0)",
    "generator-seed": "torch.Generator().manual_seed(-1.5)",
    "set-num-threads": "torch.set_num_threads(0)",
    "dtype-finfo-int": "torch.finfo(torch.int32)",
    "iinfo-float": "torch.iinfo(torch.float32)",
}

PRELUDE = """
import io
import torch

class FnWrongGrads(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g, g
"""
