"""The long tail: where in PyTorch's own sources a message not in the knowledge base was raised.

The data file (``data/longtail-<torch version>.jsonl.gz``, written by :mod:`explainer.knowledge.longtail_build`)
is compiled once into SQLite beside it (in a wheel: at build time): one row per raise site, and an
``anchor`` table from each word of a template's literal text to its sites. A lookup

1. reads what torch appends to a message (``Exception raised from F at P:L``, ``(Triggered internally
   at P:L.)``, ``INTERNAL ASSERT FAILED at "P":L``), which names the site itself;
2. takes the paste's rarest words to the sites that hold them;
3. confirms each candidate with a chain of literal searches (``str.find``, in order, no regular
   expression: linear in the message) and gates weak matches (short literal text, low coverage);
4. ranks the fits and groups sites that share a template.

Nothing here imports torch; the module is loaded only when the long tail is asked.
"""

from __future__ import annotations

import builtins
import json
import os
import re
import sqlite3
import sys
from _thread import allocate_lock, get_ident  # (threading's import is a share of the CLI's start)
from collections import namedtuple

from explainer.textio import Lazy

HOLE = None  # a template is a list of literal pieces and holes
MAX_MESSAGE = 4000  # characters of a message that are matched
MAX_CANDIDATES = 150  # sites confirmed per lookup: those sharing the most of the message's rarest words
ANCHORS_PER_SITE = 3  # a site is found through its rarest words
MAX_ANCHOR_DF = 1000
NEAR_MIN_WORDS = 6  # a close wording is looked for only in messages and templates of this many words
NEAR_SHARE = 0.8  # ... and accepted when this share of the template's words are in the message, in order
REPO = "https://github.com/pytorch/pytorch/blob/v{version}/{file}"

_WORD = Lazy(r"[a-z][a-z0-9_]{2,40}")  # applied to a message capped at MAX_MESSAGE: linear
# (each is searched only where its literal opening is in the text)
_RAISED_FROM = Lazy(r"Exception raised from (\S{1,200}) at (\S{1,400}?):(\d{1,7}) \(most recent call first\)")
_TRIGGERED = Lazy(r"\(Triggered internally at (\S{1,400}?):(\d{1,7})\.?\)")
_ASSERT_AT = Lazy(r'INTERNAL ASSERT FAILED at "([^"\n]{1,400})":(\d{1,7})')
_THC_CHECK = Lazy(r"THCudaCheck FAIL file=(\S{1,400}?) line=(\d{1,7})")
# a C file and line in a message: one bounded run of path characters, ended by the ":"
_C_AT = Lazy(r"\bat ((?:[A-Za-z]:)?[\w./\\-]{1,300}\.(?:cu|cuh|c|cc|cpp|h)):(\d{1,7})\b")
# torch <= 1.5 appended the raising function, file and line to the message: "... (is_contiguous at
# /pytorch/aten/src/ATen/SparseTensorImpl.cpp:55)", "(operator () at ..\\aten\\src\\...\\qconv_prepack.cpp:264)"
_OLD_AT = Lazy(
    r" \(((?:[\w:~]{1,200})|operator \(\)) at ((?:[A-Za-z]:)?[\w./\\-]{1,300}\.(?:cu|cuh|c|cc|cpp|h|hpp|mm)):(\d{1,7})\)"
)
_GB_URL = Lazy(r"compile-graph-break-site/gb/(gb\d{4})\.html", re.I)
_BUILD_PREFIX = Lazy(r"^.*?(?<![A-Za-z_])(?=(?:aten|c10|torch|caffe2)/)")
_MIRRORS = (
    "torch/_meta_registrations.py",
    "torch/_refs/",
    "torch/_decomp/",
    "torch/_prims",
    "torch/_inductor/",
    "torch/_dynamo/polyfills",
    "torch/distributed/optim/functional_",
    "torch/csrc/api/",
    "torch/csrc/jit/runtime/static/",
    "torch/csrc/lazy/",
    "aten/src/ATen/functorch/",
    "torch/_functorch/",
    "torch/_higher_order_ops/",
    "torch/_subclasses/",
    "torch/csrc/jit/mobile/",
    "torch/distributed/_composable/",
    "torch/onnx/",
    "torch/_export/",
    "torch/export/",
)
_BACKENDS = {
    "mps": ("/mps/", "mps"),
    "vulkan": ("/vulkan/",),
    "metal": ("/metal/",),
    "miopen": ("/miopen/",),
    "hip": ("/hip/",),
    "xpu": ("/xpu/",),
    "cudnn": ("/cudnn/",),
    "cuda": ("/cuda/", ".cu", "cuda"),
    "mkldnn": ("/mkldnn/",),
    "quantized": ("/quantized/", "/quantizable/", "torch/ao/"),
    "sparse": ("/sparse/",),
    "nested": ("/nested/",),
    "xnnpack": ("/xnnpack/",),
}
_BACKEND_WORD = Lazy(r"\b(?:" + "|".join(_BACKENDS) + r")\b")
_ORIGIN_RANK = {"binary": 0, "python": 0, "header": 0, "gb-registry": 0, "source": 0, "paste": 0}
_STRENGTH_RANK = {"exact": 0, "start": 1, "partial": 2}
# messages CPython itself writes, word for word the same as a torch template: never claimed alone
_CPYTHON = [
    "list index out of range",
    "tuple index out of range",
    "string index out of range",
    "division by zero",
    "{} object has no attribute {}",
    "module {} has no attribute {}",
    "No module named {}",
    "Can't pickle {}: {}",
    "{} takes {} positional argument but {} were given",
    "{} takes {} positional arguments but {} were given",
    "{} got an unexpected keyword argument {}",
    "{} missing {} required positional argument: {}",
    "not enough values to unpack (expected {}, got {})",
    "too many values to unpack (expected {})",
    "unsupported operand type(s) for {}: {} and {}",
    "{} object is not subscriptable",
    "{} object is not callable",
    "{} object is not iterable",
    "maximum recursion depth exceeded{}",
    "invalid literal for int() with base {}: {}",
    "[Errno {}] {}",
    "name {} is not defined",
    "cannot import name {} from {}",
    "dictionary changed size during iteration",
    "argument of type {} is not iterable",
    "unhashable type: {}",
    "{} object does not support item assignment",
    "{} object is not an iterator",
    "object of type {} has no len()",
    "{} object cannot be interpreted as an integer",
    "can only concatenate {} (not {}) to {}",
    "can't multiply sequence by non-int of type {}",
    "expected str, bytes or os.PathLike object, not {}",
    "{} not supported between instances of {} and {}",
    "bad operand type for unary {}: {}",
    "{} is not in list",
]
# torch code that words its errors as CPython does, on purpose (dynamo's polyfills of builtins): a
# site only where the paste's frames show it
_CPYTHON_MIRRORS = ("torch/_dynamo/polyfills/",)


def literal_len(pieces) -> int:
    return sum(len(p.strip()) for p in pieces if p is not HOLE)


def to_text(pieces) -> str:
    return "".join("{}" if p is HOLE else p.replace("{", "{{").replace("}", "}}") for p in pieces)


def from_text(text: str) -> list:
    """The inverse of :func:`to_text`."""
    out: list = []
    buf = []
    i = 0
    while i < len(text):
        two = text[i : i + 2]
        if two in ("{{", "}}"):
            buf.append(two[0])
            i += 2
        elif two == "{}":
            if buf:
                out.append("".join(buf))
                buf = []
            out.append(HOLE)
            i += 2
        else:
            buf.append(text[i])
            i += 1
    if buf:
        out.append("".join(buf))
    return out


def _fold(text: str) -> str:
    return " ".join(text.split()).lower()


def _pieces(template: str) -> list:
    """The template's pieces as the matcher compares them: lower case (whitespace is already folded),
    the outer spaces of the first and last piece dropped."""
    out = [p if p is HOLE else p.lower() for p in from_text(template) if p is HOLE or p.strip()]
    if out and out[0] is not HOLE:
        out[0] = out[0].lstrip()
    if out and out[-1] is not HOLE:
        out[-1] = out[-1].rstrip()
    return out


_QUOTES = str.maketrans({"`": "'", '"': "'", "\u2018": "'", "\u2019": "'", "\u201c": "'", "\u201d": "'"})


def loose(pieces: list) -> list:
    """A template's pieces with every quote mark one (releases and libraries change backticks to
    quotes and back) and without a closing full stop (a message may be cut there or logged without it)."""
    out = [p if p is HOLE else p.translate(_QUOTES) for p in pieces]
    if out and out[-1] is not HOLE:
        out[-1] = out[-1].rstrip(" .")
        if not out[-1]:
            out.pop()
    return out


def fit(pieces: list, msg: str) -> tuple[str, int] | None:
    """Does the template fit the folded message? (strength, literal characters matched), or None.

    Each literal piece is searched after the previous one (leftmost, which finds a fit whenever one
    exists; the last one rightmost, to end where the message ends if it can). A template that starts
    with a literal fits at the start (``start``), or inside (``partial``); one whose end also fits the
    message's end, or that ends with a hole, is ``exact``. Linear: one search per piece."""
    pos, matched, anchored = 0, 0, True
    last = len(pieces) - 1
    for i, p in enumerate(pieces):
        if p is HOLE:
            continue
        if i == 0:
            j = 0 if msg.startswith(p) else msg.find(p)
            anchored = j == 0
        elif i == last:
            j = msg.rfind(p, pos)
            if j < 0 and len(p) <= 2 and not any(c.isalnum() for c in p) and pos > 0 and pos < len(msg):
                # a closing quote or backtick the paste lost ("when calling `cusolverDnCreate(handle)")
                return "exact", matched
        else:
            j = msg.find(p, pos)
        if j < 0:
            return None
        pos = j + len(p)
        matched += len(p)
    if not matched:
        return None
    if not anchored:
        return "partial", matched
    ends = pieces[last] is HOLE or len(msg[pos:].strip(" .:;,")) == 0
    return ("exact" if ends else "start"), matched


def strip_suffixes(message: str) -> tuple[str, dict | None]:
    """The message without what torch appends, and the site that the appended text names."""
    site = None
    m = "Exception raised from " in message and _RAISED_FROM.search(message)
    if m:
        site = {"function": m.group(1), "file": _repo_path(m.group(2)), "line": int(m.group(3))}
        message = message[: m.start()]
    m = "(Triggered internally at " in message and _TRIGGERED.search(message)
    if m:
        site = site or {"function": "", "file": _repo_path(m.group(1)), "line": int(m.group(2))}
        message = message[: m.start()] + message[m.end() :]
    m = site is None and "INTERNAL ASSERT FAILED at " in message and _ASSERT_AT.search(message)
    if m:
        site = {"function": "", "file": _repo_path(m.group(1)), "line": int(m.group(2))}
    # torch 1.x's THC and TH wrote the C file and line into the message itself:
    # "cuda runtime error (11) : invalid argument at /pytorch/aten/src/THC/generic/THCTensorCopy.c:20",
    # "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=30 : unknown error"
    m = (
        site is None
        and ("THC" in message[:4000].upper() or "/TH/" in message)
        and (_THC_CHECK.search(message) or _C_AT.search(message))
    )
    if m and _BUILD_PREFIX.search(m.group(1).replace("\\", "/")):  # a path inside torch's own tree
        site = {"function": "", "file": _repo_path(m.group(1)), "line": int(m.group(2))}
        message = message[: m.start()] + message[m.end() :]
    m = site is None and " at " in message and _OLD_AT.search(message[:4000])
    if m and _BUILD_PREFIX.search(m.group(2).replace("\\", "/")):
        fn = "" if m.group(1) == "operator ()" else m.group(1)
        site = {"function": fn, "file": _repo_path(m.group(2)), "line": int(m.group(3))}
        message = message[: m.start()] + message[m.end() :]
    return message.strip(), site


def _folded_message(core: str, exc_type: str | None) -> str:
    """The message a lookup matches (``core``: without what torch appends): whitespace folded, lower
    case, a KeyError's quotes dropped."""
    msg = _fold(core[:MAX_MESSAGE])
    if (exc_type or "").endswith("KeyError") and len(msg) > 2 and msg[0] == msg[-1] and msg[0] in "'\"":
        msg = msg[1:-1].replace("\\'", "'")  # str(KeyError) is the repr of its message
    return msg


_builtin_last: tuple[str, bool] = ("", False)


def is_builtin(message: str) -> bool:
    """Whether CPython itself writes this message (see :func:`_is_builtin`); the last answer is kept:
    every index is asked about the same message."""
    global _builtin_last
    last = _builtin_last
    if last[0] == message and message:
        return last[1]
    out = _is_builtin(message)
    _builtin_last = (message, out)
    return out


def _is_builtin(message: str) -> bool:
    """Whether CPython itself writes this message: a template of the stoplist fits it whole, or fits
    its start (a message that ran on into the next line of a flattened paste, or a poster's words),
    also behind a log's label ("Inference ERROR: list index out of range", "mod:fn:85 - list index ...")."""
    if _cpython_wording(message):
        return True
    first = message[:300].split("\n", 1)[0]
    # (behind a label's colon, or a log's " - ": loguru's "module:function:85 - list index out of range")
    return any(sep in first and _cpython_wording(first.rsplit(sep, 1)[1]) for sep in (": ", " - "))


def _cpython_wording(message: str) -> bool:
    msg = _fold(message).lstrip("#>*-• ")  # a title's or a quote's marks before it
    return any((fit(p, msg) or ("",))[0] in ("exact", "start") for p in _CPYTHON_PIECES)


def repo_path(path: str) -> str:
    """A source path as the repository spells it: a build's prefix (``/__w/pytorch/pytorch/``,
    ``C:\\actions-runner\\...``, ``build/``) dropped."""
    return _repo_path(path)


def _repo_path(path: str) -> str:
    path = path.replace("\\", "/")
    return _BUILD_PREFIX.sub("", path) if "/" in path else path


_CPYTHON_PIECES = [_pieces(t) for t in _CPYTHON]


class LongTail:
    """An open long-tail index (read-only SQLite; one connection per thread)."""

    python_only = False  # torch's C++ sites raise RuntimeError or its subclasses whatever they are named

    def __init__(self, path: str):
        self.path = path
        self._conns: dict[int, sqlite3.Connection] = {}  # per thread (a reused thread id takes over a dead thread's)
        self._columns: list[str] | None = None
        self._cache: dict[tuple, tuple] = {}
        # the data, decoded once and kept (a never-seen message mostly asks for words and sites that
        # earlier ones asked for): a word's anchor postings, a site's row and template pieces
        self._postings: dict[str, tuple] = {}  # word -> ((need, (site, ...)), ...)
        self._sites: dict[int, tuple] = {}
        self._last_seen: tuple | None = None
        self._types: frozenset[str] | None = None
        db = self._db()
        self.meta = {k: json.loads(v) for k, v in db.execute("select key, value from meta")}
        # a kept site's row: its columns but the encoded pieces and the graph-break key
        self._Site = namedtuple("Site", [c for c in self._cols(db) if c not in ("p", "m")])  # type: ignore[misc]

    def _db(self) -> sqlite3.Connection:
        db = self._conns.get(get_ident())
        if db is None:
            db = sqlite3.connect(f"file:{self.path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
            self._conns[get_ident()] = db
        return db

    def types(self) -> frozenset[str]:
        """Every exception or warning class the indexed sites raise (their last dotted part), read once."""
        if self._types is None:
            self._types = frozenset(
                (x or "").rsplit(".", 1)[-1] for (x,) in self._db().execute("select distinct x from site")
            )
        return self._types

    def words(self) -> list[str]:
        """Every whole word of the templates' literal text (lower case): the vocabulary torch writes."""
        return [w for (w,) in self._db().execute("select word from word")]

    # -- retrieval --------------------------------------------------------------------------
    LOOKUP_CACHE = 2048  # recent lookups kept: the same error message recurs (users, cells, workers)
    # words' postings and sites' rows kept (the oldest dropped beyond it): a site takes about 1.2 KB,
    # so the three indexes of a server hold at most about 15 MB of them
    POSTINGS_CACHE = 8192
    DATA_CACHE = 4096

    def lookup(
        self, message: str | None, exc_type: str | None = None, frames=(), top: int = 3, *, near: bool = True
    ) -> list[dict]:
        """The raise sites whose template fits ``message``, best group first (``raised_at`` of the JSON).
        The sites (read-only dicts) of a recent identical lookup are returned again, not searched."""
        if not message:
            return []
        files = tuple(sorted({_repo_path(f.file) for f in frames if getattr(f, "file", None)}))
        key = (message[: MAX_MESSAGE * 4], exc_type, files, top, near)
        cache = self._cache
        hit = cache.get(key)
        if hit is None:
            # asked again with ``near`` after a word-for-word lookup found nothing: only the close wordings
            only_near = near and cache.get(key[:-1] + (False,)) == ()
            hit = cache[key] = tuple(self._lookup(message, exc_type, set(files), top, near, only_near))
            _bound(cache, self.LOOKUP_CACHE)
        return list(hit)

    def elsewhere(self, template: str, file: str | None) -> list[dict]:
        """The sites of these releases that raise ``template`` word for word from another file (a module
        moved between releases: torch/onnx/symbolic_helper.py, later
        torch/onnx/_internal/torchscript_exporter/symbolic_helper.py)."""
        rows = self._db().execute("select * from site where t = ? and f != ? limit 3", (template, file or ""))
        return [self._row(row, "exact", 1) for row in rows]

    def _lookup(
        self, message: str, exc_type: str | None, frame_files: set[str], top: int, near: bool, only_near: bool = False
    ) -> list[dict]:
        if only_near:
            msg = _folded_message(strip_suffixes(message[: MAX_MESSAGE * 4])[0], exc_type)
            words = sorted(set(_WORD.findall(msg))) if len(msg) >= 8 else []
            if not words:
                return []
            near_sites = self._near(self._db(), msg, words, want_type(exc_type), is_builtin(msg), frame_files)
            return self._groups(near_sites, top)
        core, named = strip_suffixes(message[: MAX_MESSAGE * 4])
        msg = _folded_message(core, exc_type)
        first_line = _fold(core[:MAX_MESSAGE].strip().split("\n", 1)[0])
        head = message[: MAX_MESSAGE * 4]
        gb = "/gb/" in head.lower() and _GB_URL.search(head)
        db = self._db()
        found: list[tuple[tuple, dict]] = []
        if gb:
            row = db.execute("select * from site where m = ?", (gb.group(1).upper(),)).fetchone()
            if row:
                found.append(((-1,), self._row(row, "exact", 1)))
        if named:
            rows = db.execute("select * from site where f = ? and l = ?", (named["file"], named["line"])).fetchall()
            for row in rows:
                found.append(((-1,), self._row(row, "exact", 1)))
            if rows:  # exact for this release: nothing to search
                return self._groups(found, top)
            if not rows:  # another build or version: the paste's own words are the site
                found.append(
                    (
                        (-1,),
                        {
                            "exc_type": exc_type,
                            "template": None,
                            "file": named["file"],
                            "line": named["line"],
                            "function": named["function"] or None,
                            "op": None,
                            "condition": None,
                            "origin": "paste",
                            "torch_version": None,
                            "url": None,
                            "strength": "exact",
                            "sites": 1,
                            # an internal assert's file and line: the releases that have one there
                            "versions": assert_releases(named["file"], named["line"])
                            if "INTERNAL ASSERT FAILED at" in head
                            else None,
                        },
                    )
                )
        if len(msg) < 8:
            return self._groups(found, top)
        # a message CPython itself writes is claimed only by a site among the paste's own frames
        builtin = is_builtin(msg)
        words = sorted(set(_WORD.findall(msg)))
        if not words:
            return self._groups(found, top)
        # a template fits only if the message holds every one of its anchors (its rarest words)
        best = self._candidates(db, words, slack=0)
        if not best:
            if near:
                found += self._near(db, msg, words, want_type(exc_type), builtin, frame_files)
            return self._groups(found, top)
        devices = set(_BACKEND_WORD.findall(msg)) if any(d in msg for d in _BACKENDS) else set()
        want = want_type(exc_type)
        fitted = len(found)
        tops = _packages_named(exc_type, frame_files)
        msg_q, first_q = msg.translate(_QUOTES), first_line.translate(_QUOTES)
        # a template that says too little of the message to pass the gates (see _passes) is not fitted:
        # its literal text bounds what it can match, the shorter of the message and its first line
        # what it is measured against
        thin = 0.3 * min(len(msg), len(first_line) or len(msg))
        for r, pieces, tpl_words, most, label in self._site_rows(db, best):
            if r.generic or (r.lit < 40 and most < thin and not label):
                continue
            got = fit(pieces, msg_q)
            if got is None:
                continue
            strength, matched = got
            lit = r.lit
            coverage = matched / max(len(msg), 1)
            if strength == "start" and first_line != msg:
                # a message whose first line is the template's and whose next lines explain it (a graph break)
                whole = fit(pieces, first_q)
                if whole and whole[0] == "exact":
                    coverage = whole[1] / max(len(first_line), 1)
            if not (label and strength == "exact" or _passes(strength, lit, coverage, r.generic)):
                continue
            site_type = (r.x or "").rsplit(".", 1)[-1]
            # a C++ check raises RuntimeError or one of torch's own subclasses (torch.OutOfMemoryError ...)
            type_ok = (
                not want
                or not site_type
                or site_type == want
                # (a library's few indexed releases: another release raised the words as a kin class)
                or self.python_only
                and _builtin_kin(want, site_type)
                or (
                    site_type == "RuntimeError"
                    and want not in _BUILTIN_TYPES
                    and r.o in ("binary", "source", "header", "gpu-source", "cpp-source")
                )
            )
            if (
                want
                and site_type
                and not type_ok
                and (r.o == "python" or self.python_only)
                and (want in _BUILTIN_TYPES and site_type in _BUILTIN_TYPES or _other_class(want, site_type))
            ):
                continue
            in_frames = any(ff.endswith(r.f) for ff in frame_files) if r.f else False
            if (
                self.python_only
                and (r.lit < 20 and coverage < 0.5 or len(tpl_words) < 5 and coverage < 0.6)
                and not in_frames
                and r.f.split("/", 1)[0] not in tops
            ):
                # a few words a hole leaves much of the message to ("{} does not exist", "File {} does
                # not exist": every library that reads files says it) name no library the paste does not show
                continue
            if (builtin or r.f.startswith(_CPYTHON_MIRRORS)) and not in_frames:
                continue
            mirror = any(m in r.f for m in _MIRRORS)
            backend = any(any(k in r.f for k in keys) for d, keys in _BACKENDS.items() if d not in devices)
            # a template that leaves most of the message to its holes ranks after those that say more of it
            key = (
                # a Python raise site is the innermost frame of a traceback: one the paste's frames
                # do not show ranks after the C++ sites (whose raise shows no frame of its own)
                0 if in_frames else 2 if r.o == "python" and frame_files and not self.python_only else 1,
                0 if r.f.split("/", 1)[0] in tops else 1,
                r.generic,
                0 if coverage >= 0.5 else 1,
                _ORIGIN_RANK.get(r.o, 1),
                _STRENGTH_RANK[strength],
                0 if type_ok else 1,
                -round(coverage, 1),
                1 if mirror else 0,
                1 if backend else 0,
                0 if r.v == self.meta.get("torch_version") else 1,
                -lit,
                r.f,
                r.l or 0,
            )
            found.append((key, self._row(r._asdict(), strength, 1)))
        if near and len(found) == fitted:  # no template fits word for word: a close wording of another release
            found += self._near(db, msg, words, want, builtin, frame_files)
        return self._groups(found, top)

    def _near(self, db, msg: str, words: list[str], want: str, builtin: bool, frame_files: set[str]) -> list:
        """Sites whose template says nearly what the message says: the same words in the same order
        but for a few (another release's wording: ``must of type`` / ``must be of type``, a word
        added or dropped), with every hole still accounting for at most a few words. Marked ``near``;
        only asked when nothing fits exactly."""
        from rapidfuzz.distance import LCSseq

        msg_words = _WORD.findall(msg.translate(_QUOTES))
        if len(msg_words) < NEAR_MIN_WORDS or builtin:
            return []
        ids = self._candidates(db, words, slack=1)
        out = []
        for r, pieces, tpl_words, _most, _label in self._site_rows(db, ids):
            if r.generic:
                continue
            if len(tpl_words) < NEAR_MIN_WORDS:
                continue
            common = LCSseq.similarity(tpl_words, msg_words)
            holes = sum(p is HOLE for p in pieces)
            extra = len(msg_words) - common
            if common < NEAR_SHARE * len(tpl_words) or extra > 3 * holes + max(2, len(msg_words) // 5):
                continue
            site_type = (r.x or "").rsplit(".", 1)[-1]
            if (
                want
                and site_type
                and site_type != want
                and (
                    _other_class(want, site_type)
                    or want in _BUILTIN_TYPES
                    and site_type in _BUILTIN_TYPES
                    # another release may raise a C++ check's words with another macro (TORCH_CHECK,
                    # later TORCH_CHECK_TYPE): a RuntimeError still fits
                    and (r.o == "python" or self.python_only or want != "RuntimeError")
                )
            ):
                continue
            in_frames = any(ff.endswith(r.f) for ff in frame_files) if r.f else False
            key = (2, 0 if in_frames else 1, -round(common / len(tpl_words), 2), -len(tpl_words), r.f, r.l or 0)
            out.append((key, dict(self._row(r._asdict(), "partial", 1), near=True)))
        return out

    def _candidates(self, db, words: list[str], slack: int) -> list[int]:
        """The sites whose anchors the message holds (all of them; with ``slack`` 1, all but one and at
        least one), those sharing the most words first, at most MAX_CANDIDATES."""
        last = self._last_seen  # the word-for-word pass and the close one ask for the same words
        if last is not None and last[0] == words:
            seen = last[1]
        else:
            seen = self._seen(db, words)
            self._last_seen = (words, seen)
        ok = []
        for need, levels in seen.items():
            # seen ``need - slack`` times or more (and at least once), ranked by how often
            for times in range(need, max(need - slack, 1) - 1, -1):
                more = levels[times] if times < need else ()
                ok += [(-times, site) for site in levels[times - 1] if site not in more]
        ok.sort()
        return [site for _c, site in ok[:MAX_CANDIDATES]]

    def _seen(self, db, words: list[str]) -> dict[int, list[set]]:
        """For each number of anchors a site has (``need``), the sites with an anchor among ``words``
        by how many they have there: ``levels[j]`` holds those with more than ``j``. Set operations
        (a message's words reach hundreds of sites, most of which need another anchor)."""
        postings = self._postings
        mine = {w: hit for w in words if (hit := postings.get(w)) is not None}
        missing = [w for w in words if w not in mine]
        if missing:
            got: dict[str, dict[int, list]] = {w: {} for w in missing}
            for i in range(0, len(missing), 500):  # SQLite's bound on variables
                part = missing[i : i + 500]
                q = ",".join("?" * len(part))
                for w, site, need in db.execute(f"select word, site, need from anchor where word in ({q})", part):
                    got[w].setdefault(need, []).append(site)
            for w, by_need in got.items():
                postings[w] = mine[w] = tuple((need, tuple(sites)) for need, sites in sorted(by_need.items()))
            _bound(postings, self.POSTINGS_CACHE)
        seen: dict[int, list[set]] = {}
        for w in words:
            for need, sites in mine[w]:
                levels = seen.get(need)
                if levels is None:
                    levels = seen[need] = [set() for _ in range(need)]
                for j in range(need - 1, 0, -1):
                    levels[j].update(levels[j - 1].intersection(sites))
                levels[0].update(sites)
        return seen

    def _site_rows(self, db, ids: list[int]) -> list[tuple]:
        """The sites by id, each ``(row, pieces, words, most, label)``: the row (``_Site``), its loose
        template pieces, the words of their literal text and its length (the most characters a fit can
        match), whether it is a label template (:func:`is_label`); about 1.2 KB a site."""
        sites = self._sites
        mine = {i: hit for i in ids if (hit := sites.get(i)) is not None}
        missing = [i for i in ids if i not in mine]
        if missing:
            cols = self._cols(db)
            make = self._Site._make  # type: ignore[attr-defined]  # (its fields come from the table)
            keep = [i for i, c in enumerate(cols) if c not in ("p", "m")]
            p_at, shared = cols.index("p"), [i for i, c in enumerate(cols) if c in ("k", "x", "f", "o", "v")]
            intern = sys.intern  # a release, a kind, a file: the same few strings on thousands of rows
            for k in range(0, len(missing), 500):
                part = missing[k : k + 500]
                for row in db.execute(f"select * from site where id in ({','.join('?' * len(part))})", part):
                    values = list(row)
                    for i in shared:
                        if isinstance(values[i], str):
                            values[i] = intern(values[i])
                    pieces = tuple(loose(json.loads(values[p_at])))
                    words = tuple(intern(w) for p in pieces if p is not HOLE for w in _WORD.findall(p))
                    most = sum(len(p) for p in pieces if p is not HOLE)  # the most a fit can match
                    r = make(values[i] for i in keep)
                    sites[r.id] = mine[r.id] = (r, pieces, words, most, is_label(pieces))
            _bound(sites, self.DATA_CACHE)
        return [mine[i] for i in sorted(mine)]

    def _cols(self, db):
        if self._columns is None:
            self._columns = [d[1] for d in db.execute("pragma table_info(site)")]
        return self._columns

    def _row(self, row, strength: str, sites: int) -> dict:
        r = row if isinstance(row, dict) else dict(zip(self._cols(self._db()), row))
        version = r["v"]
        exact_version = version == self.meta.get("torch_version")
        url = REPO.format(version=self.meta.get("torch_version"), file=r["f"]) if r["f"] else None
        if url and r["l"] and exact_version:
            url += f"#L{r['l']}"
        out = {
            "exc_type": r["x"] or None,
            "template": r["t"],
            "file": r["f"] or None,
            "line": r["l"] if exact_version else None,
            "function": r["fn"] or None,
            "op": r["op"] or None,
            "condition": r["c"] or None,
            "origin": r["o"],
            "torch_version": version,
            "url": url,
            "strength": strength,
            "sites": sites,
            "kind": r["k"],
            "indexed_version": self.meta.get("torch_version"),
            # the first and last release whose compiled libraries hold a C++ template's words
            "versions": json.loads(r["vs"]) if r.get("vs") else None,
        }
        if r.get("gb"):
            gb = json.loads(r["gb"])
            out["graph_break"] = gb
            out["url"] = gb.get("url")
        return out

    def _groups(self, found: list[tuple[tuple, dict]], top: int) -> list[dict]:
        """One answer per template (sites sharing it counted), best first."""
        found.sort(key=lambda kv: kv[0])
        groups: dict[str, dict] = {}
        order: list[str] = []
        for _key, rec in found:
            g = _fold(rec["template"]) if rec["template"] else f"{rec['file']}:{rec['line']}"
            if g in groups:
                groups[g]["sites"] += 1
                if len(groups[g]["also"]) < 20:
                    groups[g]["also"].append({"file": rec["file"], "line": rec["line"], "function": rec["function"]})
                continue
            groups[g] = dict(rec, also=[])
            order.append(g)
        return [groups[g] for g in order[:top]]


def _bound(cache: dict, size: int) -> None:
    """Drop a cache's oldest entries (dicts keep insertion order) beyond ``size``; another thread
    evicting at the same moment is harmless."""
    try:
        while len(cache) > size:
            cache.pop(next(iter(cache)))
    except (KeyError, RuntimeError, StopIteration):
        pass


_BUILTIN_TYPES = {
    "ValueError",
    "TypeError",
    "IndexError",
    "KeyError",
    "AttributeError",
    "RuntimeError",
    "NotImplementedError",
    "AssertionError",
    "OSError",
    "FileNotFoundError",
    "ImportError",
    "ModuleNotFoundError",
    "NameError",
    "ZeroDivisionError",
    "OverflowError",
    "MemoryError",
    "RecursionError",
    "StopIteration",
    "PermissionError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "LookupError",
    "EOFError",
    "BufferError",
    "SystemError",
}


def _builtin_kin(a: str, b: str) -> bool:
    """Two builtin exception classes one of which derives from the other: a release that raised
    ``RuntimeError`` and a later one its subclass ``NotImplementedError`` (``OSError`` and
    ``FileNotFoundError``, ``ImportError`` and ``ModuleNotFoundError``) raised the same error."""
    ca, cb = getattr(builtins, a, None), getattr(builtins, b, None)
    if not (isinstance(ca, type) and isinstance(cb, type) and issubclass(ca, Exception) and issubclass(cb, Exception)):
        return False
    return ca is not Exception and cb is not Exception and (issubclass(ca, cb) or issubclass(cb, ca))


def _packages_named(exc_type: str | None, frame_files: set[str]) -> set[str]:
    """The installed packages other than torch the paste names: the module of a qualified exception
    type (``pytorch_lightning.utilities.exceptions.X``) and the packages its frames lie in; a site in
    one of them ranks first (the same message is often in two packages: ``lightning.pytorch`` and
    ``pytorch_lightning``)."""
    from explainer.match.origin import frame_package

    out = {pkg for f in frame_files if (pkg := frame_package(f))}
    module = (exc_type or "").rpartition(".")[0]
    if module:
        out.add(module.split(".", 1)[0])
    out.discard("torch")
    return out


def _other_class(want: str, site_type: str) -> bool:
    """Two different classes of their own (neither a builtin exception another release may have raised
    the words with): a LightningDeprecationWarning is no FutureWarning."""
    bases = (_BUILTIN_TYPES, ("Exception", "Warning", "UserWarning"))  # what another release may raise it as
    return want != site_type and not any(want in b or site_type in b for b in bases)


def want_type(exc_type: str | None) -> str:
    """The exception's class name without its module (``pytorch_lightning....MisconfigurationException``)."""
    return (exc_type or "").rsplit(".", 1)[-1]


def _passes(strength: str, lit: int, coverage: float, generic: int) -> bool:
    """The evidence gates: generic templates and thin fits never answer."""
    if generic:
        return False
    if strength == "exact":
        return coverage >= 0.3 or lit >= 40
    if strength == "start":
        return lit >= 20 and coverage >= 0.35
    return lit >= 30 and coverage >= 0.5


def is_generic(pieces: list) -> bool:
    lits = [p for p in pieces if p is not HOLE]
    words = sum(len(_WORD.findall(p.lower())) for p in lits)
    return (literal_len(pieces) < 14 or words < 2) and not is_label(pieces)


def is_label(pieces: list | tuple) -> bool:
    """A message that is a label and what a library reported: ``CUDA error: {}``, ``cuFFT error: {}``
    (the hole holds the CUDA runtime's own words). Short, but it fits only a message that starts with
    it, and it names where the words come from."""
    if len(pieces) < 2 or pieces[0] is HOLE or pieces[1] is not HOLE:
        return False
    head = pieces[0].strip()
    return (
        head.endswith(":")
        and len(head) >= 10
        and len(_WORD.findall(head.lower())) >= 2
        and all(p is HOLE or not _WORD.search(p) for p in pieces[2:])
    )


# -----------------------------------------------------------------------------------------------
# the compiled index


def _anchor_words(pieces: list) -> list[str]:
    """The whole words of a template's literal text (a word touching a hole may continue in the message)."""
    out: set[str] = set()
    for i, p in enumerate(pieces):
        if p is HOLE:
            continue
        text = p.lower()
        found = list(_WORD.finditer(text))
        for m in found:
            if m.start() == 0 and i > 0 and pieces[i - 1] is HOLE:
                continue
            if m.end() == len(text) and i + 1 < len(pieces) and pieces[i + 1] is HOLE:
                continue
            if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"):
                continue  # inside a longer token such as 2d or x86
            out.add(m.group())
    return sorted(out)


def read_data(path) -> tuple[dict, list[dict]]:
    """The data file's metadata and records (gzipped JSON lines, the metadata first)."""
    import gzip

    with gzip.open(path, "rt", encoding="utf-8") as f:
        meta = json.loads(f.readline())["meta"]
        return meta, [json.loads(line) for line in f]


def compile_index(records: list[dict], meta: dict, out: str) -> None:
    """The SQLite file the lookups read, from the data file's records (atomically replaced)."""
    tmp = f"{out}.tmp{os.getpid()}"
    if os.path.exists(tmp):
        os.unlink(tmp)
    db = sqlite3.connect(tmp)
    try:
        db.executescript("""
            create table site (id integer primary key, t text, k text, x text, f text, l integer, fn text, c text, m text,
                               o text, v text, op text, gb text, lit integer, generic integer, p text, vs text);
            create table anchor (word text, site integer, need integer, primary key (word, site)) without rowid;
            create table word (word text primary key, df integer) without rowid;
            create table meta (key text primary key, value text);
        """)
        parsed = [from_text(r["t"]) for r in records]
        words_of = [_anchor_words(p) for p in parsed]
        df: dict[str, int] = {}
        for words in words_of:
            for w in words:
                df[w] = df.get(w, 0) + 1
        anchors, rows = [], []
        for i, (r, pieces, words) in enumerate(zip(records, parsed, words_of), 1):
            ranked = sorted(words, key=lambda w: (df[w], w))
            # boilerplate words ("expected", "internal", "pytorch") anchor only templates that have nothing rarer
            rare = [w for w in ranked if df[w] <= MAX_ANCHOR_DF][:ANCHORS_PER_SITE] or ranked[:2]
            anchors += [(w, i, len(rare)) for w in rare]
            rows.append(
                (
                    i,
                    r["t"],
                    r["k"],
                    r["x"],
                    r["f"],
                    r["l"],
                    r["fn"],
                    r["c"],
                    r["m"],
                    r["o"],
                    r["v"],
                    r.get("op", ""),
                    json.dumps(r["gb"], ensure_ascii=False, sort_keys=True) if r.get("gb") else None,
                    literal_len(pieces),
                    int(is_generic(pieces)),
                    json.dumps(_pieces(r["t"]), ensure_ascii=False),
                    json.dumps(r["vs"]) if r.get("vs") else None,  # the first and last release raising it
                )
            )
        db.executemany("insert into site values (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        db.executemany("insert into anchor values (?,?,?)", sorted(anchors))
        db.executemany("insert into word values (?,?)", sorted(df.items()))
        db.execute("create index site_fl on site(f, l)")
        db.execute("create index site_t on site(t)")
        db.execute("create index site_m on site(m)")
        db.executemany(
            "insert into meta values (?,?)", [(k, json.dumps(v, sort_keys=True)) for k, v in sorted(meta.items())]
        )
        db.commit()
        db.execute("vacuum")
        db.close()
        os.replace(tmp, out)
    finally:  # on any exit, an interrupt included, no temporary file is left behind
        db.close()
        for leftover in (tmp, tmp + "-journal", tmp + "-wal", tmp + "-shm"):
            try:
                os.unlink(leftover)
            except FileNotFoundError:
                pass


def data_file() -> str | None:
    """The data file: ``TBX_LONGTAIL``, else the newest ``longtail-*.jsonl.gz`` of the checkout's or the package's data."""
    if os.environ.get("TBX_LONGTAIL"):
        return os.environ["TBX_LONGTAIL"]
    return _found("longtail", _find_data_file)


_FOUND: dict[str, str | None] = {}


def _found(name: str, find) -> str | None:
    """The shipped data file ``find()`` names, looked for once per process (the package's folder does
    not change under it; a variable naming another file is read on every call)."""
    try:
        return _FOUND[name]
    except KeyError:
        path = _FOUND[name] = find()
        return path


def _find_data_file() -> str | None:
    from explainer.paths import PKG_DIR, source_root

    root = source_root()
    folder = os.path.join(root, "data") if root else os.path.join(PKG_DIR, "_data")
    try:
        names = [
            n
            for n in os.listdir(folder)
            if n.startswith("longtail-") and (n.endswith(".jsonl.gz") or n.endswith(".sqlite"))
        ]
    except OSError:
        return None
    if not names:
        return None

    def version(n):
        v = n[len("longtail-") :].split(".jsonl")[0].split(".sqlite")[0]
        return tuple(int(x) if x.isdigit() else 0 for x in v.split("."))

    best = max(version(n) for n in names)
    same = sorted(n for n in names if version(n) == best)
    pick = next((n for n in same if n.endswith(".jsonl.gz")), same[0])
    return os.path.join(folder, pick)


_LOCK = allocate_lock()
_OPEN: dict[str, LongTail] = {}


def open_longtail(path: str | None = None, *, compile_ok: bool = True, cls=None) -> LongTail | None:
    """The long-tail index, compiled from its data file when the SQLite beside it is missing or older
    (unless ``compile_ok`` is false: then None until it is compiled); None when there is no data file
    (the long tail then stays silent)."""
    path = path or data_file()
    opened = _OPEN.get(path) if path else None
    if opened is not None:  # (each answer asks: no file system call once open)
        return opened
    if not path or not os.path.exists(path):
        return None
    with _LOCK:
        if path in _OPEN:
            return _OPEN[path]
        db_path = path
        if path.endswith(".jsonl.gz"):
            name = os.path.basename(path)[: -len(".jsonl.gz")] + ".sqlite"
            from explainer.paths import cache_dir

            cache = cache_dir()
            # beside the data file, or (a read-only folder) in the user's cache
            fresh = [
                p for p in (os.path.join(os.path.dirname(path), name), os.path.join(cache, name)) if _newer(p, path)
            ]
            if fresh:
                db_path = fresh[0]
            elif not compile_ok:
                return None
            else:
                from pathlib import Path

                meta, records = read_data(Path(path))
                db_path = os.path.join(os.path.dirname(path), name)
                try:
                    compile_index(records, meta, db_path)
                except OSError:
                    os.makedirs(cache, exist_ok=True)
                    db_path = os.path.join(cache, name)
                    compile_index(records, meta, db_path)
        lt = (cls or LongTail)(db_path)
        _OPEN[path] = lt
        return lt


def _newer(path: str, than: str) -> bool:
    try:
        return os.path.getmtime(path) >= os.path.getmtime(than)
    except OSError:
        return False


def info() -> dict | None:
    lt = open_longtail()
    if lt is None:
        return None
    return {"path": lt.path, **lt.meta}


def _record(r: dict, strength: str, sites: int, **fields) -> dict:
    """A ``raised_at`` record of one site of a release read whole (its line exact): what every index
    says of a site, then what this one adds (its origin, library, release, link)."""
    return {
        "exc_type": r["x"] or None,
        "template": r["t"],
        "file": r["f"] or None,
        "line": r["l"],
        "function": r["fn"] or None,
        "op": None,
        "condition": r["c"] or None,
        **fields,
        "strength": strength,
        "sites": sites,
        "kind": r["k"],
    }


class LibTail(LongTail):
    """The raise sites of the libraries around torch (``data/libsites.jsonl.gz``, built by
    :mod:`explainer.knowledge.libsites_build`): the same lookup, each site naming its library and the
    release it was read from."""

    python_only = True  # every site is a Python raise: its exception type is what the paste shows

    def _row(self, row, strength: str, sites: int) -> dict:
        r = row if isinstance(row, dict) else dict(zip(self._cols(self._db()), row))
        return _record(
            r, strength, sites, origin="library", library=r["o"], version=r["v"], torch_version=None, url=None
        )


class TorchHistory(LongTail):
    """The Python raise sites of the other torch releases people run (``data/torchhistory.jsonl.gz``,
    built by :mod:`explainer.knowledge.torchhistory_build`): each at the newest release that raises
    it, its line and link that release's, with the first and last indexed release (``versions``);
    and the C++ sites of torch's CUDA and MPS code, which no CPU build holds (``gpu-source``)."""

    def _row(self, row, strength: str, sites: int) -> dict:
        r = row if isinstance(row, dict) else dict(zip(self._cols(self._db()), row))
        url = REPO.format(version=r["v"], file=r["f"]) + (f"#L{r['l']}" if r["l"] else "") if r["f"] else None
        return _record(
            r,
            strength,
            sites,
            origin=r["o"],  # python; gpu-source or cpp-source: the CUDA/MPS or other C++ code of a source release
            torch_version=r["v"],
            versions=json.loads(r["vs"]) if r.get("vs") else None,
            url=url,
            indexed_version=r["v"],
        )


def _data_path(name: str, env: str, suffixes=(".jsonl.gz", ".sqlite")) -> str | None:
    """A shipped data file of the checkout (``NAME.jsonl.gz``) or of the package (its compiled
    ``NAME.sqlite``); ``env`` overrides."""
    if os.environ.get(env):
        return os.environ[env]

    def find() -> str | None:
        from explainer.paths import data_dir

        for candidate in (name + suffix for suffix in suffixes):
            path = os.path.join(data_dir(), candidate)
            if os.path.exists(path):
                return path
        return None

    return _found(name, find)


_GPU_DIRS = ("/cuda/", "/cudnn/", "/mps/", "/miopen/", "/hip/")
_GPU_SUFFIXES = (".cu", ".cuh", ".mm")


def is_gpu_file(rel: str) -> bool:
    """CUDA, cuDNN, MPS (and ROCm) code, which no CPU build holds."""
    return rel.endswith(_GPU_SUFFIXES) or (
        rel.endswith((".cpp", ".cc", ".h", ".hpp")) and any(d in "/" + rel for d in _GPU_DIRS)
    )


def release_span() -> tuple[str, str] | None:
    """The oldest and newest release whose libraries gave the C++ templates their ``versions``."""
    lt = open_longtail(compile_ok=False)
    releases = ((lt.meta.get("ranges_from") or {}).get("releases") or []) if lt is not None else []
    return (minor_floor(releases[0]), releases[-1]) if releases else None


_ASSERTS: dict = {}  # the internal-assert index, read on first use (only a pasted assert asks)


def assert_releases(file: str, line: int) -> list[str] | None:
    """``[first, last]``: the releases whose libraries have an internal assert at ``file``:``line``
    (``data/torchasserts.json.gz``, built by :mod:`explainer.knowledge.torchhistory_build`), or None."""
    if "data" not in _ASSERTS:
        import gzip

        path = _data_path("torchasserts", "TBX_TORCHASSERTS", suffixes=(".json.gz",))
        _ASSERTS["data"] = {}
        if path:
            try:
                with gzip.open(path, "rb") as f:
                    _ASSERTS["data"] = json.loads(f.read())
            except (OSError, ValueError):
                pass  # a damaged file dates nothing
    data = _ASSERTS["data"]
    encoded = (data.get("files") or {}).get(file)
    if not encoded:
        return None
    at = 0
    for row in encoded.split(" "):
        delta, first, last = row.split(":")
        at += int(delta)
        if at == line:
            return [minor_floor(data["releases"][int(first)]), data["releases"][int(last)]]
        if at > line:
            return None
    return None


def wording_era(message: str) -> dict | None:
    """The releases the way c10 wraps a C++ error reads as: ``Exception raised from F at P:L (most
    recent call first)`` (written from the release the history's libraries first hold it in), or
    the older ``msg (F at P:L)`` (written before it); measured by
    :mod:`explainer.knowledge.torchhistory_build` (its meta's ``wordings``). None for neither."""
    new = "Exception raised from " in message and _RAISED_FROM.search(message)
    old = not new and " at " in message and _OLD_AT.search(message[:4000])
    if not new and not (old and _BUILD_PREFIX.search(old.group(2).replace("\\", "/"))):
        return None
    lt, history = open_longtail(compile_ok=False), open_torchhistory(compile_ok=False)
    indexed = ((lt.meta.get("ranges_from") or {}).get("releases") or []) if lt is not None else []
    releases = [minor_floor(v) for v in indexed]
    since = ((history.meta.get("wordings") or {}) if history is not None else {}).get(
        "Exception raised from {} at {} (most recent call first)"
    )
    if not since or since[0] not in releases:
        return None
    if new:
        return {
            "range": since,
            "evidence": [f"'Exception raised from ... (most recent call first)': torch {since[0]} and later"],
        }
    first = releases.index(since[0])
    if first == 0:
        return None
    before = indexed[first - 1]
    return {
        "range": [releases[0], before],
        "evidence": [f"the message ends '(function at file:line)': torch {before} and older write it so"],
    }


def minor_floor(version: str) -> str:
    """``1.13.1`` -> ``1.13.0``: a range's first release at the precision it was measured (the last
    patch release of each minor release is read; a patch release seldom changes a message)."""
    major, minor = version.split(".")[:2]
    return f"{major}.{minor}.0"


def open_torchhistory(*, compile_ok: bool = True) -> TorchHistory | None:
    path = _data_path("torchhistory", "TBX_TORCHHISTORY")
    lt = open_longtail(path, compile_ok=compile_ok, cls=TorchHistory) if path else None
    return lt if isinstance(lt, TorchHistory) else None


def libsites_file() -> str | None:
    """The libraries' raise-site data file of the checkout or the package (``TBX_LIBSITES`` overrides)."""
    return _data_path("libsites", "TBX_LIBSITES")


def open_libsites(*, compile_ok: bool = True) -> LibTail | None:
    path = libsites_file()
    lt = open_longtail(path, compile_ok=compile_ok, cls=LibTail) if path else None
    return lt if isinstance(lt, LibTail) else None
