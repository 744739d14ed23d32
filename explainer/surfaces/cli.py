"""The ``tbx`` command line. Each command is a few lines over one core call.

Imports are lazy: ``tbx explain --json`` loads only the parser, the matcher and the index reader.
"""

from __future__ import annotations

import os
import sys
import time

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
# The command's own deadline: reading the paste, opening the index, parsing and matching end within
# this many seconds of the command's start, so that with the interpreter's start before it and the
# answer's writing after it a paste of any shape is answered within a quarter of a second.
COMMAND_BUDGET_S = 0.17
MIN_EXPLAIN_S = 0.05  # however long the reading took, the explanation itself gets this much
_STARTED = time.monotonic()


class UsageError(Exception):
    """Bad usage, an unreadable file or empty input: one line on stderr, exit 2."""


def _read_input(path: str | None) -> str:
    """The input's text: its last MiB (a regular file is read from its tail; a stream is read up to
    ``MAX_STREAM_BYTES``, then abandoned with one line on stderr: an endless input never hangs)."""
    from explainer.textio import MAX_PASTE_BYTES, MAX_STREAM_BYTES, decode_bytes, looks_binary, read_tail

    try:
        if path in (None, "-") and _stdin_is_terminal():
            _prompt()
            # the unbuffered stream: the first end-of-file (one Ctrl-D) ends the paste; the buffered
            # one would read on for a second
            data, stopped = read_tail(getattr(sys.stdin.buffer, "raw", sys.stdin.buffer), MAX_PASTE_BYTES)
        elif path in (None, "-"):
            data, stopped = read_tail(sys.stdin.buffer, MAX_PASTE_BYTES)
        else:
            with open(path, "rb") as f:
                data, stopped = read_tail(f, MAX_PASTE_BYTES)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    if stopped and b"\n" in data and not data.endswith(b"\n"):
        data = data[: data.rindex(b"\n") + 1]  # the stream went on: its last line read is cut, not a line of the paste
    if looks_binary(data):
        raise UsageError("the input looks binary (control bytes), not a pasted traceback")
    text = decode_bytes(data)
    if not text.strip():
        raise UsageError("empty input: paste a traceback on stdin or name a file")
    if stopped:
        print(
            f"tbx: stopped reading after {MAX_STREAM_BYTES >> 20} MiB (an endless input?); explaining the last MiB read",
            file=sys.stderr,
        )
    return text


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _prompt() -> None:
    """One line on stderr when the paste is typed into a terminal (stdout stays the answer's)."""
    from explainer.match.explain import detect_lang

    end = "Ctrl-Z Enter" if os.name == "nt" else "Ctrl-D"
    line = (
        f"粘贴报错信息（traceback），然后在新的一行按 {end}："
        if detect_lang("") == "zh"
        else f"Paste the traceback, then press {end} on a new line:"
    )
    print(line, file=sys.stderr, flush=True)


def _print_json(obj) -> None:
    import json

    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=1) + "\n")


def _index(*, rebuild_ok: bool = True):
    from explainer.knowledge.index import IndexError_, open_index

    try:
        return open_index(rebuild_ok=rebuild_ok)
    except IndexError_ as exc:
        raise UsageError(str(exc)) from None


def cmd_explain(args) -> int:
    import gc

    # one paste: the cyclic collector would only walk the index's objects (tens of thousands, all
    # alive) a few times while they load; reference counting frees the rest
    global _ONE_SHOT
    enabled = gc.isenabled()
    gc.disable()
    try:
        code = _explain(args)
        _ONE_SHOT = not os.environ.get("TBX_GAPS")  # a gap log's writer may still be at work
        return code
    finally:
        if enabled:
            gc.enable()


def _explain(args) -> int:
    from explainer.match.explain import explain_text

    text = _read_input(args.file)
    index = _index()
    lang = _lang(args.lang, text)
    from explainer.budget import Budget
    from explainer.source import local_lines

    budget = Budget(max(MIN_EXPLAIN_S, COMMAND_BUDGET_S - (time.monotonic() - _STARTED)))
    result = explain_text(text, index, top=args.top, budget=budget)
    if os.environ.get("TBX_GAPS"):
        from explainer.surfaces.gaps import enabled, record

        if enabled():
            record(result, text, index=index)
    # the user's own machine: the fixes may read their files
    if args.json:
        from explainer.render import answer_json

        _print_json(answer_json(result, index, lang=lang, source=local_lines))
        return EXIT_OK
    from explainer.render.markdown import render_terminal

    render_terminal(result, index, lang=lang, full=args.full, source=local_lines)
    return EXIT_OK


def _lang(lang: str, text: str) -> str:
    if lang != "auto":
        return lang
    from explainer.match.explain import detect_lang

    return detect_lang(text)


def cmd_fix(args) -> int:
    """Exit 0 with the diff (or the file written), 1 when no fix applies here (the file untouched)."""
    from explainer.match.explain import explain_text
    from explainer.source import local_lines
    from explainer.surfaces.fix import CannotApply, apply, chosen_fix, diff, rewritten

    text = _read_input(None if args.file in (None, "-") else args.file)
    index = _index()
    answer = explain_text(text, index)
    if not answer.matches:
        print("tbx fix: no known error answers this traceback, so there is no fix to apply", file=sys.stderr)
        return 1
    picked = chosen_fix(answer, index, unsafe=args.unsafe, source=local_lines)
    if picked is None:
        print(
            "tbx fix: no fix of this answer is a "
            + ("" if args.unsafe else "safe ")
            + "rewrite of a file on this machine"
            + ("" if args.unsafe else " (--unsafe also takes fixes marked review)")
            + "; `tbx explain` shows the advice",
            file=sys.stderr,
        )
        return 1
    fix, match = picked
    path = fix["applies"]["file"]
    frame = answer.parsed.user_frame
    expected = frame.code if frame is not None and frame.file == path and frame.line == fix["applies"]["line"] else None
    try:
        with open(path, encoding="utf-8", newline="") as f:
            before = f.readlines()
        after = rewritten(before, fix, expected)
    except (OSError, UnicodeDecodeError, CannotApply) as exc:
        print(f"tbx fix: {exc}", file=sys.stderr)
        return 1
    print(f"# {match['id']}: {fix['title']['en']} ({fix['applicability']})")
    print(diff(path, before, after), end="")
    if args.apply:
        if fix["applicability"] != "safe" and not args.unsafe:
            print("tbx fix: not applied: the fix is not safe (use --unsafe)", file=sys.stderr)
            return 1
        backup = apply(path, after)
        print(f"applied to {path} (the old file is {backup})")
    return EXIT_OK


def cmd_doctor(args) -> int:
    """Exit 0 when nothing is wrong, 1 when a check found a problem."""
    from explainer.surfaces.doctor import live_env, render, report_env, run_checks

    env = live_env() if args.report is None else report_env(_read_input(None if args.report == "-" else args.report))
    if args.report is not None and not env.versions:
        raise UsageError(
            "no package versions in that report (expected collect_env, pip list, pip freeze or conda list)"
        )
    checks = run_checks(env, args.lang)
    if args.json:
        _print_json({"source": env.source, "checks": checks})
    else:
        print(render(checks, env.source, args.lang))
    return 1 if any(c["status"] == "problem" for c in checks) else EXIT_OK


def cmd_parse(args) -> int:
    from explainer.parse.parser import parse_text

    _print_json(parse_text(_read_input(args.file)).as_json())
    return EXIT_OK


def cmd_show(args) -> int:
    index = _index()
    entry = index.entry(args.id)
    if entry is None:
        raise UsageError(f"no entry {args.id!r}: `tbx list` shows the ids")
    from explainer.render.markdown import print_entry

    print_entry(entry, lang=_lang(args.lang, ""))
    return EXIT_OK


def cmd_list(args) -> int:
    index = _index()
    rows = index.list_entries()
    if args.json:
        _print_json({"entries": rows})
    else:
        for r in rows:
            print(f"{r['id']:<40} {r['category']:<13} {r['title_en']}")
    return EXIT_OK


def cmd_search(args) -> int:
    index = _index()
    results = index.search(args.query, lang=args.lang, limit=args.limit)
    if args.json:
        _print_json({"results": results})
    else:
        for r in results:
            print(f"{r['score']:.2f}  {r['id']:<40} {r['title']}")
        if not results:
            print("no results", file=sys.stderr)
    return EXIT_OK


def cmd_build(args) -> int:
    from explainer.knowledge.index import IndexError_, build_index
    from explainer.paths import build_path, kb_dir

    target = args.output or build_path()
    os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    try:
        out = build_index(kb_dir(), target)
    except IndexError_ as exc:
        raise UsageError(str(exc)) from None
    print(f"built {out['path']}: {out['entries']} entries, {out['patterns']} patterns")
    return EXIT_OK


def cmd_lint(args) -> int:
    from explainer.knowledge.lint import hint, lint, pending_references
    from explainer.paths import kb_dir

    report = lint(kb_dir())
    if getattr(args, "attack", False):
        from explainer.knowledge.lint import attack

        for eid, items in attack(kb_dir()).items():
            report.setdefault(eid, []).extend(items)
    problems = 0
    for entry_id, items in sorted(report.items()):
        for p in items:
            print(f"kb/{entry_id}.md:{p.line}: {p.code} {p} (see {hint(p)})")
            problems += 1
    bad = sum(1 for v in report.values() if v)
    pending = pending_references(kb_dir())
    later = f"; {pending} references name planned ids without an entry yet" if pending else ""
    print(
        (
            f"{len(report)} entries checked, {problems} problems in {bad} entries"
            if problems
            else f"{len(report)} entries checked, no problems"
        )
        + later
    )
    return EXIT_FAILED if problems else EXIT_OK


def cmd_verify(args) -> int:
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        raise UsageError("tbx verify executes the snippets and needs torch: pip install torch (or the test extra)")
    from explainer.knowledge.kb import read_all
    from explainer.knowledge.verify import verify
    from explainer.paths import kb_dir

    entries = read_all(kb_dir())
    if args.ids:
        unknown = set(args.ids) - {e.id for e in entries}
        if unknown:
            raise UsageError(f"no entry {sorted(unknown)[0]!r}")
        entries = [e for e in entries if e.id in set(args.ids)]
    index = None if args.no_explain else _index()
    if args.json:
        results = verify(entries, jobs=args.jobs, index=index)
        _print_json({"results": [r.as_json() for r in results]})
    else:
        import itertools

        total = sum(1 for e in entries for s in e.snippets if s.role in ("repro", "fix"))
        ticks, shown = itertools.count(1), sys.stderr.isatty()

        def advance(r) -> None:  # a counter on the terminal, erased at the end
            if shown and r.role in ("repro", "fix"):
                print(f"\rverifying {next(ticks)}/{total}", end="", file=sys.stderr, flush=True)

        results = verify(entries, jobs=args.jobs, index=index, on_result=advance)
        if shown:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)
        for r in results:
            if r.status != "pass":
                print(f"{r.status.upper():<5} {r.id} {r.snippet}: {r.reason}")
        counts = {s: sum(1 for r in results if r.status == s) for s in ("pass", "fail", "skip")}
        print(
            f"{len(results)} checks of {total} snippets: {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped"
        )
    return EXIT_FAILED if any(r.status == "fail" for r in results) else EXIT_OK


def cmd_eval(args) -> int:
    from explainer.knowledge.evaluate import evaluate, format_report

    try:
        report = evaluate(args.corpus, _index())
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read corpus {args.corpus}: {exc}") from None
    if args.json:
        _print_json(report)
    else:
        print(format_report(report))
    return EXIT_OK


def cmd_serve(args) -> int:
    try:
        from explainer.api.app import serve
    except ImportError as exc:
        raise UsageError(
            f"tbx serve needs the api extra ({exc.name} is missing): pip install 'traceback-explainer[api]'"
        ) from None

    if min(args.max_concurrency, args.workers, args.max_connections) < 1 or args.queue < 0 or args.timeout <= 0:
        raise UsageError(
            "--workers, --max-concurrency and --max-connections must be at least 1, --queue at least 0, --timeout positive"
        )
    problems = _index().damage()  # a damaged index is one line here, not a traceback in every worker
    if problems:
        raise UsageError(f"the index is damaged ({problems[0]}); rebuild it with `tbx build`")
    serve(
        host=args.host,
        port=args.port,
        workers=args.workers,
        max_concurrency=args.max_concurrency,
        queue=args.queue,
        timeout=args.timeout,
        max_connections=args.max_connections,
        record_gaps=args.record_gaps,
    )
    return EXIT_OK


def cmd_run(args) -> int:
    if args.check_fix or args.apply or args.unsafe:
        return _check_fix(args)
    from explainer.surfaces.hook import run_script

    return run_script(args.script, args.args)


_VERDICTS = {
    "fixed": "the error is gone: the script now runs to its end (exit 0)",
    "same-error": "the same error remains{at}: {after}",
    "other-error": "the first error is gone, but the script now fails with: {after}",
    "timeout": "{reason}",
}


def _check_fix(args) -> int:
    """``run --check-fix``: exit 0 when the fix makes the script run to its end, 1 otherwise."""
    import os

    from explainer.surfaces.fix import check_fix

    if not os.path.isfile(args.script):
        raise UsageError(f"no such script: {args.script}")
    if (args.apply or args.unsafe) and not args.check_fix:
        raise UsageError("--apply and --unsafe go with --check-fix")
    report = check_fix(args.script, args.args, _index(), timeout=args.timeout)
    status = report["status"]
    if status == "no-error":
        print(f"tbx: {args.script} ran without an error: there is nothing to fix")
        return EXIT_OK
    print(f"tbx: {args.script} failed: {report['before']}", file=sys.stderr)
    if status in ("no-fix", "cannot-apply") or (status == "timeout" and report["fix"] is None):
        print(f"tbx: not checked: {report['reason']}; `tbx explain` shows the advice", file=sys.stderr)
        return 1
    fix, match = report["fix"], report["match"]
    print(f"# {match['id']}: {fix['title']['en']} ({fix['applicability']})")
    print(report["diff"], end="")
    at = f" (now at line {report['after_line']})" if report.get("after_line") else ""
    verdict = _VERDICTS[status].format(at=at, **report)
    print(f"checked on a copy (your file is unchanged): {verdict}")
    if status != "fixed":
        return 1
    unsafe = " --unsafe" if fix["applicability"] != "safe" else ""
    if not args.apply:
        print(f"to apply it: tbx run --check-fix --apply{unsafe} {args.script}")
        return EXIT_OK
    if unsafe and not args.unsafe:
        print(
            "tbx: not applied: the fix is not safe (it may change what the code means; use --unsafe)", file=sys.stderr
        )
        return 1
    from explainer.surfaces.fix import apply

    with open(args.script, encoding="utf-8", newline="") as f:
        if f.readlines() != report["before_text"]:
            print(f"tbx: not applied: {args.script} changed while it was checked", file=sys.stderr)
            return 1
    backup = apply(os.path.abspath(args.script), report["after_text"])
    print(f"applied to {args.script} (the old file is {backup})")
    return EXIT_OK


def build_parser():
    import argparse

    from explainer._version import __version__

    p = argparse.ArgumentParser(prog="tbx", description="Explain PyTorch tracebacks in English and Chinese.")
    p.add_argument("--version", action="version", version=f"tbx {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    langs = ["en", "zh", "both", "auto"]

    s = sub.add_parser(
        "explain",
        help="explain a pasted traceback (stdin or FILE)",
        description="Explain a pasted traceback: what went wrong, where in your code, a fix. Reads FILE, or "
        "stdin (in a terminal: paste, then Ctrl-D; Ctrl-Z Enter on Windows). Only the last MiB is read.",
    )
    s.add_argument(
        "file", nargs="?", help="a file holding the paste (a log, a saved notebook output); default or '-': stdin"
    )
    s.add_argument(
        "--json", action="store_true", help="one JSON object on stdout (the names in the README), for scripts"
    )
    s.add_argument(
        "--lang",
        choices=langs,
        default="auto",
        help="answer language; auto: Chinese when the paste's own words or the locale (LANGUAGE, LANG) are Chinese",
    )
    s.add_argument("--top", type=int, default=3, help="how many entries to consider (default 3)")
    s.add_argument(
        "--full",
        action="store_true",
        help="the whole answer: every cause and fix, the explanation (default: the short answer)",
    )
    s.set_defaults(func=cmd_explain)

    s = sub.add_parser("parse", help="print the parsed traceback model")
    s.add_argument(
        "file", nargs="?", help="a file holding the paste (a log, a saved notebook output); default or '-': stdin"
    )
    s.add_argument("--json", action="store_true", default=True, help="JSON (the only output; kept for symmetry)")
    s.set_defaults(func=cmd_parse)

    s = sub.add_parser("show", help="show one entry")
    s.add_argument("id", help="the entry's id (`tbx list` shows them)")
    s.add_argument(
        "--lang",
        choices=langs,
        default="auto",
        help="answer language; auto: Chinese when the paste's own words or the locale (LANGUAGE, LANG) are Chinese",
    )
    s.set_defaults(func=cmd_show)

    s = sub.add_parser("list", help="list the entries")
    s.add_argument(
        "--json", action="store_true", help="one JSON object on stdout (the names in the README), for scripts"
    )
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("search", help="full-text search in English and Chinese")
    s.add_argument("query", help="words in either language (an error message, 梯度, backward)")
    s.add_argument(
        "--json", action="store_true", help="one JSON object on stdout (the names in the README), for scripts"
    )
    s.add_argument("--lang", choices=["en", "zh", "both"], default="both", help="the language of the titles shown")
    s.add_argument("--limit", type=int, default=10, help="at most this many results (default 10)")
    s.set_defaults(func=cmd_search)

    s = sub.add_parser("build", help="compile kb/ into the SQLite index")
    s.add_argument(
        "--output", help="where to write the index (default: data/index.sqlite in a checkout, else the cache)"
    )
    s.set_defaults(func=cmd_build)

    s = sub.add_parser("lint", help="check every entry (never imports torch)")
    s.add_argument(
        "--attack",
        action="store_true",
        help="also run every pattern, signal and evidence expression on adversarial inputs (a minute or two)",
    )
    s.set_defaults(func=cmd_lint)

    s = sub.add_parser("verify", help="execute reproducers and fixes (needs torch)")
    s.add_argument("ids", nargs="*", help="only these entries (default: all)")
    s.add_argument(
        "--json", action="store_true", help="one JSON object on stdout (the names in the README), for scripts"
    )
    s.add_argument("--jobs", type=int, default=2, help="snippet workers at a time (default 2)")
    s.add_argument(
        "--no-explain",
        action="store_true",
        help="skip checking that each reproducer's traceback is explained as its own entry",
    )
    s.set_defaults(func=cmd_verify)

    s = sub.add_parser("eval", help="measure the parser and the matcher on a labelled corpus")
    s.add_argument("corpus", help="a JSONL file of pastes labelled with entry ids (or 'none')")
    s.add_argument(
        "--json", action="store_true", help="one JSON object on stdout (the names in the README), for scripts"
    )
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser("serve", help="start the HTTP API")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    s.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    s.add_argument("--workers", type=int, default=1, help="server processes (default 1)")
    # the defaults live in api/app.py, which this module does not import before `serve` runs
    s.add_argument(
        "--max-concurrency",
        type=int,
        default=1,
        help="explanations at once per worker process (default 1: they are CPU-bound under one lock, the GIL; "
        "use --workers for more cores); more wait in the queue",
    )
    s.add_argument("--queue", type=int, default=128, help="explanations waiting per worker before 503 (default 128)")
    s.add_argument("--timeout", type=float, default=10.0, help="seconds per explain request before 503 (default 10)")
    s.add_argument(
        "--max-connections",
        type=int,
        default=512,
        help="connections accepted at once (uvicorn limit_concurrency; default 512)",
    )
    s.add_argument(
        "--record-gaps",
        action="store_true",
        help="record what it cannot answer in the gap log (redacted; see the README)",
    )
    s.set_defaults(func=cmd_serve)

    s = sub.add_parser("fix", help="the chosen fix as a diff of your file; --apply writes it")
    s.add_argument("file", nargs="?", help="a file holding the traceback, or - for stdin (default stdin)")
    s.add_argument("--apply", action="store_true", help="write the fix into the file (a backup is kept)")
    s.add_argument("--unsafe", action="store_true", help="also fixes marked review (they may change meaning)")
    s.set_defaults(func=cmd_fix)

    s = sub.add_parser(
        "doctor",
        help="check this Python's environment (or a pasted collect_env / pip list / conda list report)",
    )
    s.add_argument("report", nargs="?", help="a report file, or - for stdin (default: check the live environment)")
    s.add_argument("--json", action="store_true", help='{"checks": [{"id", "status", "message", "fix"}]}')
    s.add_argument("--lang", choices=("en", "zh"), default="en", help="the language of the messages (default en)")
    s.set_defaults(func=cmd_doctor)

    s = sub.add_parser("new", help="scaffold kb/ID.md from the catalog line of ID")
    s.add_argument("id", help="the catalog id of the error (lower-case words joined by '-')")
    s.add_argument("--catalog", help="the catalog (default: ../shared/catalog/errors.jsonl or TBX_CATALOG)")
    s.add_argument("--force", action="store_true", help="overwrite an existing entry")
    s.set_defaults(func=cmd_new)

    s = sub.add_parser("gaps", help="what it could not answer (recorded with TBX_GAPS=1), clustered")
    s.add_argument(
        "--json", action="store_true", help="one JSON object on stdout (the names in the README), for scripts"
    )
    s.add_argument("--top", type=int, default=10, help="the most frequent N clusters (default 10)")
    s.add_argument("--since", help="only days from this one on (YYYY-MM-DD)")
    s.add_argument("--draft", type=int, metavar="N", help="print the start of a new entry for cluster N")
    s.set_defaults(func=cmd_gaps)

    s = sub.add_parser("longtail", help="the index of every message PyTorch itself can raise")
    lsub = s.add_subparsers(dest="longtail_command", required=True)
    b = lsub.add_parser("build", help="extract it from an installed torch (and optionally a PyTorch source tree)")
    b.add_argument(
        "--torch", help="the torch package folder (default: the installed torch, found without importing it)"
    )
    b.add_argument("--source", help="a PyTorch source tree (aten/src/ATen, c10, torch/csrc) for the .cpp sites")
    b.add_argument("--wheel", help="the torch wheel the install came from (its sha256 is recorded)")
    b.add_argument("--out", help="the data file (default: data/longtail-<torch version>.jsonl.gz in a checkout)")
    b.set_defaults(func=cmd_longtail_build)
    i = lsub.add_parser("info", help="what the shipped data file holds (version, provenance, counts)")
    i.add_argument(
        "--json", action="store_true", help="one JSON object on stdout (the names in the README), for scripts"
    )
    i.set_defaults(func=cmd_longtail_info)

    s = sub.add_parser("run", help="run a script with the explaining excepthook")
    s.add_argument(
        "--check-fix",
        action="store_true",
        help="run the script, apply the answer's fix to a copy, run the copy: is the error gone? (your file is unchanged)",
    )
    s.add_argument(
        "--timeout", type=float, default=600, help="seconds each run may take with --check-fix (default 600)"
    )
    s.add_argument("--apply", action="store_true", help="with --check-fix: write the fix when the check passed")
    s.add_argument("--unsafe", action="store_true", help="with --apply: also a fix marked review")
    s.add_argument("script", help="the Python script to run as __main__")
    s.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    s.set_defaults(func=cmd_run)
    return p


def cmd_longtail_build(args) -> int:
    import importlib.util
    import time
    from pathlib import Path

    from explainer.knowledge import longtail_build as lb
    from explainer.paths import source_root

    if args.torch:
        torch_dir = Path(args.torch)
    else:
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.origin:
            raise UsageError("torch is not installed here: pass --torch DIR (the torch package folder)")
        torch_dir = Path(spec.origin).parent
    if not (torch_dir / "version.py").is_file():
        raise UsageError(f"{torch_dir} is not a torch package folder (no version.py)")
    source = Path(args.source) if args.source else None
    if source is not None and not (source / "aten" / "src" / "ATen").is_dir():
        raise UsageError(f"{source} is not a PyTorch source tree (no aten/src/ATen)")
    t0 = time.monotonic()
    meta, records = lb.extract(
        torch_dir,
        source,
        Path(args.wheel) if args.wheel else None,
        log=lambda s: print(f"  {time.monotonic() - t0:6.1f}s  {s}", file=sys.stderr),
    )
    root = source_root()
    out = Path(args.out) if args.out else Path(root or ".") / "data" / f"longtail-{meta['torch_version']}.jsonl.gz"
    lb.write(meta, records, out)
    print(
        f"wrote {out}: {meta['records']} sites ({', '.join(f'{k} {v}' for k, v in meta['counts'].items())}), "
        f"{out.stat().st_size} bytes, in {time.monotonic() - t0:.0f} s"
    )
    return EXIT_OK


def cmd_longtail_info(args) -> int:
    from explainer.match import longtail

    info = longtail.info()
    if info is None:
        raise UsageError("no long-tail data file here (build one with `tbx longtail build`)")
    if args.json:
        _print_json(info)
    else:
        for k, v in info.items():
            print(f"{k}: {v}")
    return EXIT_OK


def cmd_new(args) -> int:
    from explainer.knowledge.scaffold import catalog_line, default_catalog, scaffold
    from explainer.paths import kb_dir

    catalog = args.catalog or default_catalog()
    if not catalog or not os.path.exists(catalog):
        raise UsageError(
            "no catalog: pass --catalog PATH (one JSON object per line with id, exc_type, message_template ...)"
        )
    item = catalog_line(args.id, catalog)
    if item is None:
        raise UsageError(f"{args.id!r} is not an id of the catalog {catalog}")
    path = os.path.join(kb_dir(), f"{args.id}.md")
    if os.path.exists(path) and not args.force:
        raise UsageError(f"{path} exists (use --force to overwrite)")
    with open(path, "w", encoding="utf-8") as f:
        f.write(scaffold(item))
    print(f"wrote {path}: fill in every TODO, then `tbx lint` and `tbx verify {args.id}`")
    return EXIT_OK


def cmd_gaps(args) -> int:
    import re

    from explainer.surfaces.gaps import Store, clusters, draft, nearest

    if args.since and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.since):
        raise UsageError("--since takes a day as YYYY-MM-DD")
    store = Store()
    try:
        found = clusters(store.rows(args.since))
    except Exception as exc:  # noqa: BLE001 - a missing driver or an unreachable server: one line
        raise UsageError(f"cannot read the gap log ({store.url or store.path}): {type(exc).__name__}: {exc}") from None
    if args.draft is not None:
        if not 1 <= args.draft <= len(found):
            raise UsageError(f"there is no cluster {args.draft} (there are {len(found)})")
        sys.stdout.write(draft(found[args.draft - 1]))
        return EXIT_OK
    top = found[: max(1, args.top)]
    index = _index()
    for c in top:
        c["nearest"] = nearest(c, index)
    if args.json:
        _print_json(
            {
                "store": store.url and "postgresql" or store.path,
                "clusters": top,
                "total": sum(c["count"] for c in found),
            }
        )
        return EXIT_OK
    if not found:
        print(
            f"no gaps recorded in {store.path if not store.url else 'the PostgreSQL store'} (turn recording on with TBX_GAPS=1)"
        )
        return EXIT_OK
    for n, c in enumerate(top, 1):
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(c["reasons"].items()))
        near = ", ".join(f"{i} {s:.2f}" for i, s in c["nearest"]) or "none"
        print(f"{n:>2}. {c['count']:>4}x  {c['exc_type'] or '?'}: {c['message'][:110]}")
        print(f"        {c['members']} signature(s), last {c['last_day']}, {reasons}; nearest: {near}")
        if c["frames"]:
            print(f"        frames: {', '.join(c['frames'][-3:])}")
    return EXIT_OK


def _quick_explain_args(argv: list[str]):
    """``tbx explain [FILE|-] [--json] [--lang L] [--top N]`` read without argparse, whose import
    (with gettext, locale and shutil) is a tenth of the explain path's start-up. Anything else, or
    anything unusual, returns None and goes through argparse, which also gives the error messages."""
    if not argv or argv[0] != "explain":
        return None
    import types

    ns = types.SimpleNamespace(
        command="explain", file=None, json=False, lang="auto", top=3, full=False, func=cmd_explain
    )
    rest = list(argv[1:])
    while rest:
        arg = rest.pop(0)
        if arg == "--json":
            ns.json = True
        elif arg == "--full":
            ns.full = True
        elif arg in ("--lang", "--top") and rest:
            value = rest.pop(0)
            if arg == "--lang":
                if value not in ("en", "zh", "both", "auto"):
                    return None
                ns.lang = value
            elif value.isdigit() and int(value) >= 1:
                ns.top = int(value)
            else:
                return None
        elif (arg == "-" or not arg.startswith("-")) and ns.file is None:
            ns.file = arg
        else:
            return None
    return ns


def entry() -> None:
    """The console script (and ``python -m explainer``): :func:`main`, then, after a one-shot
    ``explain``, an exit without the interpreter's teardown. Its objects die with the process anyway;
    the teardown (a full cyclic collection over the index's objects and every module's cleanup) is
    about a tenth of the command's instructions. Nothing is left to finish: the index is opened
    read-only, no file is open for writing, and the streams are flushed first."""
    code = main()
    if _ONE_SHOT:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass
        os._exit(code if isinstance(code, int) else 1)
    raise SystemExit(code)


_ONE_SHOT = False  # set by a command that may skip the teardown (see :func:`entry`)


def main(argv: list[str] | None = None) -> int:
    args = _quick_explain_args(sys.argv[1:] if argv is None else argv)
    if args is not None:
        return _run(args)
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "top", 1) is not None and getattr(args, "top", 1) < 1:
        parser.error("--top must be at least 1")
    return _run(args)


def _run(args) -> int:
    for stream in (sys.stdout, sys.stderr):  # a character the terminal's encoding lacks is replaced, never a crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"tbx: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # the reader went away (`| head`): nothing more to say, and no traceback
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the interpreter's final flush must not fail again
        except OSError:
            pass
        return EXIT_OK
    except Exception as exc:
        errors = sys.modules.get("explainer.model")  # loaded by every command that reads the index
        if errors is None or not isinstance(exc, errors.IndexError_):
            raise
        print(f"tbx: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
