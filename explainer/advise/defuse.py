"""The line that must change: a small def-use walk over the user's file, read with ``ast`` and never
executed.

The failing line often only *uses* a bad value made elsewhere: the layer called in ``forward`` was
built with the wrong size in ``__init__``, the device variable was set to ``"cuda"`` at the top of the
script, a parameter was made a non-leaf where it was created, the model's layers were kept in a plain
list. A rewrite whose fence starts with ``target def WHICH`` (``explainer/advise/rewrite.py``) is
applied to the statements that *defined* the names of the failing line instead of to the line itself.

``WHICH`` says which names of the failing line are followed:

=============  ==========================================================================================
``callee``     the objects called (``self.fc`` in ``x = self.fc(x)``), the failing call first
``args``       the names in the calls' arguments (``w``, ``b`` in ``SGD([w, b], lr=0.1)``)
``value``      the names in the statement's value (the loader of ``for x, y in loader:``)
``carried``    the state a loop carries into the failing line's graph: the assignments of the names it
               reads are followed back to one in a loop that reads and rebinds a name
               (``logits, hidden = model(inp, hidden)``); ``{carried}`` is that name and ``{detached}``
               it cut from the previous step (see :func:`carried_state`)
``WORD,WORD``  the names read on the line that hold one of the words between underscores (``device``)
=============  ==========================================================================================

A name is followed to the assignment that gave it its value: ``self.x`` to ``self.x = ...`` in the
class's methods (``__init__`` first); a local to the nearest assignment above it in its function; a
function's parameter to the argument its callers in the same file pass (three calls deep at most); a
global to its module-level assignment. When that value constructs a class defined in the same file
(``model = Net().to(device)``), the statements of that class's ``__init__`` follow; when it calls a
function of the same file (``params = make_params(4, 2)``), the definitions of what it returns. Only a statement on
one line is a candidate (the rewrite changes one line); the rewrite's operations pick among the
candidates, in order: the first one they apply to is the line that must change, so an operation that
finds nothing to change on a statement (no ``Linear`` call, no list value) rules it out.
"""

from __future__ import annotations

import ast
from functools import lru_cache

from explainer.textio import USER_CODE

MAX_FILE_LINES = 5000  # a longer file is not parsed for this (an answer has a time budget)
MAX_DEPTH = 3  # parameter -> caller's argument hops
MAX_CANDIDATES = 40
MAX_CALLERS = 20  # call sites of one function followed for a parameter
MAX_STEPS = 200  # names followed for one failing line, over every hop (a bound on the walk's work)

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_FUNCS, ast.ClassDef, ast.Lambda)


class _Module:
    """A parsed file with its functions and classes found once."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.classes: dict[str, ast.ClassDef] = {}
        self.funcs: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.calls: list[ast.Call] = []
        self.parent: dict[int, ast.AST] = {}
        self._function_at: dict[int, ast.FunctionDef | ast.AsyncFunctionDef | None] = {}
        self._binds: dict[int, dict[str, list[ast.stmt]]] = {}
        self.statement_at: dict[int, ast.stmt] = {}  # line -> the outermost statement starting there
        for node in ast.walk(tree):  # breadth first: outer statements before the ones they hold
            for child in ast.iter_child_nodes(node):
                self.parent[id(child)] = node
            if isinstance(node, ast.stmt):
                self.statement_at.setdefault(node.lineno, node)
            if isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, node)
            elif isinstance(node, _FUNCS):
                self.funcs.append(node)
            elif isinstance(node, ast.Call):
                self.calls.append(node)

    def function_at(self, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost function whose body holds ``line``."""
        if line in self._function_at:
            return self._function_at[line]
        best = None
        for f in self.funcs:
            if f.body and f.body[0].lineno <= line <= (f.end_lineno or f.lineno):
                if best is None or f.lineno > best.lineno:
                    best = f
        self._function_at[line] = best
        return best

    def binds(self, scope: ast.AST) -> dict[str, list[ast.stmt]]:
        """Name -> the statements of ``scope`` (a function or the module) that bind it, in order:
        built once per scope, so that following many names costs one pass over the file."""
        found = self._binds.get(id(scope))
        if found is None:
            found = {}
            for st in _own_statements(scope):
                for n in _binds(st):
                    found.setdefault(n, []).append(st)
            self._binds[id(scope)] = found
        return found

    def class_of(self, node: ast.AST | None) -> ast.ClassDef | None:
        while node is not None:
            node = self.parent.get(id(node))
            if isinstance(node, ast.ClassDef):
                return node
        return None


@lru_cache(maxsize=8)  # every fix of every candidate of one answer reads the same file
def _module(text: str) -> _Module | None:
    try:
        return _Module(ast.parse(text, USER_CODE))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


_LAST: list = [None, None, None]  # (the lines list, a check of it, its module): the walk's calls of one answer


def module_of(lines: list[str]) -> _Module | None:
    """The parsed file (None for one that does not parse or is too long to read within an answer's
    time); the list last asked for is not joined and hashed again (every rewrite of an answer asks
    for the same one)."""
    if len(lines) > MAX_FILE_LINES:
        return None
    check = (len(lines), lines[0] if lines else "", lines[-1] if lines else "")
    if _LAST[0] is lines and _LAST[1] == check:
        return _LAST[2]
    mod = _module("\n".join(lines))
    _LAST[:] = [lines, check, mod]
    return mod


def _own_statements(scope: ast.AST):
    """The statements of a function or module body, nested blocks included, nested functions and
    classes not (their assignments bind other scopes)."""
    todo = list(getattr(scope, "body", ()))
    while todo:
        s = todo.pop(0)
        yield s
        if isinstance(s, _SCOPES):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(s, field, ()) or ():
                if isinstance(child, ast.stmt):
                    todo.append(child)
                else:  # except handlers and match cases hold statements
                    todo.extend(getattr(child, "body", ()))


def _name(node: ast.AST) -> str | None:
    """``x`` or ``self.x`` (the two kinds of names the walk follows), else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _assigned(stmt: ast.stmt) -> str | None:
    """The one name a single-target assignment binds (``x = ...``, ``self.x: T = ...``), else None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        return _name(stmt.targets[0])
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return _name(stmt.target)
    return None


def _binds(stmt: ast.stmt) -> list[str]:
    """The names an assignment binds, a tuple's included (``out, h = rnn(x, h)``)."""
    one = _assigned(stmt)
    if one is not None:
        return [one]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Tuple, ast.List)):
        return [n for e in stmt.targets[0].elts if (n := _name(e))]
    return []


def _one_line(stmt: ast.stmt) -> bool:
    return stmt.end_lineno == stmt.lineno


def _constructed(mod: _Module, value: ast.expr | None) -> ast.ClassDef | None:
    """The class of this file that ``value`` constructs (``Net(...)``, ``Net(...).to(device)``)."""
    while isinstance(value, ast.Call):
        if isinstance(value.func, ast.Name):
            return mod.classes.get(value.func.id)
        value = value.func.value if isinstance(value.func, ast.Attribute) else None
    return None


def _init_lines(cls: ast.ClassDef) -> list[int]:
    init = next((s for s in cls.body if isinstance(s, _FUNCS) and s.name == "__init__"), None)
    if init is None:
        return []
    return [s.lineno for s in _own_statements(init) if _one_line(s) and not isinstance(s, _SCOPES)]


def _definitions(mod: _Module, name: str, line: int, steps: list[int], depth: int = 0) -> list[ast.stmt]:
    """The assignments that gave ``name`` its value as read at ``line`` (see the module's docstring);
    ``steps``: the walk's remaining budget, shared by every hop."""
    steps[0] -= 1
    if steps[0] < 0:
        return []
    func = mod.function_at(line)
    if name.startswith("self."):
        cls = mod.class_of(func)
        if cls is None:
            return []
        attr = name[5:]
        found: list[tuple[int, int, ast.stmt]] = []
        for s in cls.body:
            if isinstance(s, (ast.Assign, ast.AnnAssign)) and _assigned(s) == attr:
                found.append((1, s.lineno, s))
            elif isinstance(s, _FUNCS):
                for t in mod.binds(s).get(name, ()):
                    if _assigned(t) == name:
                        found.append((0 if s.name == "__init__" else 2, t.lineno, t))
        return [s for *_, s in sorted(found, key=lambda f: (f[0], f[1]))]
    if func is not None:
        here = [s for s in mod.binds(func).get(name, ()) if _assigned(s) == name and s.lineno < line]
        if here:
            return [max(here, key=lambda s: s.lineno)]
        params = _params(func)
        if name in params:
            return _from_callers(mod, func, params, name, steps, depth)
    glob = [s for s in mod.binds(mod.tree).get(name, ()) if _assigned(s) == name]
    above = [s for s in glob if s.lineno < line]
    if above:
        return [max(above, key=lambda s: s.lineno)]
    return glob[:1] if func is not None else []


def _params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = func.args
    return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]


def _from_callers(mod: _Module, func, params: list[str], name: str, steps: list[int], depth: int) -> list[ast.stmt]:
    """A parameter's definitions: those of the argument each caller in this file passes for it."""
    if depth >= MAX_DEPTH:
        return []
    method = bool(params) and params[0] in ("self", "cls") and mod.class_of(func) is not None
    pos = params.index(name) - (1 if method else 0)
    out: list[ast.stmt] = []
    callers = 0
    for call in mod.calls:
        f = call.func
        callee = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if callee != func.name:
            continue
        callers += 1
        if callers > MAX_CALLERS:
            break
        arg = next((k.value for k in call.keywords if k.arg == name), None)
        if arg is None and 0 <= pos < len(call.args) and not any(isinstance(x, ast.Starred) for x in call.args):
            arg = call.args[pos]
        passed = _name(arg) if arg is not None else None
        if passed is not None:
            out += _definitions(mod, passed, call.lineno, steps, depth + 1)
    return out


def _loads(node: ast.AST, skip_funcs: bool) -> list[str]:
    """The names (``x``, ``self.x``) read in ``node``, in reading order; the called objects skipped
    when ``skip_funcs``."""
    funcs = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)} if skip_funcs else set()
    out = []
    for n in ast.walk(node):
        if id(n) in funcs or not isinstance(getattr(n, "ctx", None), ast.Load):
            continue
        got = _name(n)
        if got and got != "self" and got not in out:
            out.append(got)
    return sorted(out, key=lambda g: _first_pos(node, g))


def _first_pos(node: ast.AST, name: str) -> tuple[int, int]:
    best = (1 << 30, 0)
    for n in ast.walk(node):
        if _name(n) == name and isinstance(n, ast.expr):
            best = min(best, (n.lineno, n.col_offset))
    return best


def followed_names(stmt: ast.stmt, which: str, calls: list[ast.Call], value: ast.expr | None) -> list[str]:
    """The names of the failing statement ``which`` asks to follow (``calls``: the statement's calls,
    the failing one first; ``value``: what it assigns, or its header's expression)."""
    if which == "callee":
        return list(dict.fromkeys(n for c in calls if (n := _name(c.func))))
    if which == "args":
        out: list[str] = []
        for c in calls:
            for a in (*c.args, *(k.value for k in c.keywords)):
                out += [n for n in _loads(a, skip_funcs=True) if n not in out]
        return out
    if which == "all":
        return _loads(stmt, skip_funcs=False)
    if which == "value":
        return _loads(value, skip_funcs=True) if value is not None else []
    words = set(which.split(","))
    return [n for n in _loads(stmt, skip_funcs=True) if set(n.rsplit(".", 1)[-1].lower().split("_")) & words]


def _called_function(mod: _Module, value: ast.expr | None):
    """The module-level function of this file that ``value`` calls (``make_params(4, 2)``)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return next((f for f in mod.funcs if f.name == value.func.id and f in mod.tree.body), None)
    return None


def _expand(mod: _Module, name: str, line: int, out: list[int], steps: list[int], depth: int = 0) -> None:
    """Add the lines that defined ``name`` (read at ``line``) to ``out``: its assignments, the
    ``__init__`` of a class of this file it constructs, and what a function of this file it calls
    returns."""
    for d in _definitions(mod, name, line, steps):
        if _one_line(d) and d.lineno not in out:
            out.append(d.lineno)
        value = getattr(d, "value", None)
        cls = _constructed(mod, value)
        if cls is not None:
            out += [n for n in _init_lines(cls) if n not in out]
        fn = _called_function(mod, value)
        if fn is not None and depth < MAX_DEPTH:
            for ret in _own_statements(fn):
                if isinstance(ret, ast.Return) and ret.value is not None:
                    for n in _loads(ret.value, skip_funcs=True):
                        _expand(mod, n, ret.lineno, out, steps, depth + 1)
        if len(out) >= MAX_CANDIDATES:
            return


def candidate_lines(lines: list[str], lineno: int, names: list[str]) -> list[int]:
    """The 1-based lines of the one-line statements that defined ``names`` as read at ``lineno``
    (with the ``__init__`` of a class of this file they construct and the definitions of what a
    function of this file they call returns), in the order to try them."""
    mod = module_of(lines) if names else None
    if mod is None:
        return []
    out: list[int] = []
    steps = [MAX_STEPS]
    for name in names:
        _expand(mod, name, lineno, out, steps)
        if len(out) >= MAX_CANDIDATES:
            break
    return [n for n in out if n != lineno][:MAX_CANDIDATES]


def _capitalised(call: ast.AST) -> bool:
    """A call that constructs an object of a class, as Python code names classes (``nn.Linear(8, 8)``,
    ``Block(dim)``)."""
    if not isinstance(call, ast.Call):
        return False
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return name[:1].isupper()


def holds_objects(lines: list[str], lineno: int) -> bool:
    """Whether the list that line ``lineno`` assigns holds constructed objects: its elements are
    class constructions (``[nn.Linear(8, 8) for _ in range(3)]``), or it starts empty and the same
    function or class appends or extends it only with them (``self.blocks.append(Block(d))``)."""
    mod = module_of(lines)
    stmt = mod.statement_at.get(lineno) if mod is not None else None
    name = _assigned(stmt) if stmt is not None else None
    value = getattr(stmt, "value", None)
    if mod is None or name is None or value is None:
        return False
    if isinstance(value, ast.ListComp):
        return _capitalised(value.elt)
    if not isinstance(value, ast.List):
        return False
    if value.elts:
        return all(_capitalised(e) for e in value.elts)
    scope = mod.class_of(stmt) if name.startswith("self.") else mod.function_at(lineno)
    added: list[ast.AST] = []
    for n in ast.walk(scope if scope is not None else mod.tree):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("append", "extend", "insert")
            and _name(n.func.value) == name
            and n.args
        ):
            arg = n.args[-1]
            if n.func.attr == "extend" and isinstance(arg, (ast.List, ast.Tuple)):
                added += arg.elts
            elif n.func.attr == "extend" and isinstance(arg, (ast.ListComp, ast.GeneratorExp)):
                added.append(arg.elt)
            else:
                added.append(arg)
    return bool(added) and all(_capitalised(a) for a in added)


def module_name(lines: list[str], module: str = "torch.nn") -> str:
    """How the file names ``torch.nn``: ``nn`` where it imports it so, else the full name."""
    short = module.rsplit(".", 1)[-1]
    for line in lines[:MAX_FILE_LINES]:
        text = line.strip()
        if text.startswith(("import ", "from ")) and (
            text == f"import {module} as {short}"
            or (
                text.startswith(f"from {module.rsplit('.', 1)[0]} import")
                and short in text.split("import", 1)[1].replace(",", " ").split()
            )
        ):
            return short
    return module


def definition_texts(lines: list[str], lineno: int, names: list[str], hops: int = 2) -> list[str]:
    """The statements (stripped lines) that defined ``names`` as read at ``lineno``, and those that
    defined the names *they* read or call, ``hops`` deep: where a mask or a size came from
    (``mask = pad[:, None]`` <- ``pad = (ids == 0).long()``; ``x = self.act(self.fc2(x))`` <-
    ``self.fc2 = nn.Linear(64, 32)``)."""
    out: list[int] = []
    todo = [(lineno, names)]
    for _ in range(hops):
        found: list[int] = []
        for at, want in todo:
            found += [n for n in candidate_lines(lines, at, want) if n not in out and n not in found]
        out += found
        mod = module_of(lines) if found else None
        if mod is None:
            break
        todo = []
        for n in found:
            value = getattr(mod.statement_at.get(n), "value", None)
            if isinstance(value, ast.expr):  # the layers it calls too: where the value's shape came from
                todo.append((n, _loads(value, skip_funcs=False)))
    return [lines[n - 1].strip() for n in out]


MAX_CHAIN = 6  # assignments followed back from the failing line to a loop-carried one


def _in_loop(mod: _Module, node: ast.AST | None) -> bool:
    while node is not None:
        node = mod.parent.get(id(node))
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            return True
        if isinstance(node, _SCOPES):
            return False
    return False


def _bound_above(mod: _Module, name: str, line: int) -> list[ast.stmt]:
    """The assignments of ``name`` (a tuple's element too) above ``line`` in its scope."""
    func = mod.function_at(line)
    return [s for s in mod.binds(func if func is not None else mod.tree).get(name, ()) if s.lineno < line]


def carried_state(lines: list[str], lineno: int, names: list[str]) -> tuple[int, str, str] | None:
    """The state a loop carries into the graph of the failing line: ``(line, name, detached)`` for
    the first statement, followed back through the assignments of ``names``, that runs in a loop,
    hands ``name`` to a call and rebinds it (``logits, hidden = model(inp, hidden)``); ``detached`` is that
    state cut from the previous step's graph, as the file's code needs it (an LSTM's state is a
    tuple; a state that starts as ``None`` stays ``None`` on the first step)."""
    mod = module_of(lines) if names else None
    if mod is None:
        return None
    seen: set[int] = set()
    todo = [(lineno, n) for n in names]
    steps = [MAX_STEPS]
    for _ in range(MAX_CHAIN):
        nxt = []
        for at, name in todo:
            for d in _binds_at(mod, name, at, steps):
                if d.lineno in seen:
                    continue
                seen.add(d.lineno)
                value = getattr(d, "value", None)
                if not isinstance(value, ast.expr):
                    continue
                read = _loads(value, skip_funcs=True)
                # a state handed to a call (a model, a cell) and taken back from it; a running
                # sum (total = total + loss) is another cause
                passed = {
                    n
                    for c in ast.walk(value)
                    if isinstance(c, ast.Call)
                    for a in (*c.args, *(k.value for k in c.keywords))
                    for n in _loads(a, skip_funcs=True)
                }
                for state in _binds(d):
                    if state in passed and _in_loop(mod, d) and _one_line(d):
                        return d.lineno, state, _detached(mod, d, state, lines)
                nxt += [(d.lineno, n) for n in read]
        todo = nxt
        if not todo:
            break
    return None


def _binds_at(mod: _Module, name: str, line: int, steps: list[int]) -> list[ast.stmt]:
    """The nearest assignment above ``line`` in its scope that binds ``name`` (a tuple's element too)."""
    steps[0] -= 1
    here = _bound_above(mod, name, line) if steps[0] >= 0 else []
    return [max(here, key=lambda s: s.lineno)] if here else []


def _detached(mod: _Module, stmt: ast.stmt, name: str, lines: list[str]) -> str:
    lstm = any("LSTM(" in ln for ln in lines[:MAX_FILE_LINES])
    cut = f"tuple(s.detach() for s in {name})" if lstm else f"{name}.detach()"
    first = _bound_above(mod, name, stmt.lineno)  # its value when the loop starts
    starts = [getattr(s, "value", None) for s in first]
    starts_none = not first or any(isinstance(v, ast.Constant) and v.value is None for v in starts)
    return f"None if {name} is None else {cut}" if starts_none else cut


def unused_function(lines: list[str], word: str, keyword: str) -> str | None:
    """A module-level function of the file whose name holds ``word`` and that no call passes as
    ``keyword=`` (a ``collate_fn`` written and never given to the ``DataLoader``), else None."""
    mod = module_of(lines)
    if mod is None:
        return None
    passed = {k.value.id for c in mod.calls for k in c.keywords if k.arg == keyword and isinstance(k.value, ast.Name)}
    for f in mod.tree.body:
        if isinstance(f, _FUNCS) and word in f.name.lower() and f.name not in passed:
            return f.name
    return None


def _model_called_here(mod: _Module, lineno: int) -> list[tuple[int, str]]:
    """``[(lineno, name)]`` when the failing statement, outside a loop, calls a name the file binds to
    a constructed object (``model = nn.Sequential(...)``, or a parameter its callers pass one to)."""
    stmt = mod.statement_at.get(lineno)
    if stmt is None or not _one_line(stmt) or _in_loop(mod, stmt) or isinstance(stmt, _SCOPES):
        return []
    steps = [MAX_STEPS]
    for call in ast.walk(stmt):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
            defs = _definitions(mod, call.func.id, lineno, steps)
            if any(isinstance(getattr(d, "value", None), ast.Call) for d in defs):
                return [(lineno, call.func.id)]
    return []


def _may_be_bound(mod: _Module, name: str, line: int) -> bool:
    """Whether the file binds ``name`` where ``line`` reads it: in its function (a parameter too) or
    at module level."""
    func = mod.function_at(line)
    if func is not None and (name in mod.binds(func) or name in _params(func)):
        return True
    return name in mod.binds(mod.tree)


def model_calls(lines: list[str], lineno: int) -> list[tuple[int, str]]:
    """Where the model whose method holds ``lineno`` is called: ``(line, name)`` for each one-line
    statement outside a loop that calls a name bound to an instance of that class (``model =
    ChurnModel()`` ... ``prob = model(customer)``); when ``lineno`` is in no class, the failing line
    itself if it calls such a model. A call in a loop is a training or evaluation loop, where switching
    the model's mode is another change."""
    mod = module_of(lines)
    if mod is None:
        return []
    cls = mod.class_of(mod.function_at(lineno))
    if cls is None:  # the failing line calls the model itself (a model built from torch's layers)
        return _model_called_here(mod, lineno)
    out = []
    steps = [MAX_STEPS]
    for call in mod.calls:
        name = _name(call.func)
        if name is None or name.startswith("self.") or not _may_be_bound(mod, name, call.lineno):
            continue  # print, len, F.relu: nothing of this file names an instance
        if not any(
            _constructed(mod, getattr(d, "value", None)) is cls for d in _definitions(mod, name, call.lineno, steps)
        ):
            continue
        stmt: ast.AST | None = call
        while stmt is not None and not isinstance(stmt, ast.stmt):
            stmt = mod.parent.get(id(stmt))
        if isinstance(stmt, ast.stmt) and _one_line(stmt) and not _in_loop(mod, stmt):
            out.append((stmt.lineno, name))
    return sorted(set(out))
