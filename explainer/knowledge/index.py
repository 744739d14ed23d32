"""The SQLite index: built from ``kb/`` with sqlite-utils, read with the standard ``sqlite3``.

Tables: ``entries`` (one row per entry, its rendered parts as JSON), ``patterns`` (one row per message
pattern), ``search`` (one row per entry and language: its fields' words, Chinese runs as bigrams so
that two-character queries such as 标量 work; :mod:`explainer.knowledge.search` ranks them), ``meta`` (the fingerprint of the
kb files it was built from). Reading imports neither sqlite-utils nor markdown-it: the hot path of
``tbx explain --json`` costs one ``sqlite3`` connection.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys

from explainer.model import IndexError_  # the surfaces import it from here too

TYPE_CHECKING = False  # the annotations are strings: typing is not imported at run time
if TYPE_CHECKING:
    from explainer.knowledge.search import SearchIndex
    from explainer.match.matcher import Matcher

SCHEMA_VERSION = (
    "20"  # 6: fixes and causes for the answer; 7: template regexes compiled linear; 9: head_share; 10: pieces;
    # 11: the start-up blob holds each pattern's entry and words only, the rows are read when needed;
    # 12: it holds the matcher's word table, built once; 13: each entry's raised_by; 14-16: quoted words;
    # 17: search rows hold each field's terms, meta the document frequencies; 18: each entry's unless;
    # 19: signal literals may be Chinese; 20: a pattern another entry's template matches is marked
)
_JSON_COLUMNS = ("exception_types", "frames", "signals", "excludes", "unless", "raised_by")


def fingerprint(kb_dir) -> str:
    """Names, sizes and modification times of the kb files: cheap to take on every start."""
    items = []
    with os.scandir(kb_dir) as it:
        for e in it:
            if e.name.endswith(".md"):
                try:
                    st = e.stat()
                except OSError:  # a dangling symlink: lint and build report it
                    items.append((e.name, -1, -1))
                    continue
                items.append((e.name, st.st_size, st.st_mtime_ns))
    items.sort()
    return SCHEMA_VERSION + ";" + ";".join(f"{n}:{sz}:{mt}" for n, sz, mt in items)


def content_hash(kb_dir) -> str:
    import hashlib

    h = hashlib.sha1(SCHEMA_VERSION.encode())
    for name in sorted(n for n in os.listdir(kb_dir) if n.endswith(".md")):
        try:
            with open(os.path.join(kb_dir, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
        except OSError:
            h.update(name.encode() + b"\0?")
    return h.hexdigest()


def entry_doc(e) -> dict:
    return {
        "id": e.id,
        "title": e.meta.get("title", {}),
        "category": e.meta.get("category"),
        "kind": e.meta.get("kind"),
        "summary": e.summary,
        "explanation": e.explanation,
        "debugging": e.debugging,
        "causes": e.causes,
        "fixes": [_fix_doc(e, f) for f in e.fixes],
        "docs": e.meta.get("docs", []),
        "related": e.meta.get("related", []),
        "exception_types": e.meta.get("exception_types", []),
        "patterns": e.meta.get("patterns", []),
    }


def _fix_doc(e, f: dict) -> dict:
    """A fix as the answer needs it: texts, causes, its rewrite or template, the reproducer lines its
    generic example is made from, and whether a snippet that runs without special hardware tests it."""
    exercised = e.exercising(f)
    if f["rewrites"]:
        tested = [s for s, *_ in exercised]
    else:
        tested = f["fix_snippets"]
    doc = {k: v for k, v in f.items() if k not in ("fix_snippets", "templates", "rewrites")}
    return doc | {
        "template": (f["templates"] or [""])[0],
        "rewrite": (f["rewrites"] or [None])[0],
        "example_lines": [s.code.split("\n")[line - 1].strip() for s, _, _, line in exercised],
        "verified": any(all(_TORCH_RELEASES.match(r) for r in s.requires) for s in tested),
    }


# a snippet that runs on some releases of torch only (`requires=torch<2.15`) still runs on any machine
_TORCH_RELEASES = re.compile(r"torch\s*[<>=!~]")


def is_index(path) -> bool:
    """Whether ``path`` is an index this tool wrote (a SQLite file whose ``meta`` has a fingerprint)."""
    try:
        con = sqlite3.connect(f"file:{os.fspath(path)}?mode=ro", uri=True)
        try:
            return con.execute("select value from meta where key = 'fingerprint'").fetchone() is not None
        finally:
            con.close()
    except sqlite3.Error:
        return False


def may_write(out) -> bool:
    """Whether an index may be written at ``out``: nothing is there, an index is there, or it is a
    place the tool owns (a checkout's ``data/index.sqlite``, the user's cache). A user's own file
    that ``TBX_INDEX`` or ``--out`` names by mistake is never replaced."""
    from explainer.paths import owned_index_paths

    path = os.fspath(out)
    if not os.path.lexists(path):
        return True
    if os.path.islink(path) or not os.path.isfile(path):
        return False  # a link, a FIFO, a device, a folder: not an index file
    return os.path.abspath(path) in owned_index_paths() or is_index(path)


def build_index(kb_dir, out) -> dict:
    """Compile every entry of ``kb_dir`` into a fresh SQLite file at ``out`` (atomically replaced).
    Refuses (:class:`IndexError_`) to replace a file that is not an index (:func:`may_write`)."""
    from pathlib import Path

    from explainer.knowledge.kb import read_all
    from explainer.knowledge.schema import schema_problems

    if not may_write(out):
        raise IndexError_(
            f"{os.fspath(out)} is not a traceback-explainer index; not replacing it "
            "(point TBX_INDEX or --out at a new file, or remove this one)"
        )
    kb_dir, out = Path(kb_dir), Path(out)
    fp = fingerprint(kb_dir)  # before reading: a file written meanwhile makes the index stale, not wrong
    entries, skipped = [], []
    for e in read_all(kb_dir):
        problems = schema_problems(e)
        if problems:
            skipped.append(f"{e.path}: skipped: {problems[0]}")
        else:
            entries.append(e)
    for line in skipped:
        print(f"tbx: warning: {line}", file=sys.stderr)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    try:
        _write(entries, tmp, kb_dir, fp)
        os.replace(tmp, out)
    finally:  # on any exit, Ctrl-C included, no temporary file is left behind
        for leftover in (
            tmp,
            tmp.with_name(tmp.name + "-journal"),
            tmp.with_name(tmp.name + "-wal"),
            tmp.with_name(tmp.name + "-shm"),
        ):
            try:
                leftover.unlink()
            except FileNotFoundError:
                pass
    return {"path": str(out), "entries": len(entries), "patterns": _count_patterns(out), "skipped": len(skipped)}


def _count_patterns(path) -> int:
    con = sqlite3.connect(f"file:{os.fspath(path)}?mode=ro", uri=True)
    try:
        return con.execute("select count(*) from patterns").fetchone()[0]
    finally:
        con.close()


def _mark_specialisations(pats: list[dict]) -> None:
    """A pattern that another entry's template matches whole (``ERROR: Failed building wheel for
    tokenizers`` under ``... for {package}``) says no more than that template but for its literal, which
    fuzzy similarity does not weigh: it is marked (``features["specialises"]``, the other entry) and
    answers only as a template. Templates are compared with the patterns that begin with their literal
    opening, so the build stays linear in practice."""
    import re

    by_start: dict[str, list[dict]] = {}
    for q in pats:
        by_start.setdefault(q["pattern"][:6].lower(), []).append(q)
    for p in pats:
        opening = re.split(r"\{[^{}]*\}", p["pattern"], maxsplit=1)[0]
        if "{" not in p["pattern"] or len(opening) < 6:
            continue  # no placeholder to specialise, or a template too open to tell (``{message}``)
        rx = re.compile(p["regex"], re.IGNORECASE)
        for q in by_start.get(opening[:6].lower(), ()):
            if q["entry_id"] != p["entry_id"] and q["pattern"].lower().startswith(opening.lower()):
                if "{" not in q["pattern"] and rx.fullmatch(q["pattern"]):
                    q["features"].setdefault("specialises", p["entry_id"])


def _write(entries, tmp, kb_dir, fp) -> None:
    import sqlite_utils

    from explainer.knowledge.search import document_frequencies, field_terms
    from explainer.normalize import normalize
    from explainer.patterns import literal_text, pattern_features, to_regex

    if tmp.exists():
        tmp.unlink()
    db = sqlite_utils.Database(tmp)
    rows, pats, docs = [], [], []
    for e in entries:
        m = e.meta
        rows.append(
            {
                "id": e.id,
                "category": m.get("category"),
                "kind": m.get("kind"),
                "title_en": m.get("title", {}).get("en", ""),
                "title_zh": m.get("title", {}).get("zh", ""),
                "exception_types": json.dumps(m.get("exception_types", [])),
                "frames": json.dumps(m.get("frames", [])),
                "signals": json.dumps(m.get("signals", [])),
                "excludes": json.dumps(m.get("excludes", [])),
                "unless": json.dumps(m.get("unless", [])),
                "raised_by": json.dumps(m.get("raised_by") or {"kind": "torch"}),
                "wraps": int(bool(m.get("wraps", False))),
                "retired": m.get("retired"),
                "doc": json.dumps(entry_doc(e), ensure_ascii=False),
            }
        )
        for i, p in enumerate(m.get("patterns", [])):
            try:
                regex = to_regex(p)
            except ValueError:
                continue
            norm = normalize(literal_text(p))
            pats.append(
                {
                    "entry_id": e.id,
                    "idx": i,
                    "pattern": p,
                    "regex": regex,
                    "normalized": norm,
                    "features": pattern_features(p, norm),
                }
            )
        for lang in ("en", "zh"):
            parts = [
                m.get("title", {}).get(lang, ""),
                e.summary.get(lang, ""),
                e.explanation.get(lang, ""),
                " ".join(c.get(lang, "") for c in e.causes),
                " ".join(f.get(lang, "") for f in e.fixes),
            ]
            key = "\n".join([m.get("title", {}).get(lang, ""), e.id.replace("-", " "), *m.get("patterns", [])])
            docs.append(
                {
                    "entry_id": e.id,
                    "lang": lang,
                    "title": m.get("title", {}).get(lang, ""),
                    "body": "\n".join(parts[1:]),
                    **{
                        f"{name}_terms": text
                        for name, text in field_terms(
                            m.get("title", {}).get(lang, ""), key, parts[1], "\n".join(parts[2:])
                        ).items()
                    },
                }
            )
    _mark_specialisations(pats)
    # what the matcher loads on every start, as one JSON value: the entries, each pattern's entry, and
    # the word table that ranks the candidate patterns; a pattern's row is read from the patterns
    # table (rowid = its place here + 1) when it is first a candidate
    from explainer.match.matcher import signal_literals, word_table

    active = {r["id"] for r in rows if not r["retired"]}
    blob_entries = [{k: (json.loads(v) if k in _JSON_COLUMNS else v) for k, v in r.items() if k != "doc"} for r in rows]
    for b in blob_entries:
        b["signal_literals"] = signal_literals(b)
    matcher_blob = json.dumps(
        {
            "entries": blob_entries,
            "pattern_entries": [p["entry_id"] for p in pats],
            "word_table": word_table([(p["entry_id"], p["features"]["tokens"]) for p in pats], active),
        },
        ensure_ascii=False,
    )
    db.table("entries").insert_all(rows, pk="id")
    db.table("patterns").insert_all([{**p, "features": json.dumps(p["features"], ensure_ascii=False)} for p in pats])
    db.table("patterns").create_index(["entry_id"])
    db.table("search").insert_all(docs)
    search_df = json.dumps(
        document_frequencies({k[: -len("_terms")]: v for k, v in d.items() if k.endswith("_terms")} for d in docs),
        ensure_ascii=False,
        sort_keys=True,
    )
    db.table("meta").insert_all(
        [
            {"key": "schema", "value": SCHEMA_VERSION},
            {"key": "fingerprint", "value": fp},
            {"key": "content", "value": content_hash(kb_dir)},
            {"key": "matcher", "value": matcher_blob},
            {"key": "search_df", "value": search_df},
        ],
        pk="key",
    )
    db.conn.commit()
    db.conn.execute("VACUUM")
    db.close()


class Index:
    """Read-only view of the index, loaded once; safe to share between threads for reading."""

    def __init__(self, path) -> None:
        self.path = path = os.fspath(path)
        uri = f"file:{path}?mode=ro&immutable=1"
        self.conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        blob = json.loads(self.conn.execute("select value from meta where key = 'matcher'").fetchone()[0])
        self.entries: dict[str, dict] = {e["id"]: {**e, "wraps": bool(e["wraps"])} for e in blob["entries"]}
        # each pattern's entry, and what ranks them (matcher.word_table); the whole rows are read when first needed
        self.pattern_entries: list[str] = blob["pattern_entries"]
        self.word_table: dict = blob["word_table"]
        self._patterns: list[tuple] | None = None
        self._docs: dict[str, dict] = {}
        self._matcher: Matcher | None = None
        self._search: SearchIndex | None = None  # read on the first search

    _PATTERN_COLUMNS = "entry_id, idx, pattern, regex, normalized, features"

    def damage(self) -> list[str]:
        """What is wrong with this index's rows (empty when nothing is): every pattern row read and
        checked as the matcher will use it, and every entry's document. Run where a failure needs
        explaining (:func:`explainer.match.explain.explain`) or before a server starts, not on every start."""
        import re

        problems: list[str] = []
        try:
            rows = self.conn.execute(f"select rowid, {self._PATTERN_COLUMNS} from patterns order by rowid").fetchall()
            if len(rows) != len(self.pattern_entries):
                problems.append(f"{len(rows)} pattern rows for {len(self.pattern_entries)} patterns")
            for rowid, eid, _idx, pattern, regex, normalized, features in rows:
                where = f"patterns row {rowid}"
                if eid not in self.entries:
                    problems.append(f"{where}: unknown entry {eid!r}")
                if not all(isinstance(v, str) for v in (pattern, regex, normalized)):
                    problems.append(f"{where}: a text column is empty")
                    continue
                try:
                    re.compile(regex)
                    if not isinstance(json.loads(features), dict):
                        raise ValueError("features are not an object")
                except (re.error, ValueError, TypeError) as exc:
                    problems.append(f"{where}: {type(exc).__name__}: {exc}")
            for eid, doc in self.conn.execute("select id, doc from entries"):
                try:
                    if not isinstance(json.loads(doc), dict):
                        raise ValueError("not an object")
                except (ValueError, TypeError) as exc:
                    problems.append(f"entry {eid}: {type(exc).__name__}: {exc}")
        except sqlite3.Error as exc:
            problems.append(f"{type(exc).__name__}: {exc}")
        return problems

    def pattern_row(self, i: int) -> tuple:
        """Pattern ``i`` (its place in :attr:`pattern_entries`): (entry id, its index in the entry,
        template, regex, normalised text, features)."""
        if self._patterns is not None:
            return self._patterns[i]
        row = self.conn.execute(f"select {self._PATTERN_COLUMNS} from patterns where rowid = ?", (i + 1,)).fetchone()
        return (*row[:5], json.loads(row[5]))

    @property
    def patterns(self) -> list[tuple]:
        """Every pattern's row, in the order of :attr:`pattern_entries` (read once)."""
        if self._patterns is None:
            rows = self.conn.execute(f"select {self._PATTERN_COLUMNS} from patterns order by rowid").fetchall()
            self._patterns = [(*r[:5], json.loads(r[5])) for r in rows]
        return self._patterns

    @property
    def matcher(self):
        if self._matcher is None:
            from explainer.match.matcher import Matcher

            self._matcher = Matcher(self)
        return self._matcher

    def entry(self, entry_id: str) -> dict | None:
        """The full entry (texts in both languages, fixes with templates), or None."""
        if entry_id not in self.entries:
            return None
        if entry_id not in self._docs:
            try:
                row = self.conn.execute("select doc from entries where id = ?", (entry_id,)).fetchone()
                doc = json.loads(row[0])
                if not isinstance(doc, dict):
                    raise ValueError("not an object")
            except (sqlite3.Error, TypeError, ValueError) as exc:
                # a damaged row: this entry answers with its title only, the rest keep working
                print(
                    f"tbx: warning: the index row of {entry_id!r} is damaged ({exc}); run `tbx build`", file=sys.stderr
                )
                e = self.entries[entry_id]
                doc = {
                    "id": entry_id,
                    "title": {"en": e.get("title_en", entry_id), "zh": e.get("title_zh", entry_id)},
                    "summary": {},
                    "explanation": {},
                    "debugging": {},
                    "causes": [],
                    "fixes": [],
                    "docs": [],
                }
            self._docs[entry_id] = doc
        return self._docs[entry_id]

    def list_entries(self) -> list[dict]:
        return [
            {
                "id": e["id"],
                "category": e["category"],
                "kind": e["kind"],
                "title_en": e["title_en"],
                "title_zh": e["title_zh"],
            }
            for e in sorted(self.entries.values(), key=lambda e: e["id"])
        ]

    def search(self, query: str, *, lang: str = "both", limit: int = 10) -> list[dict]:
        """The entries for what a user types, best first (:mod:`explainer.knowledge.search`)."""
        if self._search is None:
            from explainer.knowledge.search import SearchIndex

            rows = self.conn.execute(
                "select entry_id, lang, title, body, key_terms, summary_terms, body_terms from search"
            ).fetchall()
            df = json.loads(self.conn.execute("select value from meta where key = 'search_df'").fetchone()[0])
            self._search = SearchIndex(rows, df)
        out, seen = [], set()
        for entry_id, lg, title, score, body in self._search.search(query, lang=lang):
            if entry_id in seen:
                continue
            seen.add(entry_id)
            out.append({"id": entry_id, "title": title, "lang": lg, "score": score, "snippet": _snippet(body, query)})
            if len(out) >= limit:
                break
        return out


def _snippet(body: str, query: str, width: int = 60) -> str:
    """A short piece of ``body`` around the first query word it contains."""
    import re

    text = re.sub(r"\s+", " ", body).strip()
    low = text.lower()
    hits = [low.find(w) for w in re.findall(r"[\w\u4e00-\u9fff]+", query.lower()) if w and low.find(w) >= 0]
    at = min(hits) if hits else 0
    start = max(0, at - width // 2)
    piece = text[start : start + width * 2]
    return ("…" if start else "") + piece + ("…" if start + width * 2 < len(text) else "")


def open_index(*, rebuild_ok: bool = True, path=None, kb=None) -> Index:
    """Open the index; in a source checkout rebuild it first when ``kb/`` changed since it was built."""
    from explainer.paths import index_path, kb_dir, source_root

    path = os.fspath(path or index_path())
    kb = os.fspath(kb or kb_dir())
    stale = not os.path.exists(path)
    if not stale and rebuild_ok and (source_root() is not None or os.environ.get("TBX_KB")) and os.path.isdir(kb):
        try:
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            row = con.execute("select value from meta where key = 'fingerprint'").fetchone()
            con.close()
            stale = row is None or row[0] != fingerprint(kb)
        except sqlite3.Error:
            stale = True
    if stale:
        if not (rebuild_ok and os.path.isdir(kb)):
            raise IndexError_(f"the index {path} is missing or out of date; run `tbx build`")
        if not may_write(path):
            raise IndexError_(
                f"{path} is not a traceback-explainer index; not replacing it "
                "(point TBX_INDEX at a new file, or remove this one)"
            )
        try:
            build_index(kb, path)
        except (OSError, sqlite3.Error) as exc:
            if not os.path.exists(path):
                raise IndexError_(f"cannot build the index {path}: {exc}") from None
            # a read-only data folder: the index that is there still answers, one line says so
            print(
                f"tbx: warning: the index {path} is out of date and cannot be rebuilt here ({exc}); using it as it is",
                file=sys.stderr,
            )
    root = source_root()
    if rebuild_ok and root is not None and (stale or _longtail_missing(root)):
        _compile_longtail()
    try:
        return Index(path)
    except (sqlite3.Error, ValueError, TypeError, KeyError) as exc:
        raise IndexError_(f"cannot read the index {path}: {exc}; run `tbx build`") from None


def _longtail_missing(root: str) -> bool:
    """Whether a checkout's long-tail data file has no compiled SQLite beside it (one listing: this
    runs on every start in a checkout)."""
    try:
        names = set(os.listdir(os.path.join(root, "data")))
    except OSError:
        return False
    return any(
        (n.startswith("longtail-") or n in ("libsites.jsonl.gz", "torchhistory.jsonl.gz"))
        and n.endswith(".jsonl.gz")
        and n[:-9] + ".sqlite" not in names
        for n in names
    )


def _compile_longtail() -> None:
    """In a checkout, the long tail's SQLite compiled from its data file when it is missing or older
    (a fresh clone's first command, with the index): an explanation never compiles it, and an
    uncurated answer never waits seconds for it. A failure is one warning; the long tail then stays silent."""
    from explainer.match.longtail import open_libsites, open_longtail, open_torchhistory

    try:
        open_longtail(compile_ok=True)
        open_torchhistory(compile_ok=True)
        open_libsites(compile_ok=True)
    except Exception as exc:  # noqa: BLE001 - the long tail is optional; the index must still open
        print(f"tbx: warning: the long-tail index could not be compiled: {type(exc).__name__}: {exc}", file=sys.stderr)
