"""The gap log: what the explainer could not answer well, recorded only when the user turns it on.

Off by default. ``TBX_GAPS=1`` turns it on for the CLI and the hooks, ``tbx serve --record-gaps`` for
the server. What is recorded, for abstentions, ambiguous answers and low-confidence answers only, is a
*signature built from what torch and the libraries wrote* (:func:`signature`), never the user's text
with known secrets taken out: an allow-list, not a deny-list.

- the message keeps a word only where torch's own messages have it (the long-tail index's
  vocabulary, the knowledge base's patterns, a short list of English function words); every other
  run of characters (a name, a path, a key, a password, an address, a number) is one ``<*>``;
- the exception type is kept when Python or a known library defines it, otherwise ``<type>``;
- torch's frames as ``module:function``, read from installed packages only (never a user frame or a
  code line); the torch version the paste shows; what was answered (ids and scores); the day; a count.

Storage: SQLite in the user's data directory (``TBX_GAPS_PATH`` overrides; WAL mode, so several
workers of one host write safely), or PostgreSQL when ``TBX_GAPS_URL=postgresql://...`` is set
(the same table; needs ``psycopg``). Recording never raises: a failing store logs one warning.
``tbx gaps`` clusters the signatures (same type, similar message by rapidfuzz, shared frames).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sys
import threading
import time

LOW_CONFIDENCE = 0.7  # an answer below this is recorded as a gap
MAX_MESSAGE = 600  # characters of the parameterised message kept
REGEX_CAP = MAX_MESSAGE * 4  # what the signature's expressions read of a message (the regex attack's cap)
ENV_ON, ENV_PATH, ENV_URL = "TBX_GAPS", "TBX_GAPS_PATH", "TBX_GAPS_URL"
log = logging.getLogger("explainer.surfaces.gaps")

_TORCH_VERSION = re.compile(
    r"(?i)\b(?:py)?torch(?:\s{1,3}version)?\s{0,3}(?:[:=]{1,2}|\s)\s{0,3}v?(\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)"
)

# --- the allow-list ------------------------------------------------------------------------------

# English function words of three letters or fewer: the long tail's vocabulary holds words of three
# letters and more, and these carry no secret
_SHORT = frozenset(
    "a an as at be by do if in is it no of on or so to up vs and are but can for has its may not one "
    "the too two use was who why you all any did get got had how new now off out own per see set try".split()
)
# the roots of exception types that a package defines (a user's own type is not stored)
_TYPE_ROOTS = frozenset(
    "torch torchvision torchaudio numpy scipy pandas sklearn transformers diffusers accelerate deepspeed vllm "
    "peft datasets tokenizers safetensors huggingface_hub bitsandbytes xformers flash_attn triton apex timm "
    "lightning pytorch_lightning mmcv mmengine mmdet onnx onnxruntime tensorflow keras jax PIL cv2 ray wandb "
    "omegaconf hydra yaml h5py requests urllib3 http urllib ssl socket json pickle _pickle multiprocessing "
    "concurrent asyncio subprocess zipfile tarfile sqlite3 importlib".split()
)
# a run of non-space characters is read as words, numbers and these marks; any other character (a
# letter of another script, an at sign, a backslash) makes the whole run one placeholder
_CHUNK = re.compile(r"[a-z][a-z0-9_]{0,80}|[0-9]{1,80}|[\u4e00-\u9fff]{1,80}|[()\[\]{},.;:'\"!?=+\-*/%|&^~#`<>]")
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,80}")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]{1,200}")
_vocab: dict[str, tuple[frozenset[str], str]] = {}
_vocab_lock = threading.Lock()


def vocabulary(index=None) -> tuple[frozenset[str], str]:
    """The words torch and the libraries write (lower case), and the Chinese text of the knowledge
    base's patterns: what a signature may keep. Read once per process and index, once the long
    tail is there (a process that recorded a gap before it was compiled keeps none of its words)."""
    key = getattr(index, "path", "") or ""
    with _vocab_lock:
        if key in _vocab:
            return _vocab[key]
        words: set[str] = set(_SHORT)
        han: list[str] = []
        from explainer.match.longtail import open_longtail

        try:
            lt = open_longtail(compile_ok=False)
        except Exception:  # noqa: BLE001 - no long tail: the knowledge base's words only
            lt = None
        if lt is not None:
            words.update(lt.words())
        for row in getattr(index, "patterns", None) or ():
            words.update(w.lower() for w in _WORDS.findall(row[2]))
            han += _HAN_RUN.findall(row[2])
        for e in (getattr(index, "entries", None) or {}).values():
            for t in e.get("exception_types") or ():
                words.update(w.lower() for w in _WORDS.findall(t))
            han += _HAN_RUN.findall(e.get("title_zh") or "")
        found = (frozenset(words), "\n".join(han))
        if lt is not None:  # without the long tail (not compiled yet) read again next time
            _vocab[key] = found
        return found


_HOST_END = re.compile(r"\.(?:com|net|org|io|ai|dev|cloud|internal|local|lan|corp|cn|edu|gov|uk|de)\W*$")


def _allowed_run(run: str, words: frozenset[str], han: str) -> bool:
    if "@" in run and run != "@" or "://" in run:
        return False  # an address, a user:password@host, a URL: whatever words it is made of
    if "." in run and ("-" in run or _HOST_END.search(run)):
        return False  # a host name (gpu-node-17.cluster.internal), even one made of torch's words
    pos = 0
    for m in _CHUNK.finditer(run):
        if m.start() != pos:
            return False  # a character outside the allowed classes
        pos = m.end()
        c = m.group()
        if c[0].isalpha() and c[0] <= "z":
            if c not in words:
                return False
        elif "\u4e00" <= c[0] <= "\u9fff" and not all(c[i : i + 2] in han for i in range(max(1, len(c) - 1))):
            return False  # every two characters in a row are text of the knowledge base's patterns
    return pos == len(run)


def redact(text: str, index=None) -> str:
    """The message as torch's words only: every run of non-space characters that is not made of
    words torch writes (and marks and numbers) is one ``<*>``, then the rest is normalised
    (:func:`explainer.normalize.normalize`: numbers, shapes, dtypes, quoted names become ``<*>``). An
    allow-list: a secret is kept only if it is spelled as words of torch's own messages."""
    import unicodedata

    from explainer.normalize import normalize

    words, han = vocabulary(index)
    s = unicodedata.normalize("NFKC", text[: MAX_MESSAGE * 4])
    out: list[str] = []
    for run in s.split():
        kept = run if _allowed_run(run.lower(), words, han) else "<*>"
        if kept != "<*>" or not out or out[-1] != "<*>":
            out.append(kept)
    return normalize(" ".join(out))[:MAX_MESSAGE]


def allowed_type(exc_type: str | None, index=None) -> str | None:
    """The exception type when Python or a known package defines it (or the knowledge base names
    it), ``<type>`` for any other (a user's own class names their project), None when there is none."""
    if not exc_type:
        return None
    if not re.fullmatch(r"[A-Za-z_][\w.]{0,119}", exc_type):
        return "<type>"
    import builtins

    if "." not in exc_type:
        obj = getattr(builtins, exc_type, None)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            return exc_type
    elif exc_type.split(".", 1)[0] in _TYPE_ROOTS:
        return exc_type
    for e in (getattr(index, "entries", None) or {}).values():
        if exc_type in (e.get("exception_types") or ()):
            return exc_type
    return "<type>"


_INSTALLED = re.compile(r"[\\/](?:site|dist)-packages[\\/]torch[\\/]|[\\/]lib[\\/]python[\d.]*[\\/]torch[\\/]")


def torch_frames(parsed) -> list[str]:
    """The paste's torch frames as ``module:function`` (``torch.nn.modules.module:_call_impl``)."""
    out: list[str] = []
    for f in parsed.frames:
        path = (f.file or "").replace("\\", "/")
        i = path.rfind("/torch/")
        # an installed torch only: a checkout or a folder of the user's named torch holds their names
        if not f.library or i < 0 or not f.function or not path.endswith(".py") or not _INSTALLED.search(path):
            continue
        module = path[i + 1 : -3].replace("/", ".").removesuffix(".__init__")
        name = f"{module}:{f.function}"
        if re.fullmatch(r"[\w.]{1,200}:[\w<>]{1,100}", name) and name not in out:
            out.append(name)
    return out[-12:]


def gap_reason(answer) -> str | None:
    """Why this answer is a gap (``abstained``, ``ambiguous``, ``low``), or None when it is not."""
    if not answer.parsed.exc_type and not answer.parsed.frames:
        return None  # no exception type and no traceback: prose, not an error anybody could curate
    if not answer.matches:
        return "abstained"
    if answer.ambiguous:
        return "ambiguous"
    if answer.matches[0].score < LOW_CONFIDENCE:
        return "low"
    return None


def signature(answer, text: str = "", index=None) -> dict | None:
    """The redacted record of one gap, or None when the answer is not a gap."""
    reason = gap_reason(answer)
    if reason is None:
        return None
    p = answer.parsed
    m = _TORCH_VERSION.search(text[-200_000:]) if text else None
    answered = [[c.id, round(c.score, 3)] for c in (answer.matches or answer.candidates)[:3]]
    sig = {
        "exc_type": allowed_type(p.exc_type, index),
        "message": redact(p.message or "", index),
        "frames": torch_frames(p),
        "torch_version": m.group(1) if m else None,
        "reason": reason,
        "answered": answered,
    }
    sig["key"] = hashlib.sha1(
        json.dumps([sig["exc_type"], sig["message"], sig["frames"], reason], ensure_ascii=False).encode()
    ).hexdigest()
    return sig


def enabled() -> bool:
    return os.environ.get(ENV_ON, "").lower() in ("1", "true", "yes", "on")


def default_path() -> str:
    """``gaps.sqlite`` in the user's data directory (XDG on Linux, Application Support, LOCALAPPDATA)."""
    if os.environ.get(ENV_PATH):
        return os.environ[ENV_PATH]
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~/AppData/Local")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Application Support")
    else:
        base = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return os.path.join(base, "traceback-explainer", "gaps.sqlite")


_COLUMNS = ("key", "day", "exc_type", "message", "frames", "torch_version", "reason", "answered", "count")
_DDL = (
    "create table if not exists gaps (key text not null, day text not null, exc_type text, message text not null, "
    "frames text not null, torch_version text, reason text not null, answered text not null, count integer not null, "
    "primary key (key, day))"
)


def _wal(conn, tries: int = 200) -> None:
    """Switch a new SQLite file to WAL. The switch needs an exclusive lock, and SQLite answers
    'database is locked' at once, without its busy handler, when another connection opens the same
    new file at that moment; so the mode is read first (WAL persists in the file) and the switch retried."""
    import sqlite3

    for attempt in range(tries):
        try:
            if conn.execute("pragma journal_mode").fetchone()[0].lower() == "wal":
                return
            conn.execute("pragma journal_mode=wal")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or attempt == tries - 1:
                raise
            time.sleep(0.005 * (1 + attempt % 10))


class Store:
    """The gap table in SQLite or PostgreSQL: one row per signature and day, with a count."""

    def __init__(self, url: str | None = None, path: str | None = None) -> None:
        self.url = url if url is not None else os.environ.get(ENV_URL)
        self.path = path or default_path()
        self._local = threading.local()
        self.pg = bool(self.url and self.url.startswith(("postgres://", "postgresql://")))

    def _conn(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self.pg:
                import psycopg

                assert self.url is not None  # pg is only set from a url
                conn = psycopg.connect(self.url, autocommit=True)
                with conn.transaction():  # concurrent 'create table if not exists' race in PostgreSQL
                    conn.execute("select pg_advisory_xact_lock(727274)")
                    conn.execute(_DDL)
            else:
                import sqlite3

                os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
                conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
                _wal(conn)
                conn.execute("pragma synchronous=normal")  # WAL stays consistent; a gap row may be lost on power loss
                conn.execute(_DDL)
            self._local.conn = conn
        return conn

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.pg else sql

    def add(self, sig: dict, day: str | None = None) -> None:
        day = day or time.strftime("%Y-%m-%d", time.gmtime())
        row = (
            sig["key"],
            day,
            sig["exc_type"],
            sig["message"],
            json.dumps(sig["frames"]),
            sig["torch_version"],
            sig["reason"],
            json.dumps(sig["answered"]),
            1,
        )
        self._conn().execute(
            self._sql(
                f"insert into gaps ({', '.join(_COLUMNS)}) values ({', '.join('?' * len(_COLUMNS))}) "
                "on conflict (key, day) do update set count = gaps.count + 1, answered = excluded.answered"
            ),
            row,
        )

    def rows(self, since: str | None = None) -> list[dict]:
        sql = f"select {', '.join(_COLUMNS)} from gaps" + (" where day >= ?" if since else "") + " order by day"
        cur = self._conn().execute(self._sql(sql), (since,) if since else ())
        out = []
        for r in cur.fetchall():
            d = dict(zip(_COLUMNS, r))
            d["frames"], d["answered"] = json.loads(d["frames"]), json.loads(d["answered"])
            out.append(d)
        return out

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


_warned = False


def record(answer, text: str = "", store: Store | None = None, index=None) -> bool:
    """Record ``answer`` when it is a gap; True when a row was written. Never raises."""
    global _warned
    try:
        sig = signature(answer, text, index)
        if sig is None:
            return False
        (store or Store()).add(sig)
        return True
    except Exception as exc:  # noqa: BLE001 - the gap log must never break an answer
        if not _warned:
            log.warning("the gap log could not record this answer: %s: %s", type(exc).__name__, exc)
            _warned = True
        return False


class Recorder:
    """Records off the caller's thread (the server): a bounded queue and one writer thread, so a
    slow or failing store never slows or fails a request. ``flush()`` waits until the queue is empty."""

    def __init__(self, store: Store | None = None, maxsize: int = 10_000) -> None:
        import queue

        self.store = store or Store()
        self.queue: queue.Queue = queue.Queue(maxsize=maxsize)
        self.dropped = 0
        self._thread = threading.Thread(target=self._run, name="tbx-gaps", daemon=True)
        self._thread.start()

    def submit(self, answer, text: str = "", index=None) -> None:
        try:
            sig = signature(answer, text, index)
        except Exception:  # noqa: BLE001
            return
        if sig is None:
            return
        try:
            self.queue.put_nowait(sig)
        except Exception:  # noqa: BLE001 - full: drop, never block a request
            self.dropped += 1

    def _run(self) -> None:
        while True:
            sig = self.queue.get()
            try:
                self.store.add(sig)
            except Exception as exc:  # noqa: BLE001
                log.warning("the gap log could not record: %s: %s", type(exc).__name__, exc)
            finally:
                self.queue.task_done()

    def flush(self) -> None:
        self.queue.join()


# -- tbx gaps -------------------------------------------------------------------------------------

SIMILAR = 85  # rapidfuzz token_set_ratio for two messages of one cluster
BLOCK_WORDS = 3  # a signature is compared only with clusters sharing one of its rarest words ...
BLOCK_RECENT = 64  # ... among the latest clusters each such word names ...
MAX_COMPARED = 16  # ... at most this many, those sharing most words first
CLUSTER_BUDGET_S = 3.0  # past this, signatures join a cluster only on the same type and message
_CLUSTER_WORD = re.compile(r"[a-z][a-z0-9_]{2,40}|[\u4e00-\u9fff]{2,40}")


def clusters(rows: list[dict], *, budget_s: float = CLUSTER_BUDGET_S) -> list[dict]:
    """Signatures grouped: the same exception type, similar messages, and shared torch frames when
    both have some. Largest first.

    Linear in the number of signatures: identical (type, message) pairs are merged by a dict; each
    other signature is compared (rapidfuzz) with at most ``MAX_COMPARED`` clusters of its type that
    share one of its ``BLOCK_WORDS`` rarest words, so 20 000 distinct gaps cost 20 000 x 16
    comparisons at most, not 20 000² / 2. Past ``budget_s`` the rest are merged on equal messages
    only."""
    from collections import Counter

    from rapidfuzz import fuzz, process

    deadline = time.monotonic() + budget_s
    by_key: dict[str, dict] = {}
    for r in rows:
        cur = by_key.get(r["key"])
        if cur is None:
            by_key[r["key"]] = dict(r)
        else:
            cur["count"] += r["count"]
            cur["day"] = max(cur["day"], r["day"])
    sigs = sorted(by_key.values(), key=lambda s: -s["count"])
    words_of = [set(_CLUSTER_WORD.findall(s["message"] or "")) for s in sigs]
    df = Counter(w for ws in words_of for w in ws)
    out: list[dict] = []
    exact: dict[tuple, dict] = {}
    postings: dict[tuple, list[int]] = {}  # (type, word) -> clusters, in order made
    for sig, words in zip(sigs, words_of):
        t = sig["exc_type"]
        c = exact.get((t, sig["message"]))
        if c is None and time.monotonic() < deadline:
            rare = sorted(words, key=lambda w: (df[w], w))[:BLOCK_WORDS]
            shared = Counter(i for w in rare for i in postings.get((t, w), ())[-BLOCK_RECENT:])
            frames = set(sig["frames"])
            cands = [
                out[i]
                for i, _n in shared.most_common(MAX_COMPARED)
                if not (out[i]["frames"] and frames and not frames.intersection(out[i]["frames"]))
            ]
            if cands:
                best = process.extractOne(
                    sig["message"], [x["message"] for x in cands], scorer=fuzz.token_set_ratio, score_cutoff=SIMILAR
                )
                c = cands[best[2]] if best else None
        if c is not None:
            c["count"] += sig["count"]
            c["members"] += 1
            c["last_day"] = max(c["last_day"], sig["day"])
            c["reasons"][sig["reason"]] = c["reasons"].get(sig["reason"], 0) + sig["count"]
            continue
        c = {
            "exc_type": t,
            "message": sig["message"],
            "frames": sig["frames"],
            "torch_version": sig["torch_version"],
            "count": sig["count"],
            "members": 1,
            "last_day": sig["day"],
            "reasons": {sig["reason"]: sig["count"]},
            "answered": sig["answered"],
        }
        exact[(t, sig["message"])] = c
        for w in words:
            postings.setdefault((t, w), []).append(len(out))
        out.append(c)
    out.sort(key=lambda c: -c["count"])
    return out


def nearest(cluster: dict, index) -> list[list]:
    """The curated entries closest to a cluster's example (even below the answer threshold)."""
    from explainer.match.explain import explain_text

    text = f"{cluster['exc_type'] or 'Error'}: {cluster['message']}"
    return [[c.id, c.score] for c in explain_text(text, index, top=2).candidates[:2]]


def _comment_safe(text: str) -> str:
    """Text that cannot close an HTML comment (``--`` and ``--->`` included): each hyphen before
    another is followed by a space."""
    return re.sub(r"-(?=-)", "- ", text).replace("--", "- -")


def draft(cluster: dict) -> str:
    """The start of a new entry for a cluster, in the form of ``kb/README.md``."""
    n = 0

    def placeholder(_m) -> str:
        nonlocal n
        n += 1
        return f"{{v{n}}}"

    pattern = re.sub(r"<\*>|<(?:url|email|secret|ip|path|file|host|name)>", placeholder, cluster["message"])
    words = re.findall(r"[a-z]{3,}", cluster["message"])[:5]
    slug = "-".join(words) or "new-entry"
    frames = [f"{m.split(':')[0].replace('.', '/')}.py:{m.split(':')[1]}" for m in cluster["frames"]][::-1][:3]
    return (
        "\n".join(
            [
                "+++",
                f'id = "{slug}"',
                'title = { en = "TODO", zh = "TODO" }',
                'category = "other"',
                'kind = "error"',
                f"exception_types = [{json.dumps(cluster['exc_type'] or 'RuntimeError')}]",
                "patterns = [",
                f"  {json.dumps(pattern, ensure_ascii=False)},  # TODO: the exact torch wording, from a reproducer",
                "]",
                "frames = [" + ", ".join(json.dumps(f) for f in frames) + "]",
                "excludes = []",
                "related = []",
                'torch_verified = ["2.13.0"]',
                "docs = []",
                "+++",
                "",
                f"<!-- {cluster['count']} gap(s) recorded; parameterised example: {_comment_safe(cluster['message'][:200])} -->",
            ]
        )
        + "\n"
    )
