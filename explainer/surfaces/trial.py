"""Checked on your values: in the hooks, the answer's fix is evaluated on stand-ins of the failing
frame's own tensors before it is shown.

Only where the fix changes the very line that failed (replaced, or with statements inserted before
it: they run first, then the line's value is computed), and only on stand-ins: every tensor becomes a tensor on PyTorch's ``meta`` device
(same shape, dtype and ``requires_grad``; no data, no memory, nothing computed), a module becomes a copy
whose parameters and buffers are such tensors (the user's module is never touched), plain values
(numbers, strings, dtypes, tuples and lists of those) are copied. A name bound to anything else (a
user function, an open file, an object of another kind) stops the trial: running it could have side
effects. The trial runs in the main thread under a timer (``TIME_LIMIT``; the first meta operation of
a process, which loads torch's meta kernels in about a second, runs before it), and not at all where
the program has an alarm or an alarm handler of its own; it says one of:

- ``ok``: the new expression runs on your shapes and dtypes; ``result`` describes what came out;
- ``raises``: it raises an exception of the original's type on your shapes and dtypes (PyTorch's meta
  checks word shape errors their own way, so the message may differ from the original's): the answer
  says so next to the fix;
- ``None``: it could not be checked (meta tensors cannot do everything: reading values, data-dependent
  shapes), which says nothing against the fix.

Devices are not part of the check (every stand-in is on ``meta``), so neither are device errors.
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
MAX_ITEMS = 64  # elements of a list, tuple or dict turned into stand-ins
_SCALARS = (int, float, complex, bool, str, bytes, type(None), slice, type(Ellipsis))


class _Refuse(Exception):
    """A value the trial must not run code on."""


def _stand_in(obj, torch, depth: int = 0):
    if isinstance(obj, _SCALARS) or isinstance(obj, (torch.dtype, torch.device, torch.Size, types.ModuleType)):
        return obj
    if type(obj) in (torch.Tensor, torch.nn.Parameter):
        meta = torch.empty_like(obj, device="meta")
        if obj.requires_grad and (meta.is_floating_point() or meta.is_complex()):
            meta.requires_grad_(True)
        return meta
    if isinstance(obj, torch.nn.Module):
        params = list(obj.parameters())
        if sum(p.numel() for p in params) > MAX_PARAMETERS:
            raise _Refuse("a module too large to copy")
        memo: dict[int, object] = {}
        for p in params:
            memo[id(p)] = torch.nn.Parameter(torch.empty_like(p, device="meta"), requires_grad=p.requires_grad)
        for b in obj.buffers():
            memo[id(b)] = torch.empty_like(b, device="meta")
        try:
            return copy.deepcopy(obj, memo)
        except Exception as exc:  # noqa: BLE001 - a module that cannot be copied is not tried
            raise _Refuse("a module that cannot be copied") from exc
    if isinstance(obj, (list, tuple)) and depth < 3 and len(obj) <= MAX_ITEMS:
        items = [_stand_in(x, torch, depth + 1) for x in obj]
        return items if isinstance(obj, list) else tuple(items)
    if type(obj) is dict and depth < 3 and len(obj) <= MAX_ITEMS:
        return {k: _stand_in(v, torch, depth + 1) for k, v in obj.items() if isinstance(k, _SCALARS)}
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
    space: dict[str, object] = {}
    inputs = []
    try:
        for name in names:
            if name in frame.f_locals:
                obj = frame.f_locals[name]
            elif name in frame.f_globals:
                obj = frame.f_globals[name]
            elif hasattr(builtins, name):
                continue
            else:
                return None
            space[name] = _stand_in(obj, torch)
            if isinstance(obj, torch.Tensor):
                inputs.append((name, describe(obj, torch)))
    except _Refuse:
        return None
    except Exception:  # noqa: BLE001 - a value torch cannot mirror: not checked
        return None

    def _stop(signum, frame):
        raise TimeoutError

    torch.empty(1, device="meta") + 1  # the first meta operation loads torch's meta kernels (~1 s): not the fix's time
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
        }
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return {"status": "ok", "inputs": inputs, "result": describe(value, torch), "error": None}


def trial_markdown(result: dict | None, lang: str) -> str:
    """The answer's line about the trial (empty when there was none)."""
    if not result:
        return ""
    shown = ", ".join(f"`{n}` {d}" for n, d in result["inputs"][:4])
    if result["status"] == "ok":
        if lang == "zh":
            return f"\n已用你的张量的替身（同样的形状和 dtype，不含数据）检查过这个修改：{shown} → {result['result']}\n"
        return (
            f"\nChecked on stand-ins of your tensors (same shapes and dtypes, no data): {shown} → {result['result']}\n"
        )
    if lang == "zh":
        return f"\n**注意：** 在你的张量的替身（同样的形状和 dtype）上，这个修改仍然报错（{result['error']}）：它解决不了这里的问题。\n"
    return f"\n**Careful:** on stand-ins of your tensors (same shapes and dtypes) this fix still raises: {result['error']}. It does not fix this case.\n"
