"""Read knowledge-base entries (``kb/<id>.md``) into plain dictionaries.

Reading never judges: it records what is there and collects the problems it meets, and
:mod:`explainer.knowledge.lint` checks the rules. Both the index builder and lint start from here.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

LANGS = ("en", "zh")
ROLES = ("repro", "fix", "template")  # ```python ROLE``` fences
SNIPPET_ROLES = (*ROLES, "rewrite", "evidence", "addresses")  # also ```rewrite```, ```toml evidence|addresses```
SECTIONS = ("Summary", "Explanation", "Causes", "Fixes", "Reproducer", "Debugging")


@dataclass(frozen=True)
class Snippet:
    role: str  # repro | fix | template
    code: str
    options: dict[str, str]  # raises=, warns=, logs, requires=, isolated, timeout=
    line: int  # 1-based line of the fence in the file
    group: str = ""  # the cause/fix slug it sits under

    @property
    def error_line(self) -> int | None:
        """1-based line of a reproducer marked ``# error`` (the line that raises), or None."""
        marked = [i for i, l in enumerate(self.code.split("\n"), 1) if _ERROR_MARK.search(l)]
        return marked[0] if len(marked) == 1 else None

    @property
    def fix_lines(self) -> dict[int, str | None]:
        """Lines of a fix marked ``# fix`` -> the line they replace (``# fix: ORIGINAL``), None to delete."""
        out: dict[int, str | None] = {}
        for i, l in enumerate(self.code.split("\n"), 1):
            m = _FIX_MARK.search(l)
            if m:
                out[i] = m.group(1).strip() if m.group(1) else None
        return out

    def reverted(self) -> str:
        """The fix with its marked lines put back as they were before the fix."""
        lines = self.code.split("\n")
        out = []
        for i, l in enumerate(lines, 1):
            original = self.fix_lines.get(i, "")
            if original == "":
                out.append(l)
            elif original is not None:
                out.append(l[: len(l) - len(l.lstrip())] + original)
        return "\n".join(out)

    @property
    def requires(self) -> list[str]:
        return [r for r in self.options.get("requires", "").split(",") if r]

    @property
    def timeout(self) -> float:
        try:
            return float(self.options.get("timeout", "60"))
        except ValueError:
            return 60.0


_ERROR_MARK = re.compile(r"#\s*error\b")
_FIX_MARK = re.compile(r"#\s*fix\b(?::(.*))?$")


@dataclass
class Entry:
    path: Path
    meta: dict
    summary: dict[str, str] = field(default_factory=dict)
    explanation: dict[str, str] = field(default_factory=dict)
    debugging: dict[str, str] = field(default_factory=dict)
    causes: list[dict] = field(default_factory=list)  # {slug, en, zh, title_en, title_zh}
    fixes: list[dict] = field(default_factory=list)  # {slug, en, zh, titles, template, snippets}
    snippets: list[Snippet] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.path.stem

    @property
    def repros(self) -> list[Snippet]:
        return [s for s in self.snippets if s.role == "repro"]

    def repro_cause(self, s: Snippet) -> str:
        """The cause a reproducer shows: its ``cause=`` option, else the first cause."""
        return s.options.get("cause") or (self.causes[0]["slug"] if self.causes else "")

    def exercising(self, fix: dict) -> list[tuple[Snippet, str, str, int]]:
        """(reproducer, kind, code, line) for each reproducer a rewrite fix is tested on: those
        showing one of the fix's causes whose ``# error`` line the rewrite applies to (or, with
        ``target``, the line above it that it names). Values the message would give are stood in
        for by ``1`` here; ``tbx verify`` applies the real ones."""
        from explainer.advise.rewrite import RewriteError, apply_at, parse_ops
        from explainer.source import code_values

        if not fix.get("rewrites"):
            return []
        try:
            ops = parse_ops(fix["rewrites"][0])
        except RewriteError:
            return []
        names = {m.group(1) for m in re.finditer(r"\{([A-Za-z_]\w*)[|}]", fix["rewrites"][0])}
        causes = set(fix.get("causes") or [c["slug"] for c in self.causes])
        out = []
        for s in self.repros:
            n = s.error_line
            if n is None or self.repro_cause(s) not in causes:
                continue
            lines = s.code.split("\n")
            res = apply_at(ops, lines[n - 1], n, {**{k: "1" for k in names}, **code_values(lines[n - 1])}, lines)
            if res:
                kind, code, line = res
                assert line is not None  # apply_at gives back the line it is given (n) or its target's
                out.append((s, kind, code, line))
        return out


def split_front_matter(text: str) -> tuple[str, str, int]:
    """Return (toml, body, body_first_line). Raises ValueError when the file has no front matter."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "+++":
        raise ValueError("the file must start with a '+++' line opening the TOML front matter")
    for i in range(1, len(lines)):
        if lines[i].strip() == "+++":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :]), i + 2
    raise ValueError("the front matter has no closing '+++' line")


def parse_info(info: str) -> tuple[str, str, dict[str, str]]:
    """``python repro raises=RuntimeError isolated`` -> ("python", "repro", {...})."""
    words = info.split()
    lang = words[0] if words else ""
    role = words[1] if len(words) > 1 else ""
    opts: dict[str, str] = {}
    for w in words[2:]:
        key, _, value = w.partition("=")
        opts[key] = value
    return lang, role, opts


def fence_role(info: str) -> tuple[str, str, dict[str, str]]:
    """(lang, role, options) of a fence: ``python ROLE ...``, ``rewrite ...`` (role rewrite) or
    ``toml evidence`` (role evidence) or ``toml addresses`` (the causes a prose-only fix addresses);
    the role is '' for any other fence."""
    lang, role, opts = parse_info(info)
    if lang == "rewrite":
        return lang, "rewrite", parse_info("rewrite rewrite " + info.partition("rewrite")[2])[2]
    if lang == "toml" and role in ("evidence", "addresses"):
        return lang, role, opts
    return lang, (role if lang == "python" and role in ROLES else ""), opts  # '' also for an unknown role


def _title_and_body(block: str) -> tuple[str, str]:
    text = block.strip()
    if text.startswith("**"):
        end = text.find("**", 2)
        if end > 2:
            return text[2:end].strip().rstrip(".。"), text
    return "", text


def read_entry(path: Path) -> Entry:
    from markdown_it import MarkdownIt

    entry = Entry(path=path, meta={})
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        entry.problems.append(f"file: not UTF-8 (byte {exc.start}): save it as UTF-8")
        return entry
    except OSError as exc:
        entry.problems.append(
            f"file: cannot be read ({exc.strerror or type(exc).__name__}): a kb entry is a regular Markdown file"
        )
        return entry
    try:
        fm, body, first = split_front_matter(text)
        entry.meta = tomllib.loads(fm)
    except (ValueError, tomllib.TOMLDecodeError) as exc:  # TOMLDecodeError is a ValueError
        entry.problems.append(f"front matter: {exc}")
        return entry

    lines = body.split("\n")
    tokens = MarkdownIt("commonmark").parse(body)
    # Walk headings and fences in order, slicing the raw Markdown between headings.
    h2 = h3 = h4 = None
    blocks: dict[tuple, list[str]] = {}
    order: list[tuple] = []
    cursor_key: tuple | None = None
    cursor_start = 0

    def close(upto: int) -> None:
        if cursor_key is not None:
            blocks.setdefault(cursor_key, []).extend(lines[cursor_start:upto])

    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map:
            level = int(tok.tag[1])
            title = tokens[i + 1].content.strip()
            close(tok.map[0])
            if level == 2:
                h2, h3, h4 = title, None, None
                entry.sections.append(title)
            elif level == 3:
                h3, h4 = title, None
            elif level == 4:
                h4 = title
            else:
                entry.problems.append(f"line {first + tok.map[0]}: only ## to #### headings are used")
            cursor_key = (h2, h3, h4)
            if cursor_key not in order:
                order.append(cursor_key)
            cursor_start = tok.map[1]
        elif tok.type == "fence" and tok.map:
            lang, role, opts = fence_role(tok.info)
            if role in SNIPPET_ROLES:
                entry.snippets.append(
                    Snippet(role=role, code=tok.content, options=opts, line=first + tok.map[0], group=h3 or "")
                )
            elif lang == "python" and len(tok.info.split()) > 1:
                role = tok.info.split()[1]
                entry.problems.append(
                    f"line {first + tok.map[0]}: unknown snippet role {role!r} (use {', '.join(ROLES)})"
                )
    close(len(lines))

    def prose(key: tuple) -> str:
        raw = "\n".join(blocks.get(key, []))
        return _CJK_BREAK.sub("", _strip_fences(raw)).strip()

    target: dict[str, str] | list[dict]  # a section's texts by language, then the causes' and fixes' items
    for section, target in (
        ("Summary", entry.summary),
        ("Explanation", entry.explanation),
        ("Debugging", entry.debugging),
    ):
        for lang in LANGS:
            if (section, lang, None) in blocks:
                target[lang] = prose((section, lang, None))

    for section, target in (("Causes", entry.causes), ("Fixes", entry.fixes)):
        slugs = [k[1] for k in order if k[0] == section and k[1] and k[2] is None]
        for slug in slugs:
            item: dict = {"slug": slug}
            for lang in LANGS:
                title, text = _title_and_body(prose((section, slug, lang)))
                item[lang] = text
                item[f"title_{lang}"] = title
            mine = [s for s in entry.snippets if s.group == slug]
            if section == "Fixes":
                code = [s for s in mine if s.role in ("template", "rewrite")]
                item["templates"] = [s.code for s in mine if s.role == "template"]
                item["rewrites"] = [s.code for s in mine if s.role == "rewrite"]
                # a rewrite whose precondition the paste cannot settle (which value of a mask marks what)
                item["review"] = any("review" in s.options for s in mine if s.role == "rewrite")
                # a fix that only makes sense where its rewrite finds what it needs in the user's code
                # (the collate_fn the file defines): not shown at all where it does not apply
                item["where_applies"] = any("where-applies" in s.options for s in mine if s.role == "rewrite")
                item["causes"] = [c for c in (code[0].options.get("causes", "").split(",") if code else []) if c]
                addresses = [s for s in mine if s.role == "addresses"]
                if addresses and not code:  # a prose-only fix that addresses some of the causes
                    try:
                        named = tomllib.loads(addresses[0].code).get("causes")
                    except tomllib.TOMLDecodeError:
                        named = None
                    if isinstance(named, list) and named and all(isinstance(c, str) for c in named):
                        item["causes"] = list(named)
                    else:
                        entry.problems.append(f"## Fixes / ### {slug}: 'toml addresses' needs causes = [\"slug\", ...]")
                item["fix_snippets"] = [s for s in mine if s.role == "fix"]
            else:
                item["evidence"] = None
                fences = [s for s in mine if s.role == "evidence"]
                if len(fences) > 1:
                    entry.problems.append(f"## Causes / ### {slug}: one 'toml evidence' fence at most")
                if fences:
                    try:
                        item["evidence"] = tomllib.loads(fences[0].code)
                    except tomllib.TOMLDecodeError as exc:
                        entry.problems.append(f"line {fences[0].line}: evidence is not valid TOML: {exc}")
            target.append(item)
    return entry


# a line break between two Chinese characters is not a space (Markdown would render one)
_CJK_BREAK = re.compile(
    r"(?<=[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef])\n(?=[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef])"
)


def _strip_fences(markdown: str) -> str:
    out, inside = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            inside = not inside
            continue
        if not inside:
            out.append(line)
    return "\n".join(out)


def kb_files(kb_dir) -> list[Path]:
    return sorted(p for p in Path(kb_dir).glob("*.md") if p.name != "README.md")


def read_all(kb_dir) -> list[Entry]:
    return [read_entry(p) for p in kb_files(kb_dir)]
