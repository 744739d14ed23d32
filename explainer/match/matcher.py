"""Rank knowledge-base entries for a parsed paste, or abstain.

Tiers, each adding to one :class:`Evidence` record per entry, then :func:`rank` (all steps read in
order in :meth:`Matcher.match`: messages, ties on a shared opening, frames and signals, near-twins,
wrappers, rank):

1. *template*: a pattern's regular expression matches the message (fully, at its start, or inside
   it), with named captures;
2. *fuzzy*: rapidfuzz similarity of the normalised message against every pattern that shares
   content words with it (an inverted index keeps this sub-linear in the number of entries),
   restricted to compatible exception types;
3. *frames*: telling torch frames of the entry found in the paste;
4. *signals*: the paste's other evidence: signal lines (NCCL, CUDA assertions, ``Bus error``), and
   the other exceptions of the paste (a chain's cause, a worker's original error, other ranks).

Every message the paste offers (the final one, the chain, the others, the fallback lines) is a
*source* with a weight; an entry's score is its best evidence over the sources, adjusted by the
exception type, frames and signals; every value is a named constant below. Reasons are
:class:`~explainer.i18n.Reason` codes with parameters, rendered in each language. Scores are
confidences: see ``calibrate`` in :mod:`explainer.knowledge.evaluate` and the README for how they were
checked. Tie-break: higher score, then lower tier number, then the entry that matched the final
exception, then the order found (never the id).

Bounded time: every regular expression runs on at most ``MAX_REGEX_INPUT`` characters (templates on
the message's start, signals on its first and last ``MAX_REGEX_INPUT`` characters) and is linear
(:mod:`explainer.patterns`, :mod:`explainer.knowledge.attack`); with a :class:`~explainer.budget.Budget`, the
matcher looks at the deadline between sources, candidate patterns, fuzzy comparisons and signal
expressions, and stops with what it has once the deadline has passed.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from operator import itemgetter

from explainer.i18n import TEXTS, Reason
from explainer.model import Candidate, Parsed
from explainer.normalize import normalize, quoted_tokens, tokens
from explainer.patterns import pattern_features
from explainer.textio import Lazy

# the reasons without parameters, made once (a Reason is immutable)
_R_FULL, _R_START, _R_INSIDE, _R_OPENING, _R_CUT, _R_OPENING_DIFFERS = (
    Reason(code) for code in ("full", "start", "inside", "opening", "cut", "opening_differs")
)

# -- every score the matcher gives, in one place (the README's "Matching and its confidence") --------
_PLACEHOLDER = Lazy(r"\{[^{}]{0,80}\}")  # a template's placeholder, in its raw text (not user text)
THRESHOLD = 0.5  # below this the matcher abstains
AMBIGUOUS_GAP = 0.06  # two candidates this close on a thin paste: say so
FULL_MATCH = 0.98  # a template matches the whole message (or its first line)
START_MATCH = 0.95  # a template matches the start of the message
INSIDE_MATCH = 0.90  # a template found inside the message
CUT_MATCH = 0.86  # the message is the beginning of a template: the paste was cut
FUZZY_MAX, FUZZY_MID, FUZZY_SLOPE = 0.93, 0.74, 16  # similarity s -> FUZZY_MAX * sigmoid(SLOPE * (s - MID))
FUZZY_FLOOR = 0.05  # a fuzzy score below this is no evidence
TYPE_MISSING = 0.96  # the paste shows no exception type
TYPE_MISMATCH = 0.75  # the type is not one of the entry's (templates only; fuzzy evidence is dropped)
SOURCE_OTHER = 0.85  # a message from a part of the paste SOURCE_WEIGHT does not name
FRAME_GAIN = 0.35  # a telling frame closes this share of the gap to 1
FRAME_ONLY = 0.42  # a telling frame alone, no message matched
FRAME_BARE = 0.72  # a telling frame and one of the entry's types, printed without a message ("NotImplementedError")
SIGNAL_GAIN = 0.5  # a signal line closes this share of the gap to 1
SIGNAL_ONLY = 0.62  # a signal line alone
UNLESS_CAP = 0.45  # an entry whose `unless` signal the paste has: among the nearest, not an answer
TIE_MARGIN = 0.01  # entries tied on a shared opening stay this far above the threshold
# similarity: rapidfuzz's ratio, unless under SIMILAR_ENOUGH, then the better of it and the token-sorted
# (x TOKEN_SORT_WEIGHT) and, for a message much longer than the pattern, the partial ratio (x PARTIAL_WEIGHT)
SIMILAR_ENOUGH, TOKEN_SORT_WEIGHT, PARTIAL_WEIGHT = 0.9, 0.95, 0.97
MAX_CANDIDATE_PATTERNS = 24
MAX_WHOLE_EXTRA = 16  # templates all of whose words the message holds, tried beyond those
_DEVICES = frozenset({"cuda", "mps", "xpu", "hip", "hpu", "npu", "xla", "rocm"})  # backends a message can name
_DEVICE_WORD = Lazy(r"\b(?:" + "|".join(sorted(_DEVICES)) + r")\b")  # (on lower-cased text)
OPENING_BASE, OPENING_SPAN = 0.80, 0.08  # a message that only follows a template's opening: 0.80 to 0.88
# ... and then goes on with other words while another template matched all of it: not "also possible"
OPENING_CONTRADICTED = 0.4
MIN_TRIED = 4  # candidate patterns tried even past the deadline: each is linear over a capped input
MAX_FUZZY_CHARS = 400  # a message's identifying words come first
MIN_WORD_SHARE = 0.34
MIN_CUT_CHARS = 24  # a cut message must keep this much of the template to count as its beginning
MIN_FUZZY_TOKENS = 4
MAX_REGEX_INPUT = 2000  # lazy placeholders make a failed match cost grow with the input: keep it short
WRAPPER_PENALTY = 0.55

SOURCE_WEIGHT = {
    "final": 1.0,
    "cause": 0.97,
    "context": 0.9,
    "worker": 0.96,
    "group": 0.95,
    "other": 0.88,
    "line": 0.86,
    "alt": 0.86,  # a line the parser might have taken for the message
}


_WORDS_AFTER = Lazy(r"[A-Za-z\u4e00-\u9fff]{3}")  # the message goes on past an opening
_TYPE_SEP = Lazy(r"\.|::")
_PATH_SEP = Lazy(r"[\\/]")


def _type_key(t: str | None) -> str | None:
    if not t:
        return None
    return _TYPE_SEP.split(t)[-1].lower()


def _file_ends(frame, *parts: str) -> bool:
    """Whether a frame's file ends with these path parts (any separators)."""
    return [p for p in _PATH_SEP.split(frame.file or "") if p][-len(parts) :] == list(parts)


def _spawn_frame(parsed: Parsed):
    """The frame of multiprocessing's ``spawn_main``/``_main``: the traceback is a spawned child's."""
    return next(
        (
            f
            for f in parsed.frames
            if f.function in ("_main", "spawn_main") and _file_ends(f, "multiprocessing", "spawn.py")
        ),
        None,
    )


def _spawned_child_eof(parsed: Parsed) -> bool:
    return bool(parsed.exc_type and parsed.exc_type.endswith("EOFError")) and _spawn_frame(parsed) is not None


def _backends_named(folded: str) -> set[str]:
    """The backends a lower-cased text names as words (the expression only where one is in it)."""
    if not any(d in folded for d in _DEVICES):
        return set()
    return set(_DEVICE_WORD.findall(folded))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def signal_literals(entry: dict) -> list[str]:
    """Of each signal of the entry, the text every match contains (the index stores them)."""
    stored = entry.get("signal_literals")
    return stored if stored is not None else [_required_literal(s) for s in entry.get("signals", [])]


def _required_literal(regex: str) -> str:
    """A lower-case piece of text every match of ``regex`` contains ('' when there is none to tell).
    A group holding an alternation requires nothing of its own; an alternation outside any group
    leaves no single piece required."""
    # innermost groups with an alternation, repeatedly: "config\.(recompile_limit|cache_size_limit)"
    prev = None
    while prev != regex:
        prev, regex = regex, re.sub(r"\((?:[^()\\]|\\.)*(?<!\\)\|(?:[^()\\]|\\.)*\)", "\0", regex)
    if re.search(r"(?<!\\)\|", regex):
        return ""  # an alternation at the top: no single piece is required
    plain = re.sub(r"\\(.)", lambda m: m.group(1) if not m.group(1).isalnum() else "\0", regex)
    # (Chinese text and U+FFFD count too: a signal written in them is looked for only where they are)
    runs = re.findall(
        r"[A-Za-z0-9 _:,'=/\u4e00-\u9fff\uff01-\uff5e\u3001\u3002\ufffd-]{4,}",
        re.sub(r"\[[^\]]*\]|\([?][^)]*\)|.[*?{]", "\0", plain),
    )
    return max(runs, key=len).lower() if runs else ""


def _branch_literals(regex: str) -> list[str]:
    """For an expression that is an alternation at its top (``a|b|c``), a piece of text every match
    of each branch contains; [] unless every branch has one (a match then contains one of them)."""
    branches, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            branches.append(regex[start:i])
            start = i + 1
        i += 1
    branches.append(regex[start:])
    if len(branches) < 2 or regex.startswith("(?"):  # (inline flags apply to every branch: not split)
        return []
    lits = [_required_literal(b) for b in branches]
    return lits if all(lits) else []


_NUMBER_SLOT = Lazy(r"\{[^{}\n]{0,80}\}|\b\d+\b")
_NUMBER = Lazy(r"\b\d+\b")
_TOKEN = Lazy(r"[a-z0-9_]+")  # a whole word of lower-case text, for the signals' look-up


_OPEN_QUOTE = Lazy(r"(?:^|[\s(\[=:,])(['\"`])([^\s'\"`]{2,120})$")


def _cut_quote(open_quote, p, folded: str) -> bool:
    """Whether a message cut inside a quoted name is the beginning of template ``p``: the template
    quotes a name that begins so, and every other name it quotes is in the message."""
    head = open_quote.group(1) + open_quote.group(2)
    at = p.raw.find(head)
    if at < 0:
        return False
    end = p.raw.find(open_quote.group(1), at + 1)
    rest = quoted_tokens(p.raw[:at] + p.raw[end + 1 :] if end > 0 else p.raw[:at])
    return all(q in folded for q in rest)


def _numbers_agree(message: str, raw: str) -> bool:
    """Whether a message read as a template's cut-off beginning, or as similar to it, keeps the numbers
    the template writes itself: normalising turns every number into a placeholder, which would make
    "cuda runtime error (9)" the beginning of "cuda runtime error (59) : device-side assert ..." and
    "cuda runtime error (11) : invalid argument" similar to "cuda runtime error (3) : initialization error"."""
    literal = [m.group() for m in _NUMBER_SLOT.finditer(raw[:2000])]
    if not any(x.isdigit() for x in literal):
        return True
    for got, slot in zip(_NUMBER.findall(message[:2000]), literal):
        if slot.isdigit() and got != slot:
            return False
    return True


_FILE_NAME = Lazy(
    r"(?<![\w{.])[A-Za-z_][\w-]{0,60}\.(?:h|hpp|cuh|c|cc|cpp|cu|py|so|dll|txt|json|yaml|yml|toml|cfg)\b"
    r"|(?<![\w{./])[A-Za-z_][\w-]{0,60}/(?=\{)"  # a folder before a placeholder: THC/{header}
    r"|(?<=\()[A-Za-z_][\w.-]{2,60}(?=\))"  # a name in parentheses: "... based projects (tokenizers)"
)


def _described(template: str) -> str | None:
    """What a label-and-description template says after its label, where the description is its own
    literal words: "THCudaCheck FAIL file={file} line={line} error=30 : unknown error" -> "unknown
    error" (the same label carries every CUDA error's words: "unspecified launch failure" is another
    error). None when there is no such description (a placeholder, or no label)."""
    head, sep, desc = template.rpartition(" : ")
    if not sep:
        head, sep, desc = template.rpartition(": ")
    desc = desc.strip()
    if not sep or not head or "{" in desc or len(desc) < 4 or "\n" in desc:
        return None
    return desc


def _tells_after(rest: str) -> bool:
    """Whether a template goes on, after where a message ends, with its own words in parentheses
    ("cannot import name 'X' from 'Y' (unknown location)"): the message ended at a whole name and what
    tells the entry apart is the part it does not have (another path there is another error), so it
    is no cut-off beginning of that template."""
    rest = rest.lstrip()
    return rest.startswith("(") and not rest.startswith("(<*>")


def _files_agree(folded: str, names: tuple[str, ...]) -> bool:
    """Whether a message (lower case) read as similar to a template names the files (and folders) the
    template names itself (``names``): "Could not open requirements file: [Errno 2] No such file or
    directory: 'requirements.txt'" is neither "fatal error: Python.h: No such file or directory" nor
    "fatal error: THC/{header}: No such file or directory"."""
    return all(n in folded for n in names)


def _python_wording(message: str) -> bool:
    """Whether the message is one CPython itself writes, maybe after a log's label
    ("Inference ERROR: list index out of range"): such a message matches an entry's template or nothing."""
    from explainer.match.longtail import is_builtin

    return is_builtin(message[:300].split("\n", 1)[0])


class _Pattern:
    __slots__ = (
        "entry_id",
        "idx",
        "raw",
        "regex_src",
        "normalized",
        "tokens",
        "fuzzy_ok",
        "quoted",
        "specificity",
        "literal_start",
        "required",
        "pieces",
        "head_src",
        "head_share",
        "_rx",
        "_head",
        "_rx_search",
        "_files",
    )

    def __init__(
        self, entry_id: str, idx: int, raw: str, regex_src: str, normalized: str, features: dict | None = None
    ) -> None:
        self.entry_id, self.idx, self.raw, self.regex_src, self.normalized = entry_id, idx, raw, regex_src, normalized
        f = features or pattern_features(raw, normalized)
        self.tokens = f["tokens"]
        self.quoted = tuple(f.get("quoted", ()))  # words of its quoted literals ('torch', 'huggingface_hub')
        # a pattern with few content words left after normalisation ("module <*> has no attribute <*>")
        # is too generic for fuzzy evidence: it must match as a template
        self.fuzzy_ok = len(self.tokens) - len(self.quoted) >= MIN_FUZZY_TOKENS and not f.get("specialises")
        self.required, self.specificity, self.literal_start, self.head_src = (
            f["required"],
            f["specificity"],
            f["literal_start"],
            f["head"],
        )
        self.head_share = f.get("head_share", 1.0)  # the opening's share of the template's literal text
        self.pieces = tuple(f.get("pieces", ()))  # literal text every full or prefix match contains
        self._rx: re.Pattern[str] | None = None
        self._head: re.Pattern[str] | None = None
        self._rx_search: re.Pattern[str] | None = None
        self._files: tuple[str, ...] | None = None

    @property
    def files(self) -> tuple[str, ...]:
        """The files (and folders, and names in parentheses) the template names itself, lower case
        (:func:`_files_agree`)."""
        if self._files is None:
            self._files = tuple(n.lower() for n in _FILE_NAME.findall(self.raw[:2000]))
        return self._files

    @property
    def rx(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(self.regex_src, re.IGNORECASE)
        return self._rx

    @property
    def rx_search(self) -> re.Pattern[str]:
        """The expression to search with (:func:`explainer.patterns.to_regex` with ``search``)."""
        if self._rx_search is None:
            from explainer.patterns import to_regex

            try:
                self._rx_search = re.compile(to_regex(self.raw, search=True), re.IGNORECASE)
            except (ValueError, re.error):
                self._rx_search = self.rx
        return self._rx_search

    @property
    def head(self) -> re.Pattern[str] | None:
        if self._head is None and self.head_src:
            self._head = re.compile(self.head_src, re.IGNORECASE)
        return self._head


class Evidence:
    """What the paste shows for one entry: its score, the tier that found it (1 templates, 2 fuzzy,
    3 frames and signals), the reasons, the template's captures, whether it came from the final
    exception, and whether a template matched the message itself (``strong``), not only its opening."""

    __slots__ = ("score", "tier", "reasons", "captures", "from_final", "strong")

    def __init__(
        self, score: float, tier: int, reasons: list, captures: dict, from_final: bool = False, strong: bool = False
    ) -> None:
        self.score, self.tier, self.reasons, self.captures = score, tier, reasons, captures
        self.from_final, self.strong = from_final, strong

    def gain(self, share: float, why: Reason) -> None:
        """More evidence (a telling frame, a signal line): close ``share`` of the gap to 1."""
        self.score += (1 - self.score) * share
        self.reasons.append(why)


OPENINGS = ("opening", "opening_differs")  # the reasons of a match on a template's opening only


def _code(why) -> str:
    """The first part's code of a reason."""
    return why.parts[0][0] if isinstance(why, Reason) else ""


def _report_ties(best: dict[str, Evidence]) -> None:
    """Entries that lead only because the message follows the opening they share ("Error(s) in
    loading state_dict for Net:", cut before what tells them apart) are a tie: each gets the share
    of the confidence a tie leaves it (divided among them, not below the threshold), in the order
    their openings' weight gave them, and says which entries it ties with. Frames and signals may
    still tell them apart afterwards."""
    if len(best) < 2:
        return
    opening = lambda v: not v.strong and _code(v.reasons[0]) in OPENINGS  # noqa: E731
    top = max(best.values(), key=lambda v: v.score)
    if not opening(top):
        return
    tied = sorted(
        (e for e, v in best.items() if opening(v) and top.score - v.score < AMBIGUOUS_GAP), key=lambda e: -best[e].score
    )
    if len(tied) < 2:
        return
    share = max(
        THRESHOLD + TIE_MARGIN, top.score / len(tied)
    )  # every tied entry stays an answer: the tie is the answer
    for rank, e in enumerate(tied):
        best[e].score = share - rank * 1e-4  # still in their order, well within the ambiguity gap
        best[e].reasons.append(Reason("ties", others=", ".join(t for t in tied if t != e)))


def word_idf(patterns: int, holding: int) -> float:
    """The weight of a word that ``holding`` of the ``patterns`` patterns hold: rarer words tell more."""
    return math.log(1 + max(1, patterns) / holding)


def word_table(keys, active) -> dict:
    """What ranks candidate patterns, from each pattern's (entry id, words), over the patterns of the
    ``active`` entries: per word, the patterns (places in ``keys``) holding it, as the text
    ``"place place ..."`` (a one-paste process decodes the few words its paste has; a word's idf is
    :func:`word_idf` of how many); per pattern, the total idf of its words; per entry, the backends every
    one of its patterns names. The index stores it (built once with the index); an in-memory index
    makes it on start."""
    postings: dict[str, list[int]] = defaultdict(list)
    live = [(j, eid, ws) for j, (eid, ws) in enumerate(keys) if eid in active]
    for j, _eid, ws in live:
        for t in ws:
            postings[t].append(j)
    n = len(live)
    idf = {t: word_idf(n, len(ps)) for t, ps in postings.items()}
    weights = [1.0] * len(keys)
    devices: dict[str, frozenset[str]] = {}
    for j, eid, ws in live:
        weights[j] = sum(idf[t] for t in ws) or 1.0
        mine = _DEVICES.intersection(ws)
        devices[eid] = devices[eid] & mine if eid in devices else mine
    return {
        "patterns": n,
        "words": {t: " ".join(map(str, ps)) for t, ps in postings.items()},
        "weights": weights,
        "devices": {eid: sorted(d) for eid, d in devices.items()},
    }


class _Patterns:
    """The matcher's patterns by their place in the index, each made from its index row the first
    time it is a candidate: a one-paste process (the CLI, a hook) reads a few dozen of the thousand
    rows. Iterating makes all of the active entries' patterns."""

    __slots__ = ("_row", "_places", "_made")

    def __init__(self, row, places: list[int], n: int) -> None:
        self._row, self._places = row, places  # the places of the active entries' patterns
        self._made: list[_Pattern | None] = [None] * n

    def __len__(self) -> int:
        return len(self._places)

    def __getitem__(self, i: int) -> _Pattern:
        p = self._made[i]
        if p is None:
            p = self._made[i] = _Pattern(*self._row(i))
        return p

    def __iter__(self):
        return (self[i] for i in self._places)


class Matcher:
    def __init__(self, index) -> None:
        self.index = index  # its rows: read when a pattern is first a candidate, checked after a failure
        self.entries = {k: v for k, v in index.entries.items() if not v.get("retired")}
        owners = getattr(index, "pattern_entries", None)
        if owners is None:  # an index that holds its rows in memory (tests, benchmarks): the table from them
            rows = [r if len(r) > 5 and r[5] else (*r[:5], pattern_features(r[2], r[4])) for r in index.patterns]
            owners = [r[0] for r in rows]
            table = word_table([(r[0], r[5]["tokens"]) for r in rows], self.entries)
            row = rows.__getitem__
        else:
            table, row = index.word_table, index.pattern_row
        self.patterns = _Patterns(row, [j for j, eid in enumerate(owners) if eid in self.entries], len(owners))
        self.types = {eid: {_type_key(t) for t in e["exception_types"]} for eid, e in self.entries.items()}
        self._live_patterns: int = table["patterns"]
        self._words: dict[str, str] = table["words"]
        self._decoded: dict[str, tuple[float, list[int]]] = {}  # the words pastes had, decoded
        self._rarest: dict[int, tuple] = {}  # the rarest words a pattern's fuzzy evidence needs
        self.weight: list[float] = table["weights"]
        # the backend every pattern of an entry names (cuda-out-of-memory: cuda): a message naming
        # only another backend is no evidence for it, by similarity or by signal
        self.devices: dict[str, frozenset] = {eid: frozenset(d) for eid, d in table["devices"].items()}
        self.frame_index: dict[tuple[str, str], list[str]] = defaultdict(list)
        for eid, e in self.entries.items():
            for pos, fr in enumerate(e["frames"]):
                path, _, func = fr.rpartition(":")
                # only the innermost telling frames are specific; generic module plumbing is not
                if pos < 2 and func not in ("_call_impl", "_wrapped_call_impl", "__call__"):
                    self.frame_index[(path.rsplit("/", 1)[-1], func)].append(eid)
        self.signal_rx = [
            (eid, Lazy(s, re.I), lit)
            for eid, e in self.entries.items()
            for s, lit in zip(e.get("signals", []), signal_literals(e))
            if not s.startswith("@")
        ]
        # "@kind": met by a signal of that kind the parser derived (NAMED_SIGNALS)
        self.named_signals = [
            (eid, s[1:]) for eid, e in self.entries.items() for s in e.get("signals", []) if s.startswith("@")
        ]
        # each signal is looked for only when the paste has a whole word of its literal (one bounded
        # by other characters inside the literal, so the paste has it whole wherever it has the literal)
        self._signal_by_word: dict[str, list[int]] = defaultdict(list)
        self._signal_always: list[int] = []
        # a signal without one required literal may be an alternation of branches that each have one
        self._signal_any: dict[int, list[str]] = {}
        sources = [s for e in self.entries.values() for s in e.get("signals", []) if not s.startswith("@")]
        # signals that span consecutive lines ("in load_audio\n...run(cmd...\n...in _execute_child"):
        # met in the paste's lines joined, where the others must hold within one line
        self._signal_spanning = {k for k, src in enumerate(sources) if "\\n" in src}
        for k, (_eid, _rx, lit) in enumerate(self.signal_rx):
            inner = [m.group() for m in _TOKEN.finditer(lit) if m.start() > 0 and m.end() < len(lit)]
            if inner:
                self._signal_by_word[max(inner, key=len)].append(k)
            else:
                self._signal_always.append(k)
                if not lit and (alts := _branch_literals(sources[k])):
                    self._signal_any[k] = alts

    # -- sources ---------------------------------------------------------------------------------
    def _sources(self, parsed: Parsed) -> list[tuple[str, str | None, str]]:
        """(kind, exc_type, message) for every message the paste offers, most trusted first."""
        out: list[tuple[str, str | None, str]] = []
        if parsed.others and parsed.others[-1].message and _spawned_child_eof(parsed):
            # a spawned child that could not read what its parent failed to send ("EOFError: Ran out
            # of input" in multiprocessing's spawn): the parent's exception, printed before, is the error
            parent = parsed.others[-1]
            out.append(("final", parent.exc_type, parent.message))
            out.append(("other", parsed.exc_type, parsed.message or ""))
        elif parsed.message:
            out.append(("final", parsed.exc_type, parsed.message))
        for link in reversed(parsed.chain):
            if link.message:
                out.append((link.relation, link.exc_type, link.message))
        for o in reversed(parsed.others[-8:]):
            if o.message:
                out.append(("other", o.exc_type, o.message))
        for s in parsed.signals[:20]:
            if s.kind in ("nccl", "cuda_assert", "terminate", "warning"):
                out.append(("line", None, s.text))
        out.extend(("alt", None, alt) for alt in parsed.alternatives)
        return out

    # -- tiers ---------------------------------------------------------------------------------
    def _tells(self, pi: int, p: _Pattern, folded: str) -> bool:
        """Whether the message holds the pattern's rarest word, the one that tells its error from the
        others (``parent`` of "Parent directory ... does not exist"): similar boilerplate without it is
        another error ("package directory ... does not exist")."""
        words = self._rarest.get(pi)
        if words is None:
            # (of its first clause: a parenthesised hint after it, "(run with NCCL_DEBUG=WARN for details)",
            # changes between releases)
            first = p.raw.split(" (", 1)[0]
            words = self._rarest[pi] = tuple(
                w for w in (self._rarest_word(first), self._rarest_word(_described(first))) if w
            )
        return all(w in folded for w in words)

    def _rarest_word(self, text: str | None) -> str | None:
        """The word of ``text`` (a template's literal words) that the fewest patterns hold."""
        if not text:
            return None
        head = tokens(normalize(_PLACEHOLDER.sub(" ", text)))
        counts = [(len(self._words[t].split(" ")), t) for t in head if t in self._words and len(t) > 3]
        return min(counts)[1] if counts else None

    def _candidate_patterns(self, norm: str, message: str = "") -> list[tuple[int, float]]:
        """(pattern, share of the pattern's word weight found in the message), best first. The words
        of the normalised message, and those inside its quotes (a module's name), which patterns with
        that name quoted hold too (:func:`explainer.normalize.quoted_tokens`)."""
        scores: dict[int, float] = {}
        get, decoded = scores.get, self._decoded
        words = tokens(norm)
        if "'" in message or '"' in message or "`" in message:
            words |= quoted_tokens(message)
        for t in words:
            hit = decoded.get(t)
            if hit is None:
                raw = self._words.get(t)
                if raw is None:
                    continue
                places = [int(j) for j in raw.split(" ")]
                hit = decoded[t] = (word_idf(self._live_patterns, len(places)), places)
            w, places = hit
            for i in places:
                scores[i] = get(i, 0.0) + w
        # (sorted is stable, as heapq.nlargest is, and about twice as fast at these sizes)
        ranked = sorted(scores.items(), key=itemgetter(1), reverse=True)
        best = ranked[:MAX_CANDIDATE_PATTERNS]
        weight = self.weight
        # a short template whose every word the message holds ("{type}\n  Explanation: {details...}")
        # is tried even when longer templates sharing more words fill the first places
        whole = [(i, sc) for i, sc in ranked[MAX_CANDIDATE_PATTERNS:] if sc >= weight[i] * 0.999][:MAX_WHOLE_EXTRA]
        return [(i, sc / weight[i]) for i, sc in best + whole]

    def _score_source(self, kind: str, exc_type: str | None, message: str, budget=None) -> dict[str, Evidence]:
        """Tiers 1 and 2 (templates, then fuzzy similarity) on one message: entry id -> its evidence."""
        out: dict[str, Evidence] = {}
        msg = message.strip()[:MAX_REGEX_INPUT]
        first_line = msg.split("\n", 1)[0]
        norm = normalize(msg[: 2 * MAX_FUZZY_CHARS])[:MAX_FUZZY_CHARS]
        tkey = _type_key(exc_type)
        folded = msg.lower()

        def add(p: _Pattern, tier: int, base: float, why: Reason, caps: dict, strong: bool) -> None:
            eid = p.entry_id
            types = self.types[eid]
            if tkey is None:
                base *= TYPE_MISSING
            elif tkey not in types and tkey != "python-baseexception":
                if tier != 1:
                    return  # fuzzy evidence only counts for compatible exception types
                base *= TYPE_MISMATCH
                from typing import cast  # here, not at import: typing is a share of the start-up

                # an entry's exception types are names, never empty: keys, not None (sorted() assumes it)
                why = why.plus("type_differs", type=str(exc_type), expected="/".join(sorted(cast("set[str]", types))))
            else:
                why = why.plus("type_fits", type=str(exc_type))
            base *= SOURCE_WEIGHT.get(kind, SOURCE_OTHER)
            if kind != "final":
                why = why.plus("from", kind=kind) if kind not in ("line", "alt") else why.plus("from_line")
            prev = out.get(eid)
            if prev is None or base > prev.score:
                out[eid] = Evidence(base, tier, [why], caps, kind == "final", strong)

        fuzzy: list[tuple[_Pattern, float]] = []
        settled = False  # a template matched the whole message with a fitting type
        goes_on: set[str] = set()  # entries matched by an opening the message continues past
        differs: set[str] = set()  # entries with a template the message reads as, but does not match
        cut: list[_Pattern] = []  # templates the message is the beginning of
        quoted_cut: set[str] = set()
        # the candidates from every word of the message: a long one's identifying words may come last
        # (torch.load's weights-only preamble, then "WeightsUnpickler error: Unsupported operand 118")
        whole_norm = norm if len(msg) <= MAX_FUZZY_CHARS else normalize(msg)
        # a message cut inside a quoted name ("No module named 'torchvision.transforms.functional"):
        # a template's placeholder takes the open quote as a whole name; it reads as the template's
        # beginning instead, as do the templates quoting a name it is the beginning of
        open_quote = _OPEN_QUOTE.search(msg[-130:])
        closed = normalize(msg + open_quote.group(1)) if open_quote else None
        candidates = self._candidate_patterns(whole_norm, msg)
        if first_line is not msg and len(first_line) >= 8:
            # the first line's own templates too: the words of what follows it (a poster's prose, a
            # log) may rank other templates above the one the exception's own line is
            tried = {pi for pi, _ in candidates}
            candidates += [c for c in self._candidate_patterns(normalize(first_line), first_line) if c[0] not in tried]
        for k, (pi, share) in enumerate(candidates):
            if k >= MIN_TRIED and budget is not None and budget.spent():
                break
            p = self.patterns[pi]
            tier, base, why, strong = 2, 0.0, _R_FULL, False
            m = None
            if p.required in folded:
                whole = all(x in folded for x in p.pieces)  # else only the opening can match
                m = whole and (p.rx.fullmatch(msg) or (first_line is not msg and p.rx.fullmatch(first_line)))
                if m and open_quote and m.string is msg:
                    tier, base, why = 1, CUT_MATCH, _R_CUT
                elif m:
                    tier, base, why = 1, FULL_MATCH, _R_FULL
                else:
                    m = whole and p.rx.match(msg)
                    if m:
                        tier, base, why = 1, START_MATCH, _R_START
                    elif whole and p.literal_start:  # a pattern opening with a placeholder had its chance above
                        m = p.rx_search.search(msg)
                        if m:
                            tier, base, why = 1, INSIDE_MATCH, _R_INSIDE
                if m:
                    strong = True
                    if why is not _R_CUT:  # of two templates that both match, the more specific one wins
                        base += p.specificity
                elif p.head is not None:
                    m = p.head.match(msg) or p.head.match(first_line)
                    if m:
                        rest = m.string[m.end() :] + (msg[len(first_line) :] if m.string is first_line else "")
                        if _WORDS_AFTER.search(rest[:MAX_REGEX_INPUT]):
                            goes_on.add(p.entry_id)
                        # worth what the opening holds of the template's own text: a first sentence
                        # of a long template tells less than most of a short one
                        tier, base, why = (
                            1,
                            OPENING_BASE + OPENING_SPAN * p.head_share,
                            _R_OPENING,
                        )
            if m:
                add(p, tier, base, why, {k: v.strip() for k, v in m.groupdict().items() if v}, strong)
                settled = settled or (base >= START_MATCH and (tkey is None or tkey in self.types[p.entry_id]))
            elif p.normalized == norm:
                # the message reads as this whole template once normalised, yet the template did not
                # match: a literal it quotes differs ("module 'distutils' has no attribute ..." is not
                # "module 'torch' ..."); no longer template of the entry is its cut-off beginning
                differs.add(p.entry_id)
            elif (
                len(norm) >= MIN_CUT_CHARS
                and (
                    (
                        len(norm) < len(p.normalized)
                        and p.normalized.startswith(norm)
                        and all(q in folded for q in p.quoted)
                        and not _tells_after(p.normalized[len(norm) :])
                    )
                    or (closed is not None and p.normalized.startswith(closed) and _cut_quote(open_quote, p, folded))
                )
                and _numbers_agree(msg, p.raw)
            ):
                cut.append(p)  # a paste cut inside the message ("... cannot be multi"): the template's beginning
                if closed is not None:  # cut inside a name this template quotes: it says more than a placeholder
                    quoted_cut.add(p.entry_id)
            elif (
                p.fuzzy_ok
                and share >= MIN_WORD_SHARE
                and self._tells(pi, p, folded)
                and all(q in folded for q in p.quoted)
                and _numbers_agree(msg, p.raw)
                and _files_agree(folded, p.files)
            ):
                # (a quoted literal of the template, a package's name, missing from the message: another error)
                fuzzy.append((p, share))
        for p in cut:
            if p.entry_id not in differs:
                add(p, 1, CUT_MATCH + (p.specificity if p.entry_id in quoted_cut else 0.0), _R_CUT, {}, False)
        if settled:
            # the paste shows how its message goes on, a template matched all of it, and these
            # entries' templates go on differently: they are not another reading of the same paste
            for eid in goes_on:
                v = out.get(eid)
                if v is not None and _code(v.reasons[0]) == "opening":
                    why = _R_OPENING_DIFFERS
                    v.score, v.reasons = min(v.score, OPENING_CONTRADICTED), [why, *v.reasons[1:]]
        # Fuzzy similarity tops out at FUZZY_MAX: once a template matched the whole message it can only add
        # lower-ranked alternatives, so it is skipped (and rapidfuzz is not even imported).
        if fuzzy and not settled and _python_wording(msg):
            fuzzy = []  # CPython's own words ("list index out of range") are like many templates and none of them
        if not settled:
            named = _backends_named(norm) if fuzzy else set()
            own = _without_hints(norm) if fuzzy else norm
            for p, _share in fuzzy:
                if budget is not None and budget.spent():
                    break
                theirs = _DEVICES.intersection(p.tokens)
                if named and theirs and not named & theirs:
                    continue  # an MPS message is not similar to a CUDA template, however alike the rest reads
                # the hint lines every CUDA error carries tell no two CUDA errors apart
                sim = self._similarity(own, _without_hints(p.normalized))
                base = FUZZY_MAX * _sigmoid((sim - FUZZY_MID) * FUZZY_SLOPE)
                if base >= FUZZY_FLOOR:
                    add(p, 2, base, Reason("similar", similarity=f"{sim:.2f}"), {}, False)
        return out

    @staticmethod
    def _similarity(message: str, pattern: str) -> float:
        """Similarity of a normalised message to a normalised pattern. Extra text around the
        message's match is tolerated (partial ratio); text missing from the message is not; the
        same words in another order count almost as much ("the shapes of mat1 and mat2 ...")."""
        if not message or not pattern:
            return 0.0
        from rapidfuzz import fuzz  # imported on the first fuzzy comparison, not at start-up

        pattern = pattern[:MAX_FUZZY_CHARS]
        r = fuzz.ratio(message, pattern, score_cutoff=50) / 100.0
        if r < SIMILAR_ENOUGH:
            r = max(r, TOKEN_SORT_WEIGHT * fuzz.token_sort_ratio(message, pattern, score_cutoff=60) / 100.0)
        if r < SIMILAR_ENOUGH and len(pattern) >= 24 and len(message) > len(pattern) * 1.3:
            r = max(r, PARTIAL_WEIGHT * fuzz.partial_ratio(pattern, message, score_cutoff=60) / 100.0)
        return r

    def _frames(self, parsed: Parsed) -> dict[str, Reason]:
        hits: dict[str, Reason] = {}
        for f in parsed.frames:
            if not f.function:
                continue
            name = _PATH_SEP.split(f.file)[-1]
            for eid in self.frame_index.get((name, f.function), ()):
                hits.setdefault(eid, Reason("frame", frame=f"{name}:{f.function}"))
        return hits

    def _signals(self, parsed: Parsed, budget=None) -> dict[str, Reason]:
        hits: dict[str, Reason] = {}
        for eid, kind in self.named_signals:
            said = _named_signal(parsed, kind)
            if said is not None:
                hits.setdefault(eid, Reason("signal", line=said[:80]))
        if not self.signal_rx:
            return hits
        msg = parsed.message or ""
        # signal lines are cut at 500 characters by the parser; of the message, its start and its end
        pieces = [msg[:MAX_REGEX_INPUT]] + ([msg[-MAX_REGEX_INPUT:]] if len(msg) > MAX_REGEX_INPUT else [])
        # the signal lines, the message's ends, then every line the paste ends with (a warning printed
        # earlier in a log names the cause as well)
        # (the parser leaves the user's own code lines out of them: see _signal_lines)
        texts = [s.text[:MAX_REGEX_INPUT] for s in parsed.signals] + pieces + list(parsed.lines)
        joined = "\n".join(texts)
        blob = joined.lower()  # one look for each signal's literal and expression; its lines only on a hit
        named = _backends_named(msg[:MAX_FUZZY_CHARS].lower()) if msg else set()
        by_word = self._signal_by_word
        maybe = list(self._signal_always)
        for w in set(_TOKEN.findall(blob)):
            maybe += by_word.get(w, ())
        maybe.sort()  # in the entries' order: the first signal of an entry gives its line
        signal_rx, any_of = self.signal_rx, self._signal_any
        for k in maybe:
            eid, rx, literal = signal_rx[k]
            if literal not in blob:
                continue
            alts = any_of.get(k)
            if alts and not any(a in blob for a in alts):
                continue
            if budget is not None and budget.spent():  # looked at only before an expression runs
                break
            if not rx.search(joined):
                continue
            if named and self.devices.get(eid) and not named & self.devices[eid]:
                continue  # "Tried to allocate" in an MPS message is no sign of a CUDA entry
            for t in texts:
                if (not literal or literal in t.lower()) and rx.search(t):
                    hits.setdefault(eid, Reason("signal", line=t[:80]))
                    break
            else:
                if k in self._signal_spanning:  # a signal written over consecutive lines: its first one
                    found = rx.search(joined)
                    if found:
                        hits.setdefault(eid, Reason("signal", line=found.group().split("\n", 1)[0][:80]))
        return hits

    # -- merge ------------------------------------------------------------------------------------
    def warm(self) -> None:
        """Compile every pattern's expressions now (a server, before its first request): compiled on
        first use, each costs a request the time of compiling while it holds the interpreter's lock."""
        for p in self.patterns:
            _ = p.rx, p.head, p.rx_search

    def match(self, parsed: Parsed, *, top: int = 3, budget=None) -> list[Candidate]:
        """Ranked candidates; with a ``budget``, what was found before its deadline (``budget.cut``
        tells whether it was reached)."""
        best = self._messages(parsed, budget)
        _report_ties(best)
        self._frames_and_signals(best, parsed, budget)
        self._yield_to_twins(best)  # before `unless`: a twin it holds back still decides which of the two reads it
        self._unless(best, parsed)
        self._warning_on_the_way(best, parsed)
        self._demote_wrappers(best)
        return rank(best, top)

    def _messages(self, parsed: Parsed, budget=None) -> dict[str, Evidence]:
        """Tiers 1 and 2 on every message of the paste (the final one first): the best per entry."""
        best: dict[str, Evidence] = {}
        read = False  # a template matched the parser's message whole: the other lines it might have taken are moot
        for n, (kind, exc_type, message) in enumerate(self._sources(parsed)):
            if n and budget is not None and budget.spent():
                break
            if kind == "alt" and read:
                break
            for eid, ev in self._score_source(kind, exc_type, message, budget).items():
                cur = best.get(eid)
                if cur is None or ev.score > cur.score:
                    best[eid] = ev
                read = read or (kind == "final" and ev.strong and ev.score >= START_MATCH * TYPE_MISSING)
        return best

    def _frames_and_signals(self, best: dict[str, Evidence], parsed: Parsed, budget=None) -> None:
        """Tier 3: telling frames and signal lines add to an entry's evidence, or stand for it."""
        for eid, why in self._frames(parsed).items():
            if eid in best:
                best[eid].gain(FRAME_GAIN, why)
            elif not parsed.message or not any(v.score >= THRESHOLD for v in best.values()):
                # (also beside weak candidates: a telling frame is evidence a faint similarity is not)
                if not parsed.message and _type_key(parsed.exc_type) in self.types[eid]:
                    # a bare exception from the frame that raises it: nothing else to read
                    best[eid] = Evidence(FRAME_BARE, 3, [why.plus("bare", type=str(parsed.exc_type))], {})
                else:
                    best[eid] = Evidence(FRAME_ONLY, 3, [why.plus("no_message")], {})
        failed = _failed_after(parsed)
        for eid, why in self._signals(parsed, budget).items():
            if eid in best:
                best[eid].gain(SIGNAL_GAIN, why)
                continue
            if failed and self._warns_only(eid):
                continue  # a warning printed on the way is not why the program failed
            if self.types[eid] <= _IMPORT_TYPES and not _names_a_missing_module(parsed):
                continue  # an import that found no module, in a paste where no import failed
            best[eid] = Evidence(SIGNAL_ONLY, 3, [why], {})

    def _warning_on_the_way(self, best: dict[str, Evidence], parsed: Parsed) -> None:
        """A warning the paste's message is, where the paste goes on to die (a kernel's assertion, a
        signal, a crash) or to a traceback printed after it (cut before its exception line): the failure
        is the part the paste cut or did not type; the warning's entry, and any other its words matched,
        stays among the nearest."""
        crashed, after = _crashed(parsed), _traceback_after_warning(parsed)
        if crashed or after:
            for eid, v in best.items():
                # (after a traceback that follows the warning, what its words matched is not the failure)
                if v.score > UNLESS_CAP and (self._warns_only(eid) or (after and v.tier < 3)):
                    v.score = UNLESS_CAP
                    v.reasons = [*v.reasons, Reason("on_the_way")]

    def _unless(self, best: dict[str, Evidence], parsed: Parsed) -> None:
        """An entry whose ``unless`` names a derived signal the paste has does not answer it: its score
        stays below the threshold (it is still among the nearest)."""
        for eid, v in best.items():
            for kind in self.entries[eid].get("unless") or ():
                said = _named_signal(parsed, kind[1:])
                if said is not None:
                    v.score = min(v.score, UNLESS_CAP)
                    code = f"unless_{kind[1:]}"
                    code = code if code in TEXTS else "unless"
                    v.reasons = [v.reasons[0].plus(code, signal=said[:80]), *v.reasons[1:]]
                    break

    def _warns_only(self, eid: str) -> bool:
        """An entry for a warning (its kind, or every exception type it lists is a warning: a
        logger's "Some weights ... newly initialized" is a log line of kind log)."""
        e = self.entries[eid]
        return e.get("kind") == "warning" or all("warn" in (t or "").lower() for t in self.types[eid])

    def _yield_to_twins(self, best: dict[str, Evidence]) -> None:
        """Near-twins: only a template that matched the message itself (not just its opening) decides."""
        templated = {eid for eid, v in best.items() if v.strong and v.score >= THRESHOLD}
        drop = set()
        for eid, v in best.items():
            for twin in self.entries[eid]["excludes"]:
                if twin not in templated or twin == eid:
                    continue
                mutual = eid in self.entries[twin]["excludes"]
                # an entry yields to a twin it excludes unless its own evidence is stronger
                # (e.g. its signal line is in the paste); on a tie it yields unless the twin yields too
                theirs = best[twin].score
                if eid not in templated or theirs > v.score or (theirs == v.score and not mutual):
                    drop.add(eid)
        for eid in drop:
            del best[eid]

    def _demote_wrappers(self, best: dict[str, Evidence]) -> None:
        """Wrappers rank below what they wrap when the wrapped error is known."""
        if any(not self.entries[e]["wraps"] and v.score >= THRESHOLD for e, v in best.items()):
            for eid, v in best.items():
                if self.entries[eid]["wraps"]:
                    v.score *= WRAPPER_PENALTY
                    v.reasons.append(Reason("wrapper"))


def _named_signal(parsed: Parsed, kind: str) -> str | None:
    """The text of a derived signal of ``kind`` in the paste: the parser's, or the matcher's own."""
    said = next((s.text for s in parsed.signals if s.kind == kind), None)
    if said is None and kind in _DERIVED:
        said = _DERIVED[kind](parsed)
    return said


def _unknown_module(parsed: Parsed) -> str | None:
    """The matcher's own named signal: the module an import could not find is no known distribution's,
    the standard library's or a library's run-time namespace (``_init_paths``, ``vision_transformer``):
    as likely the project's own as an uninstalled package."""
    if "named" not in (parsed.message or "") and "没有名为" not in (parsed.message or ""):
        return None
    from explainer.facts import known_module
    from explainer.match.origin import missing_module

    name = missing_module(parsed.message)
    if not name or not (parsed.exc_type or "ModuleNotFoundError").endswith(("ModuleNotFoundError", "ImportError")):
        return None
    return None if known_module(name) else name.split(".", 1)[0]


def _found_package(parsed: Parsed) -> str | None:
    """The matcher's own named signal: a dotted module whose package the import system found
    (:func:`explainer.match.origin.found_package`), a missing submodule rather than a missing install."""
    from explainer.match.origin import found_package

    # the final exception's, or an earlier one's that a template may have matched instead
    return next((found for exc in _missing_module_exceptions(parsed) if (found := found_package(exc))), None)


def _spawned_child(parsed: Parsed) -> str | None:
    """The matcher's own named signal: the traceback is a spawned child's (``multiprocessing``'s
    ``spawn_main``, Windows' and macOS's way of starting a DataLoader worker) reading what its parent
    sent, with no ``torch.load`` among the frames: its ``EOFError: Ran out of input`` means the parent
    failed while sending (a pickling error printed above it), not an empty file."""
    if any(_file_ends(f, "torch", "serialization.py") for f in parsed.frames):
        return None
    frame = _spawn_frame(parsed)
    return f"multiprocessing/spawn.py {frame.function}" if frame else None


_REQUIREMENT = Lazy(r"(?:No matching distribution found for|satisfies the requirement) ([A-Za-z0-9][\w.\-]{0,100})")


def _other_requirement(parsed: Parsed) -> str | None:
    """The matcher's own named signal: pip found no distribution for a requirement that is not torch's
    or its companions' (``torch``, ``torchvision``, ``torchaudio`` ...), the releases and wheels
    pip-no-matching-distribution is about (a module path pip was asked for,
    ``ultralytics.nn.modules.conv``, is no distribution at all)."""
    names = [
        m.group(1)
        for t in (parsed.message or "", *parsed.lines[-40:])
        if "distribution found for" in t or "the requirement" in t
        for m in _REQUIREMENT.finditer(t[:2000])
    ]
    if not names or any(n.lower().startswith("torch") for n in names):
        return None
    return names[-1]


_SCRIPT_FOLDERS = frozenset({"scripts", "demo", "demos", "examples", "experiments", "notebooks"})
_SCRIPT_FRAME = Lazy(
    r'File "[^"\n]{0,300}[\\/]('
    + "|".join(sorted(_SCRIPT_FOLDERS))
    + r')[\\/][\w-]{1,100}\.py", line \d{1,7}, in <module>'
)


def _script_in_folder(parsed: Parsed) -> str | None:
    """The matcher's own named signal: the traceback starts in a script of a ``scripts/``-like folder at
    module level, run from there (so the repository's root is not on ``sys.path``), not imported as a
    module of that folder's package by the frame before it (``from scripts.tts_funcs import ...``:
    then the root is on the path)."""
    from explainer.textio import path_parts

    user = [f for f in parsed.frames if not f.library and f.file]
    for k, f in enumerate(user):
        parts = path_parts(f.file[-300:])
        if len(parts) < 2 or parts[-2] not in _SCRIPT_FOLDERS or f.function != "<module>":
            continue
        before = (user[k - 1].code or "").lstrip() if k else ""
        if before.startswith((f"from {parts[-2]}", f"import {parts[-2]}")):
            return None
        return f.file[-300:]
    # the same in an earlier traceback of the paste (a chained cause), read from its lines: the line
    # above such a frame is the code of the frame before it, or the traceback's header
    lines = parsed.lines
    for i, line in enumerate(lines):
        m = _SCRIPT_FRAME.search(line[:600]) if "<module>" in line else None
        if m:
            before = lines[i - 1].strip() if i else ""
            if not before.startswith((f"from {m.group(1)}", f"import {m.group(1)}")):
                return m.group(0)
    return None


def _library_kwarg(parsed: Parsed) -> str | None:
    """The matcher's own named signal: a keyword argument a library's releases differ on."""
    if "unexpected keyword argument" not in (parsed.message or ""):
        return None
    from explainer.match.origin import library_kwarg

    found = library_kwarg(parsed)
    return f"{found[0]}: {found[1]}({found[2]}=...)" if found else None


_PRIVATE_ATTRIBUTE = Lazy(r"object has no attribute '(_[A-Za-z]\w{0,100})'")


def _private_attribute(parsed: Parsed) -> str | None:
    """The matcher's own named signal: the attribute an object lacks is a private one (``_trt``), which
    a library sets on the objects it made itself (torch2trt's converted tensors): not a public method
    the user took from another API."""
    m = _PRIVATE_ATTRIBUTE.search((parsed.message or "")[:1000])
    return m.group(1) if m and not m.group(1).startswith("__") else None


_NONE_OBJECT = Lazy(r"'NoneType' object has no attribute '(\w{1,100})'")


def _none_object(parsed: Parsed) -> str | None:
    """The matcher's own named signal: the object that lacks the attribute is ``None`` (a value the
    program left unset, or a slot that holds no module): no class of its own skipped anything."""
    m = _NONE_OBJECT.search((parsed.message or "")[:1000])
    return m.group(1) if m else None


_DERIVED = {
    "library_kwarg": _library_kwarg,
    "unknown_module": _unknown_module,
    "found_package": _found_package,
    "spawned_child": _spawned_child,
    "other_requirement": _other_requirement,
    "private_attribute": _private_attribute,
    "none_object": _none_object,
    "script_in_folder": _script_in_folder,
}


# torch's hints under every CUDA error (c10/cuda/CUDAException.cpp, c10/cuda/CUDADeviceAssertionHost.cpp)
# and the footer under every torch.compile error (torch/_dynamo/exc.py), normalised: boilerplate, not evidence
_HINTS = Lazy(
    r" ?(?:cuda kernel errors might be asynchronously reported at some other api call, so the stacktrace "
    r"below might be incorrect\.?|for debugging consider passing cuda_launch_blocking=<\*>\.?|compile with "
    r"<\*> to enable device-side assertions\.?"
    r"|set torchdynamo_verbose=<\*> for the (?:internal|full dynamo) stack trace(?:\( ?please do this especially "
    r"if you're reporting a bug to pytorch\) ?\.?)?(?: ?for even more developer context, set torch_logs=<\*>)?)"
)


def _without_hints(normalized: str) -> str:
    if "cuda" not in normalized and "torchdynamo_verbose" not in normalized:
        return normalized
    return _HINTS.sub("", normalized).strip()


_IMPORT_TYPES = frozenset({"modulenotfounderror", "importerror"})


def _missing_module_exceptions(parsed: Parsed):
    """The paste's exceptions (the final one, its chain, the others) whose message names a module an
    import could not find."""
    return (
        e
        for e in (parsed, *parsed.chain, *parsed.others)
        if "No module named" in (e.message or "") or "没有名为" in (e.message or "")
    )


def _names_a_missing_module(parsed: Parsed) -> bool:
    return next(_missing_module_exceptions(parsed), None) is not None


def _crashed(parsed: Parsed) -> bool:
    """Whether the paste shows the process dying (the parser's ``signal``, ``crash``, ``terminate`` and
    ``cuda_assert`` lines: killed by a signal, a failed assertion in a system library or a kernel, LLVM,
    an uncaught C++ exception): a warning among its lines did not cause that."""
    return any(s.kind in ("signal", "crash", "terminate", "cuda_assert") for s in parsed.signals)


def _failed_after(parsed: Parsed) -> bool:
    """Whether the paste shows a failure other than a warning: the process dying, or a traceback whose
    exception is no warning (also one cut before its exception line)."""
    if _crashed(parsed):
        return True
    if (parsed.exc_type or "").endswith("Warning"):
        return _traceback_after_warning(parsed)
    return bool(parsed.frames)


def _traceback_after_warning(parsed: Parsed) -> bool:
    """Whether the paste's exception is a warning that a traceback follows: the warning was printed on
    the way, and the traceback's own exception line is cut (a warning raised as an error ends its
    traceback instead)."""
    if not (parsed.exc_type or "").endswith("Warning") or not parsed.frames:
        return False
    said = (parsed.message or "")[:40]
    lines = parsed.lines
    at = max((i for i, line in enumerate(lines) if said and said in line), default=None)
    return at is not None and any("Traceback (most recent call last)" in line for line in lines[at + 1 :])


def rank(best: dict[str, Evidence], top: int) -> list[Candidate]:
    """The candidates, best first: higher score, then the lower tier, then the final exception's.
    The sort is stable: on an exact tie the order is the one the candidates were found in (by how
    much of each template's words the message holds), never the ids' spelling."""
    ranked = sorted(best.items(), key=lambda kv: (-round(kv[1].score, 4), kv[1].tier, not kv[1].from_final))
    return [
        Candidate(eid, round(min(1.0, v.score), 4), tuple(v.reasons), v.captures, v.tier) for eid, v in ranked[:top]
    ]
