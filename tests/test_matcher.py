"""The matcher: near-twins, wrappers, type families, abstention, calibration and speed."""

from __future__ import annotations

import json
import re

import pytest

from explainer.match.explain import explain_text as _explain_text
from explainer.parse.parser import parse_text
from explainer.render import advice_for, answer_json
from explainer.render.markdown import rendered_json

from .conftest import SHARED, needs_shared


def explain_text(text, index, **kw):
    """Correctness, not speed: no time budget unless a test gives one (a loaded machine would cut
    the answer short and drop the evidence of the paste's earlier tracebacks)."""
    kw.setdefault("budget", None)
    return _explain_text(text, index, **kw)


def top(index, text):
    answer = explain_text(text, index)
    return answer.matches[0].id if answer.matches else None


TWINS = [
    ("RuntimeError: grad can be implicitly created only for scalar outputs", "backward-non-scalar-output"),
    (
        "RuntimeError: grad can be implicitly created only for real scalar outputs but got torch.complex64",
        "backward-complex-output",
    ),
    ("RuntimeError: DataLoader worker (pid(s) 4242) exited unexpectedly", "dataloader-worker-killed"),
    (
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
        "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.",
        "dataloader-shm-bus-error",
    ),
    (
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
        'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    for b in loader:\n'
        "RuntimeError: DataLoader worker (pid(s) 4242) exited unexpectedly",
        "dataloader-shm-bus-error",
    ),
    (
        "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.",
        "leaf-inplace-requires-grad",
    ),
    (
        "RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation.",
        "view-of-leaf-inplace",
    ),
    (
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
        "device-mismatch",
    ),
    (
        "RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same",
        "input-weight-type-mismatch",
    ),
    ("RuntimeError: expected scalar type Half but found Float", "expected-scalar-type-mismatch"),
    (
        'Traceback (most recent call last):\n  File "train.py", line 30, in <module>\n    loss = criterion(out, y)\n'
        '  File "/usr/lib/python3/site-packages/torch/nn/functional.py", line 3104, in cross_entropy\n'
        "    return torch._C._nn.cross_entropy_loss(input, target, weight, _Reduction.get_enum(reduction), ignore_index, label_smoothing)\n"
        "RuntimeError: expected target dtype to be Long or Byte, but got Float",
        "cross-entropy-target-dtype",
    ),
]


@pytest.mark.parametrize("text,want", TWINS, ids=[w + f"-{i}" for i, (_, w) in enumerate(TWINS)])
def test_near_twins_never_collide(index, text, want):
    if want not in index.entries:
        pytest.skip(f"no entry {want} yet")
    assert top(index, text) == want


OOM_FAMILY = [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.05 GiB is free. Including non-PyTorch memory, this process has 22.58 GiB memory in use. Of the allocated memory 21.9 GiB is allocated by PyTorch, and 204.5 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 1 has a total capacty of 10.75 GiB of which 100.56 MiB is free.",
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.61 GiB already allocated; 9.56 MiB free; 6.70 GiB reserved in total by PyTorch)",
    "OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0",
]


@pytest.mark.parametrize("text", OOM_FAMILY)
def test_exception_type_family_and_wording_drift(index, text):
    assert top(index, text) == "cuda-out-of-memory"


def test_cpu_allocation_is_not_cuda_oom(index):
    text = "RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory: you tried to allocate 4294967296 bytes."
    assert top(index, text) == "cpu-alloc-fail"


def test_translated_message(index):
    assert top(index, "ValueError：只能将一个元素张量转换为Python标量") == "scalar-conversion-multi-element"
    assert top(index, "RuntimeError: 梯度只能为标量输出隐式创建") == "backward-non-scalar-output"


WORKER = (
    'Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n    for x in loader:\n'
    '  File "/opt/venv/lib/python3.11/site-packages/torch/_utils.py", line 733, in reraise\n    raise exception\n'
    "{etype}: Caught {etype} in DataLoader worker process 0.\nOriginal Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", line 349, in _worker_loop\n'
    '    data = fetcher.fetch(index)\n  File "/home/u/data.py", line 20, in __getitem__\n    {code}\n{etype}: {msg}\n'
)


def test_wrapper_ranks_below_a_known_inner_error(index):
    known = WORKER.format(
        etype="RuntimeError",
        code="return torch.stack(items)",
        msg="stack expects each tensor to be equal size, but got [3, 32] at entry 0 and [3, 31] at entry 2",
    )
    answer = explain_text(known, index)
    assert answer.matches[0].id == "stack-unequal-size"
    unknown = WORKER.format(etype="KeyError", code="return self.rows[i]['label']", msg="'label'")
    assert top(index, unknown) == "dataloader-worker-exception"


def test_torchrun_summary_ranks_below_the_rank_error(index):
    text = (
        '[rank0]: Traceback (most recent call last):\n[rank0]:   File "/w/train.py", line 40, in <module>\n[rank0]:     out = model(x)\n'
        "[rank0]: RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x100 and 64x10)\n"
        'Traceback (most recent call last):\n  File "/usr/bin/torchrun", line 8, in <module>\n    sys.exit(main())\n'
        '  File "/usr/lib/python3/site-packages/torch/distributed/launcher/api.py", line 263, in launch_agent\n    raise ChildFailedError(\n'
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n============================================================\n"
        "train.py FAILED\n------------------------------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n"
        "------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n  time      : 2026-11-30_01:05:41\n"
        "  host      : node1\n  rank      : 0 (local_rank: 0)\n  exitcode  : 1 (pid: 12411)\n  error_file: <N/A>\n"
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n============================================================"
    )
    answer = explain_text(text, index)
    ids = [c.id for c in answer.matches]
    assert ids[0] == "matmul-shape-mismatch" and "torchrun-child-failed" in ids


@pytest.mark.parametrize(
    "text",
    [
        "Traceback (most recent call last):\n  File \"main.py\", line 851, in <module>\n    if trainer.global_rank == 0:\nNameError: name 'trainer' is not defined",
        "KeyError: \"None of [Int64Index([0, 1, 6, 7], dtype='int64')] are in the [columns]\"",
        "AttributeError: module 'scipy' has no attribute 'float'.",  # numpy's removed alias has an entry; scipy's not
        "Segmentation fault (core dumped)",
        "Hello! How do I install the package on Windows?",
        "ValueError: could not convert string to float: 'abc'",
    ],
)
def test_abstains_on_errors_it_does_not_know(index, text):
    answer = explain_text(text, index)
    assert answer.matches == (), [(c.id, c.score) for c in answer.matches]
    assert answer_json(answer, index)["parsed"] is not None  # an abstaining answer still shows what was parsed


def test_a_users_own_module_import_error_is_never_a_confident_answer(index):
    """``cannot import name ... from 'mytools' (path)`` reads like the "(unknown location)" entry's
    template by similarity; it may be offered, never with confidence (a known weakness of fuzzy
    evidence on short templates)."""
    answer = explain_text(
        "ImportError: cannot import name 'helper' from 'mytools' (/home/u/mytools/__init__.py)", index
    )
    assert all(c.score < 0.7 for c in answer.matches), [(c.id, c.score) for c in answer.matches]


def test_the_generic_dtype_line_expecting_long_is_the_loss_target(index):
    """Long is what a loss wants of its target (the catalog files the line there); any other dtype
    pair is the generic entry, which yields to the loss entry's templates."""
    answer = explain_text("RuntimeError: expected scalar type Long but found Float", index)
    assert [c.id for c in answer.matches] == ["cross-entropy-target-dtype"]
    assert top(index, "RuntimeError: expected scalar type Half but found Float") == "expected-scalar-type-mismatch"


def test_thin_paste_with_two_close_entries_says_so(index):
    answer = explain_text("RuntimeError: Error(s) in loading state_dict for Net:", index)
    assert answer.ambiguous
    ids = {c.id for c in answer.matches[:2]}
    assert ids == {"state-dict-missing-unexpected-keys", "state-dict-size-mismatch"}


def test_captures_fill_the_fix_with_the_users_names(index):
    from explainer.render.markdown import fix_values

    text = (
        'Traceback (most recent call last):\n  File "/home/u/train.py", line 317, in <module>\n    total_loss.backward()\n'
        '  File "/home/u/.venv/lib/python3.11/site-packages/torch/autograd/__init__.py", line 208, in _make_grads\n'
        "    raise RuntimeError(\nRuntimeError: grad can be implicitly created only for scalar outputs"
    )
    answer = explain_text(text, index)
    c = answer.matches[0]
    assert c.id == "backward-non-scalar-output" and any("telling frame" in r for r in c.reasons)
    assert fix_values(answer, c)["receiver"] == "total_loss"
    md = rendered_json(answer, index, lang="en")["matches"][0]["rendered"]["markdown"]
    assert "total_loss.mean().backward()" in md and "train.py:317" in md


def _catalog():
    path = SHARED / "catalog" / "errors.jsonl"
    if not path.exists():
        return []
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]


def test_catalog_messages_match_their_entries(index):
    """The torch 2.13 message of every covered kind, and the recorded real message of GPU-only kinds."""
    rows = _catalog() or pytest.skip("needs ../shared/catalog/errors.jsonl")
    misses = []
    for d in rows:
        if d["id"] not in index.entries or d["kind"] == "log":
            continue
        if d["message_2_13"]:
            msg = f"{d['exc_type']}: {d['message_2_13']}"
        else:
            variants = [v for v in d["message_variants"] if "..." not in v and "{" not in v]
            if not variants:
                continue
            msg = (
                re.sub(r"\s*\([^()]*\)\s*$", "", variants[0])
                if variants[0].rstrip().endswith(")") and "(" in variants[0][:-1] and "e.g." in variants[0]
                else variants[0]
            )
        answer = explain_text(msg, index)
        ids = [c.id for c in answer.matches]
        excludes = set(index.entries[d["id"]]["excludes"])
        if ids and ids[0] in excludes:
            ok = True  # the message is its declared twin's too; without the telling lines it yields
        elif d["message_2_13"] is None:  # a recorded variant, not the defining message: a top-3 answer is fair
            ok = d["id"] in ids[:3]
        else:
            ok = bool(ids) and (ids[0] == d["id"] or (answer.ambiguous and d["id"] in ids[:2]))
        if not ok:
            misses.append(f"{d['id']}: got {ids[:2]} for {msg[:100]!r}")
    assert not misses, "\n".join(misses)


def test_eval_corpus_runs_to_the_end(index):
    from explainer.knowledge.evaluate import evaluate

    rep = evaluate(needs_shared("eval", "dev.jsonl"), index)
    assert rep["n"] > 50 and 0 <= rep["calibration"]["ece"] <= 1
    assert rep["parse_type_ok"] >= 0.98 and rep["parse_message_ok"] >= 0.95
    # the goals are 0.97 / 0.90 / 0.95 on the judges' larger set; these bounds guard against regressions
    assert rep["covered_top1"] >= 0.9 and rep["none_abstain"] >= 0.85 and rep["overall"] >= 0.9


def test_parse_of_live_and_pasted_agree():
    import traceback

    from explainer.parse.live import from_exception

    try:
        {}["missing"]
    except KeyError as exc:
        live = from_exception(exc)
        pasted = parse_text("".join(traceback.format_exception(exc)))
    assert live == pasted


def test_pastes_cut_at_the_bottom(index):
    # cut inside the message: the template's own beginning
    assert top(index, "RuntimeError: mat1 and mat2 shapes cannot be multi") == "matmul-shape-mismatch"
    # cut where the twins still read the same: say so, show both
    answer = explain_text("RuntimeError: grad can be implicitly created only for", index)
    assert answer.ambiguous and {c.id for c in answer.matches[:2]} == {
        "backward-non-scalar-output",
        "backward-complex-output",
    }
    # cut before the exception line: abstain, but keep the user's frame and the nearest entries
    cut = (
        '  File "/home/u/train.py", line 12, in <module>\n    loss.backward()\n'
        '  File "/usr/lib/python3/site-packages/torch/autograd/__init__.py", line 203, in _make_grads'
    )
    data = answer_json(explain_text(cut, index), index)
    assert data["matches"] == [] and data["parsed"]["user_frame"]["code"] == "loss.backward()"
    assert any(n["id"].startswith("backward-") for n in data["nearest"])  # the telling frame _make_grads


def test_a_message_cut_inside_a_quoted_name(index):
    """A paste cut inside a quoted name ("No module named 'torchvision.transforms.functional"): a
    template's placeholder that swallows the open quote is no whole match; a template quoting a name
    that begins so is the message's beginning and the more specific reading; a name other than the
    one cut (build-isolation's 'torch' inside 'torchvision') is not."""
    from explainer.match.matcher import CUT_MATCH, FULL_MATCH

    answer = explain_text("ModuleNotFoundError: No module named 'torchvision.transforms.functional", index)
    ids = [c.id for c in answer.matches]
    # (the install entry does not answer: the dotted part shows torchvision was found)
    assert ids == ["torchvision-functional-tensor-removed"], ids
    assert "build-isolation-torch-missing" not in ids
    assert all(c.score < FULL_MATCH for c in answer.matches)
    generic = explain_text("ModuleNotFoundError: No module named 'fastap", index).matches[0]
    assert generic.id == "no-module-third-party" and CUT_MATCH <= generic.score < FULL_MATCH
    # an apostrophe inside a word opens no quote; a closed quote is a whole match
    whole = explain_text("ModuleNotFoundError: No module named 'fastapi'", index).matches[0]
    assert whole.id == "no-module-third-party" and whole.score >= FULL_MATCH


def test_a_module_no_known_distribution_provides_is_not_answered_as_a_missing_install(index):
    """`unless = ["@unknown_module"]`: "No module named X" where no known distribution, the standard
    library or a library's run-time namespace provides X is as likely the project's own module: the
    install entry stays among the nearest and the answer says why; a known one is answered, and a
    folder of the user's frames still makes it the project's own."""
    tb = "Traceback (most recent call last):\n  File \"{f}\", line 3, in <module>\n    import x\nModuleNotFoundError: No module named '{m}'\n"
    for name in ("_init_paths", "vision_transformer", "my_run.run_robust_na"):
        out = answer_json(explain_text(tb.format(f="/home/u/proj/tools/train.py", m=name), index), index)
        assert out["matches"] == [] and out["nearest"][0]["id"] == "no-module-third-party", (name, out["matches"])
        head = name.split(".")[0]
        assert any(f"No known distribution provides `{head}`" in n for n in out["notes"]), out["notes"]
    for name in ("fastapi", "google.protobuf", "cv2.cv2"):
        assert top(index, tb.format(f="/home/u/proj/train.py", m=name)) == "no-module-third-party", name
    own = tb.format(f="/w/Langchain-Chatchat/chatchat/cli.py", m="chatchat.startup")
    assert top(index, own) == "project-module-not-found"


def test_a_missing_submodule_of_a_package_that_was_found_is_not_a_missing_install(index):
    """`unless = ["@found_package"]`: Python names the first part of a dotted import it cannot find, so
    "No module named 'dgl.batched_graph'" means dgl imported. The install entry stays among the nearest
    (also for a message cut inside the name), `raised_by` names the package's distribution and the notes
    say what a found package's missing submodule means; transformers' remote-code namespace gets its
    own note. A shared namespace (google.protobuf) and a package's own native core (cv2.cv2) are
    still missing installs, and a library's moved module keeps its own entry."""
    tb = "Traceback (most recent call last):\n  File \"/home/u/p/run.py\", line 3, in <module>\n    import x\nModuleNotFoundError: No module named '{m}'\n"
    for name, dist in (
        ("dgl.batched_graph", "dgl"),
        ("mmseg.datasets.samplers", "mmsegmentation"),
        ("basicsr.losses.gan_loss", "basicsr"),
    ):
        out = answer_json(explain_text(tb.format(m=name), index), index)
        assert out["matches"] == [] and out["nearest"][0]["id"] == "no-module-third-party", (name, out["matches"])
        assert out["raised_by"] == {"kind": "environment", "library": dist}, out["raised_by"]
        top_name = name.split(".")[0]
        assert any(n.startswith(f"`{top_name}` was found, but not `{name}`") for n in out["notes"]), out["notes"]
        zh = answer_json(explain_text(tb.format(m=name), index), index, lang="zh")["notes"]
        assert any(f"`{name}` 没找到" in n for n in zh), zh
    cut = explain_text("ModuleNotFoundError: No module named 'transformers_modules.Baichuan2-13B-Chat-v2", index)
    out = answer_json(cut, index)
    assert out["matches"] == [] and out["raised_by"] == {"kind": "library", "library": "transformers"}
    assert any("remote code" in n and "4.57.0" in n for n in out["notes"]), out["notes"]
    assert top(index, tb.format(m="torchvision.models.utils")) == "torchvision-models-utils-removed"
    # torch was found too: a torchvision of 0.17 or later on a torch before 2.1
    assert top(index, tb.format(m="torch._custom_ops")) == "torchvision-nms-missing"
    # an entry's answer says it itself: no second note about the found package
    moved = answer_json(explain_text(tb.format(m="torchvision.models.utils"), index), index)
    assert not any("was found, but not" in n for n in moved["notes"]), moved["notes"]


def test_what_torch_printed_before_a_cut_or_unrelated_last_line(index):
    """torch's own lines above the end of a cut paste: the launcher's ``raise ChildFailedError(``
    (the paste cut inside the exception's qualified name), c10d's bind warnings (the run then died
    of something the paste cuts short)."""
    site = "/env/lib/python3.10/site-packages/torch/distributed"
    launcher = (
        "Traceback (most recent call last):\n"
        f'  File "{site}/run.py", line 870, in run\n    elastic_launch(\n'
        f'  File "{site}/launcher/api.py", line 263, in launch_agent\n    raise ChildFailedError(\n'
        "torch.distributed.elastic.multiprocessing.errors."
    )
    assert top(index, launcher) == "torchrun-child-failed"
    bind = (
        "[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n"
        "[E socket.cpp:472] [c10d] The server socket has failed to listen on any local network address.\n"
        "Traceback (most recent call last):\n"
        f'  File "{site}/distributed_c10d.py", line 3696, in barrier\n    work = default_pg.barrier(opts=opts)\n'
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1"
    )
    assert top(index, bind) == "dist-address-in-use"


def test_a_similar_message_about_another_file_is_not_the_template(index):
    """Fuzzy similarity needs the files (and folders) a template names itself: pip's missing
    requirements file reads like "Python.h: No such file or directory", and is another error."""
    pip = "ERROR: Could not open requirements file: [Errno 2] No such file or directory: 'requirements.txt'"
    assert top(index, pip) is None
    assert top(index, "fatal error: Python.h: No such file or directory") == "python-h-missing"
    assert (
        top(index, "x.c:4:10: fatal error: THC/THCDeviceUtils.cuh: No such file or directory") == "thc-header-removed"
    )


def test_a_generic_message_is_not_taken_for_a_cut_template(index):
    # "'method' object is not iterable" normalises to the same words as any "'X' object is not
    # iterable": equal is not "cut", so a user's own TypeError is not claimed by the optimizer entry
    for name in ("int", "DataLoader", "NoneType"):
        answer = explain_text(f"TypeError: '{name}' object is not iterable", index)
        assert not answer.matches or answer.matches[0].id != "optimizer-params-not-iterable", (name, answer.matches)
    answer = explain_text("TypeError: 'method' object is not iterable", index)
    assert answer.matches and answer.matches[0].id == "optimizer-params-not-iterable"


# --- the normaliser and the templates meet pastes as they are written ---------------------------------


def test_a_message_that_is_one_quoted_span_keeps_its_words(index):
    from explainer.normalize import normalize

    # KeyError prints its message's repr: the quotes go, the words stay; a single quoted name is a value
    assert normalize("'unexpected key \"module.fc.weight\" in state_dict'") == "unexpected key <*> in state_dict"
    assert normalize("'fc.weight'") == "<*>"
    answer = explain_text("KeyError: 'unexpected key \"module.fc.weight\" in state_dict'", index)
    assert answer.matches[0].id == "state-dict-missing-unexpected-keys" and answer.matches[0].score > 0.95


def test_digits_glued_to_letters_normalise_as_the_template_does():
    from explainer.normalize import normalize
    from explainer.patterns import literal_text

    paste = normalize("Expected 3D (unbatched) or 4D (batched) input to conv2d")
    assert paste == normalize(literal_text("Expected {n}D (unbatched) or {m}D (batched) input to conv2d"))
    assert normalize("lr 1e-5, conv2d, fp16") == "lr <*>, conv2d, fp16"  # exponents and names untouched


@pytest.mark.parametrize(
    "text",
    [
        "ValueError: Expected more than 1 value per channel when training, got input size torch.Size([1, 4])",
        "IndexError: Target 7 is out of bounds",  # the template ends with a full stop; prose drops it
        "the error says IndexError: Target 7 is out of bounds and nothing else",
    ],
)
def test_a_missing_closing_full_stop_is_still_a_full_template_match(index, text):
    top = explain_text(text, index).matches[0]
    assert top.score > 0.9 and "template" in top.reasons[0] and "opening" not in top.reasons[0], top


def test_older_wordings_are_answered(index):
    cases = {
        "RuntimeError: Input, output and indices must be on the current device": "device-mismatch",
        "RuntimeError: Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU (while checking arguments for addmm)": "device-mismatch",
        "RuntimeError: expected device cuda:0 but got device cpu": "device-mismatch",
        "RuntimeError: Assertion `cur_target >= 0 && cur_target < n_classes' failed.  at /pytorch/aten/src/THNN/generic/ClassNLLCriterion.c:94": "cross-entropy-target-out-of-bounds",
        "KeyError: 'unexpected key \"module.encoder.weight\" in state_dict'": "state-dict-missing-unexpected-keys",
    }
    for text, want in cases.items():
        assert explain_text(text, index).matches[0].id == want, text


def test_an_mps_out_of_memory_gets_no_cuda_advice(index):
    """Another backend's message is no evidence for a CUDA-only entry, by similarity or by signal
    ('Tried to allocate' is in both)."""
    mps = (
        "RuntimeError: MPS backend out of memory (MPS allocated: 17.50 GB, other allocations: 1.20 GB, max allowed: "
        "18.13 GB). Tried to allocate 256.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable "
        "upper limit for memory allocations (may cause system failure)."
    )
    assert all(m.id != "cuda-out-of-memory" for m in explain_text(mps, index).matches)
    cuda = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 8.00 GiB"
    assert explain_text(cuda, index).matches[0].id == "cuda-out-of-memory"


def test_a_signal_counts_on_any_line_of_the_paste(index):
    """A line printed before the traceback (the model load, a warning in the log) is evidence too."""
    paste = (
        "model = AutoModel.from_pretrained(name, torch_dtype=torch.float16)\nEpoch 1\n"
        'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    scaler.step(optimizer)\n'
        "ValueError: Attempting to unscale FP16 gradients.\n"
    )
    top = explain_text(paste, index).matches[0]
    assert top.id == "amp-unscale-fp16-grads" and any("torch_dtype=torch.float16" in r for r in top.reasons)
    assert "lines" not in parse_text(paste).as_json()  # kept for matching, not part of the JSON model


def test_eval_counts_an_allowed_abstention_in_top3_and_leaves_empty_pastes_out_of_calibration(index, tmp_path):
    import json as _json

    from explainer.knowledge.evaluate import evaluate

    rows = [
        {
            "id": "a",
            "text": "RuntimeError: grad can be implicitly created only for scalar outputs",
            "expected_id": "backward-non-scalar-output",
        },
        # covered, but too thin to answer, and the corpus allows an abstention: right in top-1 and top-3 alike
        {"id": "b", "text": "it crashed again", "expected_id": "backward-non-scalar-output", "also_ok": ["none"]},
    ]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(_json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    rep = evaluate(corpus, index)
    assert rep["covered_top1"] == 1.0 and rep["covered_top3"] == 1.0
    rows.append({"id": "c", "text": "\n\n", "expected_id": "none"})  # nothing to read: no certain abstention
    corpus.write_text("\n".join(_json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert evaluate(corpus, index)["calibration"] == rep["calibration"]


def test_entries_that_share_an_opening_are_a_tie_not_two_confident_answers(index):
    """A paste cut after the opening two templates share: both are answers, the answer says it is
    ambiguous, their confidence says so, and the order is not the ids' alphabet."""
    answer = explain_text("RuntimeError: Error(s) in loading state_dict for Net:", index)
    ids = [m.id for m in answer.matches]
    assert set(ids[:2]) == {"state-dict-missing-unexpected-keys", "state-dict-size-mismatch"}
    assert answer.ambiguous and all(m.score < 0.6 for m in answer.matches[:2])
    assert any("ties with" in r for r in answer.matches[0].reasons)
    zh = answer_json(answer, index, lang="zh")["matches"][0]["reasons"]
    assert any("并列" in r for r in zh)
    # the rest of the message tells them apart again
    full = explain_text(
        'RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "fc.weight".', index
    )
    assert (
        full.matches[0].id == "state-dict-missing-unexpected-keys"
        and full.matches[0].score > 0.95
        and not full.ambiguous
    )


def test_an_opening_is_worth_what_it_holds_of_its_template():
    from explainer.patterns import pattern_features

    long = "Error(s) in loading state_dict for {cls}:\n\tsize mismatch for {key}: copying a param with shape {a} from checkpoint, the shape in current model is {b}."
    assert 0 < pattern_features(long, "")["head_share"] < 0.5
    assert pattern_features("Target {label} is out of bounds.", "")["head_share"] == 1.0


def test_a_dataloader_worker_error_keeps_the_users_loop_line_and_explains_the_workers_error(index):
    """The worker's error re-raised in the main process: where = the user's `for batch in loader:`
    (the worker's frames are all torch's collate), the answer = the worker's own error."""
    from .conftest import FIXTURES

    text = (FIXTURES / "pastes" / "dataloader_worker_stack.txt").read_text(encoding="utf-8")
    answer = explain_text(text, index)
    uf = answer.parsed.user_frame
    assert (uf.file, uf.line, uf.code) == ("/home/dev/proj/train.py", 14, "for batch in loader:")
    assert answer.parsed.exc_type == "RuntimeError" and answer.parsed.message.startswith("stack expects")
    assert answer.matches[0].id == "stack-unequal-size"
    assert [c.relation for c in answer.parsed.chain] == ["worker"]


def test_an_unknown_worker_error_falls_back_to_the_wrappers_entry(index):
    from .conftest import FIXTURES

    text = (FIXTURES / "pastes" / "dataloader_worker_keyerror.txt").read_text(encoding="utf-8")
    answer = explain_text(text, index)
    assert answer.parsed.exc_type == "KeyError"
    assert answer.matches[0].id == "dataloader-worker-exception"
    uf = answer.parsed.user_frame
    assert uf.file == "/home/dev/proj/train2.py" and "__getitem__" == uf.function  # the dataset's own line


def test_an_opening_the_message_goes_past_differently_is_not_also_possible(index):
    """'Error(s) in loading state_dict for Net:' opens both the missing-keys and the size-mismatch
    templates; a paste showing the Missing key(s) line matches the first whole, so the second (whose
    template needs a 'size mismatch for' line the paste does not have) is not offered beside it."""
    from explainer.i18n import reason

    text = (
        'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    model.load_state_dict(sd)\n'
        "RuntimeError: Error(s) in loading state_dict for Net:\n"
        '\tMissing key(s) in state_dict: "fc.weight", "fc.bias". \n'
    )
    answer = explain_text(text, index, top=10)
    assert [m.id for m in answer.matches] == ["state-dict-missing-unexpected-keys"]
    demoted = next(c for c in answer.candidates if c.id == "state-dict-size-mismatch")
    assert demoted.score < 0.5 and "goes on differently" in demoted.reasons[0]
    assert "不同" in reason(demoted.reasons[0], "zh")
    # with only the shared opening, both stay possible: the paste cannot tell them apart
    cut = explain_text("RuntimeError: Error(s) in loading state_dict for Net:", index)
    assert {"state-dict-missing-unexpected-keys", "state-dict-size-mismatch"} <= {m.id for m in cut.matches[:3]}


@pytest.mark.parametrize(
    ("message", "cause", "fix"),
    [
        ("RuntimeError: No CUDA GPUs are available", "no-visible-gpu", "expose-the-gpu"),
        (
            "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
            "installed a driver from http://www.nvidia.com/Download/index.aspx",
            "container-driver",
            "container-gpu-access",
        ),
        (
            "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU "
            "driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx "
            "Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your "
            "version of the CUDA driver.",
            "new-wheel-old-driver",
            "match-wheel-to-driver",
        ),
    ],
)
def test_prose_fixes_follow_the_cause_the_message_points_to(index, message, cause, fix):
    """Prose-only fixes (nothing runs on a CPU) name their causes in a `toml addresses` fence; a fix
    for every cause waits behind one written for the cause the paste points to."""
    answer = explain_text(message, index)
    assert answer.matches[0].id == "cuda-driver-too-old"
    advice = advice_for(answer, index, answer.matches[0])
    assert advice["causes"][0]["id"] == cause
    assert advice["fixes"][0]["id"] == fix


WO_UNSAFE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
    "`True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source."
)
WO_DOCS = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with weights_only "
    "https://pytorch.org/docs/stable/generated/torch.load.html."
)


@pytest.mark.parametrize(
    ("message", "entry", "cause", "fix"),
    [
        (  # torch 2.13's text for a blocked module (two blank lines before the reason)
            f"Weights only load failed. {WO_UNSAFE}\n\n\nTrying to load unsupported GLOBAL posix.system whose module "
            f"posix is blocked.{WO_DOCS}",
            "weights-only-unsupported-global",
            "blocked-module",
            "refuse-blocked",
        ),
        (
            f"Weights only load failed. ``torch.distributed.tensor`` must be imported to load DTensors\n {WO_UNSAFE}\n{WO_DOCS}",
            "weights-only-unsupported-global",
            "module-not-imported",
            "import-first",
        ),
        (  # a file that is no pickle at all: the generic "Please file an issue" text no longer claims it
            f"Weights only load failed. {WO_UNSAFE}\nPlease file an issue with the following so that we can make "
            f"`weights_only=True` compatible with your use case: WeightsUnpickler error: \n\nUnsupported operand 60{WO_DOCS}",
            "invalid-load-key",
            None,
            None,
        ),
    ],
)
def test_each_weights_only_reason_gets_its_own_answer(index, message, entry, cause, fix):
    text = (
        'Traceback (most recent call last):\n  File "load.py", line 3, in <module>\n    state = torch.load(path)\n'
        '  File "/venv/lib/python3.11/site-packages/torch/serialization.py", line 1529, in load\n'
        "    raise pickle.UnpicklingError(_get_wo_message(str(e))) from None\n"
        f"_pickle.UnpicklingError: {message}\n"
    )
    answer = explain_text(text, index)
    assert [m.id for m in answer.matches][:1] == [entry] and not answer.ambiguous
    if cause:
        advice = advice_for(answer, index, answer.matches[0])
        assert (advice["causes"][0]["id"], advice["fixes"][0]["id"]) == (cause, fix)


def test_the_readme_states_the_matchers_scores():
    """The README's "Matching and its confidence" quotes the named constants' values."""
    from explainer.match import matcher as m

    from .conftest import ROOT

    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    for phrase in (
        f"a full template match {m.FULL_MATCH:.2f}",
        f"a match at the message's start {m.START_MATCH:.2f}",
        f"inside it {m.INSIDE_MATCH:.2f}",
        f"opening only {m.OPENING_BASE:.2f}–{m.OPENING_BASE + m.OPENING_SPAN:.2f}",
        f"{m.OPENING_CONTRADICTED:.2f} when the message goes on past it differently",
        f"maps to `{m.FUZZY_MAX}·σ({m.FUZZY_SLOPE}·(s − {m.FUZZY_MID}))`",
        f"costs ×{m.TYPE_MISSING}, an incompatible one ×{m.TYPE_MISMATCH}",
        f"closes {m.FRAME_GAIN * 100:.0f} % of the gap to 1, a signal line {m.SIGNAL_GAIN * 100:.0f} %",
        f"The threshold {m.THRESHOLD} decides abstention",
    ):
        assert phrase in text, phrase


def test_reasons_are_codes_rendered_in_each_language(index):
    """A reason is its English text plus the coded parts it was made of; Chinese is rendered from the
    codes (no translation of English text), and it survives pickling and JSON."""
    import pickle

    from explainer.i18n import TEXTS, Reason, reason

    r = Reason("full").plus("type_fits", type="RuntimeError").plus("from", kind="cause")
    assert r == "full template match; type RuntimeError fits (from the cause exception)"
    assert reason(r, "zh") == "报错信息与模板完全匹配；异常类型 RuntimeError 相符（来自直接原因异常）"
    assert pickle.loads(pickle.dumps(r)).parts == r.parts and json.loads(json.dumps([r])) == [str(r)]
    assert all(set(t) == {"en", "zh"} for t in TEXTS.values())
    answer = explain_text("RuntimeError: grad can be implicitly created only for scalar outputs", index)
    assert all(isinstance(x, Reason) for c in answer.candidates for x in c.reasons)
    zh = answer_json(answer, index, lang="zh")["matches"][0]["reasons"]
    assert zh and all(not any(w in x for w in ("template", "match", "type ")) for x in zh), zh


# the report PyTorch's issue template asks for (python -m torch.utils.collect_env), shortened
COLLECT_ENV = """Collecting environment information...
PyTorch version: 2.4.1+cu118
Is debug build: False
CUDA used to build PyTorch: 11.8
ROCM used to build PyTorch: N/A

OS: Ubuntu 20.04.6 LTS (x86_64)
GCC version: (Ubuntu 9.4.0-1ubuntu1~20.04.2) 9.4.0

Python version: 3.10.14 (main, May  6 2024, 19:42:50) [GCC 11.2.0] (64-bit runtime)
Is CUDA available: True
CUDA runtime version: 11.8.89
GPU models and configuration:
GPU 0: NVIDIA GeForce RTX 3090
GPU 1: NVIDIA GeForce RTX 3090

Nvidia driver version: 525.147.05
cuDNN version: Probably one of the following:
/usr/lib/x86_64-linux-gnu/libcudnn.so.8.6.0
/usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8.6.0
Is XNNPACK available: True

CPU:
Architecture:                    x86_64
CPU op-mode(s):                  32-bit, 64-bit
Vulnerability Spectre v2:        Mitigation; Retpolines, IBPB conditional

Versions of relevant libraries:
[pip3] numpy==1.26.4
[pip3] torch==2.4.1+cu118
[conda] pytorch-cuda 11.8 h7e8668a_5 pytorch
"""


@pytest.mark.parametrize(
    "paste,expected",
    [
        (
            "### Versions\n"
            + COLLECT_ENV
            + "\n### Error\n```\nRuntimeError: mat1 and mat2 shapes cannot be multiplied "
            "(16x2048 and 1024x10)\n```",
            "matmul-shape-mismatch",
        ),
        # an error no entry knows: the report's "driver version" and "cuDNN" lines are no evidence
        (
            "我的环境：\n"
            + COLLECT_ENV
            + "\n运行 demo 时报错：\nValueError: config file demo.yaml has no key 'model'\n",
            None,
        ),
        ("Environment:\n" + COLLECT_ENV + "\nThe script just exits, no error is printed.", None),
    ],
)
def test_the_collect_env_report_describes_the_machine_not_the_error(index, paste, expected):
    answer = explain_text(paste, index)
    assert (answer.matches[0].id if answer.matches else None) == expected, answer.matches
    assert not {"cuda-driver-too-old", "cudnn-no-valid-algorithm"} & {m.id for m in answer.matches}


@pytest.mark.parametrize(
    "paste",
    [
        # the poster's line with "报错" reads more like an error than their English sentence quoting it
        "训练到第二个 epoch 就报错了，看了半天也没看出是哪里的问题，网上说是版本问题\n"
        "The log only says The size of tensor a (64) must match the size of tensor b (32) at non-singleton "
        "dimension 1 and then my script stops. I resized the masks already.",
        "I get an error when the masks are bigger than the images, I am not sure what the error means. The error "
        "states: The size of tensor a (245) must match the size of tensor b (244) at non-singleton dimension 2. "
        "Do I need to resize my images?\n\n我试过改 batch size，还是报错。",
    ],
)
def test_a_typeless_paste_is_matched_on_its_other_error_like_lines(index, paste):
    parsed = parse_text(paste)
    assert parsed.exc_type is None
    assert any("non-singleton dimension" in alt for alt in (parsed.message, *parsed.alternatives))
    assert top(index, paste) == "broadcast-size-mismatch"


_BARE_FORWARD = """Traceback (most recent call last):
  File "main.py", line 12, in <module>
    y = net(x)
  File "/opt/conda/lib/python3.8/site-packages/torch/nn/modules/module.py", line 727, in _call_impl
    result = self.forward(*input, **kwargs)
  File "/opt/conda/lib/python3.8/site-packages/torch/nn/modules/module.py", line 175, in _forward_unimplemented
    raise NotImplementedError
NotImplementedError"""

_BARE_EOF = """Traceback (most recent call last):
  File "eval.py", line 8, in <module>
    ckpt = torch.load("last.pt")
  File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 1040, in load
    return _legacy_load(opened_file, map_location, pickle_module, **pickle_load_args)
  File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 1258, in _legacy_load
    magic_number = pickle_module.load(f, **pickle_load_args)
EOFError"""


@pytest.mark.parametrize(
    "paste,expected",
    [
        (_BARE_FORWARD, "module-missing-forward"),  # torch before 1.13 raised it without a message
        (_BARE_EOF, "load-empty-or-truncated"),
        # the frame alone is not enough: another type from it, or the type without the frame
        (_BARE_FORWARD.replace("NotImplementedError", "ValueError"), None),
        ("NotImplementedError", None),
        ("训练脚本一运行就报 EOFError，什么信息都没有", None),
    ],
)
def test_a_bare_exception_from_the_frame_that_raises_it(index, paste, expected):
    assert top(index, paste) == expected


_LINEAR_TB = """Traceback (most recent call last):
  File "train.py", line 30, in <module>
    out = model(x)
  File "/usr/lib/python3.8/site-packages/torch/nn/modules/module.py", line 889, in _call_impl
    result = self.forward(*input, **kwargs)
  File "/usr/lib/python3.8/site-packages/torch/nn/modules/linear.py", line 94, in forward
    return F.linear(input, self.weight, self.bias)
RuntimeError: {message}"""


@pytest.mark.parametrize(
    "message",
    [
        "expected scalar type Double but found Float",
        "Expected object of scalar type Double but got scalar type Float for argument #2 'weight'",
    ],
)
def test_an_older_generic_dtype_wording_is_told_apart_by_its_frames(index, message):
    """Before 1.12 a Linear layer fed float64 said what any kernel says: the frame names the matrix
    multiply; without it (or under a convolution's frame) the generic entry answers."""
    assert top(index, _LINEAR_TB.format(message=message)) == "matmul-dtype-mismatch"
    assert top(index, "RuntimeError: " + message) == "expected-scalar-type-mismatch"
    conv = (
        _LINEAR_TB.format(message=message).replace("linear.py", "conv.py").replace("F.linear(", "self._conv_forward(")
    )
    assert top(index, conv) == "expected-scalar-type-mismatch"


def test_eval_reports_the_misses_of_a_corpus_without_ids_and_reads_translated_and_module_types(index, tmp_path):
    import json as _json

    from explainer.knowledge.evaluate import evaluate, format_report, label_message

    rows = [{"text": "RuntimeError: grad can be implicitly created only for scalar outputs", "expected_id": "none"}]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(_json.dumps(rows[0]) + "\n", encoding="utf-8")
    assert "case 1" in format_report(evaluate(corpus, index))  # it printed nothing but a TypeError before
    assert (
        label_message("运行时错误：Given groups=1, weight of size [64, 3, 7, 7]")
        == "given groups=1, weight of size [64, 3, 7, 7]"
    )
    assert (
        label_message("cv2.error: OpenCV(4.8.1) error: (-215:Assertion failed)")
        == "opencv(4.8.1) error: (-215:assertion failed)"
    )
    assert label_message("\x1b[0;31mKeyError\x1b[0m: 'label'") == "label"
    assert label_message("**RuntimeError**: CUDA error: out of memory") == "cuda error: out of memory"
    assert label_message("C:\\proj\\infer.py:47: FutureWarning: You are using torch.load") == "you are using torch.load"


_SPAWN_CHILD = r"""Traceback (most recent call last):
  File "D:\work\cls\train.py", line 58, in <module>
    for images, labels in loader:
  File "D:\Anaconda3\envs\cls\lib\site-packages\torch\utils\data\dataloader.py", line 438, in __iter__
    return self._get_iterator()
  File "D:\Anaconda3\envs\cls\lib\site-packages\torch\utils\data\dataloader.py", line 386, in _get_iterator
    return _MultiProcessingDataLoaderIter(self)
  File "D:\Anaconda3\envs\cls\lib\multiprocessing\reduction.py", line 60, in dump
    ForkingPickler(file, protocol).dump(obj)
AttributeError: Can't pickle local object 'build_loader.<locals>.collate'
Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "D:\Anaconda3\envs\cls\lib\multiprocessing\spawn.py", line 116, in spawn_main
    exitcode = _main(fd, parent_sentinel)
  File "D:\Anaconda3\envs\cls\lib\multiprocessing\spawn.py", line 126, in _main
    self = reduction.pickle.load(from_parent)
EOFError: Ran out of input"""


def test_a_spawned_childs_eof_yields_to_the_parents_error(index):
    """On Windows (spawn) the child prints last: it could not read what its parent failed to pickle.
    The final type read stays the child's; the answer is the parent's error."""
    assert parse_text(_SPAWN_CHILD).exc_type == "EOFError"
    assert top(index, "Windows 上 num_workers=4 就报错：\n" + _SPAWN_CHILD) == "dataloader-pickle-local-object"
    # an EOFError from torch.load itself is still the truncated checkpoint
    assert top(index, _BARE_EOF.replace("EOFError", "EOFError: Ran out of input")) == "load-empty-or-truncated"


def test_a_chinese_lead_in_line_is_not_the_message_of_a_typeless_paste():
    paste = "服务器上跑 mmdetection 训练，日志打印完配置之后直接段错误退出了，什么报错信息都没有：\nSegmentation fault (core dumped)"
    assert parse_text(paste).message == "Segmentation fault (core dumped)"


def test_a_message_that_reads_as_a_whole_template_but_quotes_another_name_is_not_its_cut_beginning(index):
    tb = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n'
        "    from torch.utils.tensorboard import SummaryWriter\n"
        '  File "/home/ai/envs/det/lib/python3.8/site-packages/torch/utils/tensorboard/__init__.py", line 4, in <module>\n'
        "    LooseVersion = distutils.version.LooseVersion\n"
        "AttributeError: module 'distutils' has no attribute 'version'"
    )
    assert top(index, tb) is None  # it read as a cut "module 'torch' has no attribute ... (consider renaming"
    assert top(index, "AttributeError: module 'torch' has no attribute 'concatenate'") == "torch-attribute-missing"
    assert top(index, "RuntimeError: mat1 and mat2 shapes cannot be multi") == "matmul-shape-mismatch"  # a real cut


def test_the_old_target_dtype_wording_without_its_call_suffix_is_the_loss_entry(index):
    msg = "RuntimeError: Expected object of scalar type Long but got scalar type Float for argument #2 'target'"
    assert top(index, msg) == "cross-entropy-target-dtype"
    assert top(index, msg + " in call to _thnn_nll_loss_forward") == "cross-entropy-target-dtype"
    assert top(index, "RuntimeError: expected scalar type Long but found Float") == "cross-entropy-target-dtype"


def test_a_complete_message_is_not_the_cut_beginning_of_a_template_with_other_numbers(index):
    """Numbers normalise to placeholders: "cuda runtime error (9)" must not read as the cut-off
    beginning of "cuda runtime error (59) : device-side assert triggered" (nor of (2) or (3))."""
    assert explain_text("RuntimeError: cuda runtime error (9)", index, budget=None).matches == ()
    assert top(index, "RuntimeError: cuda runtime error (59)") == "cuda-device-side-assert"
    assert top(index, "RuntimeError: cuda runtime error (2) : out of me") == "cuda-out-of-memory"


def test_a_long_message_is_matched_on_the_words_it_ends_with(index):
    """torch.load's weights-only failure opens with a long preamble and names what failed last: the
    candidates come from the whole message, not its first few hundred characters."""
    preamble = (
        "Weights only load failed. In PyTorch 2.6, we changed the default value of the weights_only argument "
        "in torch.load from False to True. Re-running torch.load with weights_only set to False will likely "
        "succeed, but it can result in arbitrary code execution. Do it only if you got the file from a trusted "
        "source. Please file an issue with the following so that we can make weights_only=True compatible with "
        "your use case: "
    )
    assert len(preamble) > 400
    assert top(index, "_pickle.UnpicklingError: " + preamble + "WeightsUnpickler error: Unsupported operand 118") == (
        "invalid-load-key"
    )


@pytest.mark.parametrize(
    "paste",
    [
        "Inference ERROR: list index out of range",
        "AttributeError: 'SentenceTransformerModel' object has no attribute 'encode'",
        "TypeError: 'NoneType' object is not subscriptable",
    ],
)
def test_cpythons_own_wording_is_never_merely_similar_to_an_entry(index, paste):
    """A message CPython writes (after a log's label, too) reads like many templates ("index out of
    range in self"): it answers through a template that matches it, or not at all."""
    answer = explain_text(paste, index, budget=None)
    assert all(m.tier == 1 for m in answer.matches), [(m.id, m.reasons) for m in answer.matches]


def test_a_warning_printed_on_the_way_does_not_answer_a_native_crash(index):
    """A logger's warning earlier in the output is a signal of its entry, but not when the process then
    died in native code (MPSGraph's LLVM error, a failed assertion, a signal): the warning is not why."""
    warning = (
        "Some weights of BertForSequenceClassification were not initialized from the model checkpoint at "
        "bert-base-uncased and are newly initialized: ['classifier.bias', 'classifier.weight']\n"
        "You should probably TRAIN this model on a down-stream task to be able to use it for predictions "
        "and inference.\n"
    )
    alone = explain_text(warning, index, budget=None)
    assert alone.matches and alone.matches[0].id == "hf-weights-newly-initialized"
    crash = warning + "step 0\nLLVM ERROR: Failed to infer result type(s).\nzsh: abort      python train.py\n"
    assert all(m.id != "hf-weights-newly-initialized" for m in explain_text(crash, index, budget=None).matches)


def test_a_warning_the_paste_goes_on_to_fail_after_answers_nothing(index):
    """A warning above a traceback cut before its exception line, or above a kernel's assertion cut inside
    its first line: the failure is the part not pasted; neither the warning's entry nor an entry its words
    happen to match answers (they stay among the nearest). A warning raised as an error ends its own
    traceback and is still answered."""
    warning = (
        "/env/lib/python3.10/site-packages/torch/optim/lr_scheduler.py:139: UserWarning: Detected call of "
        "`lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in "
        "the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result "
        "in PyTorch skipping the first value of the learning rate schedule.\n"
        '  warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. ", UserWarning)\n'
    )
    assert top(index, warning) == "lr-scheduler-before-optimizer-step"
    traceback = (
        'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    main()\n'
        '  File "train.py", line 61, in main\n    for batch in loader:\n'
    )
    kernel = "/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: void nll_loss_forward_reduce_cuda_kernel_2d:\n"
    for failed in (warning + "epoch 1\n" + traceback, warning + kernel):
        answer = explain_text(failed, index)
        assert not answer.matches, failed
        assert answer.candidates and answer.candidates[0].id == "lr-scheduler-before-optimizer-step"
    raised = traceback + "UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`.\n"
    assert top(index, raised) == "lr-scheduler-before-optimizer-step"


def test_similar_boilerplate_without_the_telling_word_is_no_answer(index):
    """The fuzzy tier needs a template's rarest word of its first clause: setuptools' "package directory
    ... does not exist" is not torch.save's "Parent directory ... does not exist"; the footer every
    torch.compile error carries says nothing of which error it is."""
    assert top(index, "error: package directory 'torch/cuda' does not exist") != "save-parent-dir-missing"
    assert top(index, "RuntimeError: Parent directory /mnt/ckpt/run3 does not exist.") == "save-parent-dir-missing"
    footer = (
        "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if you're reporting "
        'a bug to PyTorch). For even more developer context, set TORCH_LOGS="+dynamo"'
    )
    assert not explain_text(footer, index).matches


def test_a_private_attribute_a_library_sets_is_no_numpy_method(index):
    """``'Tensor' object has no attribute '_trt'``: a converter's own mark on the tensors it made, not a
    NumPy or list method used on a tensor (which a public name is)."""
    assert top(index, "AttributeError: 'Tensor' object has no attribute '_trt'") is None
    assert top(index, "AttributeError: 'Tensor' object has no attribute 'astype'") == "tensor-numpy-method"


def test_retyped_quotes_and_a_logs_separator_read_as_python_writes_them(index):
    """A missing module a poster retyped in double quotes or backticks is still a module no distribution
    provides (no third-party install to suggest); CPython's own words behind loguru's "mod:fn:85 - " are
    no torch error."""
    for retyped in ('No module named "quokkalib"', "ModuleNotFoundError: No module named `quokkalib`"):
        assert top(index, retyped) is None, retyped
    assert top(index, "magic_pdf.user_api:parse_pdf:85 - list index out of range") is None


def test_the_older_releases_wordings_of_curated_errors(index):
    """Wordings of other releases, confirmed in their sources (data/torchhistory: rnn.py's check_input
    in 2.2.2-2.10.0; torch/_dynamo/utils.py's run_node in 2.7 and 2.9), reach the curated entry."""
    cases = {
        "ValueError: input must have the type torch.float32, got type torch.float64": "rnn-input-dtype",
        "torch._dynamo.exc.TorchRuntimeError: Dynamo failed to run FX node with fake tensors: call_function "
        "<built-in function add>(*(FakeTensor(..., size=(2,)), FakeTensor(..., size=(3,))), **{}): got "
        "RuntimeError('The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0')": (
            "dynamo-fake-tensor-error"
        ),
    }
    for text, want in cases.items():
        got = explain_text(text, index, budget=None).matches
        assert got and got[0].id == want, (text[:40], got[:2])


def test_a_signal_without_one_literal_is_looked_for_by_its_branches_literals(index):
    """An expression that is an alternation at its top requires one of its branches' literals: the
    paste is searched with the expression only when it holds one of them, and is still found then."""
    from explainer.match.matcher import _branch_literals
    from explainer.model import Parsed

    assert _branch_literals(r"binarySearchForMultinomial|sampleMultinomialOnce") == [
        "binarysearchformultinomial",
        "samplemultinomialonce",
    ]
    assert _branch_literals(r"(a|b)cdefg") == []  # no alternation at the top
    assert _branch_literals(r"(?i)abcd|efgh") == []  # inline flags: left whole
    assert _branch_literals(r"abcd\|x|efgh") == ["abcd", "efgh"]  # an escaped bar splits nothing
    assert _branch_literals(r"abcd|x") == []  # a branch that requires nothing of its own
    matcher = index.matcher
    assert matcher._signal_any  # the knowledge base has such signals
    k, alts = next(iter(matcher._signal_any.items()))
    eid = matcher.signal_rx[k][0]
    found = matcher._signals(Parsed(exc_type="RuntimeError", message=f"failed: {alts[0]} (see above)"))
    assert eid in found  # (each such signal's first branch is its literal followed by nothing required)
    assert eid not in matcher._signals(Parsed(exc_type="RuntimeError", message="nothing of the kind here"))


def test_the_users_code_lines_are_no_signal(index):
    """What the user wrote (a diffusers call with torch_dtype=torch.float16, a comment naming
    GradScaler) is not what torch printed: under their frames, also in an earlier traceback of a
    chain, it gives no entry its signal (the robustness matrix checks every reproducer this way)."""
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/app.py", line 9, in load\n'
        '    pipe = load_pipe(revision="fp16", torch_dtype=torch.float16)  # GradScaler, backward()\n'
        '  File "/home/me/app.py", line 4, in load_pipe\n'
        '    raise OSError("weights not found")\n'
        "OSError: weights not found\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/home/me/app.py", line 20, in <module>\n'
        "    main(torch_dtype=torch.float16)\n"
        "RuntimeError: could not start the demo\n"
    )
    answer = explain_text(paste, index)
    assert "amp-unscale-fp16-grads" not in [c.id for c in answer.candidates]
    assert not any("torch_dtype" in line for line in parse_text(paste).lines)
    # an unindented line after a header (no code shown) is kept: it may be the error itself
    bare = parse_text('  File "/home/me/app.py", line 3, in f\nRuntimeError: CUDA error: out of memory\n')
    assert any("out of memory" in line for line in bare.lines)


def test_cuda_hint_lines_are_no_evidence_for_any_cuda_entry(index):
    """torch prints the same hints under every CUDA error (asynchronous reporting, CUDA_LAUNCH_BLOCKING,
    TORCH_USE_CUDA_DSA): a CUDA error no entry knows is not answered because its hints read like
    another entry's pattern; an entry's own error with the hints still is."""
    hints = (
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
        "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
    )
    out = answer_json(
        explain_text("RuntimeError: CUDA error: peer mapping resources exhausted\n" + hints, index), index
    )
    assert out["matches"] == [], out["matches"]
    known = "RuntimeError: CUDA error: an illegal memory access was encountered\n" + hints
    assert top(index, known) == "cuda-illegal-memory-access"


def test_a_spawned_workers_ran_out_of_input_is_no_empty_checkpoint(index):
    """`EOFError: Ran out of input` under multiprocessing's spawn_main is a DataLoader worker whose parent
    failed while sending it (Windows, macOS): load-empty-or-truncated stays among the nearest; under
    torch.load it answers."""
    child = (
        'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
        '  File "C:\\\\Python38\\\\lib\\\\multiprocessing\\\\spawn.py", line 116, in spawn_main\n'
        "    exitcode = _main(fd, parent_sentinel)\n"
        '  File "C:\\\\Python38\\\\lib\\\\multiprocessing\\\\spawn.py", line 126, in _main\n'
        "    self = reduction.pickle.load(from_parent)\nEOFError: Ran out of input\n"
    )
    out = answer_json(explain_text(child, index), index)
    assert out["matches"] == [] and out["nearest"][0]["id"] == "load-empty-or-truncated", out["matches"]
    load = (
        "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    m = torch.load('a.pt')\n"
        '  File "/env/lib/python3.10/site-packages/torch/serialization.py", line 1040, in load\n'
        "    return _legacy_load(opened_file, map_location, pickle_module, **pickle_load_args)\n"
        '  File "/env/lib/python3.10/site-packages/torch/serialization.py", line 1258, in _legacy_load\n'
        "    magic_number = pickle_module.load(f, **pickle_load_args)\nEOFError: Ran out of input\n"
    )
    assert top(index, load) == "load-empty-or-truncated"


def test_torch_1_1_dataloader_reraise_is_the_worker_wrapper(index):
    """torch 1.1 and earlier re-raised a worker's error as its traceback text (`raise
    batch.exc_type(batch.exc_msg)` in `_process_next_batch`), without today's "Caught ... in DataLoader
    worker process" line: still the worker wrapper."""
    old = (
        'Traceback (most recent call last):\n  File "train.py", line 10, in <module>\n    for x in loader:\n'
        '  File "/env/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 637, in __next__\n'
        "    return self._process_next_batch(batch)\n"
        '  File "/env/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 658, in _process_next_batch\n'
        "    raise batch.exc_type(batch.exc_msg)\nAttributeError: Traceback (most recent call last):\n"
        '  File "/env/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 138, in _worker_loop\n'
        "    samples = collate_fn([dataset[i] for i in batch_indices])\n"
        '  File "/home/u/data.py", line 20, in __getitem__\n    img = self.transform(img)\n'
        "AttributeError: 'NoneType' object has no attribute 'size'\n"
    )
    assert top(index, old) == "dataloader-worker-exception"


def test_pip_finding_no_module_path_is_no_torch_install(index):
    """pip-no-matching-distribution is about torch's releases and wheels: a requirement that is not
    torch's (a module path ultralytics' auto-update asked pip for, while loading weights of a newer
    ultralytics) keeps it among the nearest, and the weights' entry answers from ultralytics' own line."""
    paste = (
        'requirements: YOLOv8 requirement "ultralytics.nn.modules.conv" not found, attempting AutoUpdate...\n'
        "ERROR: Could not find a version that satisfies the requirement ultralytics.nn.modules.conv (from versions: none)\n"
        "ERROR: No matching distribution found for ultralytics.nn.modules.conv\n"
    )
    out = answer_json(explain_text(paste, index), index)
    assert out["matches"][0]["id"] == "ultralytics-c3k2-unpickle", out["matches"]
    assert "pip-no-matching-distribution" not in [m["id"] for m in out["matches"]]
    torch_pin = (
        "ERROR: Could not find a version that satisfies the requirement torch==1.12.1+cu113 (from versions: 2.0.1)\n"
        "ERROR: No matching distribution found for torch==1.12.1+cu113\n"
    )
    assert top(index, torch_pin) == "pip-no-matching-distribution"


def test_a_pattern_that_specialises_another_entrys_template_is_no_fuzzy_evidence(index):
    """`ERROR: Failed building wheel for tokenizers` is pip-wheel-build-failed's template with the
    package written in: similar words with another package are that template's, not tokenizers' (a
    flash_attn build answered tokenizers-rust-build at 0.81). A console-wrapped launcher command still
    matches, and torch's own ninja command is the extension build's."""
    pip = (
        "note: This error originates from a subprocess, and is likely not a problem with pip.\n"
        "ERROR: Failed building wheel for flash_attn\nRunning setup.py clean for flash_attn\n"
        "Failed to build flash_attn\n"
        "ERROR: Failed to build installable wheels for some pyproject.toml based projects (flash_attn)\n"
    )
    out = answer_json(explain_text(pip, index), index)
    assert [m["id"] for m in out["matches"]][:1] == ["pip-wheel-build-failed"], out["matches"]
    assert "tokenizers-rust-build" not in [m["id"] for m in out["matches"]]
    wrapped = (
        "subprocess.CalledProcessError: Command '['C:\\\\venv\\\\python.exe', 'train_network.py',\n"
        "'--xformers', '--bucket_no_upscale']' returned non-zero exit\nstatus 3221225477.\n"
    )
    assert top(index, wrapped) == "launcher-calledprocesserror"
    ninja = (
        "Traceback (most recent call last):\n"
        '  File "lib\\\\site-packages\\\\torch\\\\utils\\\\cpp_extension.py", line 1400, in _run_ninja_build\n'
        "    check=True)\n"
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
    )
    assert top(index, ninja) == "cpp-extension-ninja-build-failed"


def test_what_ends_before_an_entrys_telling_words_and_benign_lines_are_no_evidence(index):
    """A complete `cannot import name 'Block' from 'mamba_ssm.modules.mamba2'` is not the cut-off
    beginning of "... (unknown location)", whose words in parentheses are what tell that entry apart;
    NCCL's INFO/WARN lines of a run that then hangs are no NCCL error; `TTS.tts.models.xtts` is a
    submodule of the TTS package that was found (its distribution coqui-tts holds the name), and pip's
    'Building editable for X (pyproject.toml) ... error' is a failed build."""
    moved = answer_json(
        explain_text("ImportError: cannot import name 'Block' from 'mamba_ssm.modules.mamba2'\n", index), index
    )
    assert moved["matches"] == [], moved["matches"]
    unknown = "ImportError: cannot import name 'Coqpit' from 'coqpit' (unknown location)\n"
    assert top(index, unknown) == "import-unknown-location"
    hang = (
        "node1:1234:1234 [0] NCCL INFO NET/IB : No device found.\n"
        "node1:1234:1234 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
        "node1:1234:1240 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
        "the training then hangs at the first all_reduce\n"
    )
    assert answer_json(explain_text(hang, index), index)["matches"] == []
    tts = answer_json(explain_text("ModuleNotFoundError: No module named 'TTS.tts.models.xtts'\n", index), index)
    assert tts["matches"] == [] and tts["nearest"][0]["id"] == "no-module-third-party", tts["matches"]
    editable = (
        "Building wheels for collected packages: groundingdino\n"
        "  Building editable for groundingdino (pyproject.toml) ... error\n"
        "  error: subprocess-exited-with-error\n"
    )
    assert top(index, editable) == "pip-wheel-build-failed"


def test_a_script_folder_means_the_script_run_from_it_not_a_module_imported_from_it(index):
    """project-module-not-found's scripts/ signal is the outermost frame (the script started from
    scripts/, so the repository's root is not on sys.path); a module of scripts/ imported by the app
    (`from scripts.tts_funcs import ...` failing on `from TTS.api import TTS`) is no such evidence."""
    run = (
        'Traceback (most recent call last):\n  File "/home/u/repo/scripts/amg.py", line 9, in <module>\n'
        "    from segment_anything import sam_model_registry\n"
        "ModuleNotFoundError: No module named 'segment_anything'\n"
    )
    assert top(index, run) == "project-module-not-found"
    imported = (
        'Traceback (most recent call last):\n  File "C:\\\\xtts-webui\\\\app.py", line 67, in <module>\n'
        "    from xtts_webui import demo\n"
        '  File "C:\\\\xtts-webui\\\\xtts_webui.py", line 3, in <module>\n'
        "    from scripts.tts_funcs import TTSWrapper\n"
        '  File "C:\\\\xtts-webui\\\\scripts\\\\tts_funcs.py", line 6, in <module>\n'
        "    from TTS.api import TTS\nModuleNotFoundError: No module named 'TTS'\n"
    )
    assert top(index, imported) == "no-module-third-party"


def test_older_wordings_and_import_evidence_only_where_an_import_failed(index):
    """torch 0.4's `ImportError: DLL load failed: ...` at `from torch._C import *` is the Windows DLL
    entry (another package's DLL failure is not); the CUDA runtime's own `CUDA driver version is
    insufficient for CUDA runtime version` (1.x: `cuda runtime error (35) : ...`) is the old driver; an
    import entry's signal lines answer nothing in a paste where no import failed; a compiled part of a
    package the traceback shows imported (`_ext/pointnet2/__init__.py`) is not the project's own module;
    a warning quoting a found package's missing submodule is no missing install."""
    dll = (
        'Traceback (most recent call last):\n  File "test.py", line 1, in <module>\n    import torch\n'
        '  File "C:\\\\Python36\\\\lib\\\\site-packages\\\\torch\\\\__init__.py", line 78, in <module>\n'
        "    from torch._C import *\nImportError: DLL load failed: 找不到指定的模块。\n"
    )
    assert top(index, dll) == "windows-dll-load-failed"
    cv2 = 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n    import cv2\nImportError: DLL load failed: The specified module could not be found.\n'
    assert answer_json(explain_text(cv2, index), index)["matches"] == []
    old = "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at /opt/conda/conda-bld/pytorch/work/aten/src/THC/THCGeneral.cpp:70\n"
    assert top(index, old) == "cuda-driver-too-old"
    no_import = (
        'Traceback (most recent call last):\n  File "/home/u/repo/tools/demo_track.py", line 9, in <module>\n'
        "    sys.path.append('.')\n    main()\n"
        "AttributeError: 'STrack' object has no attribute '_count'\n"
    )
    assert "project-module-not-found" not in [
        m["id"] for m in answer_json(explain_text(no_import, index), index)["matches"]
    ]
    built = (
        'Traceback (most recent call last):\n  File "utils/pointnet2_utils.py", line 11, in <module>\n'
        "    from _ext import pointnet2\n"
        '  File "utils/_ext/pointnet2/__init__.py", line 3, in <module>\n'
        "    from ._pointnet2 import lib as _lib, ffi as _ffi\n"
        "ModuleNotFoundError: No module named '_ext.pointnet2._pointnet2'\n"
    )
    assert answer_json(explain_text(built, index), index)["matches"] == []
    warned = "RuntimeWarning: Failed to read commit hash: No module named 'vllm._version'\n"
    assert answer_json(explain_text(warned, index), index)["matches"] == []


def test_warnings_of_pips_isolated_build_are_not_the_users_environment(index):
    """torch imported inside pip's isolated build environment warns that it has no NumPy: that is the
    temporary environment's, not a NumPy ABI problem of the user's; the same warning from the user's own
    site-packages still is."""
    build = (
        "  /tmp/pip-build-env-jmrxpe19/overlay/lib/python3.10/site-packages/torch/_subclasses/functional_tensor.py:276: "
        "UserWarning: Failed to initialize NumPy: No module named 'numpy' (Triggered internally at "
        "/pytorch/torch/csrc/utils/tensor_numpy.cpp:81.)\n"
        "    cpu = _conversion_method_template(device=torch.device('cpu'))\n"
        "  <string>:118: UserWarning: mamba_ssm was requested, but nvcc was not found.\n"
    )
    assert "numpy2-abi-mismatch" not in [m["id"] for m in answer_json(explain_text(build, index), index)["matches"]]
    own = build.replace("/tmp/pip-build-env-jmrxpe19/overlay", "/home/u/env") + "RuntimeError: Numpy is not available\n"
    assert top(index, own) == "numpy2-abi-mismatch"


def test_a_label_templates_own_description_tells_it_apart_from_its_siblings(index):
    """A template that is a label and a description in its own words ("THCudaCheck FAIL file={file}
    line={line} error=30 : unknown error") is similar, word for word but the description, to every
    CUDA error THC printed: fuzzy evidence needs the description's rarest word too."""
    thc = "THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCTensorMathPointwise.cu line=265 error={} : {}\n"
    assert top(index, thc.format(30, "unknown error")) == "cuda-unknown-error"
    assert top(index, thc.format(4, "unspecified launch failure")) != "cuda-unknown-error"
    assert top(index, "RuntimeError: CUDA error: unknown error\n") == "cuda-unknown-error"
    assert top(index, "RuntimeError: CUDA error: an illegal memory access was encountered\n") != "cuda-unknown-error"


def test_a_numpy_scalar_torch_cannot_recognise_is_numpys_abi(index):
    """``Could not infer dtype of numpy.float32``: torch started without its NumPy support, so it does
    not know NumPy's types; another type in those words is the program's own mistake."""
    assert top(index, "RuntimeError: Could not infer dtype of numpy.float32\n") == "numpy2-abi-mismatch"
    assert top(index, "TypeError: Could not infer dtype of NoneType\n") != "numpy2-abi-mismatch"


def test_the_exception_lines_own_template_is_tried_whatever_prose_follows(index):
    """The words of what follows the exception's line (a poster's sentence) must not push the template
    of that line out of the candidates tried."""
    paste = (
        "AttributeError: 'ResNetModel' object has no attribute 'head'\n"
        "The same config trained fine last week on the other yaml files, only this one fails with it.\n"
    )
    assert top(index, paste) == "module-has-no-attribute"


def test_shared_library_patterns_name_the_libraries_they_are_about(index):
    """extension-undefined-symbol claims torch's own libraries missing at an extension's import, not any
    library the loader cannot find (a vendor's runtime, a system library of another entry)."""
    assert top(index, "ImportError: libc10.so: cannot open shared object file: No such file or directory\n") == (
        "extension-undefined-symbol"
    )
    for lib in ("libhccl.so", "libhc_am.so.3", "libquokka_runtime.so.2"):
        paste = f"ImportError: {lib}: cannot open shared object file: No such file or directory\n"
        assert top(index, paste) != "extension-undefined-symbol", lib


def test_an_attribute_none_lacks_is_no_module_that_skipped_its_init(index):
    assert top(index, "AttributeError: 'NoneType' object has no attribute '_parameters'\n") != "module-init-not-called"
    assert top(index, "AttributeError: 'MyNet' object has no attribute '_parameters'\n") == "module-init-not-called"


def test_python_2s_unquoted_missing_torch_is_torchs_entry(index):
    assert top(index, "ImportError: No module named torch\n") == "no-module-torch"
    assert top(index, "ImportError: No module named torchvision\n") != "no-module-torch"
