"""The long tail on real pastes of uncurated torch errors (``tests/fixtures/uncurated/*.jsonl``, gathered
from public issue threads: each with its ``source``, the thread's torch release where it names one and
the torch source file that raises the message, found in torch's sources).

Reports, over the cases whose raise site is known: how often that file is among the answer's first three
``raised_at`` sites; over the cases whose thread names a release: how often the answer's
``torch_version`` range (or its sites' ``versions``) contains it; and how many are answered ``torch``.

Usage: python tests/bench/uncurated_sites.py [FILES...] [--misses]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def _key(version: str) -> tuple:
    return tuple(int(p) for p in re.findall(r"\d+", version.split("+")[0])[:3])


def site_found(site: str, raised_at: list[dict]) -> bool:
    """Whether the file ``site`` (a path in the pytorch repository) is among the first three sites."""
    want = site.replace("\\", "/").lower()
    for rec in raised_at[:3]:
        got = (rec.get("file") or "").replace("\\", "/").lower()
        if got and (got.endswith(want) or want.endswith(got)):
            return True
    return False


def version_fits(version: str, answer: dict) -> bool | None:
    """Whether the paste's inferred torch release range contains ``version`` (None: no range given)."""
    ranges = []
    tv = answer.get("torch_version") or {}
    if tv.get("range"):
        ranges.append(tv["range"])
    ranges += [r["versions"] for r in (answer.get("raised_at") or [])[:3] if r.get("versions")]
    if not ranges:
        return None
    k = _key(version)
    return any(
        _key(lo or "0") <= k[: len(_key(lo or "0"))] and k[: len(_key(hi or "99"))] <= _key(hi or "99")
        for lo, hi in ranges
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--misses", action="store_true")
    args = ap.parse_args()
    from explainer.knowledge.index import open_index
    from explainer.match.explain import explain_text
    from explainer.render import answer_json

    files = args.files or sorted(glob.glob(os.path.join(HERE, "..", "fixtures", "uncurated", "*.jsonl")))
    rows = [json.loads(line) for f in files for line in open(f, encoding="utf-8") if line.strip()]
    index = open_index()
    n_site = site_ok = n_ver = ver_ok = ver_none = torch_ok = 0
    for r in rows:
        out = answer_json(explain_text(r["text"], index, budget=None), index)
        sites = out.get("raised_at") or []
        torch_ok += (out.get("raised_by") or {}).get("kind") == "torch"
        if r.get("site"):
            n_site += 1
            ok = site_found(r["site"], sites)
            site_ok += ok
            if args.misses and not ok:
                print(
                    f"site  {r['source']}: want {r['site']} got {[s.get('file') for s in sites[:3]]} | {r['message'][:90]}"
                )
        if r.get("torch_version"):
            n_ver += 1
            fits = version_fits(r["torch_version"], out)
            ver_none += fits is None
            ver_ok += bool(fits)
            if args.misses and not fits:
                print(
                    f"ver   {r['source']}: {r['torch_version']} not in {out.get('torch_version')} | {r['message'][:80]}"
                )
    n = len(rows)
    print(
        f"{n} pastes: site among the first three {site_ok}/{n_site} ({site_ok / max(1, n_site):.0%}); "
        f"release in range {ver_ok}/{n_ver} ({ver_ok / max(1, n_ver):.0%}, no range for {ver_none}); "
        f"raised_by torch {torch_ok}/{n}"
    )


if __name__ == "__main__":
    main()
