"""Evidence for a cause, checked against one paste: what makes a cause likely, or rules it out.

A cause in the knowledge base may carry a ``toml evidence`` fence (``kb/README.md``, "Evidence"):
``[[if]]`` tables are findings that point to the cause, ``[[unless]]`` tables findings that rule it
out. Each table holds one test and, for ``if``, the sentence the answer shows in each language:

========== ===================================================================================
``code``    a regular expression searched in the user's failing line
``lines``   a regular expression searched in any code line the paste shows (every frame's line)
``message`` a regular expression searched in the final exception's message
``chain``   a regular expression searched in the earlier exceptions, other tracebacks and signal lines
``frame``   a regular expression searched in each frame's ``file:function``
``defs``    a regular expression searched in the statements of the user's file that defined what the
            failing call is given (``pad = (ids == 0).long()`` for ``masked_fill(pad, ...)``), two
            assignments deep; only where the surface reads the file (the CLI, the hooks; never the API)
``when``    an expression over the values captured from the message and, in the hooks, the live
            values of the failing line (``m1_cols != m2_rows``, ``arg0_ndim == 4``)
========== ===================================================================================

Expressions are read with ``ast`` and evaluated by the small interpreter below (numbers, strings,
names, arithmetic, comparisons, ``and``/``or``/``not``); nothing is executed. A name the paste does
not give makes the test unknown: it neither counts for the cause nor against it. Every text a
regular expression runs on is capped (the patterns themselves are attacked by ``tbx lint``).
"""

from __future__ import annotations

import operator
import re

TESTS = ("code", "lines", "message", "chain", "frame", "defs", "when")
MAX_TEXT = 2000  # characters of a message or line a test reads
MAX_NUMBER_DIGITS = 30

# operators by their ``ast`` class name: ``ast`` itself (1 ms to import) loads only when a paste
# meets a ``when`` test
_BIN = {
    "Add": operator.add,
    "Sub": operator.sub,
    "Mult": operator.mul,
    "Mod": operator.mod,
    "FloorDiv": operator.floordiv,
    "Div": operator.truediv,
}
_CMP = {
    "Eq": operator.eq,
    "NotEq": operator.ne,
    "Lt": operator.lt,
    "LtE": operator.le,
    "Gt": operator.gt,
    "GtE": operator.ge,
    "In": lambda a, b: a in b,
    "NotIn": lambda a, b: a not in b,
}
_ALLOWED = (
    frozenset(
        ("Expression", "BoolOp", "And", "Or", "UnaryOp", "Not", "USub", "BinOp", "Compare", "Name", "Load", "Constant")
    )
    | frozenset(_BIN)
    | frozenset(_CMP)
)


class Unknown(Exception):
    """A name the paste does not give, or arithmetic that cannot be done on these values."""


class EvidenceError(ValueError):
    """An evidence table that breaks the rules (reported by lint)."""


def value_of(text) -> object:
    """A captured string as a number when it is one (``"784"`` -> 784)."""
    if not isinstance(text, str):
        return text
    t = text.strip()
    if re.fullmatch(rf"-?\d{{1,{MAX_NUMBER_DIGITS}}}", t):
        return int(t)
    if re.fullmatch(rf"-?\d{{1,{MAX_NUMBER_DIGITS}}}\.\d{{1,{MAX_NUMBER_DIGITS}}}(?:e[-+]?\d{{1,3}})?", t):
        return float(t)
    return t


def check_expression(src: str):
    """Parse a ``when`` expression (an ``ast.Expression``) and reject anything outside the small language."""
    import ast

    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError as exc:
        raise EvidenceError(f"'when = {src}' is not an expression: {exc.msg}") from None
    for node in ast.walk(tree):
        if type(node).__name__ not in _ALLOWED:
            raise EvidenceError(
                f"'when = {src}': {type(node).__name__} is not allowed (numbers, names, + - * / // %, comparisons, and/or/not)"
            )
    return tree


def evaluate(node, values: dict) -> object:
    """The value of a checked expression's node over the captured values."""
    kind = type(node).__name__
    if kind == "Expression":
        return evaluate(node.body, values)
    if kind == "Constant":
        return node.value
    if kind == "Name":
        if node.id not in values or values[node.id] in (None, ""):
            raise Unknown(node.id)
        return value_of(values[node.id])
    if kind == "BoolOp":
        results = [evaluate(v, values) for v in node.values]
        return all(results) if type(node.op).__name__ == "And" else any(results)
    if kind == "UnaryOp":
        v = evaluate(node.operand, values)
        return (not v) if type(node.op).__name__ == "Not" else -_num(v)
    if kind == "BinOp":
        a, b = evaluate(node.left, values), evaluate(node.right, values)
        try:
            return _BIN[type(node.op).__name__](_num(a), _num(b))
        except (ZeroDivisionError, OverflowError):
            raise Unknown("arithmetic") from None
    if kind == "Compare":
        left = evaluate(node.left, values)
        for op, comp in zip(node.ops, node.comparators):
            right = evaluate(comp, values)
            try:
                if not _CMP[type(op).__name__](left, right):
                    return False
            except TypeError:
                raise Unknown("comparison") from None
            left = right
        return True
    raise Unknown(kind)


def _num(v: object) -> int | float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Unknown("not a number")
    return v


def validate(tables: dict) -> list[str]:
    """Problems of one cause's parsed evidence fence (empty when it is well formed)."""
    problems: list[str] = []
    for key, items in tables.items():
        if key not in ("if", "unless"):
            problems.append(f"unknown evidence section [[{key}]] (use [[if]] and [[unless]])")
            continue
        if not isinstance(items, list):
            problems.append(f"write [[{key}]] (an array of tables)")
            continue
        for item in items:
            tests = [k for k in item if k in TESTS]
            extra = [k for k in item if k not in TESTS and k not in ("en", "zh")]
            if len(tests) != 1:
                problems.append(f"[[{key}]]: exactly one test of {', '.join(TESTS)} (found {tests or 'none'})")
            if extra:
                problems.append(f"[[{key}]]: unknown key(s) {', '.join(extra)}")
            if key == "if" and not (
                isinstance(item.get("en"), str)
                and isinstance(item.get("zh"), str)
                and item["en"].strip()
                and item["zh"].strip()
            ):
                problems.append("[[if]]: needs the sentences 'en' and 'zh' that the answer shows")
            for t in tests:
                v = item[t]
                if not isinstance(v, str):
                    problems.append(f"[[{key}]] {t}: must be a string")
                elif t == "when":
                    try:
                        check_expression(v)
                    except EvidenceError as exc:
                        problems.append(str(exc))
                else:
                    try:
                        re.compile(v)
                    except re.error as exc:
                        problems.append(f"[[{key}]] {t} = {v!r}: not a regular expression: {exc}")
    return problems


class Context:
    """What the tests read from one paste (and, in the hooks, the live values)."""

    __slots__ = ("code", "lines", "message", "chain", "frames", "values", "_defs", "_defs_of")

    def __init__(self, parsed, values: dict, defs_of=None) -> None:
        self._defs: list[str] | None = None
        self._defs_of = defs_of  # () -> the definitions' lines (read only when a test asks)
        uf = parsed.user_frame
        self.code = (uf.code or "")[:MAX_TEXT] if uf else ""
        self.lines = [f.code[:MAX_TEXT] for f in parsed.frames if f.code][-40:]
        self.message = (parsed.message or "")[:MAX_TEXT]
        self.chain = [(x.message or "")[:MAX_TEXT] for x in (*parsed.chain, *parsed.others) if x.message][-20:]
        self.chain += [s.text[:MAX_TEXT] for s in parsed.signals[:40]]
        self.frames = [f"{f.file}:{f.function}"[:MAX_TEXT] for f in parsed.frames if f.function][-60:]
        self.values = values

    @property
    def defs(self) -> list[str]:
        if self._defs is None:
            try:
                found = self._defs_of() if self._defs_of is not None else []
            except Exception:  # a file that cannot be read or parsed tells nothing
                found = []
            self._defs = [t[:MAX_TEXT] for t in found[:40]]
        return self._defs


def _test(kind: str, arg: str, ctx: Context) -> bool | None:
    """True / False, or None when the paste cannot tell."""
    if kind == "when":
        try:
            tree = _WHEN.get(arg)
            if tree is None:
                tree = _WHEN[arg] = check_expression(arg)  # the knowledge base's own text: parsed once
            return bool(evaluate(tree, ctx.values))
        except (Unknown, EvidenceError, RecursionError):
            return None
    rx = _compiled(arg)
    if kind == "code":
        return bool(rx.search(ctx.code)) if ctx.code else None
    if kind == "message":
        return bool(rx.search(ctx.message)) if ctx.message else None
    texts = ctx.defs if kind == "defs" else {"lines": ctx.lines, "chain": ctx.chain, "frame": ctx.frames}[kind]
    if not texts:
        return None
    return any(rx.search(t) for t in texts)


_RX: dict[str, re.Pattern[str]] = {}
_WHEN: dict[str, object] = {}  # a `when` expression's checked tree


def _compiled(src: str) -> re.Pattern[str]:
    rx = _RX.get(src)
    if rx is None:
        rx = _RX[src] = re.compile(src)
    return rx


def assess(tables: dict | None, ctx: Context) -> tuple[list[dict], bool]:
    """(findings that point to the cause as ``{"en", "zh"}``, whether the paste rules it out)."""
    if not tables:
        return [], False
    found: list[dict] = []
    for item in tables.get("if", ()):
        kind = next((k for k in item if k in TESTS), None)
        if kind and _test(kind, item[kind], ctx):
            found.append({"en": item.get("en", ""), "zh": item.get("zh", "")})
    ruled_out = False
    for item in tables.get("unless", ()):
        kind = next((k for k in item if k in TESTS), None)
        if kind and _test(kind, item[kind], ctx):
            ruled_out = True
            if item.get("en"):
                found.append({"en": item["en"], "zh": item.get("zh", item["en"]), "against": True})
            break
    return found, ruled_out
