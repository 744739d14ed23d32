"""Render an answer: fix templates filled with the user's values, as Markdown, HTML or terminal text.

The language is chosen here, at render time; the analysis result never holds it.
"""

from __future__ import annotations

import itertools

from explainer.advise.advise import code_span, fill_text
from explainer.render import advice_for, answer_json, environment_notes, raised_by

TYPE_CHECKING = False  # the annotations are strings: typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

LABELS = {
    "en": {
        "where": "Where",
        "why": "Why",
        "causes": "Likely causes",
        "fixes": "Fixes",
        "debug": "Check",
        "confidence": "confidence",
        "docs": "Docs",
        "parsed": "Parsed",
        "none": "No known PyTorch error matches this paste.",
        "raised_by": "Raised by {who}, not by PyTorch; no entry of the knowledge base fits it yet.",
        "python_own": "Raised by Python in your own code, not by PyTorch.",
        "nearest": "Nearest entries",
        "ambiguous": "Two entries fit this message about equally well; paste the full traceback to tell them apart.",
        "other": "Also possible",
        "found": "Evidence",
        "example": "Example (the entry's, not your code)",
        "review": "check before applying: it may change what your code means",
        "cause": "Likely cause",
        "fix": "Fix",
        "replace": "Replace {where} with",
        "elsewhere": "The error is raised at line {fails}, but the change belongs on another line. ",
        "insert": "Insert before {where}",
        "line": "line {at}",
        "cell": "{at}",
        "your_line": "your failing line",
        "colon": ": ",
        "paren": " ({})",
        "more": "all causes and fixes",
    },
    "zh": {
        "where": "出错位置",
        "why": "原因",
        "causes": "常见原因",
        "fixes": "解决办法",
        "debug": "排查",
        "confidence": "置信度",
        "docs": "文档",
        "parsed": "解析结果",
        "none": "没有找到与这段报错对应的已知 PyTorch 错误。",
        "raised_by": "这个错误来自{who}，不是 PyTorch 抛出的；知识库里还没有与之对应的条目。",
        "python_own": "这是 Python 在你自己的代码里抛出的错误，不是 PyTorch 抛出的。",
        "nearest": "最接近的条目",
        "ambiguous": "有两个条目都差不多符合这条报错信息，请贴出完整的 traceback 以便区分。",
        "other": "也可能是",
        "found": "依据",
        "example": "示例（条目自带的，不是你的代码）",
        "review": "应用前请确认：它可能改变代码的含义",
        "cause": "最可能的原因",
        "fix": "解决办法",
        "replace": "把{where}改成",
        "elsewhere": "报错发生在第 {fails} 行，但要改的是另一行。",
        "insert": "在{where}之前加上",
        "line": " {at} 这一行",
        "cell": " {at} 这一行",
        "your_line": "出错的那一行",
        "colon": "：",
        "paren": "（{}）",
        "more": "全部原因和解决办法",
    },
}


TAIL: dict[str, dict[str, Any]] = {  # texts, and the "strength" names by match kind
    "en": {
        "head": "Not in the curated knowledge base. PyTorch raised this itself:",
        "warning_head": "Not in the curated knowledge base. A warning, not an error: PyTorch issued it itself:",
        "warned_at": "Issued at",
        "warning": "named by the warning's own header",
        "warning_credit": "A warning does not stop the program: if it failed, its error comes further down the output "
        "(paste that part). No cause or fix is curated for this warning.",
        "log_head": "Not in the curated knowledge base. PyTorch reported this in its log:",
        "logged_at": "Logged at",
        "log": "named by the log record itself",
        "log_from": "logged by {fn}",
        "log_credit": "The location is the module the log record names: the code that reported the error, which may "
        "have caught it from deeper down (a log shows the message only). No cause or fix is curated for it.",
        "from": "{exc} from {fn}",
        "from_untyped": "raised by {fn}",
        "at": "Raised at",
        "check": "failed check",
        "message": "torch's message template",
        "also": "also raised at",
        "more": "and {n} more",
        "match": "match",
        "strength": {
            "exact": "the whole message",
            "start": "the start of the message",
            "partial": "inside the message",
        },
        "source": "torch {v} source, line not kept; the message is present in the indexed build",
        "exact": "torch {v}",
        "paste": "named by the paste itself",
        "versions": "releases that raise this wording: torch {first} to {last} (of those indexed)",
        "gone": "no indexed release after torch {last} raises it (the newest is {newest}): the code that raised "
        "it changed after {last}",
        "frame": "the innermost frame of the paste inside {lib}",
        "code": "the line",
        "gpu": "torch {v} source: CUDA/MPS code, which the CPU build the long tail is made from does not hold",
        "cpp": "torch {v} source, the line as of that release",
        "said": "what it says",
        "near": "a close wording, not word for word: another release of {lib} words it so",
        "others": "Also fits",
        "paste_credit": "The location is the one the message itself names; no indexed torch source holds this message "
        "word for word (torch 1.x's THC, for one, wrote its C file and line into the message). No cause or fix is curated for it.",
        "assert": "An internal consistency check of PyTorch failed: this is most likely a bug in PyTorch, not in your code. "
        "Report it to PyTorch with the condition and the location above and a small script that raises it.",
        "gb": "PyTorch's explanation of this graph break",
        "hint": "hint",
        "credit": "Message and location from the PyTorch sources, indexed for torch {v} (BSD-3-Clause, © PyTorch contributors). No cause or fix is curated for it.",
    },
    "zh": {
        "head": "知识库里还没有整理这条报错，它是 PyTorch 自己抛出的：",
        "warning_head": "知识库里还没有整理这条信息。它是警告，不是报错，是 PyTorch 自己发出的：",
        "warned_at": "发出位置",
        "warning_from": "{fn} 发出的 {exc}",
        "warning": "警告开头自带的位置",
        "warning_credit": "警告本身不会让程序停下来：如果程序确实失败了，真正的报错在输出的更后面（请贴那一段）。"
        "这条警告还没有人工整理的原因和解决办法。",
        "log_head": "知识库里还没有整理这条报错，它是 PyTorch 在日志里报告的：",
        "logged_at": "记录位置",
        "log": "日志记录自己写明的位置",
        "log_from": "由 {fn} 记录",
        "log_credit": "位置是日志记录里写明的模块：报告这个错误的代码，错误本身可能是它从更深处捕获的（日志只给出了信息）。"
        "这条报错还没有人工整理的原因和解决办法。",
        "from": "{fn} 抛出的 {exc}",
        "from_untyped": "由 {fn} 抛出",
        "at": "抛出位置",
        "check": "没通过的检查",
        "message": "torch 的报错信息模板",
        "also": "同样的信息还出现在",
        "more": "另有 {n} 处",
        "match": "匹配程度",
        "strength": {"exact": "整条信息吻合", "start": "信息开头吻合", "partial": "信息中间的一段吻合"},
        "source": "torch {v} 源码，行号未保留；所索引版本的二进制里确有这条信息",
        "exact": "torch {v}",
        "paste": "报错信息里自带的位置",
        "versions": "会这样报错的版本：torch {first} 到 {last}（在已索引的版本里）",
        "gone": "已索引的版本里，torch {last} 之后都不再这样报错（最新的是 {newest}）：抛出它的代码在 {last} 之后改过",
        "frame": "报错调用栈里 {lib} 内部最深的那一帧",
        "code": "出错的那一行",
        "gpu": "torch {v} 源码：CUDA/MPS 代码，长尾索引所用的 CPU 版本里没有",
        "cpp": "torch {v} 源码，行号以这个版本为准",
        "said": "它报的内容",
        "near": "措辞相近，但不是逐字相同：{lib} 的另一个版本是这样写的",
        "others": "也可能来自",
        "paste_credit": "位置是报错信息自己写明的；已索引的 torch 源码里没有逐字相同的这条信息（比如 torch 1.x 的 THC 会把 C 文件名和行号写进报错里）。"
        "这条报错还没有人工整理的原因和解决办法。",
        "assert": "PyTorch 内部的一致性检查没通过：这多半是 PyTorch 自身的 bug，而不是你的代码写错了。"
        "请带上上面的检查条件、位置和一个能复现的小脚本，向 PyTorch 提 issue。",
        "gb": "PyTorch 对这次 graph break 的说明",
        "hint": "提示",
        "credit": "信息和位置取自 PyTorch 源码，按 torch {v} 建立索引（BSD-3-Clause，© PyTorch contributors）。这条报错还没有人工整理的原因和解决办法。",
    },
}


# the same texts for a site in a library's own sources (transformers, the Hub, diffusers, ...)
LIB_TAIL: dict[str, dict[str, str]] = {
    "en": {
        "head": "Not in the curated knowledge base. The library {lib} raised this itself:",
        "warning_head": "Not in the curated knowledge base. A warning, not an error: the library {lib} issued it itself:",
        "message": "message template in {lib}",
        "exact": "{lib} {v}",
        "credit": "Message and location from {lib} {v}'s own sources. No cause or fix is curated for it.",
        "paste_credit": "The location is the one {lib} itself names in the paste; no indexed source holds this message. "
        "No cause or fix is curated for it.",
        "frame_credit": "Location from the paste's own traceback: the indexed releases of {lib} do not hold this "
        "message word for word (an older or newer release, or an error Python raised inside {lib}'s code). "
        "No cause or fix is curated for it.",
        "log_head": "Not in the curated knowledge base. The library {lib} reported this in its log:",
    },
    "zh": {
        "head": "知识库里还没有整理这条报错，它是库 {lib} 自己抛出的：",
        "warning_head": "知识库里还没有整理这条信息。它是警告，不是报错，是库 {lib} 自己发出的：",
        "message": "{lib} 的报错信息模板",
        "exact": "{lib} {v}",
        "credit": "信息和位置取自 {lib} {v} 的源码。这条报错还没有人工整理的原因和解决办法。",
        "paste_credit": "位置是 {lib} 自己在报错里写明的；已索引的源码里没有这条信息。这条报错还没有人工整理的原因和解决办法。",
        "frame_credit": "位置取自你贴出的调用栈：已索引的 {lib} 版本里没有逐字相同的这条信息"
        "（可能是更老或更新的版本，或是 Python 在 {lib} 的代码里抛出的错误）。这条报错还没有人工整理的原因和解决办法。",
        "log_head": "知识库里还没有整理这条报错，它是库 {lib} 在日志里报告的：",
    },
}


def _tail_texts(lg: str, r: dict) -> dict:
    """TAIL's texts for this site: a library's site says whose sources and which release."""
    T = dict(TAIL[lg])
    lib = r.get("library")
    if lib:
        for k, v in LIB_TAIL[lg].items():
            T[k] = v.replace("{lib}", lib)
        T["source"] = T["exact"]
    return T


def _site_place(r: dict) -> str:
    place = r["file"] or ""
    if r.get("line"):
        place += f":{r['line']}"
    return f"[{code_span(place)}]({r['url']})" if r.get("url") and place else code_span(place) if place else ""


def raised_at_markdown(answer, *, lang: str, full: bool = True) -> str:
    """The long tail's answer: where PyTorch raised the message, in torch's own words; never a cause
    or a fix. Under a curated answer, one line; on its own, the whole uncurated answer."""
    sites = answer.raised_at
    if not sites:
        return ""
    parts = []
    for lg in _langs(lang):
        r = sites[0]
        T = _tail_texts(lg, r)
        if answer.matches:
            place = _site_place(r)
            fn = code_span(r["function"]) if r.get("function") else ""
            if place or fn:  # never an empty "Raised at:" line (a site known by its message only)
                label = T["logged_at"] if r["origin"] == "log" else T["at"]
                parts.append(f"{label}: {place}" + (f" ({fn})" if place and fn else fn) + "\n")
            continue
        warned, logged = r["origin"] == "warning", r["origin"] == "log"
        parts.append(f"**{T['warning_head' if warned else 'log_head' if logged else 'head']}**\n")
        fn = code_span(r["function"]) if r.get("function") else (r.get("library") or "PyTorch")
        if r.get("op") and r["op"] != r.get("function"):
            fn += f" ({code_span(r['op'])})"
        exc = r.get("exc_type") or (answer.parsed.exc_type if "said" not in r else None)
        said_by = T.get("warning_from", T["from"]) if warned else T["from"]  # (zh words a warning otherwise)
        if logged:
            who = T["log_from"].format(fn=fn)
        else:
            who = said_by.format(exc=code_span(exc), fn=fn) if exc else T["from_untyped"].format(fn=fn)
        lines = [f"- {who}"]
        if r.get("file"):
            if r["origin"] in ("paste", "warning", "log"):
                ver = T[r["origin"]]
            elif r["origin"] == "gpu-source":
                ver = T["gpu"].format(v=r["torch_version"])
            elif r["origin"] == "cpp-source":
                ver = T["cpp"].format(v=r["torch_version"])
            elif r["origin"] == "frame":
                ver = T["frame"].replace("{lib}", r.get("library") or "?")
            elif r["origin"] == "source":
                ver = T["source"].format(v=r["torch_version"])
            else:
                ver = T["exact"].format(v=r.get("version") or r["torch_version"])
            lines.append(f"- {T['warned_at' if warned else 'logged_at' if logged else 'at']}: {_site_place(r)} ({ver})")
        if r.get("condition"):
            lines.append(f"- {T['check']}: {code_span(r['condition'])}")
        if r.get("template"):
            lines.append(f"- {T['message']}: {code_span(r['template'])}")
        also = r.get("also") or []
        if also:
            shown = "; ".join(
                _site_place(dict(a, url=None)) + (f" ({code_span(a['function'])})" if a.get("function") else "")
                for a in also[:3]
            )
            more = f"; {T['more'].format(n=r['sites'] - 1 - 3)}" if r.get("sites", 1) - 1 > 3 else ""
            lines.append(f"- {T['also']}: {shown}{more}")
        if r.get("code"):
            lines.append(f"- {T['code']}: {code_span(r['code'])}")
        if r.get("said"):
            lines.append(f"- {T['said']}: {code_span(r['said'])}")
        vs = r.get("versions")
        if vs and not r.get("library"):
            lines.append(f"- {T['versions'].format(first=vs[0], last=vs[1])}")
            from explainer.facts import version_key
            from explainer.match.longtail import release_span

            span = release_span()
            if span and vs[1] != span[1] and all(a.get("versions") for a in sites):
                newest = max((a["versions"][1] for a in sites), key=version_key)
                if newest != span[1]:  # no site of these words is in the newest release
                    lines.append(f"- {T['gone'].format(last=newest, newest=span[1])}")
        if r.get("near"):
            lines.append(f"- {T['match']}: {T['near'].replace('{lib}', r.get('library') or 'torch')}")
        elif r["origin"] not in ("frame", "paste", "warning", "log"):
            lines.append(f"- {T['match']}: {T['strength'][r['strength']]}")
        parts.append("\n".join(lines) + "\n")
        if r.get("kind") == "internal-assert" or (r.get("template") or "").find("INTERNAL ASSERT FAILED") >= 0:
            parts.append(f"> {T['assert']}\n")
        gb = r.get("graph_break")
        if gb:
            quote = [f"> {T['gb']} ({gb['id']}): {gb['explanation']}"] + [
                f"> - {T['hint']}: {h}" for h in gb.get("hints", [])[:4]
            ]
            parts.append("\n".join(quote) + "\n")
        if full and len(sites) > 1:
            parts.append(
                f"*{T['others']}:* "
                + "; ".join(
                    _site_place(o) + (f" ({code_span(o['function'])})" if o.get("function") else "") for o in sites[1:]
                )
                + "\n"
            )
        if answer.candidates:
            L = LABELS[lg]
            parts.append(
                f"{L['nearest']}: " + ", ".join(f"`{c.id}` ({c.score:.2f})" for c in answer.candidates[:2]) + "\n"
            )
        credit = (
            T["frame_credit"]
            if r["origin"] == "frame"
            else T["paste_credit"]
            if r["origin"] == "paste"
            else T["warning_credit"]
            if warned
            else T["log_credit"]
            if logged
            else T["credit"]
        )
        parts.append(
            f"*{credit.format(v=r.get('version') or r.get('indexed_version') or r['torch_version'] or '?')}*\n"
        )
    return "\n".join(parts)


def fix_values(answer, cand) -> dict[str, str]:
    """The values an answer is filled from: the user's line and the message's captures."""
    from explainer.advise.advise import values_for

    return values_for(answer.parsed, cand.captures, answer.live)


def _langs(lang: str) -> tuple[str, ...]:
    return ("en", "zh") if lang == "both" else (lang if lang in ("en", "zh") else "en",)


def _applies_label(fix: dict, lg: str) -> str:
    a = fix.get("applies")
    if not a:
        return LABELS[lg]["example"]
    name = _basename(a.get("file"))
    cell = name.startswith(("Cell In[", "Input In ["))  # a notebook cell, named as IPython names it
    if a.get("line"):
        where = f"{name}, line {a['line']}" if cell else f"{name}:{a['line']}"
    else:
        where = name
    key = "replace" if a["kind"] == "replace_line" else "insert"
    place = LABELS[lg]["cell" if cell else "line"].format(at=code_span(where)) if where else LABELS[lg]["your_line"]
    label = LABELS[lg][key].format(where=place)
    if a.get("fails_at") and a.get("line"):
        label = LABELS[lg]["elsewhere"].format(fails=a["fails_at"]) + label
    if fix.get("applicability") == "review":
        label += f" ({LABELS[lg]['review']})"
    return label


def _basename(path: str | None) -> str:
    if not path or path == "<truncated>":
        return ""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def entry_segments(
    doc: dict,
    *,
    lang: str,
    values: dict[str, str] | None = None,
    where: str | None = None,
    score: float | None = None,
    brief: bool = False,
    advice: dict | None = None,
    intro: bool = True,
) -> list[tuple[str, str]]:
    """The answer for one entry as ("md", markdown) and ("code", python) segments, in order: causes
    and fixes ranked for this paste (``advice``, see :mod:`explainer.advise.advise`), the entry's text with
    the paste's values filled in as code spans (:func:`explainer.advise.advise.fill_text`). Without
    ``intro``, the title, where and summary are left out (the page shows them in the short answer)."""
    from explainer.advise.advise import advise

    values = values or {}
    if advice is None:
        from explainer.model import Parsed

        advice = advise(doc, Parsed(None, None), {})
    segs: list[tuple[str, str]] = []
    for lg in _langs(lang):
        L = LABELS[lg]
        if intro:
            meta = code_span(doc["id"]) + (f" · {L['confidence']} {score:.2f}" if score is not None else "")
            segs.append(("md", f"## {doc['title'].get(lg, doc['id'])}\n\n{meta}\n"))
            if where:
                segs.append(("md", f"**{L['where']}:** {where}\n"))
            segs.append(("md", fill_text(doc["summary"].get(lg, ""), values) + "\n"))
        if brief:
            continue
        segs.append(("md", f"### {L['why']}\n\n{fill_text(doc['explanation'].get(lg, ''), values)}\n"))
        if advice["causes"]:
            items = []
            for i, c in enumerate(advice["causes"], 1):
                text = fill_text(c["text"][lg], values)
                found = [e[lg] for e in c["evidence"] if not e.get("against")]
                if found:
                    text += f"\n\n*{L['found']}:* " + "; ".join(found)
                items.append(f"{i}. {_indent(text)}")
            segs.append(("md", f"### {L['causes']}\n\n" + "\n".join(items) + "\n"))
        if advice["fixes"]:
            segs.append(("md", f"### {L['fixes']}\n"))
            for f in advice["fixes"]:
                segs.append(("md", fill_text(f["text"][lg], values) + "\n"))
                if f["code"]:
                    segs.append(("md", f"*{_applies_label(f, lg)}*\n"))
                    segs.append(("code", f["code"]))
        if doc.get("debugging", {}).get(lg):
            segs.append(("md", f"### {L['debug']}\n\n{fill_text(doc['debugging'][lg], values)}\n"))
        if doc.get("docs"):
            segs.append(("md", f"{L['docs']}: " + " · ".join(f"<{u}>" for u in doc["docs"]) + "\n"))
    return segs


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters at a word boundary, with an ellipsis when cut."""
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip() + "…"


def code_block(code: str) -> str:
    """A fenced Python block that no backtick run inside ``code`` can close."""
    run = longest = 0
    for ch in code:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}python\n{code.rstrip()}\n{fence}\n"


def segments_markdown(segs: list[tuple[str, str]]) -> str:
    return "\n".join(t if k == "md" else code_block(t) for k, t in segs).strip() + "\n"


def segments_html(segs: list[tuple[str, str]]) -> str:
    import html

    return "".join(
        _cached_html(t)
        if k == "md"
        else f'<pre><code class="language-python">{html.escape(t, quote=False)}\n</code></pre>\n'
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
        # a notebook cell as IPython names it (`Cell In[4], line 1`), a file as `path:line`
        loc += f", line {uf.line}" if loc.startswith(("Cell In[", "Input In [")) else f":{uf.line}"
    return code_span(loc) + (f"  {code_span(uf.code)}" if uf.code else "")


_MD = None
_HTML_CACHE: dict[str, str] = {}
_HTML_CACHE_MAX = 8192


def _cached_html(md: str) -> str:
    """HTML of a piece of an entry's own text: the same pieces recur on every request."""
    out = _HTML_CACHE.get(md)
    if out is None:
        out = markdown_to_html(md)
        if len(_HTML_CACHE) >= _HTML_CACHE_MAX:
            try:  # the oldest quarter (dicts keep insertion order): an entry's own pieces come back soon
                for old in list(itertools.islice(_HTML_CACHE, _HTML_CACHE_MAX // 4)):
                    _HTML_CACHE.pop(old, None)
            except RuntimeError:  # another thread changed it meanwhile
                pass
        _HTML_CACHE[md] = out
    return out


def markdown_to_html(md: str) -> str:
    """CommonMark with raw HTML off: a paste can never inject markup."""
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt

        _MD = MarkdownIt("commonmark", {"html": False, "linkify": False})
    return _MD.render(md)


FORMATS = ("markdown", "html")


def rendered_json(answer, index, *, lang: str = "en", source=None, formats=FORMATS) -> dict:
    """:func:`~explainer.render_json` with each match rendered (``rendered``: Markdown,
    HTML, the short answer and the rest) and, for an uncurated answer, the raise sites: what the API
    writes and the paste page shows. ``formats``: which of Markdown and HTML (none: nothing rendered)."""
    if not formats:
        return answer_json(answer, index, lang=lang, source=source)

    def render(answer, index, cand, *, lang: str, advice: dict | None = None) -> dict:
        return render_match(answer, index, cand, lang=lang, advice=advice, source=source, formats=formats)

    out = answer_json(answer, index, lang=lang, source=source, render_match=render)
    if answer.raised_at and not out["matches"]:
        md = raised_at_markdown(answer, lang=lang)
        out["raised_at_rendered"] = {
            **({"markdown": md} if "markdown" in formats else {}),
            **({"html": markdown_to_html(md)} if "html" in formats else {}),
        }
    return out


def _formatted(segs: list[tuple[str, str]], formats) -> dict:
    out = {}
    if "markdown" in formats:
        out["markdown"] = segments_markdown(segs)
    if "html" in formats:
        out["html"] = segments_html(segs)
    return out


def render_match(answer, index, cand, *, lang: str, advice: dict | None = None, source=None, formats=FORMATS) -> dict:
    """One match rendered: the whole answer (``markdown``, ``html``), and for the page, which shows
    the title, confidence and where itself, the ``short`` answer without them and the ``rest``
    (why, every cause and fix, how to check, docs) without what the short answer already said;
    each in the ``formats`` asked for."""
    doc = index.entry(cand.id)
    advice = advice or advice_for(answer, index, cand, source=source)
    values = fix_values(answer, cand)
    segs = entry_segments(
        doc, lang=lang, values=values, advice=advice, where=where_text(answer.parsed), score=cand.score
    )
    short = short_segments(answer, cand, doc=doc, values=values, advice=advice, lang=lang, header=False, where=False)
    rest = entry_segments(doc, lang=lang, values=values, advice=advice, intro=False)
    return {**_formatted(segs, formats), "short": _formatted(short, formats), "rest": _formatted(rest, formats)}


def answer_markdown(answer, index, *, lang: str, source=None) -> str:
    """The whole answer: the best match in full, the others briefly, or what was parsed."""
    L = LABELS["zh" if lang == "zh" else "en"]
    p = answer.parsed
    first_line = clip((p.message or "").splitlines()[0], 300) if p.message else ""
    parsed_line = f"**{L['parsed']}:** {code_span(p.exc_type or '?')}: " + (
        code_span(first_line) if first_line else "—"
    )
    matches = answer.matches
    if not matches and answer.raised_at:
        return "\n".join([parsed_line, "", raised_at_markdown(answer, lang=lang)])
    if not matches:
        who = raised_by(answer, index)
        kind = who.get("kind")
        names = WHO["zh" if lang == "zh" else "en"]
        if kind == "python":
            out = [parsed_line, "", L["python_own"]]
        elif kind in names:
            out = [parsed_line, "", L["raised_by"].format(who=names[kind].format(lib=who.get("library") or "?"))]
        else:
            out = [parsed_line, "", L["none"]]
        notes = environment_notes(answer, who, source)
        if notes:
            out += [*(f"- {n['zh' if lang == 'zh' else 'en']}" for n in notes), ""]
        if answer.candidates:
            out.append(f"{L['nearest']}: " + ", ".join(f"`{c.id}` ({c.score:.2f})" for c in answer.candidates[:2]))
        return "\n".join(out) + "\n"
    parts = [parsed_line, ""]
    if answer.ambiguous:
        parts.append(f"> {L['ambiguous']}\n")
    first = matches[0]
    parts.append(render_match(answer, index, first, lang=lang, source=source)["markdown"])
    parts += _notes_markdown(answer, index, lang, source)
    if answer.raised_at:
        parts.append(raised_at_markdown(answer, lang=lang))
    for c in matches[1:]:
        if answer.ambiguous and c is matches[1]:
            doc = index.entry(c.id)
            advice = advice_for(answer, index, c, source=source)
            parts.append(entry_markdown(doc, lang=lang, values=fix_values(answer, c), score=c.score, advice=advice))
        else:
            e = index.entries[c.id]
            title = e["title_zh"] if lang == "zh" else e["title_en"]
            parts.append(f"*{L['other']}:* `{c.id}` — {title} ({c.score:.2f})")
    return "\n".join(parts)


WHO = {  # who raised an error no entry fits, in LABELS' "raised_by"
    "en": {
        "library": "the library {lib}",
        "environment": "the environment ({lib})",
        "python": "Python, in your own code",
    },
    "zh": {"library": "库 {lib}", "environment": "运行环境（{lib}）", "python": "Python，在你自己的代码里"},
}


def _notes_markdown(answer, index, lang: str, source) -> list[str]:
    notes = environment_notes(answer, raised_by(answer, index), source)
    return ["\n".join(f"- {n['zh' if lang == 'zh' else 'en']}" for n in notes) + "\n"] if notes else []


def short_segments(
    answer, c, *, doc: dict, values: dict, advice: dict, lang: str, header: bool = True, where: bool = True
) -> list[tuple[str, str]]:
    """The short answer for one match as segments: the title and where (each unless turned off: the
    page shows them itself), the summary, the cause the paste points to (with what points to it) and
    the best-ranked fix with its code."""
    segs: list[tuple[str, str]] = []
    for lg in _langs(lang):
        L = LABELS[lg]
        if header:
            segs.append(
                ("md", f"**{doc['title'].get(lg, c.id)}** ({code_span(c.id)}, {L['confidence']} {c.score:.2f})\n")
            )
        place = where_text(answer.parsed) if where else None
        if place:
            segs.append(("md", f"{L['where']}{L['colon']}{place}\n"))
        segs.append(("md", fill_text(doc["summary"].get(lg, ""), values) + "\n"))
        cause = advice["causes"][0] if advice["causes"] else None
        if cause and cause["evidence"] and not cause["ruled_out"]:
            found = "; ".join(e[lg] for e in cause["evidence"] if not e.get("against"))
            evidence = L["paren"].format(f"{L['found']}{L['colon']}{found}")
            segs.append(("md", f"{L['cause']}{L['colon']}{cause['title'][lg]}{evidence}\n"))
        if advice["fixes"]:
            f = advice["fixes"][0]
            segs.append(("md", f"{L['fix']}{L['colon']}{f['title'][lg] or L['fix']}\n"))
            if f["code"]:
                segs.append(("md", f"*{_applies_label(f, lg)}*\n"))
                segs.append(("code", f["code"]))
    return segs


def short_markdown(
    answer, index, *, lang: str, more: str | None = None, source=None, advice: dict | None = None
) -> str:
    """A few lines under a traceback: the short answer of the best match, then a pointer to all of it
    (``more``: how the surface shows everything; default the CLI's commands; ``advice``: the best
    match's, where the surface has ranked it already)."""
    matches = answer.matches
    if not matches:
        return answer_markdown(answer, index, lang=lang, source=source)
    c = matches[0]
    doc = index.entry(c.id)
    advice = advice if advice is not None else advice_for(answer, index, c, source=source)
    segs = short_segments(answer, c, doc=doc, values=fix_values(answer, c), advice=advice, lang=lang)
    parts = [segments_markdown(segs).rstrip("\n") + "\n", *_notes_markdown(answer, index, lang, source)]
    if answer.ambiguous and len(matches) > 1:
        parts.append(f"> {LABELS['zh' if lang == 'zh' else 'en']['ambiguous']} ({code_span(matches[1].id)})\n")
    if answer.raised_at:
        parts.append(raised_at_markdown(answer, lang=lang))
    L = LABELS["zh" if lang == "zh" else "en"]
    how = more or "`tbx explain --full` · `tbx show {id}`"
    parts.append(f"{L['more']}{L['colon']}{how.replace('{id}', c.id)}\n")
    return "\n".join(parts)


def render_terminal(answer, index, *, lang: str, full: bool = False, source=None) -> None:
    """The answer on stdout: short unless ``full``; styled in a terminal, plain Markdown (no colour,
    no padding) when piped or under ``NO_COLOR``."""
    from explainer.render.terminal import print_markdown

    md = (answer_markdown if full else short_markdown)(answer, index, lang=lang, source=source)
    print_markdown(md)


def print_entry(doc: dict, *, lang: str) -> None:
    from explainer.render.terminal import print_markdown

    print_markdown(entry_markdown(doc, lang=lang))
