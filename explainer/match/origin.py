"""Who raised the error, as far as the paste shows: torch, a library around it, the environment (an
installation, a build tool, a system library) or plain Python in the user's code.

The answer's ``raised_by`` (INTERFACES.md). A curated entry says it in its front matter; otherwise the
paste's own evidence decides, in this order: a raise site in torch's indexed sources; a build tool's
failure line; a missing module; the innermost frame inside an installed package; an interpreter error
whose frames are all the user's. Anything else is ``None``: a wrong "who" is worse than none.
"""

from __future__ import annotations

import sys

from explainer.textio import Lazy, path_parts

_PACKAGE = Lazy(r"(?:site|dist)-packages[\\/]+([A-Za-z_]\w{0,80})")
_STDLIB = Lazy(r"[\\/]lib[\\/]+python3\.\d{1,2}[\\/]+(?!site-packages|dist-packages)[\w.-]{1,80}(?:[\\/]|\.py$)")
# a shared object inside an installed package, in a loader's message (undefined symbol, dlopen failed)
_SHARED_OBJECT = Lazy(
    r"(?:site|dist)-packages[\\/]+([A-Za-z_]\w{0,80})(?P<inside>[\\/][^\s:'\"]{0,300}?)?(?:\.cpython-[\w-]{1,60}|\.cp\d{2,3}-[\w-]{1,40})?\.(?:so|pyd|dll|dylib)\b"
)
# the module an import could not find, in CPython's English and its Chinese translations
# (quotes a poster may retype as double quotes or backticks; the third: ``python -m pkg.mod`` names the
# module unquoted, after the interpreter's path)
_MISSING = Lazy(
    r"No module named ['\"`]([A-Za-z_][\w.-]{0,200})['\"`]|没有名为 ?['“]([A-Za-z_][\w.-]{0,200})['”]"
    r"|(?:^|python[\d.]{0,8}(?:\.exe)?: )No module named ([A-Za-z_][\w.]{0,200})\s*$"
)
_ALNUM = Lazy(r"[^a-z0-9]")
_MISSING_CUT = Lazy(r"No module named '([A-Za-z_][\w-]{0,100}\.[\w.-]{1,200})\s*$")
_CANNOT_IMPORT = Lazy(r"cannot import name '\w{1,200}' from '([A-Za-z_][\w.]{0,200})'")
# a module that lacks a name (``module 'dgl' has no attribute 'DGLGraphStale'``): the module, then the name
MODULE_LACKS = Lazy(r"(?:^|: )module '([A-Za-z_][\w.]{0,200})' has no attribute '(\w{1,200})'")
_TOOLS = (  # a build tool's own failure line -> the tool
    (Lazy(r"command '[^'\n]{0,300}nvcc(?:\.exe)?' failed|nvcc fatal|nvcc error"), "nvcc"),
    (Lazy(r"ninja: build stopped|Ninja is required"), "ninja"),
    (Lazy(r"Failed building wheel for ([\w.-]{1,100})"), None),  # the wheel's own name
    (Lazy(r"ResolutionImpossible|externally-managed-environment|pip's dependency resolver"), "pip"),
    (Lazy(r"Microsoft Visual C\+\+ [\d.]+ or greater is required"), "msvc"),
    (Lazy(r"error: command '[^'\n]{0,300}(?:gcc|g\+\+|cl\.exe|clang)' failed"), "compiler"),
)
# a shell that cannot find a command (cmd.exe, PowerShell, bash, zsh, sh; cmd's Chinese text, also as
# its GBK bytes read as UTF-8)
_NO_COMMAND = Lazy(
    r"'([\w.+-]{1,60})' (?:is not recognized as an internal or external command|不是内部或外部命令|\ufffd{3})"
    r"|The term '([\w.+-]{1,60})' is not recognized as (?:the|a) name of a cmdlet"
    r"|ObjectNotFound: \(([\w.+-]{1,60}):String\)"
    r"|无法将“([\w.+-]{1,60})”项识别为 cmdlet"
    r"|(?:^|[:：] ?)([\w.+-]{1,60}) ?[:：] (?:command not found(?!:)|未找到命令)"
    r"|(?:^|[:：] ?)([\w.+-]{1,60})：未找到命令"
    r"|command not found: ([\w.+-]{1,60})"
    r"|\bsh: \d{1,6}: (?:[^\s:]{0,200}/)?([\w.+-]{1,60}): not found"
)
_NO_COMMAND_WORDS = ("not found", "not recognized", "ObjectNotFound", "内部或外部", "识别为", "未找到命令", "\ufffd")
# exceptions only the interpreter raises, for the program's own mistakes (a TypeError, KeyError or
# AttributeError may as well come from a library's C code or its objects: those are told by message)
PYTHON_TYPES = frozenset(
    {
        "NameError",
        "UnboundLocalError",
        "SyntaxError",
        "IndentationError",
        "TabError",
        "ZeroDivisionError",
        "RecursionError",
    }
)
# CPython's own wordings of the other common types
_PYTHON_MESSAGE = Lazy(
    r"^(?:'NoneType' object (?:has no attribute|is not (?:subscriptable|iterable|callable))"
    r"|unsupported operand type\(s\)|can only concatenate|\w{1,80}\(\) (?:takes|got|missing) "
    r"|list index out of range|string indices must be|'\w{1,80}' object is not (?:subscriptable|callable|iterable)"
    r"|(?:not enough|too many) values to unpack|name '\w{1,200}' is not defined"
    r"|argument of type '\w{1,80}' is not (?:iterable|a container)"
    r"|'(?:int|float|str|bool|list|tuple|dict|set|bytes|NoneType)' object has no attribute)"
)
_NAME_NOT_DEFINED = Lazy(r"\bname '\w{1,200}' is not defined")
_ARGPARSE = Lazy(
    r"^[\w.-]{1,100}: error: (?:unrecognized arguments: |the following arguments are required: "
    r"|argument [-\w/]{1,100}: (?:invalid|expected|ambiguous|not allowed))"
)
_ARITY = Lazy(
    r"^(?:TypeError: ?)?(?:\w{1,80}\.){0,3}(?!__init__\()\w{1,80}\(\) (?:missing \d{1,3} required (?:positional|keyword-only) "
    r"arguments?|takes (?:from \d{1,3} to )?\d{1,3} positional arguments? but \d{1,3} (?:was|were) given)"
)
# a library's words that another package's installed version does not meet its requirement
# ("DGL requires PyTorch >= 1.13.0", "requires transformers version 4.37 but transformers 4.36.2 is
# installed", "Python>=3.10 is required, but Python==3.8.10 is currently installed")
_VERSION_NEED = Lazy(
    r"\b(?:requires?|required|needs?)\b[^\n]{0,60}?(?:>=|>|==|<=|at least|version|v)\s?\d{1,4}\.\d{1,4}"
    r"|\bis (?:currently )?installed\b|\bbut (?:you have|found) [\w.-]{1,60} \d{1,4}\.\d{1,4}"
)
# CPython's ImportError for a module whose sys.modules entry is None (a failed or blocked import)
_HALTED = Lazy(r"import of ([A-Za-z_][\w.]{0,200}) halted; None in sys\.modules")


# Apple's MPSGraph (the MPS backend's graph compiler) names its own source file when it fails:
# loc("mps_subtract"("(mpsFileLoc): /AppleInternal/.../MetalPerformanceShadersGraph/.../MPSGraphUtilities.mm":228:0)): error: ...
# /AppleInternal/.../MPSGraphComputePackage.mm:271: failed assertion `...'
_MPSGRAPH = Lazy(r"(MetalPerformanceShadersGraph/[\w./-]{1,300}?\.mm)\"?:(\d{1,7})")
# numpy's floating-point error handling (np.errstate), its C core's "%s encountered in %s": a warning
# issued at the line that called the operation
_NUMPY_FP = Lazy(r"(?:divide by zero|overflow|underflow|invalid value) encountered in ")
# the header Python's warnings module writes: /.../site-packages/pkg/mod.py:151: SomeWarning: text
_WARNED_AT = Lazy(r"\.py:(?P<line>\d{1,7}): (?P<type>[A-Za-z_][\w.]{0,100}Warning):")
# where a path starts in the text before it: a drive, or a root or home after a space or a quote (else
# the path is the last word: a relative one)
_PATH_START = Lazy(r"[A-Za-z]:[\\/]|(?:^|(?<=[\s`'\"(|>]))[/~]")


def _site(exc_type, file, line, function, origin: str, library: str | None, **fields) -> dict:
    """A ``raised_at`` record the paste itself shows (no template: the message is the paste's own)."""
    return {
        "exc_type": exc_type,
        "template": None,
        "file": file,
        "line": line,
        "function": function,
        "op": None,
        "condition": None,
        "origin": origin,
        "library": library,
        "version": None,
        "torch_version": None,
        "url": None,
        "strength": "exact",
        "sites": 1,
        "kind": None,
        "code": None,
        "also": [],
        **fields,
    }


def native_site(parsed) -> tuple:
    """A raise site a system library names in the paste's last lines (MPSGraph's file and line, with
    the line that says what failed), as a ``raised_at`` record of ``origin`` "paste"; else empty."""
    for line in reversed(parsed.lines[-80:]):
        if "MetalPerformanceShadersGraph/" not in line:
            continue
        m = _MPSGRAPH.search(line[:2000])
        if not m:
            continue
        said = line[m.end() :].lstrip(')":0123456789 ').strip()
        # a crash in native code, not the paste's Python exception
        return (_site(None, m.group(1), int(m.group(2)), None, "paste", "MPSGraph", said=said[:300] or None),)
    return ()


# a C/C++ source file and line a package's native code writes into its message:
# "torch_xla/csrc/aten_xla_bridge.cpp:69 : Check failed", "horovod/torch/cuda_util.cc:32",
# "mmdet3d/ops/spconv/src/indice_cuda.cu 124"
_NATIVE_FILE = Lazy(
    r"(?<![\w.-])((?:[\w.-]{1,100}/){1,14}[\w.-]{1,100}\.(?:cpp|cc|cu|cuh|cxx|c|h|hpp))(?::|\]? line |\s)(\d{1,6})\b"
)
# the folders of torch's own tree (its sources are the long tail's), and of code other builds vendor
# (torch_xla compiles TensorFlow's XLA client: a tensorflow/ path there is no TensorFlow install's)
_TORCH_TREE = frozenset(
    (
        "torch",
        "pytorch",
        "aten",
        "c10",
        "caffe2",
        "THC",
        "TH",
        "THCUNN",
        "functorch",
        "third_party",
        "external",
        "tensorflow",
    )
)


def native_file_site(parsed) -> tuple:
    """The source file and line a package's compiled code names in the message itself (a C++ check of
    torch_xla, torch_npu, horovod or a CUDA op): a ``raised_at`` record of ``origin`` "paste" for the
    package the path starts in; empty for torch's own tree (the long tail's) and a path no known
    distribution holds."""
    message = (parsed.message or "")[:2000]
    if "/" not in message:
        return ()
    m = _NATIVE_FILE.search(message)
    if not m:
        return ()
    parts = [p for p in m.group(1).split("/") if p not in ("", ".", "..")]
    if any(p in _TORCH_TREE for p in parts[:-1]):
        return ()
    from explainer.facts import distributions_of

    for i, part in enumerate(parts[:-1]):
        if part.isidentifier() and len(part) > 2 and (dists := distributions_of(part)) and dists[0] != "torch":
            return (_site(parsed.exc_type, "/".join(parts[i:]), int(m.group(2)), None, "paste", dists[0]),)
    return ()


def warning_site(parsed) -> tuple:
    """Where the warning a paste ends with was issued, from the header Python's warnings module wrote
    (``file:line: Category: text``), as a ``raised_at`` record of ``origin`` "warning" when that file
    lies in an installed package; empty otherwise (a warning pointed at the caller's own line, as a
    library's ``stacklevel`` does, says nothing of who issued it, unless its words are numpy's)."""
    exc = (parsed.exc_type or "").rsplit(".", 1)[-1]
    if not exc.endswith("Warning"):
        return ()
    message = parsed.message or ""
    numpy = exc == "RuntimeWarning" and _NUMPY_FP.match(message[:100]) is not None
    for s in reversed(parsed.signals):
        if s.kind != "warning":
            continue
        m = _WARNED_AT.search(s.text[:1200])
        rest = s.text[m.end() : m.end() + 200].strip() if m else ""
        if not m or m.group("type").rsplit(".", 1)[-1] != exc or not (rest[:40] in message or message[:40] in rest):
            continue  # another warning than the one the paste ends with (its text may go on on the next line)
        head = s.text[: m.start() + 3]  # (the file is what precedes ".py" on its line, from where a path starts)
        head = head[head.rfind("\n") + 1 :]
        start = _PATH_START.search(head)
        path = head[start.start() :] if start else head.rsplit(None, 1)[-1]
        package = _PACKAGE.search(path)
        library: str | None
        if numpy:  # numpy's words, issued at the line that called the operation
            library = "numpy"
        elif package:
            library = None if package.group(1) == "torch" else _distribution(package.group(1)).replace("_", "-")
        else:
            return ()
        file = path[package.start(1) :] if package else path
        return (_site(parsed.exc_type, file.replace("\\", "/"), int(m.group("line")), None, "warning", library),)
    return ()


# a log record in the message itself: loguru's "pkg.mod:function:12 - text" (also inside a poster's
# words), the standard library's "pkg.mod - ERROR - text" / "pkg.mod 1234 ERROR text", and
# "[ERROR] (pkg.mod.Class:853) - text"
_LOGURU = Lazy(r"(?:^|\s)([A-Za-z_]\w{0,80}(?:\.\w{1,80}){0,10}):([\w<>]{1,100}):(\d{1,7}) - ")
_STD_LOG = Lazy(
    r"^([A-Za-z_]\w{0,80}(?:\.\w{1,80}){0,10})(?: - | \d{1,7} | )(?:ERROR|CRITICAL|FATAL)\b"
    r"|\[(?:ERROR|CRITICAL|FATAL)\] \(([A-Za-z_]\w{0,80}(?:\.\w{1,80}){0,10}):(\d{1,7})\) - "
)


def log_site(parsed) -> tuple:
    """Where a library logged the error the paste ends with, from the log record's own words: the
    logger an error-level prefix named (the parser's ``logger`` signal: a module, with loguru its
    function and line), else a record written into the message. A ``raised_at`` record of ``origin``
    "log" when the module is a known distribution's (torch's: no library); empty otherwise (a
    program's own ``__main__`` or ``root`` logger, the standard library, a name no distribution has)."""
    named = next((s.text for s in reversed(parsed.signals) if s.kind == "logger"), None)
    if named:
        mod, _, rest = named.partition(":")
        fn, _, line = rest.partition(":")
    else:
        message = (parsed.message or "")[:500]
        m = _LOGURU.search(message) if " - " in message else None
        if m:
            mod, fn, line = m.groups()
        else:
            m = _STD_LOG.search(message) if "ERROR" in message or "CRITICAL" in message or "FATAL" in message else None
            if not m:
                return ()
            mod, fn, line = m.group(1) or m.group(2), "", m.group(3) or ""
    from explainer.facts import distributions_of

    top = mod.split(".", 1)[0]
    dists = distributions_of(top) if top not in sys.stdlib_module_names else []
    if not dists:
        return ()
    library = None if dists[0] == "torch" else dists[0]
    # (a module's logger is named by its __name__; a bare package name is the package's own logger)
    file = mod.replace(".", "/") + ".py" if "." in mod or fn else None
    return (_site(parsed.exc_type, file, int(line) if line else None, fn or None, "log", library),)


def who(kind: str | None, library: str | None = None) -> dict:
    return {"kind": kind, "library": library}


def missing_module(message: str | None) -> str | None:
    """The dotted name of the module a "No module named ..." message could not find."""
    m = _MISSING.search((message or "")[:2000])
    return (m.group(1) or m.group(2) or m.group(3)) if m else None


def found_package(parsed) -> str | None:
    """The missing module of a "No module named 'pkg.sub'" whose package the import system found:
    Python names the first part of a dotted import it cannot find, so ``pkg`` imported (installed, or
    a folder of that name) and lacks ``sub``. None for a top-level name, for a namespace several
    distributions share (``google.protobuf``: the part after it names the distribution, which is not
    installed) and for a package's own native core (``cv2.cv2``: a broken install)."""
    name = missing_module(parsed.message) or _cut_missing(parsed.message)
    if not name or "." not in name.strip("."):
        return None  # (whatever the type: a warning may quote the import that failed)
    top, sub = name.split(".")[:2]
    if not top or not sub or sub == top:
        return None
    from explainer.facts import distributions_of

    sub_key, top_key = _ALNUM.sub("", sub.lower()), _ALNUM.sub("", top.lower())
    for d in distributions_of(top):
        d_key = _ALNUM.sub("", d.lower())
        if sub_key and sub_key in d_key and top_key not in d_key:
            return None  # google.protobuf -> protobuf (TTS.tts -> coqui-tts is TTS's own submodule)
    return name


def _cut_missing(message: str | None) -> str | None:
    """The dotted name of a "No module named '..." cut inside the name (its found part is whole)."""
    cut = _MISSING_CUT.search((message or "")[-300:])
    return cut.group(1) if cut else None


# a Windows interpreter's or environment's standard library: C:\Python310\Lib\ctypes\__init__.py,
# ...\envs\name\lib\subprocess.py (its module's name tells it from a project's own lib folder)
_WINDOWS_STDLIB = Lazy(r"[\\/][Ll]ib[\\/]+(\w{1,80})(?:[\\/]|\.py$)")


def stdlib_file(path: str) -> bool:
    """Whether a frame's file is the standard library's."""
    path = path[:1000]
    if _STDLIB.search(path):
        return True
    m = _WINDOWS_STDLIB.search(path)
    return bool(m) and m.group(1) in sys.stdlib_module_names


def frame_package(path: str) -> str | None:
    """The top-level import name of the package a frame's file lies in: an installed one, or one run
    from its own source tree (:func:`package_file`)."""
    found = package_file(path)
    return found[0] if found else None


# a path the poster shortened (".../pkg/mod.py", "…/pkg/mod.py"), and one from a root, a drive or home
_ELIDED = frozenset(("...", "…", "<...>"))
_ROOTED = Lazy(r"[\\/~]|[A-Za-z]:|\.{1,2}[\\/]")
# the folders a source tree keeps its package under (sglang/python/sglang, LLaMA-Factory/src/llamafactory)
_TREE_FOLDERS = frozenset(("src", "python", "lib"))


def package_file(path: str) -> tuple[str, str] | None:
    """The package a frame's file lies in and the file's path from the package's folder on:
    ``(import name, "pkg/sub/mod.py")``. An installed package (under ``site-packages``); else a
    library run from its own source tree (a clone or an editable install: ``RecBole/recbole/...``,
    ``stable-baselines3/stable_baselines3/...``, ``sglang/python/sglang/...``), told by a folder
    named as a known distribution's import name inside a folder that bears the same name (a
    project's own ``models/`` or ``utils/`` never does), or a path that starts at such a folder (a
    relative one, or one the poster shortened: ``.../coremltools/...``); else a ComfyUI custom node
    (``custom_nodes/<node>/``, the node's folder its name) or ComfyUI itself, whose folders users run
    from. None for the user's own files and the standard library."""
    path = path[:1000]
    m = _PACKAGE.search(path)
    if m:
        return m.group(1), path[m.start(1) :].replace("\\", "/")
    parts = path_parts(path)
    if len(parts) < 2:
        return None
    from explainer.facts import distributions_of

    elided = parts[0] in _ELIDED  # ".../coremltools/converters/...": the poster cut the folders above
    if elided or not _ROOTED.match(path):
        # a path that starts at a package's folder: a shortened one, a compiled package's recorded
        # paths (rknn/api/rknn_runtime.py), the package's folder in the working directory
        # (a folder, then a subfolder: "yolov5/detect.py" is as often a clone's root, named as a package)
        rel = parts[1:] if elided else parts
        if len(rel) > 2 and rel[0].isidentifier() and distributions_of(rel[0]):
            return rel[0], "/".join(rel)
        if not elided:
            return None
    if len(parts) < 3:
        return None
    for i in range(1, len(parts) - 1):  # the folders (the last part is the file)
        name, above = parts[i], parts[i - 1]
        if above.lower() == "custom_nodes" and name:
            return name, "/".join(parts[i:])
        if above.lower() in _TREE_FOLDERS and i >= 2:
            above = parts[i - 2]
        key = _ALNUM.sub("", name.lower())
        if len(key) >= 3 and name.isidentifier() and key in _ALNUM.sub("", above.lower()) and distributions_of(name):
            return name, "/".join(parts[i:])
    for i in range(len(parts) - 2, -1, -1):
        if parts[i].lower() == "comfyui" and "custom_nodes" not in (p.lower() for p in parts[i:]):
            return "comfyui", "/".join(parts[i + 1 :])
    return None


def _distribution(import_name: str) -> str:
    from explainer.facts import distributions_of

    top = import_name.split(".", 1)[0]
    dists = distributions_of(top)
    return dists[0] if dists else top


def frame_site(parsed) -> tuple:
    """The raise site the paste itself shows, for a message no indexed source holds: its innermost
    frame inside an installed package other than torch (standard-library frames under it skipped),
    as a ``raised_at`` record of ``origin`` "frame"; empty when that frame is torch's or the user's."""
    for f in reversed(parsed.frames):
        path = (f.file or "")[:1000]
        found = package_file(path)
        if found:
            if found[0] == "torch" or not _ends_with_exception(parsed, f):
                return ()
            library = _distribution(found[0]).replace("_", "-")
            return (_site(parsed.exc_type, found[1], f.line, f.function, "frame", library, code=f.code),)
        if not stdlib_file(path):
            return ()
    return ()


def paste_sites(parsed) -> tuple:
    """Where the paste itself shows the error was raised: the library frame that raised it, a system
    library's own file and line in its last lines, the package file a warning's header names, or the
    module whose log record reports it; empty when it shows none of them."""
    return (
        (frame_site(parsed) if parsed.frames else ())
        or native_site(parsed)
        or native_file_site(parsed)
        or warning_site(parsed)
        or log_site(parsed)
    )


def _ends_with_exception(parsed, frame) -> bool:
    """Whether the paste shows the exception line after ``frame``: a traceback cut before its end
    (the message then taken from a title or the poster's words) has no innermost frame to name."""
    name = (parsed.exc_type or "").rsplit(".", 1)[-1]
    if not name or not frame.file:
        return False
    seen = False
    for line in parsed.lines:
        if not seen:
            seen = frame.file in line
        elif name in line:
            return True
    return False


def _typed_by(exc_type: str | None) -> str | None:
    """The distribution other than torch whose module qualifies an exception type
    (``soundfile.LibsndfileError`` -> soundfile), else None."""
    module = (exc_type or "").rpartition(".")[0]
    if not module:
        return None
    from explainer.facts import distributions_of

    dists = distributions_of(module.split(".", 1)[0])
    return dists[0] if dists and dists[0] != "torch" else None


def _shadowed(parsed, module: str) -> bool:
    """Whether the paste shows a file or folder of the project's own by the module's top-level name (a
    ``datasets.py`` beside the script hides the distribution of that name)."""
    top = module.split(".", 1)[0]
    for f in parsed.frames:
        path = (f.file or "").replace("\\", "/")
        if not _PACKAGE.search(path) and (path.endswith(f"/{top}.py") or f"/{top}/" in path or path == f"{top}.py"):
            return True
    return False


def _goes_on_after(parsed, frame) -> bool:
    """Whether the paste has more than the frame's own code line (and its ``^^^`` marks) after
    ``frame`` (another frame cut short, a log line): a frame the paste ends with (a bare ``assert``
    whose type was not pasted) is where it was raised; one of a source tree (:func:`package_file`)
    only with the exception after it (ComfyUI's ``execution.py`` runs every node: a paste cut there
    was raised further in)."""
    if not _PACKAGE.search((frame.file or "")[:1000]):
        return True
    lines = parsed.lines
    at = max((i for i, line in enumerate(lines) if frame.file and frame.file in line), default=None)
    if at is None or not frame.function:
        return True  # (a header cut before its function's name: the paste was cut there)
    rest = [line for line in lines[at + 1 :] if line.strip(" \t^~")]
    return len(rest) > (1 if frame.code else 0)


def from_paste(parsed, raised_at=()) -> dict:
    """``raised_by`` from the paste alone (no curated entry answered)."""
    missing = missing_module(parsed.message) or _cut_missing(parsed.message)
    loader = _SHARED_OBJECT.search((parsed.message or "")[:2000])
    # a name the import system could not find in a module (not a circular import's half-made one)
    unimportable = "cannot import name" in (parsed.message or "")[:2000] and "partially initialized" not in (
        parsed.message or ""
    )
    if raised_at and raised_at[0].get("origin") == "log":
        # a log names who reported the error, which may have caught another package's (magic_pdf logs
        # PyMuPDF's "code=8: invalid key in dict"): the answer shows it; who raised it, the paste does not say
        raised_at = ()
    if raised_at and not ((missing or loader or unimportable) and raised_at[0].get("origin") in ("frame", "paste")):
        # (a module, or a name of one, that the import system could not find, or a compiled part that
        # did not load, is the installation's, whichever frame or native file reported it)
        lib = raised_at[0].get("library")
        if lib and _VERSION_NEED.search((parsed.message or "")[:500]):
            # a library's own check of the installed versions ("DGL requires PyTorch >= 1.13.0"): the
            # installation is at fault, as the library says
            return who("environment", lib.replace("_", "-"))
        return who("library", lib.replace("_", "-")) if lib else who("torch")
    texts = [parsed.message or "", *(s.text for s in parsed.signals[:40]), *(parsed.lines[-60:])]
    for rx, tool in _TOOLS:
        for t in texts:
            m = rx.search(t[:2000])
            if m:
                return who("environment", tool or m.group(1))
    for t in parsed.lines[-6:]:
        if ": error: " in t and _ARGPARSE.search(t[:500]):  # the script's own command line, rejected by argparse
            return who("python")
    for t in (parsed.message or "", *parsed.lines[-8:]):  # where the paste ends: what stopped it
        m = _NO_COMMAND.search(t[:2000]) if any(w in t for w in _NO_COMMAND_WORDS) else None
        if m:  # a shell could not find a command: the distribution that installs it, where one does
            from explainer.facts import distributions_of_command

            command = next(g for g in m.groups() if g)
            dists = distributions_of_command(command)
            return who("environment", dists[0] if dists else None)
    if native_site(parsed):
        return who("library", "MPSGraph")  # the process died inside Apple's graph compiler
    if loader:  # a compiled part of an installed package failed to load: that package's build
        from explainer.facts import distributions_of

        name = loader.group(1)
        # (an extension module right in site-packages, causal_conv1d_cuda.cpython-310-....so: named
        # only where a distribution is known to install it)
        if loader.group("inside") or distributions_of(name):
            return who("environment", _distribution(name))
    if missing and (parsed.exc_type or "ModuleNotFoundError").endswith(("ModuleNotFoundError", "ImportError")):
        from explainer.facts import distributions_of, library_of

        top = missing.split(".", 1)[0]
        if distributions_of(top) or library_of(top):  # a distribution's module; else maybe the project's own
            return who("environment", _distribution(top))
        from explainer.facts import RUNTIME_NAMESPACES, known_module

        if top in RUNTIME_NAMESPACES:  # a module a library writes at run time (a model's remote code)
            return who("library", RUNTIME_NAMESPACES[top])
        if not known_module(top):  # no distribution provides it: the project's own module, not on the path
            return who("python")
    m = _HALTED.search((parsed.message or "")[:2000])
    if m:
        return who("environment", _distribution(m.group(1)))
    m = _CANNOT_IMPORT.search((parsed.message or "")[:2000]) or MODULE_LACKS.search((parsed.message or "")[:2000])
    if m and "partially initialized" not in (parsed.message or "") and not _shadowed(parsed, m.group(1)):
        from explainer.facts import distributions_of

        dists = distributions_of(m.group(1).split(".", 1)[0])
        if dists and dists[0] != "torch":
            # a name the installed release of a package does not offer (imported, or looked up on the module)
            return who("environment", dists[0])
    owner = kwarg_library(parsed) if "unexpected keyword argument" in (parsed.message or "") else None
    if owner:  # a library's callable got an option it does not take: its API, not the user's Python
        return who("library", owner)
    if "has no attribute" in (parsed.message or "")[:1000]:
        changed = api_change(parsed)
        if changed:  # a method or name one release of the library has and another does not
            from explainer.facts import names

            return who("library", names()[changed[0]].get("distribution", changed[0]))
    in_stdlib = False  # the innermost frames are the standard library's (json, subprocess, ...)
    user = None  # the innermost frame outside an installed package and the standard library
    for f in reversed(parsed.frames):
        pkg = frame_package(f.file or "")
        if pkg:
            if not _ends_with_exception(parsed, f) and _goes_on_after(parsed, f):
                break  # a traceback cut before its end: its last frame shown is not where it was raised
            if pkg == "torch":
                # an exception class of another distribution, re-raised by torch (a DataLoader worker's
                # error rebuilt in the main process): the class's package raised it
                owner = _typed_by(parsed.exc_type)
                return who("library", owner) if owner else who("torch")
            return who("library", _distribution(pkg))
        if not stdlib_file(f.file or ""):
            user = f
            break
        in_stdlib = True
    module = (parsed.exc_type or "").rpartition(".")[0]
    top = module.split(".", 1)[0]
    # pytorch_lightning.utilities.exceptions.MisconfigurationException, without frames or with frames in
    # a checkout of that package (a fork of vLLM run from its folder: vllm/engine/...)
    if module and (not parsed.frames or any(top in path_parts((f.file or "")[:1000]) for f in parsed.frames)):
        from explainer.facts import distributions_of

        dists = distributions_of(top)
        if dists:
            return who("torch") if dists[0] == "torch" else who("library", dists[0])
    exc = (parsed.exc_type or "").rsplit(".", 1)[-1]
    message = (parsed.message or "")[:300]
    if user is not None:
        # the interpreter raised it on the user's own line: an exception only the interpreter raises,
        # its own wording, or the user's `assert` (torch's own errors come from its C++ with other words)
        if exc in PYTHON_TYPES or _PYTHON_MESSAGE.search(message) or _asserts(exc, user) or _builtin_op(exc, user):
            return who("python")
        if in_stdlib and not any(frame_package(f.file or "") for f in parsed.frames):
            return who("python")  # the standard library, called from the user's own code
    elif not parsed.frames and (exc in ("NameError", "UnboundLocalError") or _NAME_NOT_DEFINED.search(message)):
        return who("python")  # only the interpreter says a name is not defined
    elif not parsed.frames and exc in ("TypeError", "") and _ARITY.search(message):
        # the interpreter calling a function or method with arguments its def does not take (a hook
        # the user overrides with an older signature); a class's __init__ may as well be a library's
        return who("python")
    return who(None)


_KWARG = Lazy(
    r"(?:^|[\s(.])((?:[A-Za-z_]\w{0,100}\.){0,3}[A-Za-z_]\w{0,100})\(\) got an unexpected keyword argument '(\w{1,100})'"
)


def library_kwarg(parsed) -> tuple | None:
    """(library, callable, keyword, its History) when the paste's ``TypeError`` is a keyword argument
    that some releases of a library's callable take and others do not (``data/names.json.gz``):
    an API that changed between releases, not a slip in the user's own code. Python before 3.10
    names only ``__init__()``: then the callable is the one the failing line calls with that keyword."""
    if not (parsed.exc_type or "TypeError").endswith("TypeError"):
        return None
    m = _KWARG.search((parsed.message or "")[:1000])
    if not m:
        return None
    callee, kw = m.group(1), m.group(2)
    if callee == "__init__":
        called = _called_with(parsed, kw)
        if called:
            callee = f"{called}.__init__" if called[:1].isupper() else called
    from explainer.facts import param_history

    found = param_history(callee, kw)
    if not found:
        return None
    lib, h = found[0]
    return lib, callee, kw, h


_OBJECT_ATTR = Lazy(r"'([A-Za-z_]\w{0,100})' object has no attribute '(\w{1,100})'")
_MODULE_ATTR = Lazy(r"module '([A-Za-z_]\w{0,100})' has no attribute '(\w{1,100})'")


def api_change(parsed) -> tuple | None:
    """(library, what, History) when the paste's error is a name a library's releases differ on
    (``data/names.json.gz``): a keyword argument of a callable (:func:`library_kwarg`), a method of a
    class (``'Textbox' object has no attribute 'style'``: gradio 4 removed it) or a name of the
    package (``module 'huggingface_hub' has no attribute 'cached_download'``); else None."""
    message = (parsed.message or "")[:1000]
    exc = (parsed.exc_type or "").rsplit(".", 1)[-1]
    if "unexpected keyword argument" in message:
        found = library_kwarg(parsed)
        if found:
            lib, callee, kw, h = found
            shown = callee[: -len(".__init__")] if callee.endswith(".__init__") else callee
            return lib, f"`{shown}({kw}=...)`", h
        return None
    if exc not in ("AttributeError", ""):
        return None
    from explainer.facts import history, library_of, names

    m = _OBJECT_ATTR.search(message)
    if m:
        cls, attr = m.groups()
        for lib in names():
            h = history(lib, "params", f"{cls}.{attr}:")
            if h and (h.removed_in or h.added_in):
                return lib, f"`{cls}.{attr}()`", h
        return None
    m = _MODULE_ATTR.search(message)
    if m:
        lib = library_of(m.group(1))
        h = history(lib, "names", m.group(2)) if lib else None
        if lib and h and (h.removed_in or h.added_in):
            return lib, f"`{m.group(1)}.{m.group(2)}`", h
    return None


def kwarg_library(parsed) -> str | None:
    """The library whose callable an unexpected-keyword ``TypeError`` names: one whose releases differ
    on that keyword, else the one library whose releases export that class name, a distinctive one
    (``TrainingArguments``: transformers; ``Trainer`` is transformers' and lightning's, ``Config`` may be
    the user's own: none)."""
    found = library_kwarg(parsed)
    from explainer.facts import names

    if found:
        return names()[found[0]].get("distribution", found[0])
    m = _KWARG.search((parsed.message or "")[:1000])
    name = m.group(1).split(".", 1)[0] if m else ""
    if sum(c.isupper() for c in name) < 2:
        return None  # a plain name ("Config", "load") may as well be the user's own
    owners = [rec.get("distribution", lib) for lib, rec in names().items() if name in rec.get("names", {})]
    return owners[0] if len(owners) == 1 else None


def _called_with(parsed, kw: str) -> str | None:
    """The name the failing line (the innermost frame with code) calls with keyword ``kw``."""
    import ast

    code = next((f.code for f in reversed(parsed.frames) if f.code), None)
    if not code or f"{kw}=" not in code:
        return None
    text = code.strip()[:2000]
    for tail in ("", ")", "))", ")))"):  # a call whose arguments go on past the line shown
        try:
            tree = ast.parse(text + tail)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and any(k.arg == kw for k in node.keywords):
                f = node.func
                return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        return None
    return None


_OPENS = Lazy(r"\bopen\(|\bos\.(?:rename|remove|listdir|makedirs|mkdir|scandir|stat)\(")
_SUBSCRIPT = Lazy(r"\w[\])]?\[")


def _builtin_op(exc: str, frame) -> bool:
    """An error the interpreter's own operations raise on the frame's line, with no library frame
    below it: a file its ``open()`` or ``os`` call cannot find, a key a dict subscript lacks."""
    code = (frame.code or "")[:500]
    if exc in ("FileNotFoundError", "IsADirectoryError", "NotADirectoryError", "PermissionError"):
        return bool(_OPENS.search(code))
    return exc == "KeyError" and bool(_SUBSCRIPT.search(code))


def _asserts(exc: str, frame) -> bool:
    """A bare ``AssertionError`` raised by the frame's own ``assert`` statement."""
    return exc == "AssertionError" and (frame.code or "").lstrip().startswith("assert")
