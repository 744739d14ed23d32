"""Check every knowledge-base entry against the rules in kb/README.md. Never imports torch.

All problems are reported at once, each saying where and how to fix it: a :class:`Problem` is its
message with a stable code (``KB1xx`` front matter, ``KB2xx`` patterns, signals and frames,
``KB3xx`` sections and text, ``KB4xx`` fixes, ``KB5xx`` snippets, ``KB6xx`` the adversarial attack)
and the line of the entry's file it is about, printed as ``kb/<id>.md:LINE: CODE message``.
"""

from __future__ import annotations

import ast
import re

from explainer.advise.evidence import validate as validate_evidence
from explainer.advise.rewrite import RewriteError, parse_ops
from explainer.knowledge.kb import LANGS, SECTIONS, Entry, read_all
from explainer.knowledge.schema import (  # noqa: F401 - Problem, NESTED_REPEAT and evidence_regexes are lint's API too
    NESTED_REPEAT,
    SCHEMA,
    Problem,
    evidence_regexes,
    schema_problems,
    type_problems,
)
from explainer.patterns import PatternError, compile_pattern, fill, placeholders, template_fields

CATEGORIES = {
    "autograd",
    "shape",
    "dtype",
    "device",
    "cuda",
    "memory",
    "data",
    "serialization",
    "distributed",
    "compile",
    "amp",
    "nn",
    "interop",
    "install",
    "other",
    # raised outside torch (kb/README.md, raised_by)
    "environment",
    "build",
    "pip",
    "package",
    "hub",
    "model-loading",
    "python",
    "training",
    "inference",
}
KINDS = {"error", "warning", "log"}
# nn: how the file names torch.nn; carried, detached: a loop-carried state (``target def carried``)
# collate_fn: a collate function the file defines and never passes (``target def``)
# model: the name the model is called by (``target caller``)
CODE_VALUES = {"code", "target", "call", "receiver", "arg0", "arg1", "nn", "carried", "detached", "collate_fn", "model"}
REQUIREMENTS = re.compile(
    r"^(cuda|cpu-build|old-cuda-driver|broken-cuda-driver|multi-gpu|mps|linux|windows|macos|torchvision|triton|c-compiler|ninja|conda|numpy<2|torch(>=|<|==)[0-9.]+"
    r"|pkg:[A-Za-z0-9][A-Za-z0-9_.-]*((>=|<=|==|<|>)[0-9][0-9.]*)?)$"
)
SNIPPET_OPTIONS = {
    "raises",
    "warns",
    "logs",
    "requires",
    "isolated",
    "timeout",
    "cause",
    "causes",
    "review",
    "where-applies",
}
MIN_EXERCISED = 2  # reproducers each rewrite is applied to and run on by ``tbx verify``
_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_HAN = re.compile(r"[\u4e00-\u9fff]")


# where each group's rules are written down, named after the problem as the hint to read
GUIDE = {
    "1": "Front matter",
    "2": "Placeholders in patterns",
    "3": "Body",
    "4": "Rewrites",
    "5": "Snippets and their labels",
    "6": "Front matter",
}


def hint(p: Problem) -> str:
    """The kb/README.md section that states the rule a problem breaks."""
    return f"kb/README.md: {GUIDE.get(p.code[2:3], 'Front matter')}"


_WHERE_LINE = re.compile(r"line (\d{1,6})\b")
_WHERE_KEY = re.compile(r"(?:front matter: (?:missing key |unknown key |id |)'?(\w+)'?|(\w+): )")
_WHERE_HEADINGS = re.compile(r"## (\w+)(?: / ### ([\w-]+))?")


def locate(entry: Entry, problems: list[str]) -> list[Problem]:
    """Each problem with the line of the entry's file it is about: a snippet's fence, a front-matter
    key, a pattern or signal's own line, a section or a cause's or fix's heading (else line 1)."""
    try:
        lines = entry.path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        lines = []

    def find(pred, start: int = 0) -> int:
        return next((n for n in range(start, len(lines)) if pred(lines[n].strip())), -1) + 1

    out = []
    for p in problems:
        if not isinstance(p, Problem):
            p = Problem("KB100", p)  # a problem found while reading the file
        line = p.line
        text = str(p)
        if not line and (m := _WHERE_LINE.match(text)):
            line = int(m.group(1))
        if not line and text.startswith(("pattern ", "signals: ")) and "'" in text:
            quoted = text.split("'", 2)[1][:40]
            line = find(lambda s, q=quoted: q in s) or find(lambda s: s.startswith(("patterns", "signals")))
        if not line and text.startswith("## ") and (m := _WHERE_HEADINGS.match(text)):
            section = find(lambda s, h=f"## {m.group(1)}": s == h)
            line = find(lambda s, h=f"### {m.group(2)}": s == h, section) if m.group(2) and section else section
        if not line and text.startswith("body: ") and (m := re.search(r"'## (\w+)'", text)):
            line = find(lambda s, h=f"## {m.group(1)}": s == h)
        if not line and (m := _WHERE_KEY.match(text)):
            key = m.group(1) or m.group(2)
            line = find(lambda s, k=key: s.startswith((f"{k}:", f"{k} =", f"{k}=")))
        out.append(Problem(p.code, text, line or 1))
    return out


def lint_entry(entry: Entry, known_ids: set[str], planned: set[str] | None = None) -> list[Problem]:
    """Every problem of one entry. ``known_ids`` are the entries that exist; ``planned`` the ids of
    ``kb/planned.txt`` that a reference may name before their entry exists (None: not checked)."""
    return locate(entry, _lint_entry(entry, known_ids, planned))


def _lint_entry(entry: Entry, known_ids: set[str], planned: set[str] | None) -> list[str]:
    out: list[str] = [Problem("KB100", p) for p in entry.problems]
    meta = entry.meta
    if not meta:
        return out
    for key in meta:
        if key not in SCHEMA:
            out.append(Problem("KB105", f"front matter: unknown key {key!r} (allowed: {', '.join(SCHEMA)})"))
    out += type_problems(meta)
    if meta.get("id") != entry.id:
        out.append(Problem("KB106", f"front matter: id {meta.get('id')!r} must equal the file stem {entry.id!r}"))
    if not _ID.match(entry.id):
        out.append(Problem("KB107", "file name: ids are lower-case words joined by '-'"))
    title = meta["title"] if isinstance(meta.get("title"), dict) else {}
    if set(title) != set(LANGS) or not all(isinstance(v, str) and v.strip() for v in title.values()):
        out.append(Problem("KB108", "front matter: title needs non-empty 'en' and 'zh' and nothing else"))
    elif not _HAN.search(title["zh"]):
        out.append(Problem("KB109", "front matter: title.zh must be written in Chinese"))
    if meta.get("category") not in CATEGORIES:
        out.append(Problem("KB110", f"front matter: category must be one of {', '.join(sorted(CATEGORIES))}"))
    if meta.get("kind") not in KINDS:
        out.append(Problem("KB111", f"front matter: kind must be one of {', '.join(sorted(KINDS))}"))
    if isinstance(meta.get("exception_types"), list) and not meta["exception_types"]:
        out.append(Problem("KB112", "front matter: exception_types needs at least the torch 2.13 type"))
    patterns = meta["patterns"] if isinstance(meta.get("patterns"), list) else []
    if not patterns:
        out.append(Problem("KB113", "front matter: patterns needs at least the torch 2.13 wording"))
    for p in patterns:
        if not isinstance(p, str):
            continue
        try:
            compile_pattern(p)
        except (PatternError, re.error) as exc:
            out.append(Problem("KB203", f"pattern {p[:60]!r}: {exc}"))
        if p != p.strip():
            out.append(
                Problem(
                    "KB207",
                    f"pattern {p[:60]!r}: starts or ends with whitespace, which a message (matched stripped) never has",
                )
            )
        literal = re.sub(r"\{[^{}]*\}|\s", "", p)
        if len(literal) + len(_HAN.findall(literal)) < 8:  # a Chinese character says as much as two letters
            out.append(Problem("KB204", f"pattern {p[:60]!r}: too little literal text to identify the error"))
    for frame in meta.get("frames", []) if isinstance(meta.get("frames"), list) else []:
        if not re.match(r"^[\w./<>-]+\.py:[\w<>]+$", str(frame)):
            out.append(Problem("KB205", f"frames: {frame!r} must look like 'torch/autograd/__init__.py:_make_grads'"))
    for sig in meta.get("signals", []) if isinstance(meta.get("signals"), list) else []:
        if str(sig).startswith("@"):
            continue  # a derived signal (the schema checks its name)
        try:
            re.compile(sig)
        except re.error as exc:
            out.append(Problem("KB206", f"signals: {sig!r} is not a valid regular expression: {exc}"))
    for key in ("excludes", "related"):
        for other in meta.get(key, []) if isinstance(meta.get(key), list) else []:
            if other == entry.id:
                out.append(Problem("KB114", f"{key}: an entry cannot name itself"))
            elif planned is not None and other not in known_ids and other not in planned:
                out.append(Problem("KB115", f"{key}: {other!r} is neither an entry nor a planned id (kb/planned.txt)"))
    for url in meta.get("docs", []) if isinstance(meta.get("docs"), list) else []:
        if not str(url).startswith("https://"):
            out.append(Problem("KB116", f"docs: {url!r} must be an https link"))
    if not meta.get("docs"):
        out.append(Problem("KB117", "docs: link at least one page of the official documentation"))
    out += _lint_body(entry)
    # what makes `tbx build` skip the entry and was not reported above (a derived signal misnamed)
    said = {str(p) for p in out}
    out += [p for p in schema_problems(entry) if str(p).startswith(("unless:", "signals:")) and str(p) not in said]
    try:
        todo = [n for n, line in enumerate(entry.path.read_text(encoding="utf-8").split("\n"), 1) if "TODO" in line]
    except (OSError, UnicodeDecodeError):
        todo = []
    if todo:
        out.append(
            Problem(
                "KB118", f"line {todo[0]}: 'TODO' left from the scaffold ({len(todo)} line(s)): write what it asks for"
            )
        )
    return out


def _lint_body(entry: Entry) -> list[str]:
    out: list[str] = []
    required = [s for s in SECTIONS if s != "Debugging"]
    present = [s for s in entry.sections if s in SECTIONS]
    for s in entry.sections:
        if s not in SECTIONS:
            out.append(Problem("KB301", f"body: unknown section '## {s}' (allowed: {', '.join(SECTIONS)})"))
    for s in required:
        if s not in entry.sections:
            out.append(Problem("KB302", f"body: missing section '## {s}'"))
    if present != [s for s in SECTIONS if s in present]:
        out.append(Problem("KB303", f"body: sections must come in this order: {', '.join(SECTIONS)}"))
    for name, block in (("Summary", entry.summary), ("Explanation", entry.explanation)):
        for lang in LANGS:
            if not block.get(lang):
                out.append(Problem("KB304", f"## {name}: '### {lang}' is missing or empty"))
        if block.get("zh") and not _HAN.search(block["zh"]):
            out.append(Problem("KB305", f"## {name}: the zh text must be written in Chinese"))
    if entry.debugging and set(entry.debugging) != set(LANGS):
        out.append(Problem("KB306", "## Debugging: needs both '### en' and '### zh'"))
    if not entry.causes:
        out.append(Problem("KB307", "## Causes: add at least one '### <slug>' cause"))
    if not entry.fixes:
        out.append(Problem("KB308", "## Fixes: add at least one '### <slug>' fix"))
    for kind, items in (("Causes", entry.causes), ("Fixes", entry.fixes)):
        for item in items:
            where = f"## {kind} / ### {item['slug']}"
            for lang in LANGS:
                if not item.get(lang):
                    out.append(Problem("KB309", f"{where}: '#### {lang}' is missing or empty"))
                elif not item.get(f"title_{lang}"):
                    out.append(
                        Problem("KB310", f"{where} / {lang}: open with a bold title, e.g. '**Reduce the loss.**'")
                    )
            if kind == "Causes":
                if item.get("en") and "Recognise:" not in item["en"]:
                    out.append(
                        Problem(
                            "KB311",
                            f"{where} / en: add a line 'Recognise: ...' saying how to spot this cause in a paste",
                        )
                    )
                if item.get("zh") and "识别：" not in item["zh"]:
                    out.append(
                        Problem(
                            "KB312", f"{where} / zh: add a line '识别：...' saying how to spot this cause in a paste"
                        )
                    )
            if item.get("zh") and not _HAN.search(item["zh"]):
                out.append(Problem("KB313", f"{where} / zh: must be written in Chinese"))
            if kind == "Fixes":
                out += _lint_fix(entry, item, where)
    out += _lint_snippets(entry)
    out += _lint_prose(entry)
    return out


def _strip_comment(line: str) -> str:
    return re.sub(r"\s+#.*$", "", line).strip()


def _captures(entry: Entry) -> set[str]:
    names: set[str] = set()
    for p in entry.meta.get("patterns", []) or []:
        if isinstance(p, str):
            names |= set(placeholders(p))
    return names


def _lint_fix(entry: Entry, fix: dict, where: str) -> list[str]:
    out: list[str] = []
    code = len(fix["templates"]) + len(fix["rewrites"])
    # a rewrite of another line ('target') needs the user's file; its template is the advice without it
    targeted = len(fix["rewrites"]) == 1 and fix["rewrites"][0].lstrip().startswith("target ")
    if code > 1 and not (targeted and len(fix["templates"]) == 1):
        out.append(
            Problem(
                "KB401",
                f"{where}: at most one 'rewrite' fence (a change of the failing line) or one 'python template' fence (an example shown as advice); "
                "a 'target' rewrite (another line) may have one template besides, shown where the user's file cannot be read",
            )
        )
    if not code and fix["fix_snippets"]:
        out.append(
            Problem(
                "KB402", f"{where}: a fix with 'python fix' fences shows the user a 'rewrite' or a 'python template'"
            )
        )
    slugs = [c["slug"] for c in entry.causes]
    if len(slugs) > 1 and code and not fix["causes"]:
        out.append(
            Problem("KB403", f"{where}: name the causes this fix addresses on its fence, e.g. 'causes={slugs[0]}'")
        )
    for c in fix["causes"]:
        if c not in slugs:
            out.append(
                Problem(
                    "KB404", f"{where}: causes= names {c!r}, which is not a cause of this entry ({', '.join(slugs)})"
                )
            )
    captures = _captures(entry)
    if fix["rewrites"]:
        try:
            parse_ops(fix["rewrites"][0])
        except RewriteError as exc:
            out.append(Problem("KB405", f"{where}: rewrite {exc}"))
        else:
            n = len(entry.exercising(fix))
            if n < MIN_EXERCISED:
                out.append(
                    Problem(
                        "KB406",
                        f"{where}: the rewrite applies to {n} reproducer(s) showing its causes; it must be tested on at least {MIN_EXERCISED} (add reproducer variants with 'cause=' and a '# error' line it changes)",
                    )
                )
        for name, _default in template_fields(fix["rewrites"][0]):
            if name not in CODE_VALUES and name not in captures:
                out.append(
                    Problem(
                        "KB407",
                        f"{where}: rewrite placeholder {{{name}}} is neither a code value ({', '.join(sorted(CODE_VALUES))}) nor captured by a pattern",
                    )
                )
    if fix["templates"] and not fix["fix_snippets"]:
        out.append(
            Problem("KB408", f"{where}: a template fix needs at least one 'python fix' fence that the tests execute")
        )
    for s in fix["fix_snippets"]:
        if not s.fix_lines:
            out.append(
                Problem(
                    "KB409",
                    f"line {s.line}: mark the fix's own lines with '# fix' (deleted when reverted) or '# fix: ORIGINAL' (the line before the fix); the necessity check runs the snippet without them and it must fail",
                )
            )
    for template in fix["templates"]:
        fields = template_fields(template)
        for name, default in fields:
            if name in CODE_VALUES and default is None:
                out.append(
                    Problem("KB410", f"{where}: template value {{{name}}} needs a default, e.g. {{{name}|loss}}")
                )
            elif name not in CODE_VALUES and name not in captures:
                out.append(
                    Problem(
                        "KB411",
                        f"{where}: template placeholder {{{name}}} is neither a code value ({', '.join(sorted(CODE_VALUES))}) nor captured by a pattern",
                    )
                )
            elif name not in CODE_VALUES and default is None:
                out.append(
                    Problem(
                        "KB412",
                        f"{where}: template placeholder {{{name}}} needs a default for pastes that do not show it",
                    )
                )
        filled = fill(template, {})
        try:
            ast.parse(filled)
        except SyntaxError as exc:
            out.append(
                Problem("KB413", f"{where}: the template filled with its defaults is not valid Python: {exc.msg}")
            )
        fix_lines = {_strip_comment(l) for s in fix["fix_snippets"] for l in s.code.split("\n")}
        fix_text = "\n".join(fix_lines)
        for line in filled.split("\n"):
            code_line = _strip_comment(line)
            if code_line and not code_line.startswith("#") and code_line not in fix_lines and code_line not in fix_text:
                out.append(
                    Problem(
                        "KB414",
                        f"{where}: template line {code_line!r}, filled with its defaults, is not in any 'python fix' snippet of this fix",
                    )
                )
    return out


# capture names that are also PyTorch argument names: `dim` in prose may mean the argument
_ARGUMENT_WORDS = {
    "dim",
    "size",
    "dtype",
    "device",
    "shape",
    "index",
    "input",
    "target",
    "weight",
    "key",
    "name",
    "value",
    "mode",
    "op",
}
_PROSE_FIELD = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)(\|[^{}\n]*)?\}(?!\})")


def _lint_prose(entry: Entry) -> list[str]:
    """Placeholders in the entry's text must be filled on every surface: each names a value and has
    the words used when the paste does not give it; a capture's bare name in backticks is a leftover."""
    out: list[str] = []
    captures = _captures(entry)
    texts = [("## Summary", entry.summary), ("## Explanation", entry.explanation), ("## Debugging", entry.debugging)]
    texts += [(f"## Causes / ### {c['slug']}", c) for c in entry.causes] + [
        (f"## Fixes / ### {f['slug']}", f) for f in entry.fixes
    ]
    for where, block in texts:
        for lang in LANGS:
            text = block.get(lang) or ""
            for m in _PROSE_FIELD.finditer(text):
                if m.group(1) not in captures and m.group(1) not in CODE_VALUES:
                    out.append(Problem("KB314", f"{where} / {lang}: {{{m.group(1)}}} is not captured by a pattern"))
                elif not m.group(2):
                    out.append(
                        Problem(
                            "KB315",
                            f"{where} / {lang}: {{{m.group(1)}}} needs the words to show when the paste lacks it: {{{m.group(1)}|...}}",
                        )
                    )
            for name in captures - _ARGUMENT_WORDS:
                if f"`{name}`" in text:
                    out.append(
                        Problem(
                            "KB316",
                            f"{where} / {lang}: `{name}` is a placeholder's name; write {{{name}|words for it}} so the answer shows the value",
                        )
                    )
    for c in entry.causes:
        ev = c.get("evidence")
        if ev is not None:
            for problem in validate_evidence(ev):
                out.append(Problem("KB317", f"## Causes / ### {c['slug']}: evidence {problem}"))
    return out


def _lint_snippets(entry: Entry) -> list[str]:
    out: list[str] = []
    repros = entry.repros
    if not repros:
        out.append(Problem("KB501", "## Reproducer: needs at least one 'python repro' fence"))
    slugs = {c["slug"] for c in entry.causes}
    for s in repros:
        if "raises" in s.options and s.error_line is None:
            out.append(
                Problem(
                    "KB502", f"line {s.line} (repro): mark the one line that raises with a trailing '# error' comment"
                )
            )
        if s.options.get("cause") and s.options["cause"] not in slugs:
            out.append(
                Problem("KB503", f"line {s.line} (repro): cause={s.options['cause']!r} is not a cause of this entry")
            )
    for s in entry.snippets:
        where = f"line {s.line} ({s.role})"
        for key in s.options:
            if key not in SNIPPET_OPTIONS:
                out.append(
                    Problem(
                        "KB504",
                        f"{where}: unknown fence option {key!r} (allowed: {', '.join(sorted(SNIPPET_OPTIONS))})",
                    )
                )
        for req in s.requires:
            if not REQUIREMENTS.match(req):
                out.append(Problem("KB505", f"{where}: unknown requirement {req!r}"))
        if s.role in ("template", "rewrite", "evidence", "addresses"):
            continue
        try:
            tree = ast.parse(s.code)
        except SyntaxError as exc:
            out.append(Problem("KB506", f"{where}: not valid Python: {exc.msg} (line {exc.lineno})"))
            continue
        if s.role == "repro":
            declared = [k for k in ("raises", "warns", "logs") if k in s.options]
            if len(declared) != 1:
                out.append(Problem("KB507", f"{where}: declare exactly one of raises=TYPE, warns=CATEGORY, logs"))
            elif declared[0] != "logs" and not s.options[declared[0]]:
                out.append(Problem("KB508", f"{where}: {declared[0]}= needs a type"))
            if s.group:
                out.append(
                    Problem("KB509", f"{where}: the reproducer belongs under '## Reproducer', not under a cause or fix")
                )
        if s.role == "fix" and not any(isinstance(n, ast.Assert) for n in ast.walk(tree)):
            out.append(
                Problem("KB510", f"{where}: a fix must assert its effect (a gradient's values, a shape, a dtype)")
            )
        if "timeout" in s.options:
            try:
                float(s.options["timeout"])
            except ValueError:
                out.append(Problem("KB511", f"{where}: timeout must be a number of seconds"))
    for s in entry.snippets:
        if s.role in ("fix", "template", "rewrite", "addresses") and not s.group:
            out.append(Problem("KB512", f"line {s.line}: '{s.role}' fences belong under a '### <slug>' fix"))
    return out


def planned_ids(kb_dir) -> set[str] | None:
    from pathlib import Path

    path = Path(kb_dir) / "planned.txt"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    return {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


def pending_references(kb_dir) -> int:
    """How many ``related``/``excludes`` references name a planned id whose entry does not exist yet."""
    entries = read_all(kb_dir)
    ids = {e.id for e in entries}
    return sum(
        1
        for e in entries
        for key in ("related", "excludes")
        for o in (e.meta.get(key) or [])
        if isinstance(o, str) and o not in ids
    )


def lint(kb_dir) -> dict[str, list[Problem]]:
    """Problems per entry id (entries without problems are included with an empty list)."""
    entries = read_all(kb_dir)
    ids = {e.id for e in entries}
    planned = planned_ids(kb_dir)
    return {e.id: lint_entry(e, ids, planned) for e in entries}


ATTACK_BOUND_S = 0.010  # worst time of one expression on one adversarial input at its cap
ATTACK_INPUTS = 40


def attack(kb_dir, inputs: int = ATTACK_INPUTS) -> dict[str, list[Problem]]:
    """``tbx lint --attack``: every compiled pattern, opening, signal and evidence expression run on
    generated adversarial inputs at the caps (:mod:`explainer.knowledge.attack`); a problem for each one that
    takes over 10 ms on one of them. Needs the index (built from ``kb_dir``); takes a minute or two."""
    import tempfile
    from pathlib import Path

    from explainer.advise.evidence import MAX_TEXT
    from explainer.knowledge.attack import bounded_attacks, kb_regexes, nested_repeat
    from explainer.knowledge.index import Index, build_index
    from explainer.match.matcher import MAX_REGEX_INPUT

    problems: dict[str, list[Problem]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "index.sqlite"
        build_index(kb_dir, out)
        index = Index(out)
        targets = [
            (label.split(":", 1)[0], label.split(":", 1)[1], rx, ops, MAX_REGEX_INPUT)
            for label, rx, ops in kb_regexes(index)
        ]
        index.conn.close()
    entries = {e.id: e for e in read_all(kb_dir)}
    for eid, label, src in evidence_regexes(entries.values()):
        try:
            targets.append((eid, label, re.compile(src), ("search",), MAX_TEXT))
        except re.error:
            continue  # reported by the ordinary checks
    timed = []
    for eid, label, rx, ops, cap in targets:
        if nested_repeat(rx):  # not run at all: its attack might not end
            problems.setdefault(eid, []).append(_attack_problem(entries.get(eid), label, f"{label}: {NESTED_REPEAT}"))
        else:
            timed.append((eid, label, rx, ops, cap))
    times = bounded_attacks([(rx, ops, cap) for _eid, _label, rx, ops, cap in timed], inputs)
    for i, (eid, label, _rx, _ops, _cap) in enumerate(timed):
        t, s = times[i]
        if t > ATTACK_BOUND_S:
            took = "did not end within its time" if t == float("inf") else f"{t * 1000:.1f} ms"
            problems.setdefault(eid, []).append(
                _attack_problem(
                    entries.get(eid),
                    label,
                    f"{label}: {took} on an adversarial input ({s[:40]!r}...): rewrite it so no two quantifiers can match the same characters",
                )
            )
    return problems


def _attack_problem(entry: Entry | None, label: str, message: str) -> Problem:
    """A slow expression as a problem at the line that defines it: ``pattern[i]`` (and its
    ``.search``/``.head`` forms) and ``signal[i]`` at their item in the front matter, evidence at its
    cause's heading."""
    p = Problem("KB601", message)
    if entry is None:
        return p
    m = re.match(r"(pattern|signal)\[(\d+)\]", label)
    items = entry.meta.get("patterns" if m and m.group(1) == "pattern" else "signals") if m else None
    if m and isinstance(items, list) and int(m.group(2)) < len(items):
        text = str(items[int(m.group(2))])
        return locate(entry, [Problem("KB601", f"pattern {text[:40]!r}: {message}")])[0].at(message)
    if label.startswith("evidence ") and len(label.split()) > 1:
        return locate(entry, [Problem("KB601", f"## Causes / ### {label.split()[1]}: {message}")])[0].at(message)
    return p
