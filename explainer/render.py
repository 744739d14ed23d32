"""Render an answer: fix templates filled with the user's values, as Markdown, HTML or terminal text.

The language is chosen here, at render time; the analysis result never holds it.
"""

from __future__ import annotations

from .patterns import fill
from .rewrite import code_values

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


def entry_segments(doc: dict, *, lang: str, values: dict[str, str] | None = None, where: str | None = None, score: float | None = None, brief: bool = False) -> list[tuple[str, str]]:
    """The answer for one entry as ("md", markdown) and ("code", python) segments, in order. The
    Markdown segments are the entry's own text (the same on every request); the user's values only
    go into the short header and the code segments."""
    values = values or {}
    segs: list[tuple[str, str]] = []
    for lg in _langs(lang):
        L = LABELS[lg]
        meta = f"`{doc['id']}`" + (f" · {L['confidence']} {score:.2f}" if score is not None else "")
        segs.append(("md", f"## {doc['title'].get(lg, doc['id'])}\n\n{meta}\n"))
        if where:
            segs.append(("md", f"**{L['where']}:** {where}\n"))
        segs.append(("md", doc["summary"].get(lg, "") + "\n"))
        if brief:
            continue
        segs.append(("md", f"### {L['why']}\n\n{doc['explanation'].get(lg, '')}\n"))
        if doc.get("causes"):
            items = "\n".join(f"{i}. {_indent(c.get(lg, ''))}" for i, c in enumerate(doc["causes"], 1))
            segs.append(("md", f"### {L['causes']}\n\n{items}\n"))
        if doc.get("fixes"):
            segs.append(("md", f"### {L['fixes']}\n"))
            for f in doc["fixes"]:
                segs.append(("md", f.get(lg, "") + "\n"))
                if f.get("template"):
                    segs.append(("code", fill(f["template"], values).rstrip()))
        if doc.get("debugging", {}).get(lg):
            segs.append(("md", f"### {L['debug']}\n\n{doc['debugging'][lg]}\n"))
        if doc.get("docs"):
            segs.append(("md", f"{L['docs']}: " + " · ".join(f"<{u}>" for u in doc["docs"]) + "\n"))
    return segs


def segments_markdown(segs: list[tuple[str, str]]) -> str:
    return "\n".join(t if k == "md" else f"```python\n{t}\n```\n" for k, t in segs).strip() + "\n"


def segments_html(segs: list[tuple[str, str]]) -> str:
    import html

    return "".join(
        _cached_html(t) if k == "md" else f'<pre><code class="language-python">{html.escape(t, quote=False)}\n</code></pre>\n'
        for k, t in segs
    )


def entry_markdown(doc: dict, **kw) -> str:
    return segments_markdown(entry_segments(doc, **kw))


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
_HTML_CACHE: dict[str, str] = {}
_HTML_CACHE_MAX = 8192


def _cached_html(md: str) -> str:
    """HTML of a piece of an entry's own text: the same pieces recur on every request."""
    out = _HTML_CACHE.get(md)
    if out is None:
        out = markdown_to_html(md)
        if len(_HTML_CACHE) >= _HTML_CACHE_MAX:
            _HTML_CACHE.clear()
        _HTML_CACHE[md] = out
    return out


def markdown_to_html(md: str) -> str:
    """CommonMark with raw HTML off: a paste can never inject markup."""
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt

        _MD = MarkdownIt("commonmark", {"html": False, "linkify": False})
    return _MD.render(md)


def render_match(answer, cand, *, lang: str) -> dict[str, str]:
    doc = answer.index.entry(cand.id)
    segs = entry_segments(doc, lang=lang, values=fix_values(answer, cand), where=where_text(answer.parsed), score=cand.score)
    return {"markdown": segments_markdown(segs), "html": segments_html(segs)}


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


def render_terminal(answer, *, lang: str) -> None:
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(answer_markdown(answer, lang=lang), code_theme="ansi_dark"))


def print_entry(doc: dict, *, lang: str) -> None:
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(entry_markdown(doc, lang=lang), code_theme="ansi_dark"))
