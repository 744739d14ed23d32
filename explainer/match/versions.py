"""Which torch release a paste comes from, as far as it shows (the answer's ``torch_version``).

Evidence, strongest first: a ``collect_env`` report's ``PyTorch version:`` line; a printed
``torch.__version__`` or a ``torch==X`` / ``torch X`` line of ``pip freeze``, ``pip list`` or
``conda list``; a torch wheel's file name in an install log. Where lines disagree (two environments
in one paste) the range spans them. Nothing is guessed from the paste's style: without such a line
the answer is ``None``.
"""

from __future__ import annotations

from explainer.textio import Lazy

_V = r"(\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:(?:a|b|rc|\.dev|\.post)\d{1,12})?(?:\+[\w.]{1,30})?)"
_RULES = (  # (expression, what the evidence says)
    (Lazy(r"PyTorch version:\s{0,10}" + _V), "collect_env: PyTorch version {v}"),
    (Lazy(r"PyTorch version\s{1,10}" + _V + r"\s{1,10}Found"), "a log line: PyTorch version {v} Found"),
    (
        Lazy(r"(?:^|\s|\[pip3?\]\s{0,5}|\[conda\]\s{0,5})torch(?:==|\s{1,40})" + _V + r"(?=\s|$)"),
        "package list: torch {v}",
    ),
    (Lazy(r"torch\.__version__\W{0,20}" + _V), "torch.__version__ = {v}"),
    (Lazy(r"\btorch-" + _V + r"-cp\d"), "a torch wheel: {v}"),
)
MAX_LINES = 4000
_NEEDS = ("PyTorch version", "torch==", "torch ", "torch\t", "torch.__version__", "torch-")


def torch_version(text: str) -> dict | None:
    """``{"range": [low, high], "evidence": [...]}`` for the torch release(s) the paste shows, or None."""
    found: list[tuple[str, str]] = []
    for line in text.splitlines()[-MAX_LINES:]:
        # the cheap test first: a traceback's many torch paths hold none of these (no regex runs on them)
        if not any(k in line for k in _NEEDS):
            continue
        line = line[:500]
        for rx, says in _RULES:
            m = rx.search(line)
            if m:
                found.append((m.group(1), says.format(v=m.group(1))))
                break
    if not found:
        return None
    from explainer.facts import version_key

    versions = sorted({v.split("+", 1)[0] for v, _ in found}, key=version_key)
    evidence = list(dict.fromkeys(e for _, e in found))[:5]
    return {"range": [versions[0], versions[-1]], "evidence": evidence}
