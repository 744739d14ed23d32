"""Errors raised outside torch: the environment, builds, pip, the libraries around torch and their
runtime errors. Real pastes gathered from public issue threads (``tests/fixtures/{ecosystem,libraries,
runtime}/*.jsonl``, each with its ``source``) must be answered by their
entry, and the answer must say who raised them; the catalog's messages (``../shared``) likewise."""

from __future__ import annotations

import json

import pytest

from explainer.match.explain import explain_text
from explainer.render import answer_json

from .conftest import FIXTURES, needs_shared

# correctness, not speed: no time budget (a loaded machine would cut the answer short)

CASES = [
    json.loads(line)
    for folder in ("ecosystem", "libraries", "runtime")
    for path in sorted((FIXTURES / folder).glob("*.jsonl"))
    for line in path.read_text(encoding="utf-8").splitlines()
    if line.strip()
]


@pytest.fixture(scope="module")
def index():
    from explainer.knowledge.index import open_index

    return open_index()


def test_every_case_names_its_source_and_a_known_entry(index):
    assert len(CASES) >= 100
    for case in CASES:
        assert case["source"].startswith("https://github.com/"), case
        assert case["expected_id"] in index.entries, case["expected_id"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['expected_id']}-{i}" for i, c in enumerate(CASES)])
def test_real_paste_is_answered_by_its_entry_and_says_who_raised_it(case, index):
    out = answer_json(explain_text(case["text"], index, budget=None), index)
    got = [m["id"] for m in out["matches"]]
    assert got and (got[0] == case["expected_id"] or got[0] in case.get("also_ok", ())), (got, case["source"])
    entry_by = dict(index.entries[got[0]]["raised_by"])
    if index.entries[got[0]]["category"] == "package" and "No module named" in (out["parsed"]["message"] or ""):
        entry_by["kind"] = "environment"  # a library's moved module the import system missed (timm's layers)
    if entry_by.get("library") or entry_by.get("kind", "torch") in ("torch", "python"):
        assert out["raised_by"]["kind"] == entry_by.get("kind", "torch")
    else:  # the entry leaves the distribution to the paste: named from it, or not known
        assert out["raised_by"]["kind"] in (entry_by["kind"], None)
    if case.get("library"):  # the distribution to install or change, as the thread shows it
        named = str(out["raised_by"]["library"]).lower().replace("_", "-")
        assert named == case["library"].lower().replace("_", "-"), (out["raised_by"], case["source"])


def test_older_entries_keep_their_pastes(index):
    """The new entries must not take the messages of the entries that were there before them."""
    pastes = {
        "RuntimeError: CUDA error: device-side assert triggered": "cuda-device-side-assert",
        "ImportError: /usr/lib/python3/site-packages/torchvision/_C.so: undefined symbol: "
        "_ZN3c106detail19maybe_wrap_dim_slowEllb": "extension-undefined-symbol",
        "ModuleNotFoundError: No module named 'torch'": "no-module-torch",
        "OSError: [WinError 126] The specified module could not be found. Error loading "
        '"C:\\Python311\\Lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.': "windows-dll-load-failed",
        "ModuleNotFoundError: No module named 'torch._six'": "torch-six-missing",
    }
    for text, want in pastes.items():
        got = [m["id"] for m in answer_json(explain_text(text, index, budget=None), index)["matches"]]
        assert got and got[0] == want, (text, got[:2])


def _catalog(category: set[str]) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in needs_shared("catalog", "ecosystem.jsonl").read_text().splitlines() if line]
    out = []
    for r in rows:
        if r["category"] not in category:
            continue
        for msg in [r["message_template"], *r["message_variants"]]:
            out.append((r["id"], msg))
    return out


def test_the_catalogs_environment_messages_reach_their_entries(index):
    """Every message and variant of an environment/build/pip kind that has an entry goes to it first
    (the numpy2 kind is the existing numpy2-abi-mismatch)."""
    alias = {"numpy2-module-compiled-numpy1": "numpy2-abi-mismatch"}
    misses, n = [], 0
    for kind, msg in _catalog({"environment", "build", "pip"}):
        kind = alias.get(kind, kind)
        if kind not in index.entries:
            continue
        n += 1
        got = [m["id"] for m in answer_json(explain_text(msg, index, budget=None), index)["matches"]]
        if not got or got[0] != kind:
            misses.append((kind, msg[:30]))
    assert n >= 60
    # the catalog's condensed variants that read as another error (its "..."-joined build log ends with a
    # plain "No module named 'torch'"), or as nothing (a uv wording no thread shows): known, and no more
    known = {
        ("pip-wheel-build-failed", "error: Failed to prepare distr"),
        ("build-isolation-torch-missing", "× Getting requirements to buil"),
        ("build-isolation-torch-missing", "error: subprocess-exited-with-"),
        ("build-isolation-torch-missing", "× python setup.py egg_info did"),
        # the catalog's own template with "{lib}" left in it (the real messages name the library)
        ("cudnn-shared-lib-missing", "Could not load library {lib}. "),
        # Windows' generic "file not found" for any program subprocess cannot find: not whisper's alone
        ("whisper-ffmpeg-missing", "FileNotFoundError: [WinError 2"),
        ("whisper-ffmpeg-missing", "[WinError 2] The system cannot"),
        # the catalog's description of what is seen beside it, not a message
        ("nvml-driver-library-mismatch", "RuntimeError: ... CUDA driver "),
        # torch's own wording of a missing driver: the curated cuda-driver-too-old answers it, with its causes
        ("nvidia-smi-no-driver", "UserWarning: CUDA initializati"),
        # "{package}" left in the catalog's template: the tokenizers entry's own wording of it is as close
        ("pip-wheel-build-failed", "ERROR: Could not build wheels "),
    }
    assert set(misses) <= known, set(misses) - known


def test_pips_own_lines_answer_under_a_wrapper_that_ends_the_paste(index):
    """conda runs pip and ends with its own exception; pip's lines above it say what failed."""
    paste = (
        "Pip subprocess error:\n"
        "ERROR: Could not find a version that satisfies the requirement torch==1.10.0+cu111 (from versions: "
        "2.2.0, 2.2.1, 2.3.0)\n"
        "ERROR: No matching distribution found for torch==1.10.0+cu111\n\nfailed\n\n"
        "CondaEnvException: Pip failed\n"
    )
    got = answer_json(explain_text(paste, index, budget=None), index)
    assert got["matches"][0]["id"] == "pip-no-matching-distribution"


def test_the_old_resolvers_wording_of_a_conflict(index):
    """pip before 20.3 said "has requirement ..., but you'll have ... which is incompatible"."""
    paste = "ERROR: torchaudio 0.5.0 has requirement torch==1.5.0, but you'll have torch 1.5.1 which is incompatible.\n"
    got = answer_json(explain_text(paste, index, budget=None), index)
    assert got["matches"][0]["id"] == "pip-resolution-impossible"


def test_a_missing_submodule_without_its_exception_type_names_the_distribution(index):
    got = answer_json(explain_text("train.py No module named 'mmseg.datasets.samplers'", index, budget=None), index)
    assert got["raised_by"] == {"kind": "environment", "library": "mmsegmentation"}


def test_older_comfyuis_bare_keyerror_for_a_node_without_its_type(index):
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/srv/ComfyUI/server.py", line 412, in post_prompt\n'
        "    valid = execution.validate_prompt(prompt)\n"
        '  File "/srv/ComfyUI/execution.py", line 571, in validate_prompt\n'
        "    class_ = nodes.NODE_CLASS_MAPPINGS[prompt[x]['class_type']]\n"
        "KeyError: 'class_type'\n"
    )
    got = answer_json(explain_text(paste, index, budget=None), index)
    assert got["matches"][0]["id"] == "comfyui-node-missing-class-type"
    assert not answer_json(explain_text("KeyError: 'class_name'", index, budget=None), index)["matches"]


PLAIN = [
    json.loads(line)
    for path in sorted((FIXTURES / "python").glob("*.jsonl"))
    for line in path.read_text(encoding="utf-8").splitlines()
    if line.strip()
]


@pytest.mark.parametrize("case", PLAIN, ids=[c["source"].split("github.com/")[1] for c in PLAIN])
def test_a_plain_python_error_in_the_users_code_is_pythons(case, index):
    """Real pastes of Python's own errors on the user's line (an `assert`, unpacking, an attribute of a
    built-in value), also under torch's frames: no entry claims them and the answer says Python raised them."""
    out = answer_json(explain_text(case["text"], index, budget=None), index)
    assert not out["matches"], [m["id"] for m in out["matches"]]
    assert out["raised_by"] == case["raised_by"], case["source"]


@pytest.mark.parametrize(
    "paste, who",
    [
        # a library's `assert` and a library's wording are the library's, not the user's Python
        (
            'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    m = Model()\n'
            '  File "/venv/lib/python3.10/site-packages/mmdet/models/x.py", line 9, in __init__\n'
            "    assert cfg is not None\nAssertionError\n",
            {"kind": "library", "library": "mmdet"},
        ),
        # a bare AssertionError from a call, not from an `assert` on the user's line: unknown
        (
            'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    check(x)\nAssertionError\n',
            {"kind": None, "library": None},
        ),
        # an object of the user's own class lacking an attribute: no library's releases differ on it, unknown
        (
            'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    box.style(x)\n'
            "AttributeError: 'Panel' object has no attribute 'style'\n",
            {"kind": None, "library": None},
        ),
        # gradio's Textbox had .style() up to 3.50.2 (data/names.json.gz): gradio's API change
        (
            'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    box.style(x)\n'
            "AttributeError: 'Textbox' object has no attribute 'style'\n",
            {"kind": "library", "library": "gradio"},
        ),
        # only the interpreter says a name is not defined, also without frames
        ("# name 'model' is not defined", {"kind": "python", "library": None}),
        # a module whose sys.modules entry is None: its import failed or was blocked
        ("ImportError: import of wandb halted; None in sys.modules", {"kind": "environment", "library": "wandb"}),
        # a compiled part of an installed package that does not load is that package's build
        (
            "ImportError: /usr/lib/python3/site-packages/torchvision/_C.so: undefined symbol: "
            "_ZN3c106detail19maybe_wrap_dim_slowEllb",
            {"kind": "environment", "library": "torchvision"},
        ),
        (  # https://github.com/HannesStark/EquiBind/issues/8
            "/opt/dgl/src/runtime/tensordispatch.cc:43: TensorDispatcher: dlopen failed: /home/u/.conda/envs/e/lib/"
            "python3.8/site-packages/dgl/tensoradapter/pytorch/libtensoradapter_pytorch_1.10.2.so: cannot open "
            "shared object file: No such file or directory",
            {"kind": "environment", "library": "dgl"},
        ),
    ],
)
def test_who_raised_a_python_exception(paste, who, index):
    assert answer_json(explain_text(paste, index, budget=None), index)["raised_by"] == who


def test_another_librarys_option_names_that_library_and_its_releases(index):
    """accelerate dropped Accelerator(logging_dir=) in 0.20.0 (read in its wheels): the family's entry
    answers, the answer says accelerate raised it and which releases took the option."""
    paste = "TypeError: Accelerator.__init__() got an unexpected keyword argument 'logging_dir'"
    out = answer_json(explain_text(paste, index, budget=None), index)
    assert out["matches"][0]["id"] == "transformers-training-args-removed-kwarg"
    assert out["raised_by"] == {"kind": "library", "library": "accelerate"}
    assert any("accelerate up to 0.19.0" in n and "removed in 0.20.0" in n for n in out["notes"]), out["notes"]
    assert out["matches"][0]["causes"][0]["id"] == "other-library-option"
    # transformers' own option keeps transformers and its own cause
    own = answer_json(
        explain_text(
            "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'",
            index,
            budget=None,
        ),
        index,
    )
    assert own["raised_by"] == {"kind": "library", "library": "transformers"}
    assert own["matches"][0]["causes"][0]["id"] == "removed-option"


def test_an_extensions_function_points_to_rebuilding_it(index):
    """https://github.com/j-alex-hanson/speedy-splat/issues/1: the Gaussian rasterizer's compiled
    backward returns the old shape; the cause is the build, not the user's backward()."""
    paste = (
        "RuntimeError: Function _RasterizeGaussiansBackward returned an invalid gradient at index 2 - "
        "got [0, 0, 3] but expected shape compatible with [0, 16, 3]"
    )
    top = answer_json(explain_text(paste, index, budget=None), index)["matches"][0]
    assert top["id"] == "custom-function-invalid-gradient"
    assert top["causes"][0]["id"] == "extension-out-of-step" and top["fixes"][0]["id"] == "rebuild-extension"
    # a Function of the user's own style keeps the causes of their own backward()
    own = "RuntimeError: Function MySumBackward returned an invalid gradient at index 0 - got [4, 1] but expected shape compatible with [4, 3]"
    assert (
        answer_json(explain_text(own, index, budget=None), index)["matches"][0]["causes"][0]["id"]
        != "extension-out-of-step"
    )
