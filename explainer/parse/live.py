"""The model from a live exception, and the values a pasted traceback cannot give.

``from_exception`` formats the exception exactly as Python prints it and reads that text with the
one parser, so a live answer and a pasted answer always agree. ``live_values`` looks at the failing
line's frame: the tensors named on that line, with their shapes, dtypes, devices and
``requires_grad``. It is read-only: names are resolved with ``inspect.getattr_static`` (no property,
no ``__getattr__`` runs), only plain ``torch.Tensor`` and ``nn.Parameter`` objects are described
(subclasses are skipped), tensor contents are never read, and no user code is executed.
"""

from __future__ import annotations

import ast
import sys
import traceback

from explainer.model import Parsed
from explainer.parse.parser import is_library, parse_text
from explainer.textio import USER_CODE

MAX_TENSORS = 8


def from_exception(exc: BaseException, budget=None) -> Parsed:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    parsed = parse_text(text, budget)
    names = _cell_names()
    if names and any(f.file in names for f in parsed.frames):
        parsed = parsed._replace(frames=tuple(f._replace(file=names.get(f.file, f.file)) for f in parsed.frames))
    return parsed


def _cell_names() -> dict[str, str]:
    """IPython's names for its cells' code (``<ipython-input-4-…>``, ``/tmp/ipykernel_7/…py``):
    ``Cell In[4]``, as its own tracebacks show them. Empty outside IPython."""
    if "IPython" not in sys.modules:
        return {}
    try:
        from IPython import get_ipython

        shell = get_ipython()
        compiler = getattr(shell, "compile", None)
        mapping = getattr(compiler, "_filename_map", None)
        if compiler is None or not isinstance(mapping, dict):
            return {}
        out = {}
        for name in mapping:
            label = compiler.format_code_name(name)  # ("Cell", "In[4]") in IPython 8 and later
            if label:
                out[name] = f"{label[0]} {label[1]}"
        return out
    except Exception:  # noqa: BLE001 - any IPython version: the plain file names then
        return {}


def _user_frame(tb):
    """The innermost traceback entry outside library code."""
    found = None
    while tb is not None:
        if not is_library(tb.tb_frame.f_code.co_filename):
            found = tb
        tb = tb.tb_next
    return found


def _names(code: str) -> list[str]:
    """Dotted names on the line (``x``, ``model.fc.weight``), outermost expressions first."""
    try:
        tree = ast.parse(code.strip(), USER_CODE)
    except (SyntaxError, ValueError):
        return []
    out: list[str] = []

    def dotted(node) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(node.id)
            return ".".join(reversed(parts))
        return None

    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and not isinstance(getattr(node, "ctx", None), ast.Store):
            name = dotted(node)
            if name and name not in out:
                out.append(name)
    return out


def _resolve(name: str, frame_locals: dict, frame_globals: dict):
    import inspect

    head, *rest = name.split(".")
    if head in frame_locals:
        obj = frame_locals[head]
    elif head in frame_globals:
        obj = frame_globals[head]
    else:
        raise LookupError(name)
    for attr in rest:
        try:
            obj = inspect.getattr_static(obj, attr)
        except AttributeError:
            # nn.Module keeps parameters and submodules in dicts, not as attributes
            for store in ("_parameters", "_modules", "_buffers"):
                try:
                    d = inspect.getattr_static(obj, store)
                except AttributeError:
                    continue
                if isinstance(d, dict) and attr in d:
                    obj = d[attr]
                    break
            else:
                raise LookupError(name) from None
    return obj


def describe(tensor) -> str:
    shape = list(tensor.shape)
    return f"shape {shape}, dtype {str(tensor.dtype).removeprefix('torch.')}, device {tensor.device}, requires_grad={tensor.requires_grad}"


_MODULE_SIZES = (
    "in_features",
    "out_features",
    "in_channels",
    "out_channels",
    "num_embeddings",
    "embedding_dim",
    "input_size",
    "hidden_size",
    "num_features",
)


def live_facts(exc: BaseException) -> dict[str, str]:
    """Values of the failing line for evidence and fixes, named by the line's roles (see
    :func:`explainer.advise.rewrite.code_values`): ``arg0_ndim``, ``arg0_shape``, ``arg0_dtype``,
    ``arg0_features`` (the product of all but the first dimension: what a flatten gives a Linear),
    the same for ``arg1``, ``receiver`` and ``target``, and the sizes of the module being called
    (``call_in_features`` ...). Read-only, as :func:`live_values`."""
    import inspect

    from explainer.source import code_values

    torch = sys.modules.get("torch")
    tb = _user_frame(exc.__traceback__) if torch is not None else None
    if tb is None:
        return {}
    assert torch is not None  # tb is only looked for with torch imported
    lines = traceback.extract_tb(tb, limit=1)
    code = (lines[0].line if lines else "") or ""
    roles = code_values(code)
    frame = tb.tb_frame
    facts: dict[str, str] = {}
    for role in ("arg0", "arg1", "receiver", "target", "call"):
        name = roles.get(role)
        if not name:
            continue
        try:
            obj = _resolve(name, frame.f_locals, frame.f_globals)
        except (LookupError, ValueError):
            continue
        if type(obj) in (torch.Tensor, torch.nn.Parameter):
            shape = list(obj.shape)
            facts[f"{role}_ndim"] = str(len(shape))
            facts[f"{role}_shape"] = str(shape)
            facts[f"{role}_dtype"] = str(obj.dtype).removeprefix("torch.")
            facts[f"{role}_device"] = str(obj.device)
            if len(shape) >= 2:
                n = 1
                for d in shape[1:]:
                    n *= d
                facts[f"{role}_features"] = str(n)
        elif isinstance(obj, torch.nn.Module):
            for attr in _MODULE_SIZES:
                try:
                    v = inspect.getattr_static(obj, attr)
                except AttributeError:
                    continue
                if isinstance(v, int) and not isinstance(v, bool):
                    facts[f"{role}_{attr}"] = str(v)
    return facts


def live_values(exc: BaseException) -> list[tuple[str, str]]:
    """(name, description) for the plain tensors named on the failing line of the user's code."""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    tb = _user_frame(exc.__traceback__)
    if tb is None:
        return []
    frame = tb.tb_frame
    lines = traceback.extract_tb(tb, limit=1)
    code = lines[0].line if lines else ""
    plain = (torch.Tensor, torch.nn.Parameter)
    out: list[tuple[str, str]] = []
    for name in _names(code or ""):
        try:
            obj = _resolve(name, frame.f_locals, frame.f_globals)
        except LookupError:
            continue
        if type(obj) in plain:
            out.append((name, describe(obj)))
        if len(out) >= MAX_TENSORS:
            break
    return out
