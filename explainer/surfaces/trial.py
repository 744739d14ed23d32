"""Checked on your values: in the hooks, the answer's fix is evaluated on stand-ins of the failing
frame's own tensors before it is shown.

Only where the fix changes the very line that failed (replaced, or with statements inserted before
it: they run first, then the line's value is computed), and only on copies, never on the user's
objects:

- **copies** where every tensor the line names is on the CPU and they hold at most ``COPY_LIMIT``
  elements together, modules' parameters and buffers counted: each tensor is cloned (values, dtype,
  ``requires_grad``), a module deep-copied; the fix then computes on real values;
- **meta stand-ins** otherwise (a large model, a GPU tensor): every tensor becomes a tensor on PyTorch's
  ``meta`` device (same shape, dtype and ``requires_grad``; no data, no memory, nothing computed), a
  module a copy whose parameters and buffers are such tensors; only where the process has already
  loaded what meta tensors need (``torch._dynamo``, which torch imports on the first meta operation:
  about a second, more than the explanation is worth).

Plain values (numbers, strings, dtypes, tuples and lists of those) are copied. A name bound to anything
else (a user function, an open file, an object of another kind) stops the trial: running it could
have side effects. The trial runs in the main thread under a timer (``TIME_LIMIT``), and not at all
where the program has an alarm or an alarm handler of its own; it says one of:

- ``ok``: the new expression runs on your shapes and dtypes; ``result`` describes what came out;
- ``raises``: it raises an exception of the original's type on your shapes and dtypes (PyTorch's meta
  checks word shape errors their own way, so the message may differ from the original's): the answer
  says so next to the fix;
- ``None``: it could not be checked (meta tensors cannot do everything: reading values, data-dependent
  shapes), which says nothing against the fix.

Devices are not part of the check (copies stay on the CPU, stand-ins are on ``meta``), so neither are
device errors.
"""

from __future__ import annotations

import ast
import builtins
import copy
import os
import signal
import sys
import threading
import types

TIME_LIMIT = 1.0  # seconds the trial may run
MAX_PARAMETERS = 200_000_000  # a larger module is not copied, even as meta tensors
COPY_LIMIT = 1 << 22  # elements (16 MiB of float32) up to which the trial computes on real copies
MAX_ITEMS = 64  # elements of a list, tuple or dict turned into stand-ins
_SCALARS = (int, float, complex, bool, str, bytes, type(None), slice, type(Ellipsis))


class _Refuse(Exception):
    """A value the trial must not run code on."""


def _tensors(obj, torch, depth: int = 0):
    """The tensors a value holds (a module's parameters and buffers; lists, tuples and dicts looked
    into as :func:`_stand_in` does)."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, torch.nn.Module):
        yield from obj.parameters()
        yield from obj.buffers()
    elif isinstance(obj, (list, tuple)) and depth < 3 and len(obj) <= MAX_ITEMS:
        for x in obj:
            yield from _tensors(x, torch, depth + 1)
    elif type(obj) is dict and depth < 3 and len(obj) <= MAX_ITEMS:
        for x in obj.values():
            yield from _tensors(x, torch, depth + 1)


def _copies_will_do(values: list, torch) -> bool:
    """Whether the values' tensors are all on the CPU and small enough to compute on copies of them."""
    total = 0
    for v in values:
        for t in _tensors(v, torch):
            if t.device.type != "cpu" or t.layout != torch.strided:
                return False
            total += t.numel()
            if total > COPY_LIMIT:
                return False
    return True


def _tensor_copy(obj, torch, meta: bool):
    t = torch.empty_like(obj, device="meta") if meta else obj.detach().clone()
    grad = obj.requires_grad and (t.is_floating_point() or t.is_complex())
    if type(obj) is torch.nn.Parameter:
        return torch.nn.Parameter(t, requires_grad=grad)
    return t.requires_grad_(True) if grad else t


def _stand_in(obj, torch, depth: int = 0, meta: bool = True):
    if isinstance(obj, _SCALARS) or isinstance(obj, (torch.dtype, torch.device, torch.Size, types.ModuleType)):
        return obj
    if type(obj) in (torch.Tensor, torch.nn.Parameter):
        return _tensor_copy(obj, torch, meta)
    if isinstance(obj, torch.nn.Module):
        params = list(obj.parameters())
        if sum(p.numel() for p in params) > MAX_PARAMETERS:
            raise _Refuse("a module too large to copy")
        memo: dict[int, object] = {}
        for p in params:
            memo[id(p)] = _tensor_copy(p, torch, meta)
        for b in obj.buffers():
            memo[id(b)] = _tensor_copy(b, torch, meta)
        try:
            return copy.deepcopy(obj, memo)
        except Exception as exc:  # noqa: BLE001 - a module that cannot be copied is not tried
            raise _Refuse("a module that cannot be copied") from exc
    if isinstance(obj, (list, tuple)) and depth < 3 and len(obj) <= MAX_ITEMS:
        items = [_stand_in(x, torch, depth + 1, meta) for x in obj]
        return items if isinstance(obj, list) else tuple(items)
    if type(obj) is dict and depth < 3 and len(obj) <= MAX_ITEMS:
        return {k: _stand_in(v, torch, depth + 1, meta) for k, v in obj.items() if isinstance(k, _SCALARS)}
    if isinstance(obj, (types.BuiltinFunctionType, type)) and (
        getattr(obj, "__module__", "") in ("builtins", None) or str(getattr(obj, "__module__", "")).startswith("torch")
    ):
        return obj  # len, max, torch.cat, nn.Linear
    if callable(obj) and str(getattr(obj, "__module__", "")).startswith("torch"):
        return obj  # F.relu and the other functions of torch itself
    raise _Refuse(type(obj).__name__)


_SIMPLE = (ast.Assign, ast.AnnAssign, ast.Expr)


def _program(code: str) -> tuple[list[ast.stmt], ast.expr] | None:
    """(the statements run first, the value evaluated last) of the fixed line: statements a fix
    inserts are plain assignments or expressions; the last one's value is what the line computes."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not tree.body or not all(isinstance(s, _SIMPLE) for s in tree.body[:-1]):
        return None
    last = tree.body[-1]
    if isinstance(last, (*_SIMPLE, ast.Return)) and last.value is not None:
        return tree.body[:-1], last.value
    return None


def describe(value, torch) -> str:
    if isinstance(value, torch.Tensor):
        return f"[{', '.join(str(d) for d in value.shape)}] {str(value.dtype).removeprefix('torch.')}"
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value[:8]):
        return "(" + ", ".join(describe(v, torch) for v in value[:8]) + ")"
    return type(value).__name__


def _meta_limit(exc: BaseException) -> bool:
    """An error of the stand-ins themselves (a meta tensor has no values to read), not of the fix."""
    text = str(exc).lower()
    return isinstance(exc, NotImplementedError) or "meta" in text or "data-dependent" in text or "item()" in text


def try_fix(original: BaseException, fix: dict) -> dict | None:
    """``{"status": "ok"|"raises", "inputs": [(name, description)], "result", "error"}`` for the
    fix on stand-ins of the failing frame's values; None when it could not be checked."""
    from explainer.parse.live import _user_frame

    torch = sys.modules.get("torch")
    a = fix.get("applies") or {}
    if torch is None or a.get("kind") not in ("replace_line", "insert_before") or a.get("fails_at"):
        return None
    if not fix.get("code"):
        return None
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return None
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0 or signal.getsignal(signal.SIGALRM) not in (
        signal.SIG_DFL,
        signal.SIG_IGN,
        None,
    ):
        return None  # the program uses the alarm itself: its timer and handler are left alone
    tb = _user_frame(original.__traceback__)
    if tb is None or tb.tb_lineno != a.get("line"):
        return None
    if os.path.abspath(tb.tb_frame.f_code.co_filename) != os.path.abspath(a.get("file") or ""):
        return None
    source = fix["code"]
    if a["kind"] == "insert_before":  # the inserted statements, then the line that failed
        import linecache

        line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip()
        if not line:
            return None
        source = f"{source}\n{line}"
    program = _program(source)
    if program is None:
        return None
    first, expr = program
    frame = tb.tb_frame
    names = sorted(
        {
            n.id
            for part in (*first, expr)
            for n in ast.walk(part)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
    )
    values: dict[str, object] = {}
    for name in names:
        if name in frame.f_locals:
            values[name] = frame.f_locals[name]
        elif name in frame.f_globals:
            values[name] = frame.f_globals[name]
        elif not hasattr(builtins, name):
            return None
    space: dict[str, object] = {}
    inputs = []
    try:
        meta = not _copies_will_do(list(values.values()), torch)
        if meta and "torch._dynamo" not in sys.modules:
            return None  # the first meta operation would import it: a second, for one line of the answer
        for name, obj in values.items():
            space[name] = _stand_in(obj, torch, meta=meta)
            if isinstance(obj, torch.Tensor):
                inputs.append((name, describe(obj, torch)))
    except _Refuse:
        return None
    except Exception:  # noqa: BLE001 - a value torch cannot mirror: not checked
        return None

    def _stop(signum, frame):
        raise TimeoutError

    on = "stand-ins" if meta else "copies"
    setup = compile(ast.Module(body=first, type_ignores=[]), "<the fix>", "exec")
    code = compile(ast.Expression(expr), "<the fix>", "eval")
    scope = {"__builtins__": builtins, **space}  # one namespace: what the inserted lines bind, the line reads
    previous = signal.signal(signal.SIGALRM, _stop)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
    try:
        exec(setup, scope)  # noqa: S102 - stand-ins only, see above
        value = eval(code, scope)  # noqa: S307 - stand-ins only, see above
    except TimeoutError:
        return None
    except Exception as exc:  # noqa: BLE001 - what the fix raises on the stand-ins
        if _meta_limit(exc) or type(exc) is not type(original):
            return None
        return {
            "status": "raises",
            "inputs": inputs,
            "result": None,
            "error": str(exc).strip().split("\n", 1)[0][:200].rstrip("."),
            "on": on,
        }
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return {"status": "ok", "inputs": inputs, "result": describe(value, torch), "error": None, "on": on}


def trial_markdown(result: dict | None, lang: str) -> str:
    """The answer's line about the trial (empty when there was none)."""
    if not result:
        return ""
    shown = ", ".join(f"`{n}` {d}" for n, d in result["inputs"][:4])
    copies = result.get("on") == "copies"
    if lang == "zh":
        on = (
            "你的张量的副本（同样的数值、形状和 dtype）" if copies else "你的张量的替身（同样的形状和 dtype，不含数据）"
        )
        if result["status"] == "ok":
            return f"\n已在{on}上检查过这个修改：{shown} → {result['result']}\n"
        return f"\n**注意：** 在{on}上，这个修改仍然报错（{result['error']}）：它解决不了这里的问题。\n"
    on = (
        "copies of your tensors (same values, shapes and dtypes)"
        if copies
        else "stand-ins of your tensors (same shapes and dtypes, no data)"
    )
    if result["status"] == "ok":
        return f"\nChecked on {on}: {shown} → {result['result']}\n"
    return f"\n**Careful:** on {on} this fix still raises: {result['error']}. It does not fix this case.\n"
