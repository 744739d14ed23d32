"""The package facts (``data/facts.json``): how they are built, what they say, and who raised an error."""

from __future__ import annotations

import json

import pytest

from explainer import facts
from explainer.knowledge import facts_build
from explainer.match.origin import from_paste
from explainer.parse.parser import parse_text

from .conftest import ROOT

RAW = {
    "pins": {
        "torchvision": {
            "0.18.0": {"file": "tv-0.18.0.whl", "url": "u", "sha256": "a" * 64, "requires_dist": ["numpy", "torch (==2.3.0)"]},
            "0.17.2": {"file": "tv-0.17.2.whl", "url": "u", "sha256": "b" * 64, "requires_dist": ["torch==2.2.2"]},
        }
    },
    "torch": {
        "2.3.0": {"file": "t.whl", "url": "u", "sha256": "c" * 64,
                  "requires_dist": ["nvidia-cuda-runtime-cu12==12.1.105; platform_system == \"Linux\"", "filelock"]},
    },
    "wheels": {
        "opencv-python": {"version": "4.10.0.84", "file": "o.whl", "url": "u", "sha256": "d" * 64, "names": ["cv2"]},
        "opencv-python-headless": {"version": "4.10.0.84", "file": "h.whl", "url": "u", "sha256": "e" * 64, "names": ["cv2"]},
    },
    "pipreqs": {"file": "pipreqs-0.5.0-py3-none-any.whl", "sha256": "f" * 64, "mapping": "PIL:Pillow\ncv2:wrong\nsklearn:scikit_learn\n"},
}  # fmt: skip


def test_build_is_a_pure_function_of_what_was_fetched():
    a = json.dumps(facts_build.build(json.loads(json.dumps(RAW))), sort_keys=False)
    b = json.dumps(facts_build.build(json.loads(json.dumps(RAW))), sort_keys=False)
    assert a == b
    data = json.loads(a)
    assert data["pins"]["torchvision"]["0.18.0"]["torch"] == "==2.3.0"
    assert list(data["pins"]["torchvision"]) == ["0.17.2", "0.18.0"]  # in release order
    assert data["torch_cuda"]["2.3.0"]["cuda"] == "12.1"
    assert data["import_names"]["cv2"] == ["opencv-python", "opencv-python-headless"]  # the wheels win, commonest first
    assert data["import_names"]["PIL"] == ["Pillow"] and data["provenance"]["pipreqs"]["sha256"] == "f" * 64


def test_top_level_names_of_a_wheel():
    names = [
        "cv2/__init__.py", "cv2/cv2.abi3.so", "opencv_python-4.10.dist-info/RECORD", "yaml/__init__.py",
        "_yaml/__init__.py", "six.py", "_cffi_backend.cpython-311-x86_64-linux-gnu.so", "pkg.data/scripts/x",
    ]  # fmt: skip
    assert facts_build.top_level(names) == ["_yaml", "cv2", "six", "yaml"]


def test_import_names_of_a_source_archive():
    files = {"mmcv-2.2.0/mmcv.egg-info/top_level.txt": b"mmcv\n"}
    members = ["mmcv-2.2.0/setup.py", "mmcv-2.2.0/mmcv/__init__.py", "mmcv-2.2.0/tests/__init__.py", *files]
    assert facts_build.sdist_top_level(members, files.__getitem__) == ["mmcv"]  # setuptools' own list
    members = ["b-1.4.2/setup.py", "b-1.4.2/basicsr/__init__.py", "b-1.4.2/tests/__init__.py", "b-1.4.2/docs/__init__.py",
               "b-1.4.2/basicsr/archs/__init__.py", "x-1.0/src/xpkg/__init__.py"]  # fmt: skip
    assert facts_build.sdist_top_level(members, files.__getitem__) == ["basicsr", "xpkg"]


def test_the_commands_a_release_installs():
    points = "[console_scripts]\naccelerate = accelerate.commands.accelerate_cli:main\n\n[other]\nx = y\n"
    members = ["deepspeed-0.19.data/scripts/ds_report", "deepspeed-0.19.data/scripts/deepspeed", "a/b.py"]
    assert facts_build.console_scripts(points, members) == ["accelerate", "deepspeed", "ds_report"]
    raw = json.loads(json.dumps(RAW))
    raw["wheels"]["opencv-python"]["commands"] = ["cv2-tool"]
    assert facts_build.build(raw)["commands"] == {"cv2-tool": ["opencv-python"]}


def test_the_commands_of_earlier_major_versions_are_read_too():
    info = {
        "info": {"version": "2.4.0"},
        "releases": {v: [{"yanked": False}] for v in ("0.33.5", "0.36.2", "0.37.0rc1", "1.0.0", "1.33.0", "2.4.0")},
    }
    info["releases"]["0.36.3"] = [{"yanked": True}]
    assert facts_build._older_majors(info) == ["0.36.2", "1.33.0"]
    raw = json.loads(json.dumps(RAW))
    raw["wheels"]["opencv-python"]["commands"] = ["hf"]
    raw["wheels"]["opencv-python"]["older"] = [{"version": "0.36.2", "file": "o.whl", "sha256": "9" * 64,
                                                 "commands": ["hf", "huggingface-cli"]}]  # fmt: skip
    data = facts_build.build(raw)
    assert data["commands"] == {"hf": ["opencv-python"], "huggingface-cli": ["opencv-python"]}
    assert data["provenance"]["older_wheels"]["opencv-python"][0]["version"] == "0.36.2"


def test_names_a_release_ships_by_mistake_or_a_requirement_does_not_own_are_left_out():
    raw = json.loads(json.dumps(RAW))
    raw["wheels"]["mmsegmentation"] = {
        "version": "1",
        "file": "m.whl",
        "url": "u",
        "sha256": "1" * 64,
        "names": ["mmseg", "tests"],
    }  # a seed, its stray tests/ folder
    raw["wheels"]["pysbd"] = {
        "version": "1",
        "file": "p.whl",
        "url": "u",
        "sha256": "2" * 64,
        "names": ["pysbd", "examples"],
    }  # a requirement of a seed
    raw["wheels"]["rouge"] = {"version": "1", "file": "r.whl", "url": "u", "sha256": "3" * 64,
                              "names": ["rouge", "rougescore", "runner"]}  # fmt: skip
    names = facts_build.build(raw)["import_names"]
    assert names["mmseg"] == ["mmsegmentation"] and names["pysbd"] == ["pysbd"] and names["rouge"] == ["rouge"]
    assert "tests" not in names and "examples" not in names and "runner" not in names


@pytest.mark.parametrize(
    "version, spec, ok",
    [
        ("2.3.0", "==2.3.0", True),
        ("2.3.0+cu121", "==2.3.0", True),
        ("2.3.1", "==2.3.0", False),
        ("2.3.1", "==2.3.*", True),
        ("1.26.4", "<2,>=1.21.2", True),
        ("2.0.1", "<2,>=1.21.2", False),
        ("2.1.0", "~=2.0", True),
        ("3.0", "~=2.0", False),
        ("2.4.0", "!=2.4.0", False),
        ("2.10.0", ">2.9", True),
    ],
)
def test_requirement_specifiers(version, spec, ok):
    assert facts.satisfies(version, spec) is ok


def test_the_shipped_facts_hold_what_the_answers_use():
    path = ROOT / "data" / "facts.json"
    data = json.loads(path.read_text())
    assert path.stat().st_size < 400_000  # it ships in the wheel
    assert data["pins"]["torchvision"]["0.18.0"]["torch"] == "==2.3.0"
    assert all(len(r["sha256"] or "") == 64 for d in data["pins"].values() for r in d.values())
    assert "opencv-python" in data["import_names"]["cv2"] and data["import_names"]["sklearn"] == ["scikit-learn"]
    assert facts.companion_for("torchvision", "2.3.0+cu121") == ["0.18.0"]
    assert facts.min_driver("12.1") == "525.60.13" and facts.min_driver("11.8", windows=True) == "452.39"


def tb(*frames: str, last: str) -> str:
    body = "".join(f'  File "{f}", line 3, in fn\n    x = call()\n' for f in frames)
    return f"Traceback (most recent call last):\n{body}{last}\n"


@pytest.mark.parametrize(
    "paste, kind, library",
    [
        (tb("/home/u/train.py", last="NameError: name 'model' is not defined"), "python", None),
        ("ModuleNotFoundError: No module named 'cv2'", "environment", "opencv-python"),
        ("ModuleNotFoundError: No module named 'sklearn.metrics'", "environment", "scikit-learn"),
        # a distribution the ecosystem requires, one whose import name differs, one without wheels
        ("ModuleNotFoundError: No module named 'fastapi'", "environment", "fastapi"),
        ("ModuleNotFoundError: No module named 'fastchat.protocol'", "environment", "fschat"),
        ("ModuleNotFoundError: No module named 'basicsr.losses.gan_loss'", "environment", "basicsr"),
        # a shell that cannot find a command: the distribution that installs it, where one does
        ("bash: torchrun: command not found", "environment", "torch"),
        ("'accelerate' is not recognized as an internal or external command,\noperable program or batch file.",
         "environment", "accelerate"),
        ("zsh: command not found: yolo", "environment", "ultralytics"),
        ("'llamafactory-cli' \ufffd\ufffd\ufffd\ufffd\ufffd\u06b2\ufffd\ufffd\ufffd\ufffd\u2cbf", "environment", "llamafactory"),
        ("bash: line 1: tool-nobody-ships: command not found", "environment", None),
        # a model's remote code, which transformers writes into its run-time namespace
        ("ModuleNotFoundError: No module named 'transformers_modules.MiniCPM-V-2'", "library", "transformers"),
        # the interpreter's own: a hook's signature, the script's command line, the user's open() and dict
        ("TypeError: TrainingModule.on_validation_epoch_end() missing 1 required positional argument: 'outputs'",
         "python", None),
        ("TypeError: validation_step() takes 3 positional arguments but 4 were given", "python", None),
        ("TypeError: __init__() takes from 2 to 3 positional arguments but 4 were given", None, None),
        ("usage: train.py [-h] [--work-dir WORK_DIR] config\ntrain.py: error: unrecognized arguments: --lr 0.1",
         "python", None),
        ('Traceback (most recent call last):\n  File "/home/u/pose/datasets/mpii.py", line 30, in __init__\n'
         "    with open(self.jsonfile) as anno_file:\nFileNotFoundError: [Errno 2] No such file or directory: ''",
         "python", None),
        ('Traceback (most recent call last):\n  File "convert.py", line 64, in load\n'
         "    print(weights[name].shape)\nKeyError: 'backbone.conv1.weight'", "python", None),
        ('Traceback (most recent call last):\n  File "/home/u/run.py", line 4, in <module>\n    x = df["a"]\n'
         '  File "/venv/lib/python3.11/site-packages/pandas/core/frame.py", line 3761, in __getitem__\n'
         "    indexer = self.columns.get_loc(key)\nKeyError: 'a'", "library", "pandas"),
        ("ModuleNotFoundError: No module named '_init_paths'", "python", None),
        # names a project's own folders take: no distribution
        ("ModuleNotFoundError: No module named 'tests.helpers'", "python", None),
        ("ModuleNotFoundError: No module named 'vision_transformer'", "python", None),
        (
            tb("/home/u/run.py", "/opt/conda/lib/python3.10/site-packages/transformers/models/auto/configuration_auto.py",
               last="KeyError: 'qwen2'"),
            "library",
            "transformers",
        ),
        (
            tb("/home/u/run.py", "/usr/lib/python3/dist-packages/diffusers/loaders/peft.py",
               "/usr/lib/python3.10/json/decoder.py", last="json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
            "library",
            "diffusers",
        ),
        (tb("/home/u/run.py", "/usr/lib/python3.10/json/decoder.py", last="json.decoder.JSONDecodeError: Expecting value"),
         "python", None),
        ("      error: command '/usr/local/cuda/bin/nvcc' failed with exit status 1\n", "environment", "nvcc"),
        ("  ERROR: Failed building wheel for flash-attn\nerror: failed-wheel-build-for-install\n", "environment", "flash-attn"),
        ("something went wrong and nothing says who", None, None),
        # a traceback cut short: its last frame shown is not where it was raised; a frame the paste
        # ends with (a bare assert, its type not pasted) is
        ("AttributeError: 'Model' object has no attribute 'encode'\n\nTraceback (most recent call last):\n"
         '  File "/v/lib/python3.10/site-packages/click/core.py", line 1434, in invoke\n'
         "    return ctx.invoke(self.callback, **ctx.params)\n"
         '  File "/Users/u/.local/sh', None, None),
        ('File ".../lib/python3.9/site-packages/deepspeed/runtime/zero/stage3.py", line 525, in defragment\n'
         "    assert len(set(t.dtype for t in tensors)) == 1\n", "library", "deepspeed"),
    ],
)  # fmt: skip
def test_who_raised_it_from_the_paste(paste, kind, library):
    got = from_paste(parse_text(paste))
    assert (got["kind"], got["library"]) == (kind, library)


def test_a_plain_python_error_is_framed_as_python_with_the_users_line():
    from explainer.knowledge.index import open_index
    from explainer.match.explain import explain_text
    from explainer.render import answer_json

    index = open_index()
    paste = tb("/home/u/train.py", last="NameError: name 'epochs' is not defined. Did you mean: 'epoch'?")
    for lang, says in (("en", "Python's own `NameError`"), ("zh", "Python 自己在你的代码里抛出的 `NameError`")):
        out = answer_json(explain_text(paste, index, budget=None), index, lang=lang)
        assert out["matches"] == [] and out["raised_by"]["kind"] == "python"
        assert says in out["notes"][0] and "train.py:3" in out["notes"][0]
    # a library's TypeError is not framed as the user's own
    lib = tb("/home/u/run.py", "/opt/conda/lib/python3.10/site-packages/peft/tuners/lora.py", last="TypeError: bad")
    assert answer_json(explain_text(lib, index, budget=None), index)["notes"] == []
