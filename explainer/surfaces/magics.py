"""The IPython extension (``%load_ext explainer``): the handler that explains a cell's exception, and the
magics, ``%explainer`` that sets options and ``%explain`` that explains on demand."""

from __future__ import annotations

import sys

from explainer.surfaces.hook import OPTIONS, ipython_handler, show_in_ipython

USAGE = "usage: %explainer lang en|zh|both|auto  |  %explainer detail short|full  |  %explainer on|off  |  %explainer verbose|quiet"


def explainer_magic(line: str) -> None:
    words = line.split()
    if words[:1] == ["lang"] and len(words) == 2 and words[1] in ("en", "zh", "both", "auto"):
        OPTIONS.lang = words[1]
    elif words[:1] == ["detail"] and len(words) == 2 and words[1] in ("short", "full"):
        OPTIONS.detail = words[1]
    elif words in (["on"], ["off"]):
        OPTIONS.enabled = words[0] == "on"
    elif words in (["verbose"], ["quiet"]):
        OPTIONS.verbose = words[0] == "verbose"
    elif words:
        print(USAGE)
        return
    print(
        f"traceback-explainer: lang={OPTIONS.lang} detail={OPTIONS.detail} {'on' if OPTIONS.enabled else 'off'}"
        f"{' verbose' if OPTIONS.verbose else ''}"
    )


def make_explain(shell):
    def explain_magic(line: str, cell: str | None = None) -> None:
        """%explain: the last exception; %explain TEXT: a pasted traceback; %%explain: the cell's
        text (a multi-line paste)."""
        if cell is not None:
            line = cell
        if line.strip():
            from explainer.match.explain import detect_lang, explain_text
            from explainer.render.markdown import answer_markdown
            from explainer.surfaces.hook import shared_index

            lang = OPTIONS.lang if OPTIONS.lang != "auto" else detect_lang(line)
            answer = explain_text(line, shared_index())
            from explainer.render.terminal import print_markdown

            print_markdown(answer_markdown(answer, shared_index(), lang=lang), sys.stdout)
            return
        exc = getattr(sys, "last_value", None)
        if exc is None:
            print("traceback-explainer: no exception yet in this session")
            return
        show_in_ipython(shell, exc)

    return explain_magic


MAGICS = (("line", "explainer"), ("line", "explain"), ("cell", "explain"))


def register(shell) -> None:
    explain = make_explain(shell)
    shell.register_magic_function(explainer_magic, magic_kind="line", magic_name="explainer")
    shell.register_magic_function(explain, magic_kind="line", magic_name="explain")
    shell.register_magic_function(explain, magic_kind="cell", magic_name="explain")


def unregister(shell) -> None:
    """Remove every magic :func:`register` added (``%unload_ext explainer``)."""
    for kind, name in MAGICS:
        shell.magics_manager.magics[kind].pop(name, None)


_saved_custom = None  # the shell's own handler, put back on unload


def load_ipython_extension(shell) -> None:
    global _saved_custom
    if _saved_custom is None:
        _saved_custom = (shell.custom_exceptions, getattr(shell, "CustomTB", None))
    shell.set_custom_exc((Exception,), ipython_handler)
    register(shell)


def unload_ipython_extension(shell) -> None:
    global _saved_custom
    exceptions, _handler = _saved_custom or ((), None)
    shell.set_custom_exc((), None)
    if exceptions:
        shell.custom_exceptions = exceptions
        shell.CustomTB = _handler
    _saved_custom = None
    unregister(shell)
