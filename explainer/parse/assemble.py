"""Pass 3 of the parser, *assemble*: the exception the user should read first, the chain before it,
the other tracebacks of the paste, the frames, the format; and :func:`parse_text`, the parser's
one entry point, over the three passes."""

from __future__ import annotations

from explainer.budget import Budget
from explainer.model import Frame, Link, Other, Parsed, Signal
from explainer.parse.clean import clean
from explainer.parse.grammar import _is_exc_line, _is_structural, _looks_like_type
from explainer.parse.rules import _chinese_prose
from explainer.parse.scan import _scan
from explainer.parse.state import _CHATTY, _CJK, MAX_CHARS, MAX_MESSAGE_LINES
from explainer.textio import (
    USER_CODE,
    Lazy,
    drop_invisible,
    escape_invisible,
    has_invisible,
    path_parts,
    strip_controls,
)

_ERRORISH = Lazy(
    r"error|exception|failed|failure|cannot|can't|could not|unable|invalid|expected|must|mismatch|"
    r"out of (?:memory|bounds|range)|not (?:supported|implemented|found|available|compiled|defined|match)|"
    r"does not|doesn't|illegal|assert|killed|timed? ?out|segmentation|unexpectedly|"
    r"错误|报错|失败|无法|不能|必须|异常",
)  # these three are matched against lower-cased text


# the module an import could not find, and the folders of a frame's path
_MISSING_MODULE = Lazy(r"No module named '([A-Za-z_]\w{0,100})(?:'|\.(\w))")
_MISSING_NAME = Lazy(r"No module named '([A-Za-z_][\w.]{0,200})'")


def _own_package(exc_type: str | None, message: str | None, frames) -> Signal | None:
    """A module the project itself holds: the top-level package an import could not find is a folder
    of one of the user's own frames (``chatchat/cli.py`` failing on ``chatchat.startup``), so the
    project's root is not on ``sys.path``; no installation provides it. Not for a compiled part
    (``mmcv._ext``, ``detectron2._C``) or a submodule the package's own ``__init__`` imports
    (``gfpgan.version``): a source checkout that was never built. The signal's text is that frame's file."""
    if not frames or not (exc_type or "").endswith(("ModuleNotFoundError", "ImportError")):
        return None
    m = _MISSING_MODULE.search((message or "")[:300])
    if not m or m.group(2) == "_":
        return None
    top = m.group(1)
    full = _MISSING_NAME.search((message or "")[:300])
    parents = full.group(1).split(".")[:-1] if full else [top]  # the packages the import went through
    for package in parents:
        if any(path_parts(f.file[-300:])[-2:] == [package, "__init__.py"] for f in frames if f.file):
            # a package on the way was imported (``_ext/pointnet2/__init__.py`` for
            # ``_ext.pointnet2._pointnet2``): a submodule its checkout lacks (one a build writes)
            return None
    for f in frames:
        if f.library or not f.file:
            continue
        folders = path_parts(f.file[:1000])[:-1]
        if top in folders and not {"site-packages", "dist-packages"} & set(folders):
            at = len(folders) - 1 - folders[::-1].index(top)
            parent = folders[at - 1] if at else ""
            if m.group(2) is None and parent.isidentifier() and parent.lower() not in _SOURCE_ROOTS:
                # the bare name from inside a subpackage of that name (upscale/model/realesrgan/
                # factory.py: "from realesrgan import RealESRGANer"): a wrapper of the library it names
                continue
            return Signal("own_package", f.file[:300])
    return None


# folders a project keeps its top-level packages in (a package right inside one is importable by its name)
_SOURCE_ROOTS = frozenset({"src", "lib", "libs", "python", "packages", "source", "code"})


_WEAK = Lazy(r"\b(?:not|no|only|instead|freed|requires?|should|while|because)\b")


# "a digit, x, a digit" is all the shape test needs to know: written so, it is linear
_SHAPEISH = Lazy(r"\d\s*+x\s*+\d|\[\d++(?:, \d++)*+\]|torch\.\w|cuda|tensor")


# a bug template's placeholder ("# Error messages and logs here please") is no message
_PLACEHOLDER = Lazy(r"\b(?:logs? here|messages? here|here please|goes here|paste (?:it |them |the \w+ )?here)\b")
# an error quoted inside a poster's sentence: I only get "The size of tensor a (0) must match ..."
_QUOTED = Lazy(r"\"([^\"\n]{20,500}+)\"|“([^“”\n]{20,500}+)”|`([^`\n]{20,500}+)`")


def _error_score(line: str) -> float:
    if line == "python-BaseException" or line.startswith("frame #"):
        return -10.0  # (a C++ frame line: "frame #0: c10::Error::Error(...)")
    low = line.lower()
    score = len(_ERRORISH.findall(low)) * 2.0 + len(_WEAK.findall(low)) - len(_CHATTY.findall(low)) * 3.0
    if _SHAPEISH.search(low):
        score += 1.0
    if line.endswith((":", "：")) and not line.isascii() and _chinese_prose(line):
        score -= 3.0  # the poster's lead-in to what follows ("直接段错误退出了，什么报错信息都没有：")
    if _PLACEHOLDER.search(low):
        score -= 6.0
    return score


def _unwrap(line: str) -> str:
    """Markdown emphasis or code marks around a whole line: `...` or **...**."""
    for mark in ("**", "`"):
        if len(line) > 2 * len(mark) and line.startswith(mark) and line.endswith(mark):
            return line[len(mark) : -len(mark)].strip()
    return line


def _fallback_message(lines: list[str]) -> str | None:
    """No exception line: the line that reads most like an error message (the later one on a tie),
    with the lines that go on from it without a break (a typeless error of several lines: "CUDA
    error: ...", then torch's hint lines), up to commentary, a blank line or a traceback line."""
    numbered = [(k, _unwrap(l.strip())) for k, l in enumerate(lines) if l.strip()][-60:]
    if not numbered:
        return None
    best, best_score, quoted = None, float("-inf"), None
    for k, l in numbered:
        sc = _error_score(l)
        if len(l) > 12 and sc >= best_score:
            best, best_score, quoted = k, sc, None
        if '"' in l or "“" in l or "`" in l:  # the error a sentence quotes, without the sentence
            for m in _QUOTED.finditer(l[:2000]):
                q = next(g for g in m.groups() if g is not None).strip()
                if q != l and _error_score(q) > max(best_score, 0):
                    best, best_score, quoted = k, _error_score(q), q
    if best is None:
        return numbered[-1][1]
    if quoted is not None:
        return quoted
    out = [_unwrap(lines[best].strip())]
    for nxt in lines[best + 1 : best + MAX_MESSAGE_LINES]:
        s = nxt.strip()
        if (
            not s
            or len(s) < 20
            or _error_score(s) < 0
            or _is_structural(nxt)
            or _is_exc_line(nxt)
            or (not s.isascii() and _CJK.search(s))
        ):
            break  # (a short line is a log's or a UI's label: "error", "Progress", "Step 0 of 3000")
        out.append(s)
    return "\n".join(out)


MAX_ALTERNATIVES = 2


def _alternatives(lines: list[str], message: str | None) -> tuple[str, ...]:
    """No exception line: the next lines that read most like an error after the one taken as the
    message (the poster's sentence that quotes the error may have lost to a line of theirs that
    says "报错"); the matcher tries their templates too."""
    taken = set((message or "").split("\n"))
    scored = []
    for l in lines[-60:]:
        s = _unwrap(l.strip())
        if len(s) > 12 and s not in taken and _ERRORISH.search(s.lower()) and not _is_structural(l):
            scored.append((_error_score(s), s))
    scored.sort(key=lambda x: -x[0])  # (stable: the earlier line first on a tie)
    return tuple(dict.fromkeys(s for _, s in scored))[:MAX_ALTERNATIVES]


# c10's exception classes and the Python types torch raises for them (CATCH_CORE_ERRORS in
# torch/csrc/Exceptions.h); any other c10 class derives from c10::Error: RuntimeError
_C10_TYPES = {
    "Error": "RuntimeError",
    "IndexError": "IndexError",
    "ValueError": "ValueError",
    "TypeError": "TypeError",
    "NotImplementedError": "NotImplementedError",
    "OutOfMemoryError": "torch.OutOfMemoryError",
    "AcceleratorError": "torch.AcceleratorError",
    "LinAlgError": "torch.linalg.LinAlgError",
    "BufferError": "BufferError",
    "SyntaxError": "SyntaxError",
    "DistError": "torch.distributed.DistError",
    "DistBackendError": "torch.distributed.DistBackendError",
    "DistStoreError": "torch.distributed.DistStoreError",
    "DistNetworkError": "torch.distributed.DistNetworkError",
    "DistQueueEmptyError": "torch.distributed.DistQueueEmptyError",
}


def _raised_literal(code: str | None) -> tuple[str | None, str | None]:
    """``raise SomeError("literal ...")`` on a frame's code line, read with ``ast`` (never run):
    its type and message (an f-string's fields kept as ``{expr}``, which a template's placeholder
    fits)."""
    if not code or "raise" not in code or len(code) > 500:
        return None, None
    import ast  # only for a paste cut after a raise line: not at start-up

    try:
        node = ast.parse(code.strip(), USER_CODE, mode="exec").body[0]
    except (SyntaxError, ValueError, RecursionError, MemoryError, IndexError):
        return None, None
    if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
        return None, None
    exc_type = _dotted(node.exc.func)
    if exc_type is None or not _looks_like_type(exc_type, True):
        return None, None
    message = None
    if node.exc.args:
        arg = node.exc.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            message = arg.value
        elif isinstance(arg, ast.JoinedStr):
            from typing import cast  # an f-string's parts are str constants and formatted values

            message = "".join(
                cast(str, v.value)
                if isinstance(v, ast.Constant)
                else "{" + ast.unparse(cast(ast.FormattedValue, v).value) + "}"
                for v in arg.values
            )
    return exc_type, message


def _dotted(node) -> str | None:
    import ast

    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _cut_before_exception(frames: list[Frame], lines: list[str]) -> tuple[str | None, str | None]:
    """A traceback cut before its exception line: the last frame's ``raise X("...")`` names it;
    otherwise the most error-like line outside the traceback (some tools log the message before
    the traceback they print)."""
    exc_type, message = _raised_literal(frames[-1].code if frames else None)
    if exc_type:
        return exc_type, message
    outside = [l for l in lines if l.strip() and not l.startswith((" ", "\t")) and not _is_structural(l)]
    best = _fallback_message(outside) if outside else None
    return (None, best) if best and _error_score(best) > 0 else (None, None)


def lang_hint(text: str) -> str | None:
    if text.isascii():
        return None
    cjk = len(_CJK.findall(text[-20000:]))
    return "zh" if cjk >= 4 else None


def parse_text(text: str, budget: Budget | None = None) -> Parsed:
    """Parse any text into the traceback model. Never raises. With a ``budget``, a parse that runs
    out of time reads only the end of the paste (``budget.cut`` tells)."""
    try:
        text = text if isinstance(text, str) else str(text)
        parsed = _parse(text, budget)
        return _visible(parsed) if _has_invisible(parsed) else parsed
    except Exception:  # the parser must never take the surface down; fall back to the last line
        try:
            last = _fallback_message(strip_controls(text[-MAX_CHARS:]).splitlines()[-50:])
        except Exception:
            last = None
        return Parsed(exc_type=None, message=last, format="unknown")


def _has_invisible(p: Parsed) -> bool:
    """Whether any text of the model holds an invisible character (looked for in the model, not the
    paste: a decoder turns an escaped \\u202e into one)."""
    texts = [p.exc_type, p.message, *p.lines, *p.alternatives]
    texts += [t for f in p.frames for t in (f.file, f.function, f.code, f.focus)]
    texts += [t for c in (*p.chain, *p.others) for t in (c.exc_type, c.message)]
    texts += [s.text for s in p.signals]
    return any(t and has_invisible(t) for t in texts)


def _visible(p: Parsed) -> Parsed:
    """The model without characters that change how text reads unseen (bidi overrides, tag
    characters, Hangul fillers: Trojan Source): gone from the messages and the type, shown escaped
    in code (``loss\\u202e.backward()``), where a rewrite then sees a line Python would not run as shown."""

    def prose(s):
        return drop_invisible(s) if s else s

    return p._replace(
        exc_type=prose(p.exc_type),
        message=prose(p.message),
        frames=tuple(
            f._replace(
                file=escape_invisible(f.file) if f.file else f.file,
                function=prose(f.function),
                code=f.code and escape_invisible(f.code),
                focus=f.focus and escape_invisible(f.focus),
            )
            for f in p.frames
        ),
        chain=tuple(c._replace(exc_type=prose(c.exc_type), message=prose(c.message)) for c in p.chain),
        others=tuple(o._replace(exc_type=prose(o.exc_type), message=prose(o.message)) for o in p.others),
        signals=tuple(s._replace(text=prose(s.text)) for s in p.signals),
        lines=tuple(prose(l) for l in p.lines),
        alternatives=tuple(prose(a) for a in p.alternatives),
    )


def _parse(text: str, budget: Budget | None = None) -> Parsed:
    lines, hints, tags, logged = clean(text, budget)
    events, signals, scan_hints = _scan(lines, tags, budget)
    hints |= scan_hints
    errors = [e for e in events if not e.warning and e.kind != "inline"]
    inline = [e for e in events if e.kind == "inline"]
    warned = [e for e in events if e.warning]
    pool = errors or inline
    if not pool and warned:
        # a warning is the answer only when no line reads more like an error than it does
        fb = _fallback_message(lines)
        if (
            fb
            and _error_score(fb) > _error_score(warned[-1].message or "") + 2
            and (warned[-1].message or "") not in fb
        ):
            pool = []
        else:
            pool = warned
    if not pool:
        msg = _fallback_message(lines)
        logger = _logger_of(msg, lines, logged) if logged else None
        return Parsed(
            exc_type=None,
            message=msg,
            alternatives=_alternatives(lines, msg),
            signals=(*signals, Signal("logger", logger)) if logger else tuple(signals),
            format=_format(hints, last_line=True),
            lang_hint=lang_hint(text),
            lines=_signal_lines(lines, events),
        )
    final = pool[-1]
    if final.kind == "truncated" and final.exc_type is None and final.message is None:
        final.exc_type, final.message = _cut_before_exception(final.frames, lines)
    if final.exc_type and final.exc_type.startswith("c10::") and final.kind != "terminate":
        # torch turns its C++ exceptions into Python ones: the user sees (and catches) that type;
        # the C++ name is kept as a signal line
        signals = [*signals, Signal("cpp_type", final.exc_type)]
        final.exc_type = _C10_TYPES.get(final.exc_type[5:], "RuntimeError")
    # A C++ terminate line or a pytest summary line repeats an exception already in the paste: prefer
    # the real exception line with its frames when the texts agree.
    if final.kind in ("summary",) and len(pool) > 1:
        for e in reversed(pool[:-1]):
            if e.exc_type and final.exc_type and e.exc_type.split(".")[-1] == final.exc_type.split(".")[-1]:
                final = e
                break
    idx = events.index(final)
    # the chain: walk back over events linked by relations
    chain: list[Link] = []
    k = idx
    while k > 0:
        rel = events[k].relation
        prev = events[k - 1]
        if rel in ("cause", "context", "group", "worker") or prev.kind in ("worker", "group"):
            relation = rel or ("worker" if prev.kind == "worker" else "group")
            chain.insert(0, Link(prev.exc_type, prev.message, relation))
            k -= 1
        else:
            break
    chained = set(range(k, idx + 1))
    others = [Other(e.exc_type, e.message) for j, e in enumerate(events) if j not in chained and e is not final]
    frames = tuple(final.frames)
    if not frames:
        # VS Code / commentary pastes put frames after the message
        later = [e for e in events if e.frames]
        if later:
            frames = tuple(later[-1].frames)
    if (
        frames
        and idx > 0
        and (final.relation == "worker" or events[idx - 1].kind == "worker")
        and events[idx - 1].frames
    ):
        # a worker's error re-raised in the main process: the main traceback (the user's
        # `for batch in loader:`) is where it happened for the user, the worker's frames below it
        frames = tuple(events[idx - 1].frames) + frames
    if "dataloader_worker" in hints and final.relation != "worker" and not any(c.relation == "worker" for c in chain):
        hints.discard("dataloader_worker")
    own = _own_package(final.exc_type, final.message, frames)
    if own:
        signals = [*signals, own]
    logger = _logger_of(final.message, lines, logged) if logged else None
    if logger:
        signals = [*signals, Signal("logger", logger)]
    fmt = _format(hints, last_line=not frames and len([l for l in lines if l.strip()]) <= 2)
    if any(c.relation in ("cause", "context") for c in chain) and fmt == "standard":
        fmt = "chained"
    return Parsed(
        exc_type=final.exc_type,
        message=_unwrapped(final.message),
        frames=frames,
        chain=tuple(chain),
        signals=tuple(signals),
        others=tuple(others[-20:]),
        format=fmt,
        lang_hint=lang_hint(text),
        lines=_signal_lines(lines, events),
    )


def _logger_of(message: str | None, lines: list[str], logged: dict[int, str]) -> str | None:
    """The logger whose error-level record holds the final message (its prefix, stripped by the
    cleaner, named it): the last such line that holds the message's start, or starts it."""
    head = (message or "").strip()[:40]
    if not head:
        return None
    for i in sorted(logged, reverse=True):
        line = lines[i].strip() if i < len(lines) else ""
        if line and (head in line or head.startswith(line[:40])):
            return logged[i]
    return None


def _unwrapped(message: str | None) -> str | None:
    """The message without the closing half of the quotes or backticks a poster put around the
    paste (```ModuleNotFoundError: No module named 'src'` ``: the opening half went with the type)."""
    if message and message[-1] in '`"' and message.count(message[-1]) % 2:
        return message[:-1].rstrip() or message
    return message


SIGNAL_LINES = 400  # the paste's last lines an entry's signals are looked for in


SIGNAL_LINE_CHARS = 500


def _signal_lines(lines: list[str], events=()) -> tuple[str, ...]:
    """Every line of the paste's end (a warning printed early in a log names the cause too), but the
    code lines of the user's own frames, in every traceback of the paste: what they wrote says
    nothing of what torch printed (``torch_dtype=torch.float16`` in their call is no sign of an fp16
    error)."""
    code = {f.code.strip() for e in events for f in e.frames if f.code and not f.library}
    return tuple(t[:SIGNAL_LINE_CHARS] for l in lines[-SIGNAL_LINES:] if (t := l.strip()) and t not in code)


_FORMAT_ORDER = (
    "jupyter",
    "dataloader_worker",
    "distributed_prefixed",
    "pytest",
    "flattened",
    "debugger",
    "rich",
    "ipython",
    "cpp_frames",
    "chained",
    "group",
)


def _format(hints: set[str], *, last_line: bool) -> str:
    for name in _FORMAT_ORDER:
        if name in hints:
            return name
    if last_line:
        return "last_line_only"
    return "standard"
