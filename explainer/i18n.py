"""The matcher's reasons in Chinese. The matcher writes them in English; an answer in Chinese shows
them translated here, piece by piece (values such as types and frames stay as they are)."""

from __future__ import annotations

import re

TYPE_CHECKING = False  # the annotations are strings; importing typing at run time is not needed
if TYPE_CHECKING:
    from collections.abc import Callable

_KINDS = {
    "cause": "直接原因",
    "context": "处理时的上一个",
    "worker": "worker 进程里原始的",
    "group": "异常组里的",
    "other": "粘贴中另一个",
}

_RULES: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"^full template match"), "报错信息与模板完全匹配"),
    (re.compile(r"^template matches the start of the message"), "报错信息的开头与模板匹配"),
    (re.compile(r"^template found inside the message"), "报错信息里包含这个模板"),
    (
        re.compile(r"^matches the opening of the template \(the rest of the message is missing\)"),
        "与模板的开头匹配（报错信息的其余部分缺失）",
    ),
    (
        re.compile(r"^matches the opening of the template, but the message goes on differently"),
        "只与模板的开头匹配，报错信息后面的内容与这个模板不同",
    ),
    (
        re.compile(r"^the message is the beginning of the template \(the paste was cut\)"),
        "报错信息是模板的开头部分（粘贴时被截断了）",
    ),
    (re.compile(r"^message similar to pattern \(([\d.]+)\)"), r"报错信息与模式相似（\1）"),
    (re.compile(r"; type (\S+) fits"), r"；异常类型 \1 相符"),
    (re.compile(r"; but the type (\S+) is not (\S+)"), r"；但异常类型 \1 不是 \2"),
    (re.compile(r" \(from the (\w+) exception\)"), lambda m: f"（来自{_KINDS.get(m.group(1), m.group(1))}异常）"),
    (re.compile(r" \(from a signal line\)"), "（来自信号行）"),
    (re.compile(r"^telling frame (\S+)"), r"关键调用帧 \1"),
    (re.compile(r" \(no message matched\)"), "（报错信息本身没有匹配上）"),
    (re.compile(r"^signal line: "), "信号行："),
    (
        re.compile(r"^ties with (\S+(?:, \S+)*+) on the template's opening$"),
        r"与 \1 在模板开头上并列（粘贴里缺少能区分它们的部分）",
    ),
    (
        re.compile(r"^a wrapper: the wrapped error is known, so it comes first"),
        "这是包装错误：被包装的错误是已知错误，所以它排在前面",
    ),
]


def reason(text: str, lang: str) -> str:
    if lang != "zh":
        return text
    for rx, repl in _RULES:
        text = rx.sub(repl, text)
    return text
