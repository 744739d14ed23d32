"""Fixes as rewrites of the user's own failing line, read with ``ast`` and never executed.

A fix in the knowledge base says *how to change the line* (``kb/README.md``, "Rewrites"), one
operation per line of a ``rewrite`` fence:

=============================  ===========================================================================
``method OLD -> NEW``          every call ``x.OLD(...)`` becomes ``x.NEW(...)``, arguments kept
``receiver METHOD -> TPL``     in ``r.METHOD(...)`` the object ``r`` becomes ``TPL`` (``{}`` is ``r``)
``arg CALL N -> TPL``          the N-th positional argument (0-based) of ``CALL(...)`` becomes ``TPL``
                               (``*`` on a line without such a call: an operand of ``a @ b``);
                               ``arg CALL name= -> TPL`` the value of its keyword ``name``; ``arg CALL
                               N|name= -> TPL`` either (the argument given by position or by keyword)
``kwarg CALL NAME=VALUE``      add the keyword argument to ``CALL(...)``, or replace its value (with
                               several callees, ``mean,std``, to every call of them)
``args CALL -> TPL``           all the arguments of ``CALL(...)`` become ``TPL`` (``{}`` is them)
``call CALL -> TPL``           the whole call ``CALL(...)`` becomes ``TPL`` (``{}`` is the call)
``value -> TPL``               the statement's value (right-hand side, or the expression) becomes ``TPL``;
                               ``value KIND -> TPL`` only a value of that kind: ``list`` (a list or list
                               comprehension), ``objects`` (a list of constructed objects, ``[nn.Linear(8,
                               8) for _ in range(3)]`` or ``[]`` that the code appends layers to: known only
                               under ``target def``), ``call``, ``chain`` (a method called on a call's result:
                               ``torch.zeros(3).to(device)``), ``binop`` (``a * b``), ``name``, ``const``;
                               several, comma-separated
``drop CALL NAME=``            the keyword argument ``NAME`` of ``CALL(...)`` is removed (applies only
                               where the call has it), before the other operations read the line
``name WORDS -> TPL``          every variable read on the line (``x``, or ``self.x``'s ``x``) whose
                               name holds one of the comma-separated ``WORDS`` between underscores
                               (``mean,std``: ``MEAN``, ``img_std``, ``self.mean``) becomes ``TPL``
``bitwise``                    ``a and b`` / ``a or b`` / ``not a`` become ``(a) & (b)`` / ``(a) | (b)`` / ``~(a)``
                               (tensors combine element-wise; ``and`` asks for one truth value)
``keepdim``                    every reduction over a dimension (``x.mean(dim=1)``, ``torch.sum(x, 1)``)
                               gets ``keepdim=True``, so that it still lines up with the tensor it came from
``line -> TPL``                the whole line becomes ``TPL``
``before STMT``                the statement ``STMT`` goes before the line (``\n`` in it starts a new line:
                               a ``def`` of several lines)
``target CALL``                (first, once) the operations change another line: the nearest one above the
                               failing line, in the same function (or at module level), that calls
                               ``CALL`` (``target backward``: the earlier ``.backward()``; ``target
                               no_grad``: the ``with torch.no_grad():`` around the forward pass). Needs
                               the user's file (the CLI and the hooks read it; the HTTP API never does):
                               without it the fix is advice. ``target def WHICH``: the operations change
                               the statement that defined a name the failing line reads (the layer's
                               ``self.fc = nn.Linear(...)`` in ``__init__``, ``device = "cuda"``); see
                               ``explainer/advise/defuse.py`` for ``WHICH`` and the walk. ``target
                               caller``: the line that calls the model whose method failed, outside a
                               loop (``{model}`` is its name)
=============================  ===========================================================================

``N`` in ``arg`` is a number or a value of the message: ``{pos}`` (0-based) or ``{pos}-1`` (the
1-based "position 2" torch prints). A compound statement's header (``if x:``, ``while x:``,
``for b in loader:``, ``with ...:``) is a line too: ``value`` addresses its condition, iterable or
context expression.

Where the paste shows Python 3.11's carets under part of the line, ``*`` is the call they point at
(the one that failed), and ``arg0``/``call``/``receiver`` are read from it.

``CALL`` names a callee by its last dotted components (``cross_entropy`` matches
``F.cross_entropy`` and ``torch.nn.functional.cross_entropy``; ``LSTM,GRU,RNN``: any of them), or ``*`` for the line's outermost
call of a named callee (``self.fc``, ``criterion``, ``F.relu``): a method called on a call's result
(``.flatten(1)`` in ``self.pool(self.stem(x)).flatten(1)``) is skipped. ``TPL``/``STMT``/``VALUE`` may use ``{}`` (the text being replaced) and ``{name}`` or
``{name|default}``: values captured from the message and read from the line (``target``,
``receiver``, ``arg0`` ...; see :func:`code_values`).

An operation that finds nothing to change on this line, a placeholder without a value, or a result
that is not valid Python makes the whole rewrite *not apply*: the fix is then shown as advice with the
entry's generic example, never as broken or half-filled code.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from explainer.source import code_values, focused_call
from explainer.textio import USER_CODE, Lazy

MAX_TARGET_LINES = 200  # how far above the failing line a ``target`` is looked for
MAX_LINE = 500  # a longer line is not rewritten (its ast could be costly and it is not one statement)


class RewriteError(ValueError):
    """A rewrite fence that breaks the rules above (reported by lint with its line)."""


# each operation's arguments after its word, in the order of its tuple; an operation's expression is
# compiled the first time a fence uses it
_ARGS = {
    "method": Lazy(r"\s+(\w+)\s*->\s*(\w+)"),
    "receiver": Lazy(r"\s+(\w+)\s*->\s*(\S.*)"),
    "arg": Lazy(r"\s+(\*|[\w.,]+)\s+(\d+\|\w+=|\d+|\w+=|\{\w+\}(?:-1)?)\s*->\s*(\S.*)"),
    "args": Lazy(r"\s+(\*|[\w.,]+)\s*->\s*(\S.*)"),
    "kwarg": Lazy(r"\s+(\*|[\w.,]+)\s+(\w+)=(\S.*)"),
    "call": Lazy(r"\s+(\*|[\w.,]+)\s*->\s*(\S.*)"),
    "value": Lazy(
        r"(?:\s+((?:list|objects|call|chain|binop|name|const)(?:,(?:list|objects|call|chain|binop|name|const))*))?\s*->\s*(\S.*)"
    ),
    "name": Lazy(r"\s+([a-z0-9]+(?:,[a-z0-9]+)*)\s*->\s*(\S.*)"),
    "bitwise": Lazy(r""),
    "keepdim": Lazy(r""),
    "line": Lazy(r"\s*->\s*(\S.*)"),
    "before": Lazy(r"\s+(\S.*)"),
    "drop": Lazy(r"\s+(\*|[\w.,]+)\s+(\w+)="),
    "target": Lazy(r"\s+(def\s+(?:callee|args|value|carried|[a-z0-9]+(?:,[a-z0-9]+)*)|caller|[\w.]+)"),
}
OPS = tuple(_ARGS)


def parse_ops(text: str) -> list[tuple]:
    """The operations of a ``rewrite`` fence: tuples (op, *arguments). Raises RewriteError."""
    ops: list[tuple] = []
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        word = line.split(None, 1)[0].split("->", 1)[0]
        m = word in _ARGS and _ARGS[word].fullmatch(line, len(word))
        if not m:
            raise RewriteError(f"line {n}: {line!r} is not one of: {', '.join(OPS)} (see explainer/advise/rewrite.py)")
        args = m.groups()
        if word == "name":
            args = (tuple(args[0].split(",")), args[1])
        elif word == "target" and ops:
            raise RewriteError(f"line {n}: 'target' must be the first operation of the fence")
        ops.append((word, *args))
    if not ops or ops == [ops[0]] and ops[0][0] == "target":
        raise RewriteError("the rewrite fence holds no operation")
    return ops


def structural(ops: list[tuple]) -> bool:
    """Whether a rewrite changes a definition only where it has a given shape (``target def`` with a
    ``drop`` or a ``value KIND``, or ``target def carried``): applied, it found in the user's file
    what its causes describe."""
    spec, rest = split_target(ops)
    if spec in ("def carried", "caller"):  # found only where a loop carries a state / a model is called outside one
        return True
    return bool(spec and spec.startswith("def")) and any(op[0] == "drop" or (op[0] == "value" and op[1]) for op in rest)


def split_target(ops: list[tuple]) -> tuple[str | None, list[tuple]]:
    """(the ``target`` callee or None, the operations that change the line)."""
    if ops and ops[0][0] == "target":
        return ops[0][1], ops[1:]
    return None, ops


def find_target(lines: list[str], lineno: int, spec: str) -> int | None:
    """The 1-based number of the nearest line above ``lineno`` in the same function (or at module
    level) whose statement calls ``spec``; None when there is none. Lines are read with ``ast``,
    one at a time (a statement continued over several lines is not a target)."""
    if not 1 <= lineno <= len(lines):
        return None
    here = lines[lineno - 1]
    indent = len(here) - len(here.lstrip())
    word = spec.rsplit(".", 1)[-1]
    for n in range(lineno - 1, max(0, lineno - 1 - MAX_TARGET_LINES), -1):
        raw = lines[n - 1].rstrip("\r\n")
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        level = len(raw) - len(raw.lstrip())
        if level < indent and text.startswith(("def ", "async def ", "class ")):
            return None  # the enclosing function's header: the target is never outside it
        if word not in text or len(text) > MAX_LINE:
            continue
        stmt = _statement(strip_comment(text))
        if stmt is not None and any(_name_matches(c.func, spec) for c in _calls(stmt)):
            return n
    return None


@lru_cache(maxsize=2048)  # the same failing line is read by every fix of every candidate (read-only trees)
def _statement(text: str) -> ast.stmt | None:
    """The one statement of a line (a compound statement's header, "if torch.isnan(out):", parses
    with a body appended), or None."""
    body = " pass" if text.endswith(":") and _HEADER.match(text) else ""
    try:
        tree = ast.parse(text + body, USER_CODE)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tree.body[0] if len(tree.body) == 1 else None


_FIELD = Lazy(r"\{\}|(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)(?:\|([^{}\n]*))?\}(?!\})")


def fill_template(tpl: str, this: str | None, values: dict[str, str]) -> str | None:
    """``{}`` -> ``this``; ``{name|default}`` -> its value. None when a value is missing."""
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        if m.group(0) == "{}":
            if this is None:
                missing = True
                return ""
            return this
        value = values.get(m.group(1)) or m.group(2)
        if value is None:
            missing = True
            return ""
        return value

    out = _FIELD.sub(sub, tpl).replace("{{", "{").replace("}}", "}")
    return None if missing else out


def strip_comment(line: str) -> str:
    """The line without its trailing ``# comment``; a ``#`` inside a string literal is no comment (what
    tokenize says, without compiling tokenize's expressions on every run: a few ms of each answer)."""
    if "#" not in line:
        return line.rstrip()
    i, n, quote = 0, len(line), ""
    unclosed = ""  # quote characters that open no string up to the line's end: tokenize's error tokens
    while i < n:
        c = line[i]
        if quote:
            if c == "\\":
                i += 2  # an escaped character, a quote too (also in a raw string)
            elif line.startswith(quote, i):
                i, quote = i + len(quote), ""
            else:
                i += 1
        elif c == "#":
            return line[:i].rstrip()
        elif c in "'\"":
            quote = line[i : i + 3] if line[i : i + 3] in ("'''", '"""') else c
            if quote == c and (c in unclosed or not _closes(line, i + 1, c)):
                unclosed, quote = unclosed + c, ""  # a lone quote: the scan goes on after it
                i += 1
                continue
            i += len(quote)
        else:
            i += 1
    return line.rstrip()


def _closes(line: str, i: int, quote: str) -> bool:
    """Whether a ``quote`` opened before ``i`` closes on this line (escapes skipped)."""
    while i < len(line):
        if line[i] == "\\":
            i += 2
        elif line[i] == quote:
            return True
        else:
            i += 1
    return False


def _dotted(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):
        return ""


def _name_matches(func: ast.AST, spec: str) -> bool:
    name = _dotted(func)
    return name == spec or name.endswith("." + spec)


class _Source:
    """The statement's text with character offsets for its nodes (ast gives UTF-8 byte columns)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.b = text.encode("utf-8")

    def span(self, node: ast.expr) -> tuple[int, int]:
        start = len(self.b[: node.col_offset].decode("utf-8", "replace"))
        end = len(self.b[: node.end_col_offset].decode("utf-8", "replace"))
        return start, end

    def of(self, node: ast.expr) -> str:
        s, e = self.span(node)
        return self.text[s:e]

    def operand(self, node: ast.expr) -> str:
        """The node's text, in parentheses unless it is an atom (``a + b`` -> ``(a + b)``), so that
        a template such as ``{}.long()`` applies to the whole of it."""
        text = self.of(node)
        if isinstance(
            node,
            (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set),
        ):
            return text
        return f"({text})"


def _calls(tree: ast.AST) -> list[ast.Call]:
    """Every call of the statement, outermost first (``ast.walk`` is breadth-first)."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


# --- the operations: each (op, stmt, src, values) -> edits (start, end, replacement), or None when the
# operation does not apply to this line; one small function per kind, found through _EDITS


def _callees(spec: str, stmt: ast.stmt, values: dict[str, str]) -> list[ast.Call]:
    """The calls of the statement an operation's ``spec`` names: ``*`` the call that failed (where
    Python's carets point, else the first named one), otherwise every call of that name."""
    if spec == "*":
        focused = focused_call(stmt, values["focus"]) if values.get("focus") else None
        if focused is not None:
            return [focused]  # Python's carets say which call failed
        named = [
            c
            for c in _calls(stmt)
            if not (isinstance(c.func, ast.Attribute) and isinstance(c.func.value, (ast.Call, ast.Subscript)))
        ]
        return named[:1]
    specs = spec.split(",")  # LSTM,GRU,RNN: a call of any of them
    return [c for c in _calls(stmt) if any(_name_matches(c.func, one) for one in specs)]


Edits = list[tuple[int, int, str]]


def _edit_method(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """``method OLD -> NEW``: every call of ``.OLD(...)`` becomes ``.NEW(...)``."""
    _, old, new = op
    edits = []
    for c in _calls(stmt):
        if isinstance(c.func, ast.Attribute) and c.func.attr == old:
            s, e = src.span(c.func)
            edits.append((e - len(old), e, new))
    return edits


def _edit_receiver(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """``receiver METHOD -> TEMPLATE``: the object ``.METHOD`` is called on, rewritten."""
    _, meth, tpl = op
    for c in _calls(stmt):
        if isinstance(c.func, ast.Attribute) and c.func.attr == meth:
            rep = fill_template(tpl, src.operand(c.func.value), values)
            if rep is None:
                return None
            return [(*src.span(c.func.value), rep)]  # the outermost one: ``a.sum().backward()`` has one receiver
    return []


def _edit_arg(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """``arg CALL INDEX|NAME= -> TEMPLATE``: one argument of the call, rewritten (an index may name a
    value of the message: ``{dim}``, ``{dim}-1``)."""
    _, spec, idx, tpl = op
    if idx.startswith("{"):
        name, _, minus = idx[1:].partition("}")
        raw = values.get(name, "")
        if not raw.strip().isdigit():
            return None
        idx = str(int(raw) - (1 if minus == "-1" else 0))
        if int(idx) < 0:
            return None
    pos, _, kw = idx.partition("|") if "|" in idx else (("", "", idx) if idx.endswith("=") else (idx, "", ""))

    def argument(c: ast.Call) -> ast.expr | None:
        i = int(pos) if pos else -1
        if 0 <= i < len(c.args) and not isinstance(c.args[i], ast.Starred):
            return c.args[i]
        return next((k.value for k in c.keywords if k.arg == kw[:-1]), None) if kw else None

    node = next((n for c in _callees(spec, stmt, values) if (n := argument(c)) is not None), None)
    if node is None and spec in ("*", "matmul", "mm") and pos in ("0", "1"):  # ``a @ b``: its arguments are a, b
        mm = next((n for n in ast.walk(stmt) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult)), None)
        node = None if mm is None else mm.left if pos == "0" else mm.right
    if node is None:
        return []
    rep = fill_template(tpl, src.operand(node), values)
    return None if rep is None else [(*src.span(node), rep)]


def _edit_kwarg(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """``kwarg CALL NAME=VALUE``: the keyword argument set (replaced, or added at the end)."""
    _, spec, name, val = op
    rep = fill_template(val, None, values)
    if rep is None:
        return None
    edits = []
    for c in _callees(spec, stmt, values):
        kw = next((k for k in c.keywords if k.arg == name), None)
        if kw is not None:
            edits.append((*src.span(kw.value), rep))
        else:
            s, e = src.span(c)
            close = src.text.rindex(")", s, e)
            sep = ", " if (c.args or c.keywords) else ""
            edits.append((close, close, f"{sep}{name}={rep}"))
        if "," not in spec:  # one callee named: its first call; several (mean,std): each of their calls
            break
    return edits


def _edit_args(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """``args CALL -> TEMPLATE``: everything between the call's parentheses, rewritten."""
    _, spec, tpl = op
    for c in _callees(spec, stmt, values):
        s, e = src.span(c)
        fs, fe = src.span(c.func)
        inner_start = src.text.index("(", fe, e) + 1
        inner_end = src.text.rindex(")", s, e)
        rep = fill_template(tpl, src.text[inner_start:inner_end], values)
        if rep is None:
            return None
        return [(inner_start, inner_end, rep)]
    return []


def _edit_call(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """``call CALL -> TEMPLATE``: the whole call, rewritten."""
    _, spec, tpl = op
    for c in _callees(spec, stmt, values):
        rep = fill_template(tpl, src.of(c), values)
        if rep is None:
            return None
        return [(*src.span(c), rep)]
    return []


def _edit_name(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """``name WORD,WORD -> TEMPLATE``: every name (or attribute of a name) read on the line that holds
    one of the words, rewritten."""
    _, words, tpl = op
    funcs = {id(c.func) for c in _calls(stmt)}
    edits = []
    for node in ast.walk(stmt):
        if id(node) in funcs or not isinstance(getattr(node, "ctx", None), ast.Load):
            continue
        if isinstance(node, ast.Name):
            ident = node.id
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            ident = node.attr  # self.mean: the attribute, with its object
        else:
            continue
        if set(ident.lower().split("_")) & set(words):
            rep = fill_template(tpl, src.of(node), values)
            if rep is None:
                return None
            edits.append((*src.span(node), rep))
    return edits


def _edit_bitwise(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """``bitwise``: ``a and b`` / ``a or b`` / ``not a`` on tensors as ``&``, ``|``, ``~``."""
    ops_text = {ast.And: "&", ast.Or: "|"}
    for node in ast.walk(stmt):
        if isinstance(node, ast.BoolOp):
            joined = f" {ops_text[type(node.op)]} ".join(f"({src.of(v)})" for v in node.values)
            return [(*src.span(node), joined)]  # the outermost one; nested ones are inside its text
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return [(*src.span(node), f"~({src.of(node.operand)})")]
    return []


_VALUE_KINDS = {
    "list": (ast.List, ast.ListComp),
    "call": (ast.Call,),
    "binop": (ast.BinOp,),
    "name": (ast.Name, ast.Attribute),
    "const": (ast.Constant,),
}


def _is_kind(value: ast.expr, kind: str, values: dict[str, str]) -> bool:
    if kind == "objects":  # a list of constructed objects (layers), as the walk over the file found it
        return isinstance(value, (ast.List, ast.ListComp)) and values.get("holds_objects") == "1"
    if kind == "chain":  # a method called on a call's result: torch.zeros(3).to(device)
        return (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, (ast.Call, ast.Subscript))
        )
    return isinstance(value, _VALUE_KINDS[kind])


_REDUCTIONS = frozenset(
    ("mean", "sum", "std", "var", "amax", "amin", "norm", "logsumexp", "prod", "nansum", "nanmean", "count_nonzero")
)


def _edit_keepdim(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """``keepdim``: every reduction over a dimension (``x.mean(dim=1)``, ``torch.sum(x, 1)``) keeps it."""
    edits = []
    for c in _calls(stmt):
        f = c.func
        if not (isinstance(f, ast.Attribute) and f.attr in _REDUCTIONS) or any(k.arg == "keepdim" for k in c.keywords):
            continue
        function_form = isinstance(f.value, ast.Name) and f.value.id in ("torch", "np", "numpy")
        if not (any(k.arg in ("dim", "axis") for k in c.keywords) or len(c.args) > (1 if function_form else 0)):
            continue  # a reduction to one number broadcasts already
        s, e = src.span(c)
        close = src.text.rindex(")", s, e)
        edits.append((close, close, ", keepdim=True"))
    return edits


def _edit_value(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """``value [KIND] -> TEMPLATE``: the value the line assigns or returns, rewritten (only a value of
    that kind, with one)."""
    _, kind, tpl = op
    value = _value_of(stmt)
    if value is None or (kind and not any(_is_kind(value, k, values) for k in kind.split(","))):
        return None
    rep = fill_template(tpl, src.operand(value), values)
    return None if rep is None else [(*src.span(value), rep)]


def _edit_drop(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """``drop CALL NAME=``: the keyword argument removed, with the comma before it (or after it)."""
    _, spec, name = op
    for c in _callees(spec, stmt, values):
        kw = next((k for k in c.keywords if k.arg == name), None)
        if kw is None:
            continue
        s, e = src.span(kw.value)
        start = src.text.rindex(name, 0, s)
        prev = src.text.rfind(",", 0, start)
        args_start = src.text.index("(", src.span(c.func)[1]) + 1
        if prev >= args_start:  # ", name=value"
            return [(prev, e, "")]
        nxt = src.text.find(",", e)  # "name=value, " as the first argument
        close = src.text.rindex(")", 0, src.span(c)[1])
        if not 0 <= nxt < close:
            return [(start, e, "")]
        end = nxt + 1
        while end < close and src.text[end] == " ":
            end += 1
        return [(start, end, "")]
    return []


def _edit_line(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """``line -> TEMPLATE``: the whole line, rewritten."""
    rep = fill_template(op[1], src.text, values)
    return None if rep is None else [(0, len(src.text), rep)]


_EDITS = {
    "method": _edit_method,
    "receiver": _edit_receiver,
    "arg": _edit_arg,
    "kwarg": _edit_kwarg,
    "args": _edit_args,
    "call": _edit_call,
    "name": _edit_name,
    "bitwise": _edit_bitwise,
    "value": _edit_value,
    "line": _edit_line,
    "drop": _edit_drop,
    "keepdim": _edit_keepdim,
}


def _edits(op: tuple, stmt: ast.stmt, src: _Source, values: dict[str, str]) -> Edits | None:
    """(start, end, replacement) edits of one operation, or None when it does not apply."""
    edit = _EDITS.get(op[0])
    return (edit(op, stmt, src, values) or None) if edit is not None else None


def _value_of(stmt: ast.stmt) -> ast.expr | None:
    """The expression a ``value`` operation replaces: a right-hand side, an expression statement, or
    the condition / iterable / context expression of a compound statement's header."""
    if isinstance(stmt, (ast.If, ast.While)):
        return stmt.test
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return stmt.iter
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return stmt.items[0].context_expr if stmt.items else None
    return getattr(stmt, "value", None)


_HEADER = Lazy(r"^(if|while|for|with|async\s+for|async\s+with)\b")


@lru_cache(maxsize=2048)
def _parses(code: str) -> bool:
    try:
        ast.parse(code, USER_CODE)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def is_valid(code: str | None) -> bool:
    """Whether a fix's code is valid Python: a statement, or the header of a compound statement
    (``if x.any():``) whose body stays as it is in the user's file."""
    if not code:
        return False
    last = code.rstrip().split("\n")[-1].strip()
    return _parses(code) or (last.endswith(":") and bool(_HEADER.match(last)) and _parses(code + " pass"))


def apply(ops: list[tuple], line: str | None, values: dict[str, str]) -> tuple[str, str] | None:
    """Apply a rewrite to the user's failing line: ``(kind, code)`` where kind is ``replace_line``
    (``code`` replaces the line: any statements to insert, then the changed line) or
    ``insert_before`` (``code`` goes before the line); None when the rewrite does not apply."""
    if not line:
        return None
    drops = [op for op in ops if op[0] == "drop"]
    if drops and len(drops) < len(ops):  # a keyword removed first: the other operations see the line without it
        first = apply(drops, line, values)
        return apply([op for op in ops if op[0] != "drop"], first[1], values) if first else None
    text = strip_comment(line.strip())
    if not text or len(text) > MAX_LINE:
        return None
    stmt = _statement(text)
    if stmt is None:
        return None
    body = " pass" if text.endswith(":") and _HEADER.match(text) else ""  # for the final parse check
    src = _Source(text)
    before: list[str] = []
    edits: list[tuple[int, int, str]] = []
    try:
        for op in ops:
            if op[0] == "before":
                stmt_text = fill_template(op[1].replace("\\n", "\n"), text, values)
                if stmt_text is None or not _parses(stmt_text):
                    return None
                before.append(stmt_text)
                continue
            found = _edits(op, stmt, src, values)
            if found is None:
                return None
            edits += found
    except (ValueError, RecursionError, IndexError):
        return None
    if not edits:
        code = "\n".join(before)
        return ("insert_before", code) if code and _parses(code) else None
    edits.sort(key=lambda e: (e[0], e[1]))
    for (_s1, e1, _), (s2, _e2, _) in zip(edits, edits[1:]):
        if s2 < e1:
            return None  # two operations change the same text: ambiguous, not applied
    out, pos = [], 0
    for s, e, rep in edits:
        out.append(text[pos:s])
        out.append(rep)
        pos = e
    out.append(text[pos:])
    new_line = "".join(out)
    code = "\n".join(before + [new_line])
    if new_line == text or not _parses(code + body):
        return None
    return "replace_line", code


def apply_at(
    ops: list[tuple],
    code: str | None,
    lineno: int | None,
    values: dict[str, str],
    lines: list[str] | None = None,
    caller: int | None = None,
) -> tuple[str, str, int | None] | None:
    """Apply a rewrite where it goes: ``(kind, code, line)``. Without ``target``, to the failing
    line ``code`` (at ``lineno``); with it, to the line it names in ``lines`` (the user's file),
    which must be the file the traceback ran: its line ``lineno`` is the failing line. None when
    the rewrite does not apply (or needs the file and has none)."""
    spec, rest = split_target(ops)
    if spec is None:
        res = apply(ops, code, values)
        return (*res, lineno) if res else None
    if not (lines and code and lineno) or not _reads_as(lines, lineno, code):
        return None
    if spec.startswith("def"):
        return _apply_at_definition(rest, code, lineno, values, lines, spec[3:].strip())
    if spec == "caller":
        return _apply_at_caller(rest, lineno, values, lines, caller)
    n = find_target(lines, lineno, spec)
    if n is None:
        return None
    res = apply(rest, lines[n - 1], {**values, **code_values(lines[n - 1])})
    return (*res, n) if res else None


def _reads_as(lines: list[str], lineno: int, code: str) -> bool:
    """Whether the user's file is the one the traceback ran: its line ``lineno`` reads as ``code``."""
    return lineno <= len(lines) and strip_comment(lines[lineno - 1].strip()) == strip_comment(code.strip())


def _calls_failing_first(stmt: ast.stmt, values: dict[str, str]) -> list[ast.Call]:
    focused = _callees("*", stmt, values)
    return focused + [c for c in _calls(stmt) if c not in focused]


def definitions_read(
    code: str | None, lineno: int | None, values: dict[str, str], lines: list[str] | None
) -> list[str]:
    """The statements of the user's file that defined what the failing call is given (its
    arguments), two assignments deep; empty without the file or when it no longer reads as the
    traceback shows (``explainer/advise/defuse.py``)."""
    from explainer.advise.defuse import definition_texts, followed_names

    if not (lines and code and lineno) or not _reads_as(lines, lineno, code):
        return []
    stmt = _statement(strip_comment(code.strip()))
    if stmt is None:
        return []
    calls = _calls_failing_first(stmt, values)
    return definition_texts(lines, lineno, followed_names(stmt, "args", calls, _value_of(stmt)))


def _apply_at_caller(
    ops: list[tuple], lineno: int, values: dict[str, str], lines: list[str], caller: int | None
) -> tuple[str, str, int] | None:
    """``target caller``: the rewrite applied where the model whose method failed is called, outside
    a loop (the traceback's calling line when it shows one); ``{model}`` is the name called."""
    from explainer.advise.defuse import model_calls

    for n, name in model_calls(lines, lineno):
        if caller is not None and n not in (caller, lineno):  # the failing line may call the model itself
            continue
        res = apply(ops, lines[n - 1], {**values, **code_values(lines[n - 1]), "model": name})
        if res:
            return (*res, n)
    return None


def _apply_at_definition(
    ops: list[tuple], code: str, lineno: int, values: dict[str, str], lines: list[str], which: str
) -> tuple[str, str, int] | None:
    """``target def WHICH``: the rewrite applied to the first statement that defined a name of the
    failing line and that the operations apply to (``explainer/advise/defuse.py``)."""
    from explainer.advise.defuse import (
        candidate_lines,
        carried_state,
        followed_names,
        holds_objects,
        module_name,
        unused_function,
    )

    stmt = _statement(strip_comment(code.strip()))
    if stmt is None:
        return None
    calls = _calls_failing_first(stmt, values)
    # values the file gives (an empty one is missing: a rewrite that needs it does not apply)
    file_values = {"nn": module_name(lines), "collate_fn": unused_function(lines, "collate", "collate_fn") or ""}
    if which == "carried":  # the state a loop carries into this line's graph
        found = carried_state(lines, lineno, followed_names(stmt, "all", calls, _value_of(stmt)))
        if found is None:
            return None
        n, name, detached = found
        res = apply(ops, lines[n - 1], {**values, **file_values, "carried": name, "detached": detached})
        return (*res, n) if res else None
    tried = candidate_lines(lines, lineno, followed_names(stmt, which, calls, _value_of(stmt)))
    if which == "value":  # for x in DataLoader(ds): the value is made on the failing line itself
        tried.append(lineno)
    for n in tried:
        objects = {"holds_objects": "1"} if holds_objects(lines, n) else {}
        res = apply(ops, lines[n - 1], {**values, **file_values, **objects, **code_values(lines[n - 1])})
        if res:
            return (*res, n)
    return None


def apply_to_source(source: str, lineno: int, kind: str, code: str) -> str:
    """Put ``code`` into a file's text at 1-based line ``lineno`` as ``kind`` says, keeping the
    line's indentation (what a user does with the answer; what ``tbx verify`` does to reproducers)."""
    lines = source.split("\n")
    target = lines[lineno - 1]
    indent = target[: len(target) - len(target.lstrip())]
    block = [indent + c if c.strip() else c for c in code.split("\n")]
    if kind == "replace_line":
        lines[lineno - 1 : lineno] = block
    elif kind == "insert_before":
        lines[lineno - 1 : lineno - 1] = block
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return "\n".join(lines)
