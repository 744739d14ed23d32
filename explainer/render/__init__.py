"""The fifth stage, the one place an answer meets its entries. This module: the answer joined with the
entries it names, as data (the JSON ``tbx explain --json`` writes, each match's causes and fixes
ranked for the paste), light on purpose, since ``tbx explain --json`` imports it and not the Markdown
and HTML renderer, :mod:`explainer.render.markdown` (which also writes the API's rendered JSON)."""

from __future__ import annotations


def advice_for(answer, index, cand, *, source=None, live: dict | None = None) -> dict:
    """Causes and fixes of ``cand``'s entry ranked for this paste (:func:`explainer.advise.advise.advise`).
    ``source`` reads the user's file (file -> lines, or None) where the surface may (the CLI, the
    hooks; never the HTTP API), for the rewrites that change another line than the failing one."""
    from explainer.advise.advise import advise

    return advise(
        index.entry(cand.id) or {},
        answer.parsed,
        cand.captures,
        live=live if live is not None else answer.live,
        source=source,
    )


def raised_by(answer, index) -> dict:
    """Who raised the error: the top entry's ``raised_by``, else what the paste itself shows."""
    if answer.matches:  # the entry's front matter says it: nothing more to load for a curated answer
        entry = index.entries[answer.matches[0].id]
        rb = entry.get("raised_by") or {}
        who = {"kind": rb.get("kind", "torch"), "library": rb.get("library")}
        if who["kind"] == "library" and entry.get("category") == "package" and "named" in (answer.parsed.message or ""):
            from explainer.match.origin import missing_module

            # a library's moved module, missed by the import system on the installed release (the
            # entry's own kind is the library's, for its deprecation warning)
            if missing_module(answer.parsed.message):
                who["kind"] = "environment"
        if who["kind"] not in ("library", "environment") or who["library"]:
            return who
        from explainer.match.origin import from_paste

        # the entry leaves the distribution to the paste; where the paste names none (a module no
        # distribution provides may be the project's own), who raised it is not known
        seen = from_paste(answer.parsed)
        if not seen["library"] or seen["kind"] not in (who["kind"], "library"):
            return {"kind": None, "library": None}
        # (a library's own mechanism may show through: transformers' run-time transformers_modules)
        return seen if seen["kind"] == "library" else {**who, "library": seen["library"]}
    from explainer.match.origin import from_paste

    return from_paste(answer.parsed, answer.raised_at)


def environment_notes(answer, who: dict, source) -> list[dict]:
    """Facts about the environment for this answer (``{"en", "zh"}`` each); the installed versions
    only where the surface may look (it passes ``source``)."""
    message = answer.parsed.message or ""
    if who.get("kind") == "python" and not answer.matches:
        from explainer.advise.builtins import python_notes

        said = python_notes(answer.parsed)
        if "No module named" not in message:
            return said
        from explainer.advise.environment import notes  # a module of the project's own, not on the path

        return said + notes(answer.parsed, who, local=source is not None, answered=bool(answer.matches))
    if who.get("kind") not in ("environment", "library") and not any(
        w in message for w in ("No module named", "cannot import name", "model type")
    ):
        return []
    from explainer.advise.environment import notes

    return notes(answer.parsed, who, local=source is not None, answered=bool(answer.matches))


def answer_json(answer, index, *, lang: str = "en", source=None, render_match=None) -> dict:
    """The answer as ``tbx explain --json`` writes it (INTERFACES.md). ``render_match`` (``(answer,
    index, cand, lang, advice) -> dict``) adds each match's rendering: see
    :func:`explainer.render.markdown.rendered_json`, which the API writes."""
    from explainer.advise.advise import as_json as advise_json

    out_matches = []
    for c in answer.matches:
        e = index.entries[c.id]
        title = (
            e["title_zh"] if lang == "zh" else e["title_en"] if lang == "en" else f"{e['title_en']} / {e['title_zh']}"
        )
        reasons = list(c.reasons)
        if lang == "zh":
            from explainer.i18n import reason

            reasons = [reason(r, lang) for r in reasons]
        m = {"id": c.id, "score": c.score, "title": title, "reasons": reasons, "captures": dict(c.captures)}
        advice = advice_for(answer, index, c, source=source)  # ranked once: the JSON and the rendering show the same
        m.update(advise_json(advice, lang))
        if render_match is not None:
            m["rendered"] = render_match(answer, index, c, lang=lang, advice=advice)
        out_matches.append(m)
    out = {
        "parsed": answer.parsed.as_json(),
        "matches": out_matches,
        "abstained": not out_matches,
        "ambiguous": answer.ambiguous,
    }
    if not out_matches:  # an abstention always says what came closest (nothing, where nothing scored)
        out["nearest"] = [{"id": c.id, "score": c.score} for c in answer.candidates[:2]]
    out["raised_at"] = [dict(r) for r in answer.raised_at]
    out["raised_by"] = who = raised_by(answer, index)
    out["torch_version"] = answer.torch_version
    out["notes"] = [n["zh" if lang == "zh" else "en"] for n in environment_notes(answer, who, source)]
    if answer.partial:
        out["partial"] = True
    return out
