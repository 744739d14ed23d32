"""Render an answer: fix templates filled with the user's values, as Markdown, HTML or terminal text.

The language is chosen here, at render time; the analysis result never holds it.
"""

from __future__ import annotations

import ast

from .patterns import fill

LABELS = {
    "en": {"where": "Where", "why": "Why", "causes": "Likely causes", "fixes": "Fixes", "debug": "Check",
           "confidence": "confidence", "docs": "Docs", "parsed": "Parsed", "none": "No known PyTorch error matches this paste.",
           "nearest": "Nearest entries", "ambiguous": "Two entries fit this message about equally well; paste the full traceback to tell them apart.",
           "other": "Also possible"},
    "zh": {"where": "出错位置", "why": "原因", "causes": "常见原因", "fixes": "解决办法", "debug": "排查",
           "confidence": "置信度", "docs": "文档", "parsed": "解析结果", "none": "没有找到与这段报错对应的已知 PyTorch 错误。",
           "nearest": "最接近的条目", "ambiguous": "有两个条目都差不多符合这条报错信息，请贴出完整的 traceback 以便区分。",
           "other": "也可能是"},
}


def code_values(line: str | None) -> dict[str, str]:
    """Names in the user's code line, read with ``ast`` (never executed)."""
    out: dict[str, str] = {}
    if not line:
        return out
    text = line.strip()
    out["code"] = text
    if len(text) > 500:
        return out
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return out
    if not tree.body:
        return out
    stmt = tree.body[0]
    value = getattr(stmt, "value", None)
    if isinstance(stmt, ast.Assign) and stmt.targets:
        out["target"] = ast.unparse(stmt.targets[0])
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        out["target"] = ast.unparse(stmt.target)
    call = value if isinstance(value, ast.Call) else next((n for n in ast.walk(stmt) if isinstance(n, ast.Call)), None)
    try:
        if call is not None:
            out["call"] = ast.unparse(call.func)
            if isinstance(call.func, ast.Attribute):
                out["receiver"] = ast.unparse(call.func.value)
            for i, arg in enumerate(call.args[:2]):
                out[f"arg{i}"] = ast.unparse(arg)
    except (RecursionError, MemoryError, ValueError):
        pass
    return out


def _user_code(parsed) -> str | None:
    uf = parsed.user_frame
    if uf and uf.code:
        return uf.code
    return None


def fix_values(answer, cand) -> dict[str, str]:
    values = code_values(_user_code(answer.parsed))
    values.update({k: v for k, v in cand.captures.items() if v})
    return values


def _langs(lang: str) -> tuple[str, ...]:
    return ("en", "zh") if lang == "both" else (lang if lang in ("en", "zh") else "en",)


def entry_markdown(doc: dict, *, lang: str, values: dict[str, str] | None = None, where: str | None = None, score: float | None = None, brief: bool = False) -> str:
    values = values or {}
    parts: list[str] = []
    for lg in _langs(lang):
        L = LABELS[lg]
        head = f"## {doc['title'].get(lg, doc['id'])}"
        meta = f"`{doc['id']}`" + (f" · {L['confidence']} {score:.2f}" if score is not None else "")
        parts.append(f"{head}\n\n{meta}\n")
        if where:
            parts.append(f"**{L['where']}:** {where}\n")
        parts.append(doc["summary"].get(lg, "") + "\n")
        if brief:
            continue
        parts.append(f"### {L['why']}\n\n{doc['explanation'].get(lg, '')}\n")
        if doc.get("causes"):
            parts.append(f"### {L['causes']}\n")
            for i, c in enumerate(doc["causes"], 1):
                parts.append(f"{i}. {_indent(c.get(lg, ''))}")
            parts.append("")
        if doc.get("fixes"):
            parts.append(f"### {L['fixes']}\n")
            for f in doc["fixes"]:
                parts.append(f.get(lg, "") + "\n")
                if f.get("template"):
                    parts.append("```python\n" + fill(f["template"], values).rstrip() + "\n```\n")
        if doc.get("debugging", {}).get(lg):
            parts.append(f"### {L['debug']}\n\n{doc['debugging'][lg]}\n")
        if doc.get("docs"):
            parts.append(f"{L['docs']}: " + " · ".join(f"<{u}>" for u in doc["docs"]) + "\n")
    return "\n".join(parts).strip() + "\n"


def _indent(text: str) -> str:
    lines = text.strip().split("\n")
    return "\n".join([lines[0]] + ["   " + l if l.strip() else "" for l in lines[1:]])


def where_text(parsed) -> str | None:
    uf = parsed.user_frame
    if not uf:
        return None
    loc = uf.file if uf.file != "<truncated>" else "…"
    if uf.line:
        loc += f":{uf.line}"
    return f"`{loc}`" + (f"  `{uf.code}`" if uf.code else "")


_MD = None


def markdown_to_html(md: str) -> str:
    """CommonMark with raw HTML off: a paste can never inject markup."""
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt

        _MD = MarkdownIt("commonmark", {"html": False, "linkify": False})
    return _MD.render(md)


def render_match(answer, cand, *, lang: str) -> dict[str, str]:
    doc = answer.index.entry(cand.id)
    md = entry_markdown(doc, lang=lang, values=fix_values(answer, cand), where=where_text(answer.parsed), score=cand.score)
    return {"markdown": md, "html": markdown_to_html(md)}


def answer_markdown(answer, *, lang: str) -> str:
    """The whole answer: the best match in full, the others briefly, or what was parsed."""
    L = LABELS["zh" if lang == "zh" else "en"]
    p = answer.parsed
    parsed_line = f"**{L['parsed']}:** `{p.exc_type or '?'}`: {(p.message or '').splitlines()[0][:300] if p.message else '—'}"
    matches = answer.matches
    if not matches:
        out = [parsed_line, "", L["none"]]
        if answer.candidates:
            out.append(f"{L['nearest']}: " + ", ".join(f"`{c.id}` ({c.score:.2f})" for c in answer.candidates[:2]))
        return "\n".join(out) + "\n"
    parts = [parsed_line, ""]
    if answer.ambiguous:
        parts.append(f"> {L['ambiguous']}\n")
    first = matches[0]
    parts.append(render_match(answer, first, lang=lang)["markdown"])
    for c in matches[1:]:
        if answer.ambiguous and c is matches[1]:
            doc = answer.index.entry(c.id)
            parts.append(entry_markdown(doc, lang=lang, values=fix_values(answer, c), score=c.score))
        else:
            e = answer.index.entries[c.id]
            title = e["title_zh"] if lang == "zh" else e["title_en"]
            parts.append(f"*{L['other']}:* `{c.id}` — {title} ({c.score:.2f})")
    return "\n".join(parts)


def short_markdown(answer, *, lang: str) -> str:
    """A few lines under a traceback: the title, the summary, where, and the first fix filled in."""
    matches = answer.matches
    if not matches:
        return LABELS["zh" if lang == "zh" else "en"]["none"] + "\n"
    c = matches[0]
    doc = answer.index.entry(c.id)
    values = fix_values(answer, c)
    parts = []
    for lg in _langs(lang):
        L = LABELS[lg]
        parts.append(f"**{doc['title'].get(lg, c.id)}** (`{c.id}`, {L['confidence']} {c.score:.2f})\n")
        where = where_text(answer.parsed)
        if where:
            parts.append(f"{L['where']}: {where}\n")
        parts.append(doc["summary"].get(lg, "") + "\n")
        if doc.get("fixes"):
            f = doc["fixes"][0]
            title = f.get(f"title_{lg}") or L["fixes"]
            parts.append(f"{L['fixes']}: {title}\n")
            if f.get("template"):
                parts.append("```python\n" + fill(f["template"], values).rstrip() + "\n```\n")
    if answer.ambiguous and len(matches) > 1:
        parts.append(f"> {LABELS['zh' if lang == 'zh' else 'en']['ambiguous']} (`{matches[1].id}`)\n")
    parts.append(f"`tbx show {c.id}`\n")
    return "\n".join(parts)


def render_terminal(answer, index=None, *, lang: str) -> None:
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(answer_markdown(answer, lang=lang), code_theme="ansi_dark"))


def print_entry(doc: dict, *, lang: str) -> None:
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(entry_markdown(doc, lang=lang), code_theme="ansi_dark"))
