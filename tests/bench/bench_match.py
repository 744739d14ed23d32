"""In-process explain time per paste (parse + match, no result cache), at the knowledge base's size
and with 10 000 synthetic entries added, measured side by side in one run; then the whole JSON answer,
warm (the same paste again) and never seen (every cache keyed by a paste emptied before it).

Pastes: data/bench_pastes.jsonl (the reproducers' real tracebacks in several paste formats, see
make_pastes.py) and, when present, ../shared/eval/dev.jsonl. Usage: python tests/bench/bench_match.py
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from explainer.knowledge.index import open_index  # noqa: E402
from explainer.match.explain import explain, matcher_of  # noqa: E402
from explainer.match.matcher import Matcher  # noqa: E402
from explainer.normalize import normalize  # noqa: E402
from explainer.parse.parser import parse_text  # noqa: E402
from explainer.patterns import literal_text, to_regex  # noqa: E402
from explainer.render import answer_json  # noqa: E402


class SyntheticIndex:
    """The real entries plus ``n`` synthetic ones whose patterns are real patterns with words changed."""

    def __init__(self, real, n: int, seed: int = 7) -> None:
        rnd = random.Random(seed)
        self.entries = dict(real.entries)
        self.patterns = list(real.patterns)
        vocab = sorted({w for p in real.patterns for w in p[2].split() if w.isalpha() and len(w) > 3})
        base = [p for p in real.patterns]
        for i in range(n):
            eid = f"synthetic-{i:05d}"
            src = rnd.choice(base)
            words = src[2].split(" ")
            for _ in range(max(2, len(words) // 3)):
                j = rnd.randrange(len(words))
                if "{" not in words[j]:
                    words[j] = rnd.choice(vocab) + rnd.choice(["", "s", "ed", "ing"]) + str(rnd.randrange(100))
            pat = " ".join(words)
            try:
                rx = to_regex(pat)
            except ValueError:
                continue
            e = dict(real.entries[src[0]])
            e.update(id=eid, excludes=[], signals=[], frames=[], wraps=False)
            self.entries[eid] = e
            self.patterns.append((eid, 0, pat, rx, normalize(literal_text(pat))))
        self._matcher = Matcher(self)

    @property
    def matcher(self):
        return self._matcher


def load_pastes(which: str = "all") -> list[str]:
    texts = []
    if which in ("all", "generated"):
        texts += [
            json.loads(l)["text"]
            for l in (ROOT / "data" / "bench_pastes.jsonl").read_text(encoding="utf-8").splitlines()
        ]
    dev = ROOT.parent / "shared" / "eval" / "dev.jsonl"
    if dev.exists() and which in ("all", "real"):
        texts += [json.loads(l)["text"] for l in dev.read_text(encoding="utf-8").splitlines() if l.strip()]
    return list(dict.fromkeys(texts))


def load_population() -> list[str]:
    path = ROOT.parent / "shared" / "eval" / "population.jsonl"
    if not path.exists():
        return []
    return [json.loads(l)["text"] for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]


def per_paste_ms(index, pastes, repeat: int = 5) -> list[float]:
    for p in pastes:  # warm: regexes compiled lazily, pages of the index read
        explain(parse_text(p), matcher_of(index))
    out = []
    for p in pastes:
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            explain(parse_text(p), matcher_of(index))
            times.append(time.perf_counter() - t)
        out.append(min(times) * 1000)
    return out


def answer_ms(index, pastes, repeat: int = 3) -> list[float]:
    """The whole ``--json`` answer: explain, then causes and fixes ranked and filled for each match."""
    for p in pastes:
        answer_json(explain(parse_text(p), matcher_of(index)), index)
    out = []
    for p in pastes:
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            answer_json(explain(parse_text(p), matcher_of(index)), index)
            times.append(time.perf_counter() - t)
        out.append(min(times) * 1000)
    return out


def forget_pastes(index) -> None:
    """Empty every cache keyed by what a paste holds (the long tail's answers per message, the parsed
    code lines, the rendered HTML), keeping what is built from the data (compiled patterns, the long
    tail's decoded rows): what a server holds when a paste it never saw arrives."""
    import functools

    from explainer.match import longtail
    from explainer.render import markdown

    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("explainer."):
            for v in list(vars(mod).values()):
                if isinstance(v, functools._lru_cache_wrapper):
                    v.cache_clear()
    for tail in list(longtail._OPEN.values()):
        tail._cache.clear()
    longtail._builtin_last = ("", False)
    markdown._HTML_CACHE.clear()


def never_seen_ms(index, pastes) -> list[float]:
    """The whole ``--json`` answer of each paste as if it were the first time (:func:`forget_pastes`
    before each), after one pass over all of them has built what the data needs; in CPU time of the
    thread (a preempted millisecond on a busy machine is not the answer's)."""
    for p in pastes:
        answer_json(explain(parse_text(p), matcher_of(index)), index)
    out = []
    for p in pastes:
        forget_pastes(index)
        t = time.thread_time()  # the CPU this thread spent: a neighbour's load does not land in it
        answer_json(explain(parse_text(p), matcher_of(index)), index)
        out.append((time.thread_time() - t) * 1000)
    return out


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", action="store_true", help="store the figures for the README (tests/bench/results.py)")
    args = ap.parse_args()
    import gc

    real = open_index()
    pastes = load_pastes()
    public = load_pastes("real")
    # the real index first, before the synthetic one's million objects exist. Long-lived objects are
    # frozen out of the cyclic collector's passes before each timing, as the API does after start-up:
    # otherwise its full passes, walking them all, land at random inside the timed calls
    for p in pastes:
        explain(parse_text(p), matcher_of(real))  # the patterns the pastes need are made (and kept) before freezing
    gc.collect()
    gc.freeze()
    small_ms = per_paste_ms(real, pastes)
    t = time.perf_counter()
    big = SyntheticIndex(real, 10_000)
    build_s = time.perf_counter() - t
    gc.collect()
    gc.freeze()
    big_ms = per_paste_ms(big, pastes)
    parse_ms = []
    for p in pastes:
        t = time.perf_counter()
        parse_text(p)
        parse_ms.append((time.perf_counter() - t) * 1000)
    print(f"pastes: {len(pastes)} distinct")
    print(
        f"entries {len(real.entries):>6}  patterns {len(real.patterns):>6}: explain median {statistics.median(small_ms):.3f} ms  p90 {statistics.quantiles(small_ms, n=10)[-1]:.3f} ms"
    )
    print(
        f"entries {len(big.entries):>6}  patterns {len(big.patterns):>6}: explain median {statistics.median(big_ms):.3f} ms  p90 {statistics.quantiles(big_ms, n=10)[-1]:.3f} ms  (matcher built in {build_s:.1f} s)"
    )
    print(f"of which parsing: median {statistics.median(parse_ms):.3f} ms")
    print(f"ratio 10k/real: {statistics.median(big_ms) / statistics.median(small_ms):.2f}")
    full_ms = answer_ms(real, pastes)
    print(
        f"the whole JSON answer (explain + causes and fixes ranked and filled): median {statistics.median(full_ms):.3f} ms  p90 {statistics.quantiles(full_ms, n=10)[-1]:.3f} ms"
    )
    fresh_ms = never_seen_ms(real, pastes)
    print(
        f"the whole JSON answer of a paste never seen before: median {statistics.median(fresh_ms):.3f} ms  "
        f"p90 {statistics.quantiles(fresh_ms, n=10)[-1]:.3f} ms"
    )
    real_pastes = load_pastes("real") + load_population()
    fresh_real = never_seen_ms(real, real_pastes) if real_pastes else []
    if fresh_real:
        print(
            f"  of the real pastes only (../shared/eval dev + population, {len(real_pastes)}): median "
            f"{statistics.median(fresh_real):.3f} ms  p90 {statistics.quantiles(fresh_real, n=10)[-1]:.3f} ms"
        )
    if args.record:
        from results import record

        small, large = statistics.median(small_ms), statistics.median(big_ms)
        record(
            "match",
            f"in-process explain per paste (parse + match), {len(pastes)} pastes",
            f"{small:.3f} ms with {len(real.entries)} entries; {large:.3f} ms with {len(big.entries)} "
            f"(ratio {large / small:.2f}); the whole JSON answer {statistics.median(full_ms):.2f} ms warm, "
            f"{statistics.median(fresh_ms):.2f} ms never seen"
            + (
                f" ({statistics.median(fresh_real):.2f} ms on the {len(real_pastes)} real pastes; goal 0.5)"
                if fresh_real
                else ""
            ),
        )
    if public:
        a, b = per_paste_ms(real, public), per_paste_ms(big, public)
        print(
            f"public pastes only (../shared/eval, {len(public)}): median {statistics.median(a):.3f} ms, with 10k entries {statistics.median(b):.3f} ms"
        )


if __name__ == "__main__":
    main()
