"""Names per release (``data/names.json.gz``): how they are read from wheels, and the release facts an
answer gives from them (removed in, added in, known from)."""

from __future__ import annotations

import pytest

from explainer import facts
from explainer.knowledge import names_build as nb
from explainer.parse.parser import parse_text

from .conftest import ROOT

HUB_INIT = """
__version__ = "0.25.2"
_SUBMOD_ATTRS = {"file_download": ["cached_download", "hf_hub_download"], "hf_api": ["HfApi"]}
from .utils import logging as _logging
def __getattr__(name): ...
"""

CONFIG_AUTO_OLD = 'CONFIG_MAPPING = OrderedDict([("retribert", RetriBertConfig), ("t5", T5Config)])\n'
CONFIG_AUTO_NEW = 'CONFIG_MAPPING_NAMES = OrderedDict([("albert", "AlbertConfig"), ("qwen2", "Qwen2Config")])\n'


def test_exported_names_include_lazy_tables():
    names = nb.exported_names(HUB_INIT)
    assert {"cached_download", "hf_hub_download", "HfApi", "__version__", "_logging"} <= set(names)
    assert "__getattr__" not in names


def test_model_types_in_every_layout():
    assert nb.model_types(CONFIG_AUTO_OLD) == ["retribert", "t5"]
    assert nb.model_types(CONFIG_AUTO_NEW) == ["albert", "qwen2"]
    later = 'from .auto_mappings import CONFIG_MAPPING_NAMES\nCONFIG_MAPPING_NAMES.update({"mlcd": "MLCDConfig"})\n'
    assert nb.model_types(later) == ["mlcd"]


def test_modules_of_a_wheel():
    listing = [
        "tv/__init__.py",
        "tv/models/utils.py",
        "tv/_C.so",
        "tv/image.cpython-311-x86_64-linux-gnu.so",
        "tv-1.dist-info/RECORD",
    ]
    assert nb._modules(listing, "tv") == ["tv", "tv._C", "tv.image", "tv.models.utils"]


def test_minor_releases_keep_each_minors_first_and_last():
    vs = ["0.24.0", "0.24.1", "0.25.0", "0.25.1", "0.25.2", "0.26.0", "0.26.0rc1"]
    assert nb.minor_releases(vs, "0.24.0") == ["0.24.0", "0.24.1", "0.25.0", "0.25.2", "0.26.0"]


def test_build_is_pure_and_ranges_say_when():
    raw = {
        "huggingface_hub": {
            v: {"file": f"h-{v}.whl", "sha256": "0" * 64, "modules": ["huggingface_hub"], "names": n, "model_types": []}
            for v, n in [
                ("0.24.0", ["cached_download", "HfApi", "a", "b"]),
                ("0.25.2", ["cached_download", "HfApi", "a", "b"]),
                ("0.26.0", ["HfApi", "a", "b"]),
            ]
        }
    }
    a, b = nb.build(raw), nb.build(raw)
    assert a == b
    lib = a["libraries"]["huggingface_hub"]
    assert lib["names"]["cached_download"] == [[0, 1]] and lib["names"]["HfApi"] == [[0, 2]]
    h = facts.History("huggingface_hub", lib["releases"], lib["names"]["cached_download"])
    # a release whose exports are built at run time (few names readable) is unknown, not a removal
    raw["huggingface_hub"]["0.27.0"] = {**raw["huggingface_hub"]["0.26.0"], "names": ["x"]}
    lazy = nb.build(raw)["libraries"]["huggingface_hub"]
    assert lazy["known"]["names"] == [0, 1, 2] and lazy["names"]["HfApi"] == [[0, 2]]
    assert (h.first, h.last, h.removed_in, h.added_in) == ("0.24.0", "0.25.2", "0.26.0", None)
    assert h.has("0.25.0") is True and h.has("0.27.0") is None and h.has("0.26.0") is False


# --- the shipped data, as the answers use it ------------------------------------------------------


def test_the_shipped_data_knows_the_release_facts():
    assert (ROOT / "data" / "names.json.gz").stat().st_size < 1_500_000  # ships in the wheel
    h = facts.history("huggingface_hub", "names", "cached_download")
    assert h is not None and h.removed_in == "0.26.0" and h.last.startswith("0.25.")
    qwen2 = facts.history("transformers", "model_types", "qwen2")
    assert qwen2 is not None and qwen2.added_in == "4.37.0"
    utils = facts.history("torchvision", "modules", "torchvision.models.utils")
    assert utils is not None and utils.removed_in is not None


@pytest.mark.parametrize(
    "paste, says",
    [
        (
            "ImportError: cannot import name 'cached_download' from 'huggingface_hub' "
            "(/usr/local/lib/python3.10/site-packages/huggingface_hub/__init__.py)",
            ["removed in 0.26.0", "huggingface-hub<0.26.0"],
        ),
        (
            'Traceback (most recent call last):\n  File "/home/u/run.py", line 3, in <module>\n    cfg = AutoConfig.from_pretrained(p)\n'
            '  File "/opt/conda/lib/python3.10/site-packages/transformers/models/auto/configuration_auto.py", line 1039, in from_pretrained\n'
            '    config_class = CONFIG_MAPPING[config_dict["model_type"]]\n'
            '  File "/opt/conda/lib/python3.10/site-packages/transformers/models/auto/configuration_auto.py", line 734, in __getitem__\n'
            "    raise KeyError(key)\nKeyError: 'qwen2'\n",
            ["from 4.37.0", "transformers>=4.37.0"],
        ),
        (
            "ModuleNotFoundError: No module named 'torchvision.models.utils'",
            ["torchvision", "was removed in"],
        ),
    ],
)
def test_answers_give_the_release_fact(paste, says):
    from explainer.advise.environment import release_notes

    notes = release_notes(parse_text(paste))
    text = " ".join(n["en"] for n in notes)
    assert all(s in text for s in says), text
    assert all(n["zh"] for n in notes)


def test_no_release_fact_where_the_data_does_not_know():
    from explainer.advise.environment import release_notes

    assert (
        release_notes(parse_text("ImportError: cannot import name 'helper' from 'mytools' (/home/u/mytools.py)")) == []
    )
    assert release_notes(parse_text("KeyError: 'label'")) == []  # a KeyError outside transformers' mapping


def test_callables_and_their_keywords():
    src = (
        "class Args:\n    lr: float = 1e-3\n    _private: int = 0\n    mode: ClassVar[str] = 'x'\n"
        "class Trainer:\n    @deprecate_kwarg('tokenizer', new_name='processing_class')\n"
        "    def __init__(self, model, processing_class=None): ...\n"
        "    @staticmethod\n    def evaluate(data, *, batch=8): ...\n    def _hidden(self, x): ...\n"
        "def load(path, **kwargs): ...\ndef _internal(a): ...\n"
    )
    got = set(nb.callables(src))
    assert {"Args.__init__:", "Args.__init__:lr"} <= got and "Args.__init__:mode" not in got
    # a decorator may still take an old keyword, **kwargs takes any: the signature does not say which it rejects
    assert {"Trainer.__init__:@deprecate_kwarg", "Trainer.__init__:model", "Trainer.__init__:processing_class"} <= got
    assert {"Trainer.evaluate:data", "Trainer.evaluate:batch", "load:**"} <= got
    assert not any(k.startswith(("_internal", "Trainer._hidden")) or k.endswith(":self") for k in got)


def test_keyword_facts_of_the_shipped_data():
    """Read from each release's wheel: TrainingArguments' evaluation_strategy is gone from 4.51.0 on
    (the entry says the same from the wheels), lightning's Trainer lost gpus= in 2.0.0."""
    (lib, h), *_ = facts.param_history("TrainingArguments.__init__", "evaluation_strategy")
    assert lib == "transformers" and h.removed_in == "4.51.0"
    (lib, h), *_ = facts.param_history("Trainer.__init__", "gpus")
    assert lib == "lightning" and h.removed_in == "2.0.0"
    assert facts.param_history("Accelerator.__init__", "kwargs_handler") == ()  # a typo: no release has it
    assert facts.param_history("__init__", "project_dir") == ()  # a bare __init__ names no callable


@pytest.mark.parametrize(
    "paste, lib, says",
    [
        (  # accelerate older than the code (https://github.com/bmaltais/kohya_ss/issues/1198)
            "TypeError: Accelerator.__init__() got an unexpected keyword argument 'project_dir'",
            "accelerate",
            "exists from accelerate",
        ),
        (  # Python before 3.10 names no class: the failing line's call does
            'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n'
            "    trainer = Trainer(gpus=1, max_epochs=3)\n"
            "TypeError: __init__() got an unexpected keyword argument 'gpus'\n",
            "pytorch-lightning",
            "removed in 2.0.0",
        ),
        (  # gradio 4 removed the components' .style() (read in the 3.x and 4.x wheels)
            "AttributeError: 'Textbox' object has no attribute 'style'",
            "gradio",
            "was removed in 4.0.0",
        ),
        (  # a module-level name: the installed release, as `cannot import name` (the environment)
            "AttributeError: module 'huggingface_hub' has no attribute 'cached_download'",
            "huggingface-hub",
            "removed in 0.26.0",
        ),
    ],
)
def test_a_keyword_method_or_name_a_librarys_releases_differ_on_is_that_librarys_api_change(paste, lib, says):
    from explainer.advise.environment import release_notes
    from explainer.match.origin import from_paste

    parsed = parse_text(paste)
    kind = "environment" if paste.startswith("AttributeError: module") else "library"
    assert from_paste(parsed) == {"kind": kind, "library": lib}
    text = " ".join(n["en"] for n in release_notes(parsed))
    assert says in text, text


@pytest.mark.parametrize(
    "paste",
    [
        "TypeError: Accelerator.__init__() got an unexpected keyword argument 'kwargs_handler'",  # a typo
        "AttributeError: 'Trainer' object has no attribute 'foo'",
        "AttributeError: 'Model' object has no attribute 'style'",  # the user's own class
    ],
)
def test_what_no_release_differs_on_is_no_library_fact(paste):
    from explainer.advise.environment import release_notes
    from explainer.match.origin import from_paste

    parsed = parse_text(paste)
    assert release_notes(parsed) == [] and from_paste(parsed)["kind"] != "library"
