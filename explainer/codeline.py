"""The user's failing line read with ``ast``, never executed: the names a fix is written with (the
assignment's target, the call, its receiver and first arguments, the call Python's carets point at).
Below every stage: the parser's live values, the advice and the rewrites all read it."""

from __future__ import annotations

import ast
from functools import lru_cache

from explainer.textio import USER_CODE


def code_values(line: str | None, focus: str | None = None) -> dict[str, str]:
    """Names in the user's code line, read with ``ast`` (never executed)."""
    return dict(_code_values(line, focus))


@lru_cache(maxsize=2048)
def _code_values(line: str | None, focus: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    if not line:
        return out
    text = line.strip()
    out["code"] = text
    if len(text) > 500:
        return out
    try:
        tree = ast.parse(text, USER_CODE)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return out
    if not tree.body:
        return out
    stmt = tree.body[0]
    value = getattr(stmt, "value", None)
    if isinstance(stmt, ast.Assign) and stmt.targets:
        out["target"] = ast.unparse(stmt.targets[0])
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        out["target"] = ast.unparse(stmt.target)
    call = focused_call(stmt, focus) if focus else None
    if call is not None:
        assert focus is not None  # a focused call comes from a focus
        out["focus"] = focus
    else:
        call = (
            value if isinstance(value, ast.Call) else next((n for n in ast.walk(stmt) if isinstance(n, ast.Call)), None)
        )
    try:
        if call is not None:
            out["call"] = ast.unparse(call.func)
            if isinstance(call.func, ast.Attribute):
                out["receiver"] = ast.unparse(call.func.value)
            for i, arg in enumerate(call.args[:2]):
                out[f"arg{i}"] = ast.unparse(arg)
    except (RecursionError, MemoryError, ValueError):
        pass
    return out


def focused_call(stmt: ast.stmt, focus: str) -> ast.Call | None:
    """The call of the statement that Python's carets point at (the one that failed), if any."""
    try:
        want = ast.unparse(ast.parse(focus.strip(), USER_CODE, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            try:
                if ast.unparse(node) == want:
                    return node
            except (ValueError, RecursionError):
                return None
    return None
