"""Measure the parser and the matcher on a labelled corpus (JSON lines), per INTERFACES.md.

Scoring: a case whose expected id has an entry is *covered* and right when the top match is that id
(or in ``also_ok``); a case whose id has no entry (or ``none``) is right only when the matcher
abstains (or the top match is in ``also_ok``). Calibration: the top candidate's score against
whether it was right, in ten bins; the expected calibration error is the bin-weighted gap.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from explainer.match.explain import explain_text
from explainer.match.matcher import THRESHOLD
from explainer.parse.parser import strip_prefixes
from explainer.textio import strip_controls

_LABEL_PREFIXES = [
    re.compile(r"^FAILED \S+ - "),
    re.compile(r"^what\(\):\s*"),
    re.compile(r"^\[[A-Z] [\w.]+:\d+\]\s*"),
    re.compile(r"^(?:[\w.:]+(?:Error|Exception|Warning|Failed|Unsupported)|Exception|[\w.]+\.error)\s*[:：]\s*"),
    re.compile(r"^[\u4e00-\u9fff]{1,8}(?:错误|异常|警告)\s*[:：]\s*"),  # a translated type: 运行时错误：
]


_WARNING_AT = re.compile(r"^\S{1,400}?:\d{1,7}: (?=[\w.]*Warning\b)")  # "path.py:47: FutureWarning: ..."


def _norm(s: str | None) -> str:
    return re.sub(r"\s+", " ", s or "").strip().strip("*`'\" ").lower()


def label_message(message: str) -> str:
    """The labelled final error line with what the paste put around it removed: terminal colours,
    log, rank and pytest prefixes, a warning's ``path:line:``, Markdown emphasis, the type."""
    m = strip_prefixes(strip_controls(message).strip().strip("*`'\" ")).strip()
    m = _WARNING_AT.sub("", m).replace("**", "")
    for rx in _LABEL_PREFIXES:
        m = rx.sub("", m)
    return _norm(m)


def message_ok(parsed_message: str | None, label: str) -> bool:
    got, want = _norm(parsed_message), label_message(label)
    if not got or not want:
        return False
    return got.startswith(want) or want.startswith(got) or want in got


def type_ok(parsed_type: str | None, label: str | None) -> bool:
    if not parsed_type or not label:
        return False
    last = lambda t: re.split(r"\.|::", t)[-1]  # noqa: E731
    return parsed_type == label or last(parsed_type) == last(label)


def read_corpus(path: str | Path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as exc:
                    raise ValueError(f"line {n}: {exc}") from None
    return rows


def evaluate(path: str | Path, index) -> dict:
    rows = read_corpus(path)
    known = set(index.entries)
    n = right_total = 0
    covered = covered_top1 = covered_top3 = 0
    none_n = none_ok = uncovered_n = uncovered_ok = 0
    t_n = t_ok = m_n = m_ok = 0
    by_format: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    parse_by_format: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    bins = [[0, 0.0, 0] for _ in range(10)]  # count, sum of confidence, right
    misses = []
    for n_row, row in enumerate(rows, 1):
        answer = explain_text(row["text"], index, top=3)
        expected = row.get("expected_id", "none")
        also = set(row.get("also_ok") or [])
        top = answer.matches[0].id if answer.matches else None
        top3 = [c.id for c in answer.matches[:3]]
        if expected != "none" and expected in known:
            covered += 1
            ok = top == expected or (top in also) or (top is None and "none" in also)
            covered_top1 += ok
            covered_top3 += expected in top3 or bool(also & set(top3)) or (top is None and "none" in also)
        else:
            ok = top is None or top in also
            if expected == "none":
                none_n += 1
                none_ok += ok
            else:
                uncovered_n += 1
                uncovered_ok += ok
        n += 1
        right_total += ok
        fmt = row.get("format", "unknown")
        by_format[fmt][0] += 1
        by_format[fmt][1] += ok
        if row.get("shows_type"):
            t_n += 1
            good = type_ok(answer.parsed.exc_type, row.get("exc_type"))
            t_ok += good
            parse_by_format[fmt][0] += 1
            parse_by_format[fmt][1] += good
        if row.get("message"):
            m_n += 1
            good = message_ok(answer.parsed.message, row["message"])
            m_ok += good
            parse_by_format[fmt][2] += 1
            parse_by_format[fmt][3] += good
        if not ok:
            misses.append(
                {
                    "id": str(row.get("id") or f"case {n_row}"),  # a corpus without ids: its case's number
                    "expected_id": expected,
                    "got": top,
                    "score": answer.matches[0].score
                    if answer.matches
                    else (answer.candidates[0].score if answer.candidates else 0.0),
                    "format": fmt,
                }
            )
        if not answer.parsed.message and not answer.parsed.exc_type:
            continue  # nothing was read: not a certain, correct abstention for the calibration
        # calibration of the top candidate's confidence (abstaining counts as confidence 1 - top)
        conf = answer.candidates[0].score if answer.candidates else 0.0
        said = answer.candidates[0].id if answer.candidates else None
        if conf >= THRESHOLD:
            p, correct = conf, (said == expected or said in also)
        else:
            p, correct = 1.0 - conf, ok
        b = min(9, int(p * 10))
        bins[b][0] += 1
        bins[b][1] += p
        bins[b][2] += bool(correct)
    ece = sum(abs(b[1] / b[0] - b[2] / b[0]) * b[0] for b in bins if b[0]) / max(1, sum(b[0] for b in bins))
    r = lambda a, b: round(a / b, 4) if b else None  # noqa: E731
    return {
        "n": n,
        "overall": r(right_total, n),
        "covered_n": covered,
        "covered_top1": r(covered_top1, covered),
        "covered_top3": r(covered_top3, covered),
        "none_n": none_n,
        "none_abstain": r(none_ok, none_n),
        "uncovered_n": uncovered_n,
        "uncovered_abstain": r(uncovered_ok, uncovered_n),
        "calibration": {
            "ece": round(ece, 4),
            "bins": [
                {"lo": i / 10, "n": b[0], "confidence": r(b[1], b[0]), "accuracy": r(b[2], b[0])}
                for i, b in enumerate(bins)
                if b[0]
            ],
        },
        "parse_type_ok": r(t_ok, t_n),
        "parse_message_ok": r(m_ok, m_n),
        "parse_n": {"type": t_n, "message": m_n},
        "by_format": {
            k: {
                "n": v[0],
                "overall": r(v[1], v[0]),
                "parse_type_ok": r(parse_by_format[k][1], parse_by_format[k][0]),
                "parse_message_ok": r(parse_by_format[k][3], parse_by_format[k][2]),
            }
            for k, v in sorted(by_format.items())
        },
        "misses": misses,
    }


def format_report(rep: dict) -> str:
    lines = ["format                 n  overall  type_ok  msg_ok"]
    for k, v in rep["by_format"].items():
        f = lambda x: "   -  " if x is None else f"{x:6.3f}"  # noqa: E731
        lines.append(f"{k:<20} {v['n']:>3}  {f(v['overall'])}   {f(v['parse_type_ok'])}  {f(v['parse_message_ok'])}")
    lines.append("")
    lines.append("misses:")
    for m in rep["misses"]:
        lines.append(
            f"  {m['id']:<28} expected {m['expected_id']:<36} got {m['got']} ({m['score']:.2f}) [{m['format']}]"
        )
    lines.append("")
    lines.append(f"cases {rep['n']}: covered {rep['covered_n']}, none {rep['none_n']}, uncovered {rep['uncovered_n']}")
    lines.append(f"parse: type {rep['parse_type_ok']}  message {rep['parse_message_ok']}")
    lines.append(f"calibration: ECE {rep['calibration']['ece']}")
    lines.append(
        f"covered_top1 {rep['covered_top1']}  covered_top3 {rep['covered_top3']}  none_abstain {rep['none_abstain']}  "
        f"uncovered_abstain {rep['uncovered_abstain']}  overall {rep['overall']}"
    )
    return "\n".join(lines)
