"""Explain errors where they happen: ``sys.excepthook`` for scripts, an IPython extension for notebooks.

Nothing is imported or computed until an exception happens. The original traceback is always shown
first and untouched; any failure inside the explainer adds one short line and nothing else.
``KeyboardInterrupt`` and ``SystemExit`` pass through unchanged.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

LANG_ENV = "TBX_LANG"


@dataclass
class Options:
    lang: str = "auto"  # en | zh | both | auto
    detail: str = "short"  # short: summary, where, live values and the first fix; full: everything
    enabled: bool = True
    verbose: bool = False  # also say so (one dim line) when an error is not a PyTorch one it knows


OPTIONS = Options(lang=os.environ.get(LANG_ENV, "auto"))
_previous_hook = None
_index = None


def shared_index():
    global _index
    if _index is None:
        from explainer.knowledge.index import open_index

        _index = open_index()
    return _index


def is_quiet(answer) -> bool:
    """Nothing to add: no entry answers and the traceback never reached torch (a KeyError in the
    user's own dict, a NameError)."""
    if answer.matches:
        return False
    return not any(f.library and "torch" in (f.file or "").replace("\\", "/").split("/") for f in answer.parsed.frames)


def explanation_markdown(
    exc: BaseException, *, lang: str | None = None, detail: str | None = None
) -> tuple[str, object]:
    """Markdown explaining ``exc`` (live values included) and the answer behind it; '' when it has
    nothing to add (see :func:`is_quiet`) unless ``%explainer verbose`` is on. The cyclic collector
    is paused meanwhile (with torch loaded it walks hundreds of thousands of live objects for nothing,
    about 40 % of the hook's time) and restored after, even on error."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        return _explanation_markdown(exc, lang=lang, detail=detail)
    finally:
        if enabled:
            gc.enable()


def _explanation_markdown(exc: BaseException, *, lang: str | None, detail: str | None) -> tuple[str, object]:
    from explainer.budget import Budget
    from explainer.match.explain import detect_lang, explain
    from explainer.parse.live import from_exception, live_facts, live_values
    from explainer.render import advice_for
    from explainer.render.markdown import answer_markdown, short_markdown

    index = shared_index()
    budget = Budget()  # parsing and matching together stay within the default budget
    parsed = from_exception(exc, budget)
    from explainer.source import cached_lines

    matcher = budget.setup(lambda: index.matcher)  # built once per process: no part of this error's budget
    answer = explain(parsed, matcher, top=3, live=live_facts(exc), budget=budget)
    torch = sys.modules.get("torch")  # the live release decides, where the program has torch loaded
    if torch is not None and isinstance(getattr(torch, "__version__", None), str):
        v = str(torch.__version__)
        answer = type(answer)(
            *answer[:-1], {"range": [v.split("+")[0]] * 2, "evidence": [f"torch.__version__ = {v} (live)"]}
        )
    if os.environ.get("TBX_GAPS"):
        from explainer.surfaces.gaps import enabled, record

        if enabled():
            record(answer, index=index)
    lang = lang or OPTIONS.lang
    if lang == "auto":
        lang = detect_lang(parsed.message or "")
    detail = detail or OPTIONS.detail
    if is_quiet(answer):
        if not OPTIONS.verbose:
            return "", answer
        none = (
            "traceback-explainer：这不是它认识的 PyTorch 错误。"
            if lang == "zh"
            else "traceback-explainer: not a PyTorch error it knows."
        )
        return f"*{none}*\n", answer
    # how this surface shows everything: the magics in IPython, the CLI's `show` for a script
    more = (
        "`%explainer detail full`, then `%explain`" if "IPython" in sys.modules and _in_ipython() else "`tbx show {id}`"
    )
    # the best match's causes and fixes, ranked once for the short answer and the notes on its fix
    advice = advice_for(answer, index, answer.matches[0], source=cached_lines) if answer.matches else None
    if detail == "full":
        md = answer_markdown(answer, index, lang=lang, source=cached_lines)
    else:
        md = short_markdown(answer, index, lang=lang, more=more, source=cached_lines, advice=advice)
    if advice is not None:
        md += _fix_notes(exc, advice, lang)
    values = live_values(exc) if answer.matches else []
    if values:
        title = "张量的实际情况" if lang == "zh" else "Tensors on the failing line"
        md += f"\n**{title}:**\n\n" + "\n".join(f"- `{n}`: {d}" for n, d in values) + "\n"
    return md, answer


_SCRIPT: list[str] = []  # the script `python -m explainer run` runs (its path, absolute), if any


def _fix_notes(exc: BaseException, advice: dict, lang: str) -> str:
    """What the hooks add about the answer's first fix: how it fared on stand-ins of the frame's
    values (``explainer/surfaces/trial.py``), and, for a script, the command that tries it on a copy
    and applies it."""
    fixes = [f for f in advice["fixes"] if f.get("applies")]
    if not fixes:
        return ""
    from explainer.surfaces.trial import trial_markdown, try_fix

    try:
        note = trial_markdown(try_fix(exc, fixes[0]), lang)
    except Exception:  # noqa: BLE001 - a trial that breaks is no trial; the answer stands
        note = ""
    return note + (_check_fix_hint(fixes, lang) if _SCRIPT else "")


def _check_fix_hint(fixes: list[dict], lang: str) -> str:
    """The one command that tries the answer's fix on a copy of the script and applies it."""
    script = _SCRIPT[-1]
    for f in fixes:
        a = f["applies"]
        if a.get("file") and os.path.abspath(a["file"]) == script:
            unsafe = " --unsafe" if f["applicability"] != "safe" else ""
            cmd = f"`tbx run --check-fix --apply{unsafe} {os.path.relpath(script)}`"
            if lang == "zh":
                return f"\n先在副本上试一下这个修改，通过后再写回文件：{cmd}\n"
            return f"\nTry the fix on a copy, and write it if the error is gone: {cmd}\n"
    return ""


def _in_ipython() -> bool:
    try:
        from IPython import get_ipython

        return get_ipython() is not None
    except Exception:  # noqa: BLE001 - a broken IPython install: a script, then
        return False


def _print_explanation(exc: BaseException, file) -> None:
    try:
        md, _ = explanation_markdown(exc)
        if not md:
            return
        from explainer.render.terminal import print_markdown

        print_markdown(md, file, title="traceback-explainer")
    except Exception as failure:  # never let the explainer hide or replace the user's error
        print(f"[traceback-explainer] could not explain this error: {type(failure).__name__}: {failure}", file=file)


def excepthook(etype, value, tb) -> None:
    hook = _previous_hook or sys.__excepthook__
    hook(etype, value, tb)
    if OPTIONS.enabled and isinstance(value, Exception):
        _print_explanation(value, sys.stderr)


def install() -> object:
    """Set ``sys.excepthook`` to the explaining hook; returns the hook it replaced."""
    global _previous_hook
    previous = sys.excepthook
    if previous is not excepthook:
        _previous_hook = previous
    sys.excepthook = excepthook
    return previous


def uninstall() -> None:
    """Restore the hook that ``install()`` replaced."""
    global _previous_hook
    if sys.excepthook is excepthook:
        sys.excepthook = _previous_hook or sys.__excepthook__
    _previous_hook = None


def run_script(path: str, args: list[str]) -> int:
    """``python -m explainer run SCRIPT [ARGS]``: run a script as ``__main__`` with the hook.

    The exit code and the traceback on stderr are the script's own; the explanation follows it.
    """
    import runpy

    if not os.path.isfile(path):
        print(f"tbx: no such script: {path}", file=sys.stderr)
        return 2
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    install()
    _SCRIPT.append(os.path.abspath(path))
    try:
        runpy.run_path(os.path.abspath(path), run_name="__main__")  # named as `python script.py` names it
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - handed to the hook exactly as Python would
        tb = exc.__traceback__
        script = os.path.abspath(path)
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != script:
            tb = tb.tb_next
        tb = tb or exc.__traceback__
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        return 130 if isinstance(exc, KeyboardInterrupt) else 1
    finally:
        _SCRIPT.pop()
        uninstall()
    return 0


# -- IPython -----------------------------------------------------------------------------------


def ipython_handler(shell, etype, value, tb, tb_offset=None):
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)  # the normal traceback, first
    if OPTIONS.enabled:
        show_in_ipython(shell, value)
    return None


def show_in_ipython(shell, exc: BaseException) -> None:
    try:
        md, _ = explanation_markdown(exc)
        if not md:
            return
        if type(shell).__name__ == "ZMQInteractiveShell":  # Jupyter: HTML with a text fallback
            from IPython.display import display

            from explainer.render.markdown import markdown_to_html

            html = f'<div class="tbx-answer">{markdown_to_html(md)}</div>'
            display({"text/html": html, "text/plain": md}, raw=True)
        else:
            from explainer.render.terminal import print_markdown

            print_markdown(md, sys.stdout, title="traceback-explainer")
    except Exception as failure:
        print(
            f"[traceback-explainer] could not explain this error: {type(failure).__name__}: {failure}", file=sys.stderr
        )
