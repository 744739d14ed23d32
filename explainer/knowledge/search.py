"""``tbx search`` and ``GET /v1/search``: the entries for what a user types, in either language.

Users search in their own words ("CUDA 显存溢出 怎么办", "tensors on cpu and cuda at the same time"),
not in the entries' wording, so the ranking is by what the query means:

- the query's words (Chinese runs as bigrams, as the index stores them) without the filler people
  add ("怎么办", "how to fix", "报错");
- a short table of how users say what the entries call otherwise (显存溢出 / 爆显存 -> 显存不足 and
  out of memory; 全连接层 -> nn.Linear; 键不匹配 -> missing / unexpected keys): each such phrase counts
  as one concept that any of its spellings meets;
- a concept met in an entry's title, id or messages weighs more than one met in its summary, and
  that more than one met only in its long explanation, causes and fixes; rarer words weigh more;
- an entry that meets more of the query's concepts ranks first; the whole query found as a phrase
  (a pasted message fragment) ranks first of all; on a tie the entry id decides.
"""

from __future__ import annotations

import math
import re

from explainer.normalize import cjk_bigrams

_WORD = re.compile(r"[a-z0-9_]+|[\u4e00-\u9fff]{1,2}")
FILLER = frozenset(
    "a an the to of in on at is are was be it this that my i me we how why what when fix solve error errors "
    "get got getting help please with for and or do does not can cannot 怎么 么办 如何 为什么 报错 出错 问题 "
    "解决 求助 请问 一下 了 的 是 时候 出现 遇到".split()
)
# how users say what the entries call otherwise: each phrase -> the words the entries use for it
USER_WORDS: dict[str, tuple[str, ...]] = {
    "显存溢出": ("显存不足", "out of memory", "oom"),
    "爆显存": ("显存不足", "out of memory", "oom"),
    "显存不够": ("显存不足", "out of memory"),
    "内存溢出": ("内存不足", "out of memory"),
    "全连接层": ("nn.linear", "linear", "线性层", "mat1 and mat2"),
    "全连接": ("nn.linear", "linear", "线性层"),
    "维度不对": ("形状", "shape", "维度"),
    "维度不匹配": ("形状", "shape", "维度"),
    "形状不对": ("形状", "shape"),
    "键不匹配": ("missing keys", "unexpected keys", "missing_keys", "state_dict"),
    "key不匹配": ("missing keys", "unexpected keys", "state_dict"),
    "加载权重": ("load_state_dict", "state_dict", "权重", "checkpoint"),
    "加载模型": ("load_state_dict", "state_dict", "torch.load"),
    "类型不一致": ("dtype", "类型"),
    "类型不匹配": ("dtype", "类型"),
    "不在同一个设备": ("同一设备", "同一个设备", "same device", "device"),
    "不在一个设备": ("同一设备", "same device", "device"),
    "被杀": ("killed", "被杀", "sigkill", "杀掉"),
    "cpu and cuda": ("same device", "at least two devices"),
    "cuda and cpu": ("same device", "at least two devices"),
    "linear layer": ("nn.linear", "mat1 and mat2"),
    "子进程": ("worker", "子进程"),
    "共享内存": ("shared memory", "/dev/shm", "共享内存"),
}
_JOINING = frozenset("的了和与及或吗呢吧啊")
FIELD_WEIGHT = {"key": 3.0, "summary": 2.0, "body": 1.0}
PHRASE_BONUS = 100.0


def terms(text: str) -> list[str]:
    """The words of ``text`` as the index spells them (lower case; Chinese runs as bigrams)."""
    return _WORD.findall(cjk_bigrams(text.lower()))


def concepts(query: str) -> list[tuple[str, ...]]:
    """The query as concepts: each a tuple of alternative spellings (term lists joined by a space)."""
    q = " " + query.lower() + " "
    out: list[tuple[str, ...]] = []
    for phrase, alts in USER_WORDS.items():
        if phrase in q:
            out.append(tuple(" ".join(terms(a)) for a in (phrase, *alts)))
            q = q.replace(phrase, " ")
    for t in terms(q):
        if t in FILLER or (t,) in out or (not t.isascii() and any(c in _JOINING for c in t)):
            continue  # (a bigram across a joining character, 型和 in 模型和数据, is no word of the query)
        out.append((t,))
    return out[:32]


def field_terms(title: str, key: str, summary: str, body: str) -> dict[str, str]:
    """An entry's searchable fields as space-joined terms (computed when the index is built)."""
    return {
        "key": " " + " ".join(terms(f"{title}\n{key}")) + " ",
        "summary": " " + " ".join(terms(summary)) + " ",
        "body": " " + " ".join(terms(body)) + " ",
    }


def document_frequencies(rows) -> dict[str, int]:
    """term -> the number of documents (an entry in one language) that hold it."""
    df: dict[str, int] = {}
    for fields in rows:
        for t in set(fields["key"].split()) | set(fields["summary"].split()) | set(fields["body"].split()):
            df[t] = df.get(t, 0) + 1
    return df


class SearchIndex:
    """The entries' searchable text per language, read once from the index's ``search`` table (each
    field's terms and the document frequencies were computed when the index was built)."""

    def __init__(self, rows, df: dict[str, int]) -> None:
        # rows: (entry_id, lang, title, body, key terms, summary terms, body terms)
        self.docs = []
        for entry_id, lang, title, body, kt, st, bt in rows:
            fields = {"key": kt, "summary": st, "body": bt}
            sets = {name: frozenset(v.split()) for name, v in fields.items()}
            self.docs.append((entry_id, lang, title, fields, sets, " ".join(body.lower().split()), body))
        self.n = max(1, len(self.docs))
        self.idf = {t: math.log(1 + self.n / c) for t, c in df.items()}

    def search(self, query: str, *, lang: str = "both") -> list[tuple[str, str, str, float, str]]:
        """Every document that meets a concept of the query, best first (entry, language, title, score, body)."""
        wanted = concepts(query)
        if not wanted:
            return []
        phrase = " ".join(query.lower().split())
        weights = [
            [(alt, f" {alt} ", " " in alt, sum(self.idf.get(t, 0.0) for t in alt.split()) / max(1, len(alt.split())))
             for alt in alts]
            for alts in wanted
        ]  # fmt: skip
        scored = []
        for entry_id, lg, title, fields, sets, plain, body in self.docs:
            if lang != "both" and lg != lang:
                continue
            score, met = 0.0, 0
            for alts in weights:
                best = 0.0
                for alt, needle, several, idf in alts:
                    for name, weight in FIELD_WEIGHT.items():
                        if (needle in fields[name]) if several else (alt in sets[name]):
                            best = max(best, weight * idf)
                            break
                if best:
                    met += 1
                    score += best
            if not met:
                continue
            coverage = met / len(wanted)
            whole = len(phrase) >= 8 and (phrase in plain or phrase in title.lower())
            scored.append((score * (0.5 + coverage) + (PHRASE_BONUS if whole else 0.0), entry_id, lg, title, body))
        scored.sort(key=lambda s: (-s[0], s[1], s[2]))
        top = scored[0][0] if scored else 1.0
        return [
            (entry_id, lg, title, round(min(1.0, total / top), 3), body) for total, entry_id, lg, title, body in scored
        ]
