"""The gap log: what the explainer could not answer well, recorded only when the user turns it on.

Off by default. ``TBX_GAPS=1`` turns it on for the CLI and the hooks, ``tbx serve --record-gaps`` for
the server. What is recorded, for abstentions, ambiguous answers and low-confidence answers only, is a
*redacted signature* (:func:`signature`): the exception type, the message with every value replaced
by a placeholder (numbers, shapes, paths, file and user names, hex, e-mail addresses, URLs, IPs, host
names, tokens and keys), the torch frames as ``module:function`` (never a user frame or a code line),
the torch version when the paste shows one, what was answered (ids and scores), the day, and a
count. Never the paste, the user's code or paths.

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
ENV_ON, ENV_PATH, ENV_URL = "TBX_GAPS", "TBX_GAPS_PATH", "TBX_GAPS_URL"
log = logging.getLogger("explainer.gaps")

# Redaction, in order; every expression is linear (bounded repetitions, no nested quantifiers).
_REDACT = [
    (re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s'\"<>]+"), "<url>"),
    (re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}"), "<email>"),
    (re.compile(r"(?i)\b(bearer|basic)\s{1,3}[^\s,;]{8,400}"), r"\1 <secret>"),
    (
        re.compile(
            r"(?i)\b(token|api[_-]?key|secret|password|passwd|pwd|authorization|auth|access[_-]?key)\b(\s{0,3}[:=]\s{0,3})[^\s,;]{1,400}"
        ),
        r"\1\2<secret>",
    ),
    (
        re.compile(
            r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,400}|\bgh[pousr]_[A-Za-z0-9]{16,400}|\bhf_[A-Za-z0-9]{16,400}|\bAKIA[0-9A-Z]{16}\b|\bxox[abpr]-[A-Za-z0-9-]{8,400}|\beyJ[\w-]{4,400}\.[\w-]{4,400}\.[\w-]{4,400}"
        ),
        "<secret>",
    ),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b"), "<ip>"),
    (re.compile(r"(?i)\b(?:[0-9a-f]{1,4}:){2,7}[0-9a-f]{1,4}\b"), "<ip>"),
    (re.compile(r"(?i)\b[a-z]:[\\/][^\s'\"]{0,400}|\\\\[^\s'\"]{1,400}"), "<path>"),
    (re.compile(r"(?:~|\.{0,2})/[^\s'\"():,;]{1,400}"), "<path>"),
    (
        re.compile(
            r"(?i)\b[\w-]{1,200}\.(?:pt|pth|ckpt|bin|safetensors|pkl|pickle|py|ipynb|json|ya?ml|csv|tsv|npy|npz|h5|onnx|txt|log|zip|tar|gz|jpg|jpeg|png)\b"
        ),
        "<file>",
    ),
    (
        re.compile(
            r"(?i)\b(?:[a-z0-9-]{1,63}\.){1,8}(?:com|net|org|io|ai|dev|cloud|internal|local|lan|corp|cn|edu|gov|uk|de)\b"
        ),
        "<host>",
    ),
    (
        re.compile(r"(?i)\b(host(?:name)?|node|user(?:name)?|machine)(\s{0,3}[:=]\s{0,3}|\s{1,3})[\w.-]{1,100}"),
        r"\1\2<name>",
    ),
    (re.compile(r"\b[A-Za-z0-9_+/=-]{24,400}"), None),  # long token-like runs: only those mixing letters and digits
]
_TORCH_VERSION = re.compile(
    r"(?i)\b(?:py)?torch(?:\s{1,3}version)?\s{0,3}(?:[:=]{1,2}|\s)\s{0,3}v?(\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)"
)


def _tokenish(m: re.Match[str]) -> str:
    s = m.group(0)
    return "<secret>" if re.search(r"\d", s) and re.search(r"[A-Za-z]", s) else s


def redact(text: str) -> str:
    """The text with personal and secret values replaced by placeholders, then normalised
    (:func:`explainer.normalize.normalize`: numbers, shapes, dtypes, quoted names)."""
    from .normalize import normalize

    s = text[: MAX_MESSAGE * 4]
    for rx, repl in _REDACT:
        s = rx.sub(_tokenish if repl is None else repl, s)
    return normalize(s)[:MAX_MESSAGE]


def torch_frames(parsed) -> list[str]:
    """The paste's torch frames as ``module:function`` (``torch.nn.modules.module:_call_impl``)."""
    out: list[str] = []
    for f in parsed.frames:
        path = (f.file or "").replace("\\", "/")
        i = path.rfind("/torch/")
        if not f.library or i < 0 or not f.function or not path.endswith(".py"):
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


def signature(answer, text: str = "") -> dict | None:
    """The redacted record of one gap, or None when the answer is not a gap."""
    reason = gap_reason(answer)
    if reason is None:
        return None
    p = answer.parsed
    exc_type = p.exc_type if p.exc_type and re.fullmatch(r"[\w.:]{1,120}", p.exc_type) else None
    m = _TORCH_VERSION.search(text[-200_000:]) if text else None
    answered = [[c.id, round(c.score, 3)] for c in (answer.matches or answer.candidates)[:3]]
    sig = {
        "exc_type": exc_type,
        "message": redact(p.message or ""),
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
                conn.execute("pragma journal_mode=wal")
                conn.execute("pragma synchronous=normal")  # WAL stays consistent; a gap row may be lost on power loss
                conn.execute("pragma busy_timeout=30000")
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


def record(answer, text: str = "", store: Store | None = None) -> bool:
    """Record ``answer`` when it is a gap; True when a row was written. Never raises."""
    global _warned
    try:
        sig = signature(answer, text)
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

    def submit(self, answer, text: str = "") -> None:
        try:
            sig = signature(answer, text)
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


def clusters(rows: list[dict]) -> list[dict]:
    """Signatures grouped: the same exception type, similar messages, and shared torch frames when
    both have some. Largest first."""
    from rapidfuzz import fuzz

    by_key: dict[str, dict] = {}
    for r in rows:
        cur = by_key.get(r["key"])
        if cur is None:
            by_key[r["key"]] = dict(r)
        else:
            cur["count"] += r["count"]
            cur["day"] = max(cur["day"], r["day"])
    out: list[dict] = []
    for sig in sorted(by_key.values(), key=lambda s: -s["count"]):
        for c in out:
            if c["exc_type"] != sig["exc_type"]:
                continue
            if c["frames"] and sig["frames"] and not set(c["frames"]) & set(sig["frames"]):
                continue
            if fuzz.token_set_ratio(c["message"], sig["message"]) >= SIMILAR:
                c["count"] += sig["count"]
                c["members"] += 1
                c["last_day"] = max(c["last_day"], sig["day"])
                c["reasons"][sig["reason"]] = c["reasons"].get(sig["reason"], 0) + sig["count"]
                break
        else:
            out.append(
                {
                    "exc_type": sig["exc_type"],
                    "message": sig["message"],
                    "frames": sig["frames"],
                    "torch_version": sig["torch_version"],
                    "count": sig["count"],
                    "members": 1,
                    "last_day": sig["day"],
                    "reasons": {sig["reason"]: sig["count"]},
                    "answered": sig["answered"],
                }
            )
    out.sort(key=lambda c: -c["count"])
    return out


def nearest(cluster: dict, index) -> list[list]:
    """The curated entries closest to a cluster's example (even below the answer threshold)."""
    from .core import explain_text

    text = f"{cluster['exc_type'] or 'Error'}: {cluster['message']}"
    return [[c.id, c.score] for c in explain_text(text, index, top=2).candidates[:2]]


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
                f"<!-- {cluster['count']} gap(s) recorded; parameterised example: {cluster['message'][:200].replace('--', '- -')} -->",
            ]
        )
        + "\n"
    )
