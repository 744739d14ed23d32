"""Check every knowledge-base entry against the rules in kb/README.md. Never imports torch.

All problems are reported at once, each saying where and how to fix it.
"""

from __future__ import annotations

import ast
import re

from .kb import LANGS, SECTIONS, Entry, read_all
from .patterns import PatternError, compile_pattern, fill, template_fields

CATEGORIES = {
    "autograd", "shape", "dtype", "device", "cuda", "memory", "data", "serialization",
    "distributed", "compile", "amp", "nn", "interop", "install", "other",
}
KINDS = {"error", "warning", "log"}
CODE_VALUES = {"code", "target", "call", "receiver", "arg0", "arg1"}
REQUIREMENTS = re.compile(r"^(cuda|multi-gpu|mps|linux|windows|macos|torchvision|triton|numpy<2|torch(>=|<|==)[0-9.]+)$")
SNIPPET_OPTIONS = {"raises", "warns", "logs", "requires", "isolated", "timeout"}
_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_HAN = re.compile(r"[\u4e00-\u9fff]")

SCHEMA: dict[str, tuple[type, bool]] = {  # key -> (type, required)
    "id": (str, True),
    "title": (dict, True),
    "category": (str, True),
    "kind": (str, True),
    "exception_types": (list, True),
    "patterns": (list, True),
    "frames": (list, True),
    "signals": (list, False),
    "excludes": (list, True),
    "related": (list, True),
    "wraps": (bool, False),
    "torch_verified": (list, True),
    "docs": (list, True),
    "retired": (str, False),
}


def lint_entry(entry: Entry, known_ids: set[str]) -> list[str]:
    out = list(entry.problems)
    meta = entry.meta
    if not meta:
        return out
    for key in meta:
        if key not in SCHEMA:
            out.append(f"front matter: unknown key {key!r} (allowed: {', '.join(SCHEMA)})")
    for key, (typ, required) in SCHEMA.items():
        if key not in meta:
            if required:
                out.append(f"front matter: missing key {key!r}")
            continue
        if not isinstance(meta[key], typ):
            out.append(f"front matter: {key!r} must be a {typ.__name__}")
            continue
        if typ is list and not all(isinstance(v, str) for v in meta[key]):
            out.append(f"front matter: every item of {key!r} must be a string")
    if meta.get("id") != entry.id:
        out.append(f"front matter: id {meta.get('id')!r} must equal the file stem {entry.id!r}")
    if not _ID.match(entry.id):
        out.append("file name: ids are lower-case words joined by '-'")
    title = meta.get("title") if isinstance(meta.get("title"), dict) else {}
    if set(title) != set(LANGS) or not all(isinstance(v, str) and v.strip() for v in title.values()):
        out.append("front matter: title needs non-empty 'en' and 'zh' and nothing else")
    elif not _HAN.search(title["zh"]):
        out.append("front matter: title.zh must be written in Chinese")
    if meta.get("category") not in CATEGORIES:
        out.append(f"front matter: category must be one of {', '.join(sorted(CATEGORIES))}")
    if meta.get("kind") not in KINDS:
        out.append(f"front matter: kind must be one of {', '.join(sorted(KINDS))}")
    if isinstance(meta.get("exception_types"), list) and not meta["exception_types"]:
        out.append("front matter: exception_types needs at least the torch 2.13 type")
    patterns = meta.get("patterns") if isinstance(meta.get("patterns"), list) else []
    if not patterns:
        out.append("front matter: patterns needs at least the torch 2.13 wording")
    for p in patterns:
        if not isinstance(p, str):
            continue
        try:
            compile_pattern(p)
        except (PatternError, re.error) as exc:
            out.append(f"pattern {p[:60]!r}: {exc}")
        literal = re.sub(r"\{[^{}]*\}|\s", "", p)
        if len(literal) + len(_HAN.findall(literal)) < 8:  # a Chinese character says as much as two letters
            out.append(f"pattern {p[:60]!r}: too little literal text to identify the error")
    for frame in meta.get("frames", []) if isinstance(meta.get("frames"), list) else []:
        if not re.match(r"^[\w./<>-]+\.py:[\w<>]+$", str(frame)):
            out.append(f"frames: {frame!r} must look like 'torch/autograd/__init__.py:_make_grads'")
    for sig in meta.get("signals", []) if isinstance(meta.get("signals"), list) else []:
        try:
            re.compile(sig)
        except re.error as exc:
            out.append(f"signals: {sig!r} is not a valid regular expression: {exc}")
    for key in ("excludes", "related"):
        for other in meta.get(key, []) if isinstance(meta.get(key), list) else []:
            if other == entry.id:
                out.append(f"{key}: an entry cannot name itself")
    for url in meta.get("docs", []) if isinstance(meta.get("docs"), list) else []:
        if not str(url).startswith("https://"):
            out.append(f"docs: {url!r} must be an https link")
    if not meta.get("docs"):
        out.append("docs: link at least one page of the official documentation")
    out += _lint_body(entry)
    return out


def _lint_body(entry: Entry) -> list[str]:
    out: list[str] = []
    required = [s for s in SECTIONS if s != "Debugging"]
    present = [s for s in entry.sections if s in SECTIONS]
    for s in entry.sections:
        if s not in SECTIONS:
            out.append(f"body: unknown section '## {s}' (allowed: {', '.join(SECTIONS)})")
    for s in required:
        if s not in entry.sections:
            out.append(f"body: missing section '## {s}'")
    if present != [s for s in SECTIONS if s in present]:
        out.append(f"body: sections must come in this order: {', '.join(SECTIONS)}")
    for name, block in (("Summary", entry.summary), ("Explanation", entry.explanation)):
        for lang in LANGS:
            if not block.get(lang):
                out.append(f"## {name}: '### {lang}' is missing or empty")
        if block.get("zh") and not _HAN.search(block["zh"]):
            out.append(f"## {name}: the zh text must be written in Chinese")
    if entry.debugging and set(entry.debugging) != set(LANGS):
        out.append("## Debugging: needs both '### en' and '### zh'")
    if not entry.causes:
        out.append("## Causes: add at least one '### <slug>' cause")
    if not entry.fixes:
        out.append("## Fixes: add at least one '### <slug>' fix")
    for kind, items in (("Causes", entry.causes), ("Fixes", entry.fixes)):
        for item in items:
            where = f"## {kind} / ### {item['slug']}"
            for lang in LANGS:
                if not item.get(lang):
                    out.append(f"{where}: '#### {lang}' is missing or empty")
                elif not item.get(f"title_{lang}"):
                    out.append(f"{where} / {lang}: open with a bold title, e.g. '**Reduce the loss.**'")
            if kind == "Causes":
                if item.get("en") and "Recognise:" not in item["en"]:
                    out.append(f"{where} / en: add a line 'Recognise: ...' saying how to spot this cause in a paste")
                if item.get("zh") and "识别：" not in item["zh"]:
                    out.append(f"{where} / zh: add a line '识别：...' saying how to spot this cause in a paste")
            if item.get("zh") and not _HAN.search(item["zh"]):
                out.append(f"{where} / zh: must be written in Chinese")
            if kind == "Fixes":
                out += _lint_fix(entry, item, where)
    out += _lint_snippets(entry)
    return out


def _strip_comment(line: str) -> str:
    return re.sub(r"\s+#.*$", "", line).strip()


def _lint_fix(entry: Entry, fix: dict, where: str) -> list[str]:
    out: list[str] = []
    if len(fix["templates"]) != 1:
        out.append(f"{where}: needs exactly one 'python template' fence")
    if not fix["fix_snippets"]:
        out.append(f"{where}: needs at least one 'python fix' fence that the tests execute")
    captures: set[str] = set()
    for p in entry.meta.get("patterns", []) or []:
        try:
            captures |= set(compile_pattern(p).groupindex)
        except (PatternError, re.error, TypeError):
            pass
    for template in fix["templates"]:
        fields = template_fields(template)
        for name, default in fields:
            if name in CODE_VALUES and default is None:
                out.append(f"{where}: template value {{{name}}} needs a default, e.g. {{{name}|loss}}")
            elif name not in CODE_VALUES and name not in captures:
                out.append(f"{where}: template placeholder {{{name}}} is neither a code value ({', '.join(sorted(CODE_VALUES))}) nor captured by a pattern")
            elif name not in CODE_VALUES and default is None:
                out.append(f"{where}: template placeholder {{{name}}} needs a default for pastes that do not show it")
        filled = fill(template, {})
        fix_lines = {_strip_comment(l) for s in fix["fix_snippets"] for l in s.code.split("\n")}
        fix_text = "\n".join(fix_lines)
        for line in filled.split("\n"):
            code = _strip_comment(line)
            if code and not code.startswith("#") and code not in fix_lines and code not in fix_text:
                out.append(f"{where}: template line {code!r}, filled with its defaults, is not in any 'python fix' snippet of this fix")
    return out


def _lint_snippets(entry: Entry) -> list[str]:
    out: list[str] = []
    repros = [s for s in entry.snippets if s.role == "repro"]
    if len(repros) != 1:
        out.append(f"## Reproducer: needs exactly one 'python repro' fence (found {len(repros)})")
    for s in entry.snippets:
        where = f"line {s.line} ({s.role})"
        for key in s.options:
            if key not in SNIPPET_OPTIONS:
                out.append(f"{where}: unknown fence option {key!r} (allowed: {', '.join(sorted(SNIPPET_OPTIONS))})")
        for req in s.requires:
            if not REQUIREMENTS.match(req):
                out.append(f"{where}: unknown requirement {req!r}")
        if s.role == "template":
            continue
        try:
            tree = ast.parse(s.code)
        except SyntaxError as exc:
            out.append(f"{where}: not valid Python: {exc.msg} (line {exc.lineno})")
            continue
        if s.role == "repro":
            declared = [k for k in ("raises", "warns", "logs") if k in s.options]
            if len(declared) != 1:
                out.append(f"{where}: declare exactly one of raises=TYPE, warns=CATEGORY, logs")
            elif declared[0] != "logs" and not s.options[declared[0]]:
                out.append(f"{where}: {declared[0]}= needs a type")
            if s.group:
                out.append(f"{where}: the reproducer belongs under '## Reproducer', not under a cause or fix")
        if s.role == "fix" and not any(isinstance(n, ast.Assert) for n in ast.walk(tree)):
            out.append(f"{where}: a fix must assert its effect (a gradient's values, a shape, a dtype)")
        if "timeout" in s.options:
            try:
                float(s.options["timeout"])
            except ValueError:
                out.append(f"{where}: timeout must be a number of seconds")
    for s in entry.snippets:
        if s.role in ("fix", "template") and not s.group:
            out.append(f"line {s.line}: '{s.role}' fences belong under a '### <slug>' fix")
    return out


def lint(kb_dir) -> dict[str, list[str]]:
    """Problems per entry id (entries without problems are included with an empty list)."""
    entries = read_all(kb_dir)
    ids = {e.id for e in entries}
    return {e.id: lint_entry(e, ids) for e in entries}
