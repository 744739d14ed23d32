"""Raise sites of the libraries around torch (``data/libsites.jsonl.gz``): built from their wheels by
the long tail's extractor, looked up only when torch's own sources hold no site for the message."""

from __future__ import annotations

import zipfile

import pytest

from explainer.knowledge.libsites_build import sites_of_wheel

SOURCE = """
class AutoThing:
    def load(self, key):
        if key not in self._mapping:
            raise KeyError(f"Unknown thing type {key}, check the release")
"""


def test_sites_come_from_the_wheels_python_files(tmp_path):
    whl = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("demo/auto.py", SOURCE)
        z.writestr("demo/tests/test_auto.py", "raise ValueError('a test, not the library')")
        z.writestr("demo-1.0.dist-info/METADATA", "Name: demo")
    sites = sites_of_wheel(whl, "demo", "1.0")
    assert [(s["o"], s["v"], s["f"], s["fn"], s["c"]) for s in sites] == [
        ("demo", "1.0", "demo/auto.py", "AutoThing.load", "key not in self._mapping")
    ]


def _answer(text):
    from explainer.knowledge.index import open_index
    from explainer.match.explain import explain_text
    from explainer.render import answer_json

    index = open_index()
    return answer_json(explain_text(text, index, budget=None), index)


def test_a_library_message_names_the_library_its_file_and_function():
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/run.py", line 9, in <module>\n    out = model()\n'
        '  File "/opt/conda/lib/python3.10/site-packages/transformers/models/bert/modeling_bert.py", line 960, in forward\n'
        '    raise ValueError("You have to specify either input_ids or inputs_embeds")\n'
        "ValueError: You have to specify either input_ids or inputs_embeds\n"
    )
    out = _answer(paste)
    assert out["matches"] == []
    site = out["raised_at"][0]
    assert site["library"] == "transformers" and site["file"].endswith("models/bert/modeling_bert.py")
    assert site["function"] == "BertModel.forward" and site["version"]
    assert out["raised_by"] == {"kind": "library", "library": "transformers"}


def test_torchs_own_messages_stay_with_torch():
    out = _answer("RuntimeError: Expected all tensors to be on the same device, but found at least two devices")
    assert all(not r.get("library") for r in out["raised_at"])


def test_a_raise_site_without_file_or_function_gives_no_raised_at_line():
    from explainer.match.explain import Answer
    from explainer.model import Candidate, Parsed
    from explainer.render.markdown import raised_at_markdown

    parsed = Parsed("RuntimeError", "boom")
    site = {"file": None, "line": None, "function": None, "template": "boom", "strength": "exact", "origin": "binary"}
    answer = Answer(parsed, (Candidate("x", 0.9, (), {}, 1),), None, False, (site,))
    assert "Raised at" not in raised_at_markdown(answer, lang="en")
    site["function"] = "at::native::boom"
    assert "Raised at: `at::native::boom`" in raised_at_markdown(answer, lang="en")


# --- another release's wording, and the frame that raised what no indexed release holds ---------


def test_another_releases_wording_finds_its_site_marked_near():
    """A wording no indexed release has word for word ("a batch of" where transformers says "batch
    of"): the site is found, marked as a close wording, and the answer says so."""
    from explainer.knowledge.index import open_index
    from explainer.match.explain import explain_text
    from explainer.render.markdown import raised_at_markdown

    paste = (
        "ValueError: text input must be of type `str` (single example), `List[str]` (batch or single "
        "pretokenized example) or `List[List[str]]` (a batch of pretokenized examples)."
    )
    out = _answer(paste)
    site = out["raised_at"][0]
    assert site["library"] == "transformers" and site["near"] is True and site["strength"] == "partial"
    assert site["file"].endswith("tokenization_utils_base.py")
    md = raised_at_markdown(explain_text(paste, open_index(), budget=None), lang="both")
    assert "a close wording" in md and "措辞相近" in md


def test_an_older_releases_own_wording_is_found_word_for_word():
    """transformers 4.36 said "must of type", the releases after it "must be of type": both are indexed."""
    site = _answer(
        "ValueError: text input must of type `str` (single example), `List[str]` (batch or single "
        "pretokenized example) or `List[List[str]]` (batch of pretokenized examples)."
    )["raised_at"][0]
    assert (site["library"], site["version"], "near" in site) == ("transformers", "4.36.2", False)


def test_quotes_and_a_closing_full_stop_do_not_hide_a_site():
    """pytorch-lightning 1.x quoted with '...' what 2.x quotes with backticks and ends with a full stop."""
    out = _answer(
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: "
        "No 'test_dataloader()' method defined to run 'Trainer.test'"
    )
    site = out["raised_at"][0]
    assert site["library"] == "pytorch-lightning" and "near" not in site
    assert site["file"].endswith("configuration_validator.py")
    assert out["raised_by"] == {"kind": "library", "library": "pytorch-lightning"}


def _frames(*files_and_code, exc="RuntimeError: the scheduler queue ran dry before step 7"):
    lines = ["Traceback (most recent call last):", '  File "/home/u/serve.py", line 3, in <module>', "    main()"]
    for i, (path, code) in enumerate(files_and_code):
        lines += [f'  File "{path}", line {10 + i}, in step', f"    {code}"]
    return "\n".join(lines + ([exc] if exc else [])) + "\n"


def test_an_unindexed_library_message_is_placed_at_its_innermost_library_frame():
    paste = _frames(
        ("/env/lib/python3.11/site-packages/quokka_sched/engine.py", "self._drain()"),
        ("/usr/lib/python3.11/queue.py", "raise Empty"),  # the standard library under it is skipped
    )
    out = _answer(paste)
    site = out["raised_at"][0]
    assert (site["origin"], site["library"], site["file"], site["line"], site["code"]) == (
        "frame",
        "quokka-sched",
        "quokka_sched/engine.py",
        10,
        "self._drain()",
    )
    assert out["raised_by"] == {"kind": "library", "library": "quokka-sched"}
    from explainer.knowledge.index import open_index
    from explainer.match.explain import explain_text
    from explainer.render.markdown import raised_at_markdown

    md = raised_at_markdown(explain_text(paste, open_index(), budget=None), lang="both")
    assert "innermost frame of the paste inside quokka-sched" in md and "`self._drain()`" in md
    assert "Message and location from" not in md  # no claim that the library's sources were read


def test_no_frame_site_for_torch_for_the_users_own_frame_or_a_cut_traceback():
    torch_frame = _frames(("/env/lib/python3.11/site-packages/torch/nn/modules/module.py", "return f(x)"))
    users = _frames(("/home/u/lib/engine.py", "self._drain()"))
    cut = _frames(("/env/lib/python3.11/site-packages/quokka_sched/engine.py", "self._drain()"), exc="")
    cut = "RuntimeError: the scheduler queue ran dry before step 7\n\n" + cut  # a title, then a cut traceback
    for paste in (torch_frame, users, cut):
        assert all(r.get("origin") != "frame" for r in _answer(paste)["raised_at"]), paste


def test_a_library_run_from_its_own_source_tree_is_placed_there():
    """A clone or an editable install (``lmdeploy/lmdeploy/...``, ``FunASR-main/funasr/...``, a
    ``src/`` or ``python/`` layout) is the library's code; the same error from a project's own
    ``models/models/`` folder, or from a folder of another name, is nobody's."""
    for tree, file in (
        ("/root/work/lmdeploy/lmdeploy/pytorch/engine.py", "lmdeploy/pytorch/engine.py"),
        (r"E:\PyCharm\FunASR-main\funasr\train\choices.py", "funasr/train/choices.py"),
        ("/srv/LLaMA-Factory/src/llamafactory/train/tuner.py", "llamafactory/train/tuner.py"),
    ):
        out = _answer(_frames((tree, "raise RuntimeError(msg)")))
        site = out["raised_at"][0]
        assert (site["origin"], site["file"]) == ("frame", file), tree
        assert out["raised_by"]["kind"] == "library", tree
    for own in ("/home/u/models/models/net.py", "/home/u/myproj/lmdeploy/engine.py"):
        out = _answer(_frames((own, "raise RuntimeError(msg)")))
        assert all(r.get("origin") != "frame" for r in out["raised_at"]) and out["raised_by"]["kind"] != "library"


def test_a_path_that_starts_at_a_package_folder_is_placed_there():
    """A shortened path (``.../pkg/...``) or a relative one that starts at a package's folder (a compiled
    package's recorded paths) is that package's; a relative ``clone/script.py`` (a clone's root named
    as a package) and a project's own relative paths are nobody's."""
    for path, file in (
        (".../lmdeploy/serve/core.py", "lmdeploy/serve/core.py"),
        ("lmdeploy/serve/core.py", "lmdeploy/serve/core.py"),
    ):
        site = _answer(_frames((path, "raise RuntimeError(msg)")))["raised_at"][0]
        assert (site["origin"], site["file"]) == ("frame", file), path
    for own in ("lmdeploy/detect.py", "models/yolo/head.py"):
        out = _answer(_frames((own, "raise RuntimeError(msg)")))
        assert all(r.get("origin") != "frame" for r in out["raised_at"]), own


def test_a_comfyui_custom_node_is_named_and_a_paste_cut_in_comfyuis_dispatcher_names_nobody():
    node = r"C:\AI\ComfyUI\custom_nodes\ComfyUI_Quokka_Nodes\nodes.py"
    out = _answer(
        _frames((r"C:\AI\ComfyUI\execution.py", "return_values = map_node(obj)"), (node, "raise Exception(m)"))
    )
    assert out["raised_by"] == {"kind": "library", "library": "ComfyUI-Quokka-Nodes"}
    assert out["raised_at"][0]["file"] == "ComfyUI_Quokka_Nodes/nodes.py"
    cut = "!!! Exception during processing !!! the quokka node ran dry\n" + _frames(
        (r"C:\AI\ComfyUI\execution.py", "return_values = map_node(obj)"), exc=""
    )
    assert _answer(cut)["raised_by"]["kind"] is None


def test_a_windows_standard_library_frame_under_a_library_frame_is_skipped():
    """``envs\\name\\lib\\ctypes\\__init__.py`` is the standard library's (its module's name tells
    it from a project's own ``lib`` folder): the package that called it raised the error."""
    out = _answer(
        _frames(
            (r"C:\m\envs\e\lib\site-packages\quokka_sched\engine.py", "libc = ctypes.CDLL(name)"),
            (r"C:\m\envs\e\lib\ctypes\__init__.py", "if '/' in name or '\\\\' in name:"),
            exc="TypeError: argument of type 'NoneType' is not iterable",
        )
    )
    assert out["raised_by"] == {"kind": "library", "library": "quokka-sched"}


def test_a_librarys_own_version_check_is_the_installations_fault():
    """A library that checks what is installed ("Quokka requires PyTorch >= 2.1.0") raised it, and
    says the installation is at fault: the environment's, named by that library."""
    for message in (
        "RuntimeError: Quokka requires PyTorch >= 2.1.0",
        "ImportError: the quokka plan requires numpy version 2.0 but numpy 1.26.4 is installed.",
    ):
        out = _answer(
            _frames(("/env/lib/python3.11/site-packages/quokka_sched/backend.py", "raise Err(msg)"), exc=message)
        )
        assert out["raised_by"] == {"kind": "environment", "library": "quokka-sched"}, message
    other = _answer(_frames(("/env/lib/python3.11/site-packages/quokka_sched/backend.py", "raise Err(msg)")))
    assert other["raised_by"] == {"kind": "library", "library": "quokka-sched"}


def test_a_librarys_log_record_names_where_it_was_reported_but_not_who_raised_it():
    """A log line names the module that reported the error (loguru's ``pkg.mod:fn:line - ``, the standard
    library's ``pkg.mod - ERROR - ``), which may have caught another package's: the answer shows it as
    logged there; ``raised_by`` stays unknown. A program's own ``__main__`` logger names nothing."""
    for paste, file, line in (
        (
            "2024-11-13 14:40:37.395 | ERROR    | lmdeploy.serve.core:run_job:114 - need a plan input\n",
            "lmdeploy/serve/core.py",
            114,
        ),
        ("2024-05-01 10:00:00,000 - lmdeploy.serve.core - ERROR - the plan ran dry\n", "lmdeploy/serve/core.py", None),
    ):
        out = _answer(paste)
        site = out["raised_at"][0]
        assert (site["origin"], site["library"], site["file"], site["line"]) == ("log", "lmdeploy", file, line), paste
        assert out["raised_by"]["kind"] is None
    from explainer.knowledge.index import open_index
    from explainer.match.explain import explain_text
    from explainer.render.markdown import raised_at_markdown

    md = raised_at_markdown(explain_text(paste, open_index(), budget=None), lang="both")
    assert "reported this in its log" in md and "在日志里报告" in md and "Logged at" in md
    own = _answer("2024-05-01 10:00:00,000 - __main__ - ERROR - the plan ran dry\n")
    assert all(r["origin"] != "log" for r in own["raised_at"])


def test_a_native_source_file_named_in_the_message_places_its_package():
    """Compiled code that writes its C++ file and line into the message (torch_npu, mmdet3d's CUDA ops)
    is that package's; torch's own tree is the long tail's, and vendored code (a tensorflow/ path
    inside torch_xla's build) names no package."""
    for paste, lib, file in (
        (
            "RuntimeError: torch_npu/csrc/framework/OpCommand.cpp:190 NPU error, error code is 507015\n",
            "torch-npu",
            "torch_npu/csrc/framework/OpCommand.cpp",
        ),
        (
            "RuntimeError: mmdet3d/ops/spconv/src/indice_cuda.cu 124\ncuda execution failed with error 2\n",
            "mmdet3d",
            "mmdet3d/ops/spconv/src/indice_cuda.cu",
        ),
    ):
        out = _answer(paste)
        site = out["raised_at"][0]
        assert (site["origin"], site["library"], site["file"]) == ("paste", lib, file), paste
        assert out["raised_by"] == {"kind": "library", "library": lib}
    vendored = _answer(
        "2023-04-17 19:35:38: F tensorflow/compiler/xla/xla_client/xrt_computation_client.cc:1234] Non-OK\n"
    )
    assert all(r.get("library") != "tensorflow" for r in vendored["raised_at"])


def test_a_bare_assert_in_a_library_is_placed_at_its_frame():
    out = _answer(
        _frames(("/env/lib/python3.11/site-packages/quokka_sched/config.py", "assert self.ok"), exc="AssertionError")
    )
    assert out["raised_at"][0]["file"] == "quokka_sched/config.py"


def test_a_message_python_writes_that_runs_on_claims_no_library_or_torch_site():
    """A flattened paste runs CPython's wording on into the next line: never a torch template's near fit."""
    out = _answer(
        "TypeError: __init__() takes from 2 to 3 positional arguments but 4 were given Exception in thread Thread-3"
    )
    assert out["raised_at"] == []


def test_a_warning_is_placed_where_its_header_says_and_called_a_warning():
    """Python's warnings module writes ``file:line: Category: text``: a package's file names who issued
    it (its text may follow on the next line); numpy's floating-point words are numpy's at whatever line
    called the operation; a warning pointed at the user's own line names nobody."""
    pkg = "/env/lib/python3.11/site-packages/quokka_sched/engine.py"
    for paste in (
        f"{pkg}:88: QuokkaDeprecationWarning: step() is deprecated, use advance()\n  warnings.warn(\n",
        f"{pkg}:88: QuokkaDeprecationWarning:\nstep() is deprecated, use advance()\n",
    ):
        out = _answer(paste)
        site = out["raised_at"][0]
        assert (site["origin"], site["library"], site["file"], site["line"]) == (
            "warning",
            "quokka-sched",
            "quokka_sched/engine.py",
            88,
        ), paste
        assert out["raised_by"] == {"kind": "library", "library": "quokka-sched"}
    from explainer.knowledge.index import open_index
    from explainer.match.explain import explain_text
    from explainer.render.markdown import raised_at_markdown

    md = raised_at_markdown(explain_text(paste, open_index(), budget=None), lang="both")
    assert "A warning, not an error" in md and "further down the output" in md and "不是报错" in md
    numpy = _answer("/home/u/train.py:40: RuntimeWarning: divide by zero encountered in log\n  loss = np.log(p)\n")
    assert (numpy["raised_at"][0]["library"], numpy["raised_at"][0]["file"]) == ("numpy", "/home/u/train.py")
    assert numpy["raised_by"] == {"kind": "library", "library": "numpy"}
    own = _answer("/home/u/train.py:40: UserWarning: the quokka queue is nearly empty\n  warnings.warn(\n")
    assert all(r["origin"] != "warning" for r in own["raised_at"]) and own["raised_by"]["kind"] != "library"


def test_a_qualified_exception_type_names_its_library_without_frames():
    out = _answer("pytorch_lightning.utilities.exceptions.MisconfigurationException: something only 1.x said")
    assert out["raised_by"] == {"kind": "library", "library": "pytorch-lightning"}


def test_an_mpsgraph_crash_is_placed_in_apples_graph_compiler():
    """MPSGraph names its own .mm file and line when it fails; the process then dies (LLVM ERROR,
    abort), and a shutdown warning may be the last thing printed: raised by MPSGraph, there."""
    paste = (
        'loc("mps_subtract"("(mpsFileLoc): /AppleInternal/Library/BuildRoots/0a1b/Library/Caches/com.apple.xbs/'
        "Sources/MetalPerformanceShadersGraph/mpsgraph/MetalPerformanceShadersGraph/Core/Files/"
        "MPSGraphUtilities.mm\":228:0)): error: input types 'tensor<8x1xf32>' and 'tensor<8x4xsi64>' are not "
        "broadcast compatible\n"
        "LLVM ERROR: Failed to infer result type(s).\n"
        "zsh: abort      python train.py\n"
        "/opt/py/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: resource_tracker: There "
        "appear to be 1 leaked semaphore objects to clean up at shutdown\n"
    )
    out = _answer(paste)
    site = out["raised_at"][0]
    assert (site["library"], site["line"], site["exc_type"]) == ("MPSGraph", 228, None)
    assert site["file"].endswith("MPSGraphUtilities.mm") and "not broadcast compatible" in site["said"]
    assert out["raised_by"] == {"kind": "library", "library": "MPSGraph"}


def test_a_class_of_its_own_is_no_other_class_and_a_thin_template_names_no_unseen_library():
    """A Python raise or warning names its class: a LightningDeprecationWarning is no site of torch's
    FutureWarning, however close the words; a template whose hole holds most of a frameless message
    ("{} does not exist") names no library the paste does not show. A builtin class another release
    may have raised the words with still fits (torch 1.x's `raise Exception(msg)` in spawn.py)."""
    warn = _answer(
        "LightningDeprecationWarning: Setting `Trainer(checkpoint_callback=True)` is deprecated in v1.5 and "
        "will be removed in v1.7. Please consider using `Trainer(enable_checkpointing=True)`."
    )
    assert not any(r["file"] == "torch/onnx/_deprecation.py" for r in warn["raised_at"]), warn["raised_at"]
    thin = _answer('FileNotFoundError: file "/models/tsn_r50.py" does not exist')
    assert thin["raised_at"] == [] and thin["raised_by"]["library"] is None, thin["raised_at"]
    spawn = _answer(
        "Traceback (most recent call last):\n"
        '  File "/env/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 118, in join\n'
        "    raise Exception(msg)\nException: \n\n-- Process 5 terminated with the following error:\n"
    )
    assert any(r["file"] == "torch/multiprocessing/spawn.py" for r in spawn["raised_at"]), spawn["raised_at"]


# who raised it, from the paste: a traceback cut inside a frame's header (no function name) names no
# library from that frame; a module the import system could not find, a name the installed release does
# not offer (`cannot import name 'Field' from 'torchtext.data'`) and a compiled part of an installed
# package that does not load are the installation's, as the curated moved-name entries say, whichever
# installed package's frame shows them
WHO = [
    (  # a library's import of a name the installed release of another does not have: the installation's
        'Traceback (most recent call last):\n  File "/home/u/app.py", line 1, in <module>\n    import diffusers\n'
        '  File "/env/lib/python3.10/site-packages/diffusers/utils/dynamic_modules_utils.py", line 28, in <module>\n'
        "    from huggingface_hub import cached_download, hf_hub_download, model_info\n"
        "ImportError: cannot import name 'cached_download' from 'huggingface_hub' "
        "(/env/lib/python3.10/site-packages/huggingface_hub/__init__.py)\n",
        {"kind": "environment", "library": "huggingface-hub"},
    ),
    (  # `python -m` names the module unquoted, after the interpreter's path
        "$ python3 -m transformers.models.qwen3.convert x\n/usr/bin/python3: No module named transformers.models.qwen3\n",
        {"kind": "environment", "library": "transformers"},
    ),
    (  # a DataLoader worker's error, rebuilt by torch in the main process: the class's package raised it
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 40, in <module>\n    for batch in loader:\n'
        '  File "/env/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1371, in _process_data\n'
        "    data.reraise()\n"
        '  File "/env/lib/python3.10/site-packages/torch/_utils.py", line 694, in reraise\n'
        "    raise exception\n"
        "soundfile.LibsndfileError: Error opening 'clip_0007.wav': Format not recognised.\n",
        {"kind": "library", "library": "soundfile"},
    ),
    (
        "ERROR   train has failed due to an exception:\n> ERROR   Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/dist-packages/accelerate/data_loader.py", line 461, in __iter__\n'
        "    next_batch = next(dataloader_iter)\n"
        '  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py", line 677,',
        None,
    ),
    (
        "Traceback (most recent call last):\n"
        '  File "/env/lib/site-packages/fastchat/serve/openai_api_server.py", line 39, in <module>\n'
        "    from fastchat.protocol.openai_api_protocol import (\n"
        "ModuleNotFoundError: No module named 'fastchat.protocol'\n",
        {"kind": "environment", "library": "fschat"},
    ),
    (
        'Traceback (most recent call last):\n  File "main.py", line 2, in <module>\n'
        "    from torchtext.data import Field\n"
        "ImportError: cannot import name 'Field' from 'torchtext.data' "
        "(/usr/local/lib/python3.10/dist-packages/torchtext/data/__init__.py)\n",
        {"kind": "environment", "library": "torchtext"},
    ),
    (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.9/dist-packages/kaolin/__init__.py", line 1, in <module>\n'
        "    from . import _C\n"
        "ImportError: /usr/local/lib/python3.9/dist-packages/kaolin/_C.so: undefined sym",
        {"kind": "environment", "library": "kaolin"},
    ),
]


def test_a_module_that_lacks_a_name_is_the_installed_release_unless_the_project_shadows_it():
    """``module 'pkg' has no attribute 'Name'`` on a distribution's module: its installed release lacks the
    name, as ``cannot import name`` says; a project file of that name (``datasets.py``) hides the package."""
    lacks = (
        'Traceback (most recent call last):\n  File "/home/u/app/run.py", line 3, in <module>\n'
        "    pipe = whisperx.DiarizationPipeline()\n"
        "AttributeError: module 'whisperx' has no attribute 'DiarizationPipeline'\n"
    )
    out = _answer(lacks)
    assert out["raised_by"] == {"kind": "environment", "library": "whisperx"}
    assert any("has no `whisperx.DiarizationPipeline`" in n for n in out["notes"])
    shadowed = (
        'Traceback (most recent call last):\n  File "/home/u/app/train.py", line 9, in <module>\n'
        "    ds = datasets.build(cfg)\n"
        '  File "/home/u/app/datasets.py", line 4, in build\n    return datasets.Custom(cfg)\n'
        "AttributeError: module 'datasets' has no attribute 'Custom'\n"
    )
    assert _answer(shadowed)["raised_by"]["kind"] != "environment"


@pytest.mark.parametrize("paste, who", WHO)
def test_who_raised_it_from_the_paste(paste, who):
    got = _answer(paste)["raised_by"]
    if who is None:
        assert got["kind"] != "torch", got
    else:
        assert got == who, got


def test_nvcc_on_windows_is_nvcc():
    from explainer.match.origin import from_paste
    from explainer.parse.parser import parse_text

    # (what the paste shows, under an answer that leaves the tool to it)
    nvcc = from_paste(parse_text("error: command 'C:\\\\CUDA\\\\v10.1\\\\bin\\\\nvcc.exe' failed with exit status 1\n"))
    assert nvcc == {"kind": "environment", "library": "nvcc"}, nvcc
