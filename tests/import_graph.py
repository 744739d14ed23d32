"""The package's import graph, read with ``ast`` (function-level imports included): data must flow one
way, paste -> parse -> match -> advise -> render -> knowledge tooling -> surfaces.

    python tests/import_graph.py [--edges]

Prints the modules, the edges, the longest chain of imports, any cycle and any edge that points up
the pipeline (a module importing one of a later stage), and exits 1 on a cycle or an upward edge.
``tests/test_layout.py`` runs it, so CI does.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# each module's stage, by its package (or its name at the top of the package); lower may not import higher
STAGES = {
    "base": 0,  # model, textio, budget, i18n, normalize, patterns, source, paths, _version
    "parse": 1,
    "match": 2,
    "advise": 3,
    "render": 4,
    "knowledge": 5,
    "surfaces": 6,
    "api": 6,
    "face": 7,  # the package's own __init__ and __main__
}
TOP = {"render": "render", "_worker": "knowledge", "__init__": "face", "__main__": "face"}
MAX_LINES = 800


def modules() -> dict[str, Path]:
    out = {}
    for base, prefix in ((ROOT / "explainer", "explainer"), (ROOT / "api", "explainer.api")):
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__" and len(parts) > 1:
                parts = parts[:-1]
            elif parts == ["__init__"]:
                parts = []
            out[".".join([prefix, *parts])] = path
    return out


def stage(name: str) -> str:
    rest = name.split(".")[1:]
    if not rest:
        return "face"
    if rest[0] == "api":
        return "api"
    if rest[0] in STAGES and len(rest) >= 1 and rest[0] not in ("base", "render", "face"):
        return rest[0]
    return TOP.get(rest[0], "base")


def edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        package = name if is_pkg else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(parts + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                candidates = [f"{target}.{a.name}" for a in node.names] + [target]
            elif isinstance(node, ast.Import):
                candidates = [a.name for a in node.names]
            else:
                continue
            for c in candidates:
                # the module itself, or the package whose name it starts with
                while c and c not in mods:
                    c = c.rpartition(".")[0]
                if c and c != name and not (c == "explainer" and stage(name) != "face"):
                    out[name].add(c)
                    break
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            visit(v)
    return found


def upward(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, targets in graph.items() for b in targets if STAGES[stage(b)] > STAGES[stage(a)])


def depth(graph: dict[str, set[str]]) -> int:
    memo: dict[str, int] = {}

    def d(v: str, seen: frozenset) -> int:
        if v in memo:
            return memo[v]
        r = 1 + max((d(w, seen | {v}) for w in graph[v] if w not in seen), default=0)
        memo[v] = r
        return r

    return max(d(v, frozenset()) for v in graph)


def long_modules(mods: dict[str, Path]) -> list[tuple[str, int]]:
    sizes = [(name, len(path.read_text(encoding="utf-8").splitlines())) for name, path in mods.items()]
    return sorted((s for s in sizes if s[1] > MAX_LINES), key=lambda s: -s[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edges", action="store_true", help="list every edge")
    args = ap.parse_args()
    mods = modules()
    graph = edges(mods)
    n_edges = sum(len(t) for t in graph.values())
    cyc, up, long = cycles(graph), upward(graph), long_modules(mods)
    print(f"{len(mods)} modules, {n_edges} import edges, longest chain {depth(graph)} modules")
    if args.edges:
        for a in sorted(graph):
            print(f"  {a} [{stage(a)}] -> {', '.join(sorted(graph[a]))}")
    for c in cyc:
        print("cycle:", " <-> ".join(c))
    for a, b in up:
        print(f"upward: {a} [{stage(a)}] imports {b} [{stage(b)}]")
    for name, n in long:
        print(f"long: {name} has {n} lines (over {MAX_LINES})")
    return 1 if cyc or up else 0


if __name__ == "__main__":
    raise SystemExit(main())
