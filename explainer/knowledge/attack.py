"""Adversarial inputs for regular expressions, and the worst time a regular expression takes on them.

A backtracking engine (Python's ``re``) is slow only on inputs shaped for the expression: long runs of
the characters a quantifier accepts, ended by a character that makes the rest fail; near misses that
match everything but the last literal; many places where a match could start. This module builds
those inputs from the expression itself, so that a test (and ``tbx lint``) can prove every expression
applied to user text stays fast at the input caps, without anyone writing attacks by hand:

* :func:`adversarial_inputs` walks the parsed expression (``re._parser``) and returns inputs of the
  cap's length: runs of each character the expression mentions (literals, a member of each
  character class, whitespace, tabs) and of pairs of them; for each quantifier, a witness of the
  whole expression with that quantifier's part stretched to the cap, then cut before its last
  character or followed by one that cannot match (a near miss); the witness repeated (many starts);
  unclosed brackets and quotes.
* :func:`worst_time` runs ``search``, ``match``, ``fullmatch`` and ``findall`` on each input and
  returns the slowest ``(seconds, input)``. Time is the calling thread's CPU time, not the wall
  clock: what another process does with the machine is not charged to the expression; an input that
  still looks slow is timed three times and its fastest run kept (a cache flushed by a neighbour is
  not a slow expression, while a truly slow input is slow every time).
* :func:`attack_parser_rules` attacks every expression of the parser, the normaliser, the pattern
  compiler, the matcher, the text reader and the reason translator at the cap each is applied at;
  :func:`kb_regexes` lists the compiled knowledge-base patterns and signals the index holds.

Nothing here is needed on the explain path; it is imported by the tests and by ``tbx lint``.
"""

from __future__ import annotations

import re
import time
from re import _constants as _C  # type: ignore[attr-defined]  # private module, present since 3.11; no stub
from re import _parser as _P  # type: ignore[attr-defined]  # private module, present since 3.11; no stub

DEFAULT_CAP = 2000
SLOW_RECHECK = 0.002  # inputs slower than this are timed again (fastest of three runs kept)
MAX_INPUTS = 400

# Characters tried against every class; the expression's own literals are added to them.
_ALPHABET = " \t\n\r\x0b\x0c\u3000aAzZ0919_.,:;-+x*/\\'\"`()[]{}<>|^~#=!?@$%&中，：。\x1b\x07"
_KILLERS = ("\x00", "!", "\n", "a", " ")  # what is appended to a witness to make its tail fail
_MAX_PAIRS = 14  # pairs of the most frequent characters of the expression


def _source(rx) -> tuple[str, int]:
    """(pattern source, flags) of a compiled pattern, a lazily compiled one, or a source string."""
    if isinstance(rx, str):
        return rx, 0
    if isinstance(rx, bytes):
        raise TypeError("bytes patterns are not attacked")
    return rx.pattern, rx.flags


def _compiled(rx) -> re.Pattern:
    if isinstance(rx, re.Pattern):
        return rx
    src, flags = _source(rx)
    return re.compile(src, flags & ~re.UNICODE)


# --- reading the parsed expression ---------------------------------------------------------------


def _category_has(cat, ch: str) -> bool:
    if cat in (_C.CATEGORY_DIGIT, _C.CATEGORY_UNI_DIGIT):
        return ch.isdecimal()
    if cat in (_C.CATEGORY_NOT_DIGIT, _C.CATEGORY_UNI_NOT_DIGIT):
        return not ch.isdecimal()
    if cat in (_C.CATEGORY_SPACE, _C.CATEGORY_UNI_SPACE):
        return ch.isspace()
    if cat in (_C.CATEGORY_NOT_SPACE, _C.CATEGORY_UNI_NOT_SPACE):
        return not ch.isspace()
    if cat in (_C.CATEGORY_WORD, _C.CATEGORY_UNI_WORD):
        return ch.isalnum() or ch == "_"
    if cat in (_C.CATEGORY_NOT_WORD, _C.CATEGORY_UNI_NOT_WORD):
        return not (ch.isalnum() or ch == "_")
    return False


def _in_class(items, ch: str, ignore_case: bool) -> bool:
    """Whether ``ch`` belongs to an ``IN`` node's items (``re._parser`` representation)."""
    negate = False
    found = False
    variants = {ch, ch.lower(), ch.upper()} if ignore_case else {ch}
    for op, av in items:
        if op is _C.NEGATE:
            negate = True
        elif op is _C.LITERAL:
            found = found or any(ord(v) == av for v in variants)
        elif op is _C.RANGE:
            found = found or any(av[0] <= ord(v) <= av[1] for v in variants)
        elif op is _C.CATEGORY:
            found = found or _category_has(av, ch)
    return found != negate


def _chars_of(op, av, alphabet: str, ignore_case: bool) -> list[str]:
    """Characters a single-character node accepts, among ``alphabet``."""
    if op is _C.LITERAL:
        return [chr(av)]
    if op is _C.NOT_LITERAL:
        return [c for c in alphabet if ord(c) != av]
    if op is _C.ANY:
        return [c for c in alphabet if c != "\n"]
    if op is _C.IN:
        return [c for c in alphabet if _in_class(av, c, ignore_case)]
    return []


class _Walker:
    """Collects the characters an expression mentions and builds witnesses of it."""

    def __init__(self, tree, ignore_case: bool) -> None:
        self.ignore_case = ignore_case
        self.literals: list[str] = []
        self.repeats: list[object] = []  # the repeat nodes, in order
        self._collect(tree)
        extra = "".join(dict.fromkeys(c for c in self.literals if c not in _ALPHABET))
        self.alphabet = _ALPHABET + extra
        self.class_chars: list[str] = []
        self._collect_classes(tree)

    def _collect(self, tree) -> None:
        for op, av in tree:
            if op is _C.LITERAL:
                self.literals.append(chr(av))
            elif op in (_C.MAX_REPEAT, _C.MIN_REPEAT, _C.POSSESSIVE_REPEAT):
                self.repeats.append(av)
            for sub in _subtrees(op, av):
                self._collect(sub)

    def _collect_classes(self, tree) -> None:
        for op, av in tree:
            if op in (_C.IN, _C.NOT_LITERAL, _C.ANY):
                chars = _chars_of(op, av, self.alphabet, self.ignore_case)
                # a few members: the first, a space if accepted, a tab if accepted
                for c in chars[:2] + [c for c in chars if c in " \t\n"]:
                    if c not in self.class_chars:
                        self.class_chars.append(c)
            for sub in _subtrees(op, av):
                self._collect_classes(sub)

    def witness(self, tree, stretch=None, run: int = 0) -> str:
        """A short string the expression (ignoring look-arounds and anchors) accepts; the repeat node
        ``stretch`` repeats its body until it covers ``run`` characters."""
        out: list[str] = []
        for op, av in tree:
            if op in (_C.LITERAL, _C.NOT_LITERAL, _C.ANY, _C.IN):
                chars = _chars_of(op, av, self.alphabet, self.ignore_case)
                out.append(chars[0] if chars else "")
            elif op in (_C.MAX_REPEAT, _C.MIN_REPEAT, _C.POSSESSIVE_REPEAT):
                lo, hi, body = av
                piece = self.witness(body, stretch, run)
                if av is stretch and piece:
                    n = max(lo, min(hi, run // len(piece) + 1))
                    out.append(piece * n)
                else:
                    out.append(piece * lo)
            elif op is _C.BRANCH:
                out.append(self.witness(av[1][0], stretch, run))
            elif op is _C.SUBPATTERN:
                out.append(self.witness(av[3], stretch, run))
            elif op is _C.ATOMIC_GROUP:
                out.append(self.witness(av, stretch, run))
            # AT, ASSERT, ASSERT_NOT, GROUPREF: nothing
        return "".join(out)

    def opening(self, tree) -> str:
        """The literal text the expression starts with (a whitespace run as one space)."""
        out = []
        for op, av in tree:
            if op is _C.LITERAL:
                out.append(chr(av))
            elif (
                op in (_C.MAX_REPEAT, _C.POSSESSIVE_REPEAT)
                and av[0] >= 1
                and len(av[2]) == 1
                and av[2][0][0] is _C.IN
                and _in_class(av[2][0][1], " ", False)
                and not _in_class(av[2][0][1], "a", False)
            ):
                out.append(" ")
            elif op is _C.AT:
                continue
            else:
                break
        return "".join(out)

    def branch_witnesses(self, tree) -> list[str]:
        """One witness per alternative of each top-level alternation (each one is a way in)."""
        out = []
        for op, av in tree:
            if op is _C.BRANCH:
                out += [self.witness(b) for b in av[1]]
            elif op is _C.SUBPATTERN:
                out += self.branch_witnesses(av[3])
        return out


# --- the inputs -----------------------------------------------------------------------------------


def _subtrees(op, av) -> list:
    """The sub-expressions of one node of a parsed expression (repeats, branches, groups, look-arounds)."""
    if op in (_C.MAX_REPEAT, _C.MIN_REPEAT, _C.POSSESSIVE_REPEAT):
        return [av[2]]
    if op is _C.BRANCH:
        return list(av[1])
    if op is _C.SUBPATTERN:
        return [av[3]]
    if op is _C.ATOMIC_GROUP:
        return [av]
    if op in (_C.ASSERT, _C.ASSERT_NOT):
        return [av[1]]
    if op is _C.GROUPREF_EXISTS:
        return [av[1]] + ([av[2]] if av[2] is not None else [])
    return []


def _fit(s: str, cap: int) -> str:
    return s[:cap]


def _runs(seed: str, cap: int) -> str:
    return _fit(seed * (cap // max(1, len(seed)) + 1), cap) if seed else ""


def adversarial_inputs(rx, cap: int = DEFAULT_CAP, limit: int = MAX_INPUTS) -> list[str]:
    """Inputs of at most ``cap`` characters shaped to make ``rx`` backtrack (see the module doc), the
    most telling first (witnesses and near misses, the opening followed by runs, runs, pairs), at
    most ``limit`` of them."""
    src, flags = _source(rx)
    ignore_case = bool(flags & re.IGNORECASE)
    tree = _P.parse(src, flags & ~re.UNICODE)
    w = _Walker(tree, ignore_case)
    out: list[str] = []

    def add(s: str) -> None:
        if s:
            out.append(_fit(s, cap))

    # witnesses: the whole expression with one quantifier stretched, then broken at the end
    base = w.witness(tree)
    witnesses = [base] + [w.witness(tree, node, cap) for node in w.repeats] + w.branch_witnesses(tree)
    for wit in dict.fromkeys(witnesses):
        if not wit:
            continue
        add(wit[: cap - 1] + "\x00")  # a character that cannot match ends it
        add(wit[:-1])  # a near miss: everything but the last character
        add(_runs(wit[:-1] or wit, cap))  # many near misses, many starts
        if len(wit) < cap:
            # the witness followed by a run of its last character, of spaces, then one that fails
            for c in dict.fromkeys(wit[-1:] + " "):
                add(wit + _runs(c, cap - len(wit) - 1) + "\x00")
    for wit in dict.fromkeys(witnesses):
        for k in _KILLERS:
            add(wit[: cap - 1] + k)
        add(wit)
        add(_runs(wit, cap))
        if len(wit) < cap:
            add(wit + _runs("\t", cap - len(wit) - 1) + "\x00")
    # the literal opening of the expression followed by runs (a placeholder's territory)
    opening = w.opening(tree)
    for c in (" ", "\t", "a", "0", "\n", ",", "x"):
        add(opening + _runs(c, cap))
        add(opening + " " + _runs(c + " ", cap))
    # unclosed brackets and quotes
    for open_, item in (
        ("(", "0, "),
        ("(", "0x"),
        ("[", "0, "),
        ("(", " 0 ,"),
        ("'", "a"),
        ('"', "a"),
        ("`", "a"),
        ("{", "a"),
        ("<", "a"),
    ):
        add(open_ + _runs(item, cap))
        add(_runs(open_ + item, cap))
    # runs of what the expression talks about: its literal characters, members of its classes,
    # whitespace; then of pairs of them
    freq: dict[str, int] = {}
    for c in w.literals + w.class_chars:
        freq[c] = freq.get(c, 0) + 1
    chars = list(dict.fromkeys([" ", "\t", "\n", *sorted(freq, key=lambda c: -freq[c]), "a", "0"]))
    for c in chars:
        add(_runs(c, cap))
        add(_runs(c, cap - 1) + "\x00")
    for seed in (" \t", "\t ", " \n", "a ", "0 ", "0, ", "0x", "0 x ", "a.", "a:", "a::", ". ", "\t\n"):
        add(_runs(seed, cap))
    top = chars[:_MAX_PAIRS]
    for i, a in enumerate(top):
        for b in top[i + 1 :]:
            add(_runs(a + b, cap))
    return list(dict.fromkeys(out))[:limit]


# --- a static check: repeats inside repeats -------------------------------------------------------


def _repeat_nodes():
    return {_C.MAX_REPEAT, _C.MIN_REPEAT}


def nested_repeat(rx) -> str | None:
    """The first repeat of ``rx`` that holds another repeat of variable length with more than one
    way to split a run between them (``(?:\\S+\\s*)+``, ``(a|aa)*``, ``(\\w+)*``), or None. Such an
    expression can take exponential time on a near miss whatever the input's length; a possessive
    inner repeat (``\\S++``) or an atomic group makes each split final and is not reported. Read
    from the parsed expression, without running it: ``tbx lint`` reports what ``--attack`` might not
    finish timing."""
    src, flags = _source(rx)
    try:
        tree = _P.parse(src, flags)
    except re.error:
        return None

    alphabet = _ALPHABET
    ignore_case = bool(flags & re.IGNORECASE)

    def chars(items) -> set[str]:
        """The characters a sequence of nodes may consume (over the alphabet; everything when unsure)."""
        out: set[str] = set()
        for op, av in items:
            if op in (_C.LITERAL, _C.NOT_LITERAL, _C.ANY, _C.IN):
                out.update(_chars_of(op, av, alphabet, ignore_case))
            elif op in _repeat_nodes() or op is _C.POSSESSIVE_REPEAT:
                out |= chars(av[2])
            elif op in (_C.SUBPATTERN, _C.ATOMIC_GROUP):
                out |= chars(av[-1] if op is _C.SUBPATTERN else av)
            elif op is _C.BRANCH:
                for br in av[1]:
                    out |= chars(br)
            elif op in (_C.AT, _C.ASSERT, _C.ASSERT_NOT):
                continue
            else:
                return set(alphabet)
        return out

    def variable(items) -> list:
        """The repeats of variable length a run could be split between, at this level or below."""
        found = []
        for op, av in items:
            if op in _repeat_nodes():
                lo, hi, sub = av
                if hi != lo and (hi is _C.MAXREPEAT or hi > 1):
                    found.append(sub)
                found += variable(sub)
            elif op is _C.SUBPATTERN:
                found += variable(av[-1])
            elif op is _C.BRANCH:
                if _overlapping_branches(av[1]):
                    found.append([(op, av)])
                for br in av[1]:
                    found += variable(br)
            # POSSESSIVE_REPEAT and ATOMIC_GROUP commit to one split: nothing to backtrack into
        return found

    def inner_variable(body) -> bool:
        """Whether a repeated body can split one run of characters more than one way: it holds a
        variable repeat and no mandatory character that the repeat cannot consume (``\\.`` in
        ``(?:\\.\\d+)*`` ends each round at one place)."""
        inner = variable(body)
        if not inner:
            return False
        taken: set[str] = set()
        for sub in inner:
            taken |= chars(sub)
        return not delimited(body, taken)

    def delimited(body, taken: set[str]) -> bool:
        """Whether ``body`` has a mandatory character (a literal, a class, a group of them, or
        alternatives each opening with one) that none of ``taken`` is."""
        for op, av in body:
            if op in (_C.LITERAL, _C.NOT_LITERAL, _C.ANY, _C.IN):
                if taken.isdisjoint(_chars_of(op, av, alphabet, ignore_case)):
                    return True
            elif op is _C.SUBPATTERN:
                if delimited(av[-1], taken):
                    return True
            elif op is _C.BRANCH:
                if all(br and delimited(br[:1], taken) for br in av[1]):
                    return True
        return False

    def walk(items) -> str | None:
        for op, av in items:
            if op in _repeat_nodes():
                lo, hi, sub = av
                if (hi is _C.MAXREPEAT or hi > 1) and inner_variable(sub):
                    return _text(src, sub)
                found = walk(sub)
                if found:
                    return found
            elif op is _C.SUBPATTERN:
                found = walk(av[-1])
                if found:
                    return found
            elif op is _C.BRANCH:
                for b in av[1]:
                    found = walk(b)
                    if found:
                        return found
            elif op in (_C.ATOMIC_GROUP, _C.POSSESSIVE_REPEAT):
                continue  # committed: its insides backtrack only within one attempt
            elif op in (_C.ASSERT, _C.ASSERT_NOT):
                found = walk(av[1])
                if found:
                    return found
        return None

    return walk(tree)


def _overlapping_branches(branches) -> bool:
    """Whether two alternatives of a repeated group can start with the same character (``a|aa``)."""
    firsts: list[set] = []
    for b in branches:
        if not b:
            return True  # an empty alternative: a repeat of it can split a run anywhere
        op, av = b[0]
        if op is _C.LITERAL:
            first = {av}
        else:
            return True  # a class or a group: assume it may overlap (the check is conservative)
        if any(first & f for f in firsts):
            return True
        firsts.append(first)
    return False


def _text(src: str, _sub) -> str:
    return src[:80]


# --- timing ---------------------------------------------------------------------------------------


def _time_once(fn, s: str) -> float:
    t0 = time.thread_time()  # CPU time of this thread: a loaded machine does not inflate it
    fn(s)
    return time.thread_time() - t0


def _timed(fn, s: str) -> float:
    t = _time_once(fn, s)
    if t > SLOW_RECHECK:
        t = min(t, _time_once(fn, s), _time_once(fn, s))
    return t


OPS = ("search", "match", "fullmatch", "findall")


def _op(c: re.Pattern, op: str):
    if op == "sub":
        return lambda s: c.sub("", s)
    return getattr(c, op)


def worst_time(rx, inputs, ops=OPS) -> tuple[float, str]:
    """The slowest ``(seconds, input)`` of ``rx`` over ``inputs``, each op (``search``, ``match``,
    ``fullmatch``, ``findall``, ``sub``) timed on its own."""
    c = _compiled(rx)
    fns = [_op(c, op) for op in ops]
    worst, worst_input = 0.0, ""
    for s in inputs:
        for fn in fns:
            t = _timed(fn, s)
            if t > worst:
                worst, worst_input = t, s
    return worst, worst_input


def attack(rx, cap: int = DEFAULT_CAP, ops=OPS) -> tuple[float, str]:
    """:func:`worst_time` of ``rx`` on its own :func:`adversarial_inputs`."""
    return worst_time(rx, adversarial_inputs(rx, cap), ops)


EXPRESSION_TIMEOUT_S = 20.0  # one expression's whole attack; past it the expression fails


def _attack_worker(conn, jobs, inputs: int) -> None:
    for i, (rx, ops, cap) in jobs:
        t, s = worst_time(rx, adversarial_inputs(rx, cap, limit=inputs), ops)
        conn.send((i, t, s[:200]))
    conn.send(None)


def bounded_attacks(jobs: list[tuple], inputs: int, timeout: float = EXPRESSION_TIMEOUT_S) -> dict[int, tuple]:
    """``{i: (seconds, input)}`` for each ``(rx, ops, cap)`` of ``jobs``, timed in a child process;
    an expression whose attack does not end within ``timeout`` gets ``(inf, "")`` and the child is
    replaced for the rest (Python's ``re`` cannot be interrupted, so a catastrophic expression would
    otherwise hang ``tbx lint --attack``)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    pending = list(enumerate(jobs))
    results: dict[int, tuple] = {}
    while pending:
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(  # type: ignore[attr-defined]
            target=_attack_worker, args=(child, pending, inputs), daemon=True
        )
        proc.start()
        child.close()
        try:
            while pending:
                if not parent.poll(timeout):
                    i = pending.pop(0)[0]
                    results[i] = (float("inf"), "")  # this one did not end: the rest in a new child
                    break
                msg = parent.recv()
                if msg is None:
                    pending = []
                    break
                i, t, sample = msg
                results[i] = (t, sample)
                pending = [p for p in pending if p[0] != i]
        except EOFError:  # the child died on an expression: that one fails, the rest go on
            if pending:
                results[pending.pop(0)[0]] = (float("inf"), "")
        finally:
            if proc.is_alive():
                proc.kill()
            proc.join()
            parent.close()
    return results


# --- what the explainer applies to user text ----------------------------------------------------


def parser_rules() -> list[tuple[str, object, int, tuple]]:
    """(name, expression, cap, ops) for every expression the parser, the normaliser, the matcher, the
    text reader and the reason translator apply to user text, at the length cap each one sees. The
    expressions applied to a whole paste (``MAX_CHARS``) are timed with the operation the code uses
    on them; the per-line and per-message ones with all of :data:`OPS`."""
    from explainer import i18n, normalize, patterns, textio
    from explainer.advise import evidence
    from explainer.match import longtail, matcher
    from explainer.parse import assemble, clean, decode, grammar, rules, scan, state

    def is_rx(v) -> bool:  # bytes patterns read wheels' binaries when the long tail is built, never user text
        return isinstance(v, textio.Lazy) or (isinstance(v, re.Pattern) and isinstance(v.pattern, str))

    out: list[tuple[str, object, int, tuple]] = []
    seen: set[int] = set()
    caps = {
        # every per-line expression of the parser sees lines cut at MAX_LINE
        **{m: state.MAX_LINE for m in (state, decode, clean, grammar, rules, scan, assemble)},
        normalize: matcher.MAX_REGEX_INPUT,
        patterns: matcher.MAX_REGEX_INPUT,
        matcher: matcher.MAX_REGEX_INPUT,
        textio: state.MAX_LINE,
        i18n: 2000,
        # a message as the long tail reads it (its suffixes searched in 16 000 characters)
        longtail: longtail.MAX_MESSAGE * 4,
        evidence: evidence.MAX_TEXT,
    }
    # every other module of the package, found by walking it: its expressions at a line's cap, or
    # those of the tooling that reads the project's own files (kb entries and their rewrite
    # operations, torch's sources when the long tail is built) at the length of such a line
    from explainer.advise import rewrite

    caps[rewrite] = OWN_LINE
    # (a module above this one declares the cap its expressions see as REGEX_CAP)
    for mod in _package_modules():
        default = OWN_LINE if mod.__name__.startswith("explainer.knowledge.") else state.MAX_LINE
        caps.setdefault(mod, getattr(mod, "REGEX_CAP", default))
    # applied to the whole paste (cut at MAX_CHARS), not to one line, with the operation used on them
    whole_text = {
        (decode, "_JSON_STRING"): ("findall",),
        (decode, "_TB_KEY"): ("search",),
        (textio, "_CONTROL"): ("sub",),
        (textio, "_HAS_CONTROL"): ("search",),
    }
    # applied to each line of a paste of a few lines, before it is split back into lines (MAX_FLAT_LINE)
    flat_line = {
        "_FENCE": ("match",),
        "_RICH_EDGE": ("match",),
        "_GROUP_SEP": ("match",),
        "_GROUP_BAR": ("sub",),
        "_ANY_PREFIX": ("match",),
        "_DISTRIBUTED": ("match",),
        "_REFLOW": ("findall", "split"),
        "_FRAME_INLINE": ("match",),
        "_FINAL_IN_FLAT": ("search", "findall"),  # (findall: the work finditer does)
        "_IPY_SPLIT": ("split",),
        "_IPY_HEADER": ("match",),
    }
    for name, ops in flat_line.items():
        rx = next(getattr(m, name) for m in (state, decode, clean, grammar, rules, scan, assemble) if hasattr(m, name))
        out.append((f"parser.{name}@flat", rx, state.MAX_FLAT_LINE, ops))
    for mod, cap in caps.items():
        for name, v in sorted(vars(mod).items()):
            items = []
            if is_rx(v):
                items = [(name, v)]
            elif isinstance(v, (list, tuple, dict)):
                for i, it in v.items() if isinstance(v, dict) else enumerate(v):
                    if is_rx(it):
                        items.append((f"{name}[{i}]", it))
                    elif isinstance(it, (tuple, list)):
                        items += [(f"{name}[{i}]", x) for x in it if is_rx(x)]
            for label, rx in items:
                key = id(rx)
                if key in seen:
                    continue
                seen.add(key)
                whole = whole_text.get((mod, name))
                out.append(
                    (f"{mod.__name__.rsplit('.', 1)[-1]}.{label}", rx, state.MAX_CHARS if whole else cap, whole or OPS)
                )
    return out


OWN_LINE = 300  # a line of the project's own files: a kb entry, a rewrite operation, a source line of torch


def _package_modules() -> list:
    """Every module of the ``explainer`` package, imported (the HTTP API's only where FastAPI is)."""
    import importlib
    import pkgutil

    import explainer

    mods = []
    for info in pkgutil.walk_packages(explainer.__path__, "explainer."):
        if info.name in ("explainer.__main__",):
            continue  # running it is the CLI
        try:
            mods.append(importlib.import_module(info.name))
        except ImportError:  # an optional extra (fastapi for explainer.api) not installed
            continue
    return mods


def attack_parser_rules() -> list[tuple[str, float, str, int]]:
    """(name, worst seconds, worst input, cap) for every expression of :func:`parser_rules`, slowest
    first."""
    results = []
    for name, rx, cap, ops in parser_rules():
        t, s = attack(rx, cap, ops)
        results.append((name, t, s, cap))
    return sorted(results, key=lambda r: -r[1])


def kb_regexes(index) -> list[tuple[str, re.Pattern, tuple]]:
    """(label, compiled expression, ops) for every pattern, pattern opening and signal the index
    holds, compiled as the matcher compiles them, with the operations the matcher applies to each:
    a pattern is full-matched and matched at the start, and (its search variant) searched when it
    opens with literal text; an opening is matched at the start; a signal is searched."""
    out: list[tuple[str, re.Pattern, tuple]] = []
    for p in index.matcher.patterns:
        out.append((f"{p.entry_id}:pattern[{p.idx}]", p.rx, ("fullmatch", "match")))
        if p.literal_start:
            out.append((f"{p.entry_id}:pattern[{p.idx}].search", p.rx_search, ("search",)))
        if p.head is not None:
            out.append((f"{p.entry_id}:pattern[{p.idx}].head", p.head, ("match",)))
    for i, (eid, rx, _lit) in enumerate(index.matcher.signal_rx):
        out.append((f"{eid}:signal[{i}]", _compiled(rx), ("search",)))
    return out
