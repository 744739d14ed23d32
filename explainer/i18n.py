"""The matcher's reasons as codes with parameters, rendered in each language.

A :class:`Reason` is the English text (the string itself, what the JSON shows in English) and the
parts it was built from, each a code with its parameters; :func:`reason` renders it in the answer's
language. Values such as types, frames and entry ids stay as they are in every language.
"""

from __future__ import annotations

TYPE_CHECKING = False  # the annotations are strings; importing typing at run time is not needed
if TYPE_CHECKING:
    from collections.abc import Callable

# code -> its text in each language ({name} are the parameters)
TEXTS: dict[str, dict[str, str]] = {
    "full": {"en": "full template match", "zh": "报错信息与模板完全匹配"},
    "start": {"en": "template matches the start of the message", "zh": "报错信息的开头与模板匹配"},
    "inside": {"en": "template found inside the message", "zh": "报错信息里包含这个模板"},
    "opening": {
        "en": "matches the opening of the template (the rest of the message is missing)",
        "zh": "与模板的开头匹配（报错信息的其余部分缺失）",
    },
    "opening_differs": {
        "en": "matches the opening of the template, but the message goes on differently",
        "zh": "只与模板的开头匹配，报错信息后面的内容与这个模板不同",
    },
    "cut": {
        "en": "the message is the beginning of the template (the paste was cut)",
        "zh": "报错信息是模板的开头部分（粘贴时被截断了）",
    },
    "similar": {"en": "message similar to pattern ({similarity})", "zh": "报错信息与模式相似（{similarity}）"},
    "type_fits": {"en": "; type {type} fits", "zh": "；异常类型 {type} 相符"},
    "type_differs": {"en": "; but the type {type} is not {expected}", "zh": "；但异常类型 {type} 不是 {expected}"},
    "from": {"en": " (from the {kind} exception)", "zh": "（来自{kind}异常）"},
    "from_line": {"en": " (from a signal line)", "zh": "（来自信号行）"},
    "frame": {"en": "telling frame {frame}", "zh": "关键调用帧 {frame}"},
    "no_message": {"en": " (no message matched)", "zh": "（报错信息本身没有匹配上）"},
    "bare": {"en": "; {type} printed without a message", "zh": "；{type} 没有附带报错信息"},
    "signal": {"en": "signal line: {line}", "zh": "信号行：{line}"},
    "ties": {
        "en": "ties with {others} on the template's opening",
        "zh": "与 {others} 在模板开头上并列（粘贴里缺少能区分它们的部分）",
    },
    "unless": {
        "en": "; but the paste shows {signal}: not this entry's case",
        "zh": "；但粘贴里有{signal}：不是这个条目说的情况",
    },
    "unless_unknown_module": {
        "en": "; but no known distribution provides '{signal}' (it may be your project's own module)",
        "zh": "；但没有已知的发行包提供 '{signal}'（它可能是你项目自己的模块）",
    },
    "unless_found_package": {
        "en": "; but '{signal}' is a submodule of a package that was found (installed, or a folder of that name)",
        "zh": "；但 '{signal}' 是一个已经找到的包里的子模块（包已安装，或者有同名的文件夹）",
    },
    "unless_spawned_child": {
        "en": "; but the traceback is a spawned worker's ({signal}): its parent failed while sending it data",
        "zh": "；但这是新启动的子进程的调用栈（{signal}）：是父进程在给它发送数据时失败了",
    },
    "unless_other_requirement": {
        "en": "; but the requirement pip could not find is '{signal}', not torch's",
        "zh": "；但 pip 找不到的是 '{signal}'，不是 torch 的",
    },
    "on_the_way": {
        "en": "; but the paste goes on to fail after this warning (a traceback, a crash or a failed assertion): the warning is not why",
        "zh": "；但这条警告之后程序还是失败了（有调用栈、崩溃或断言失败）：原因不是这条警告",
    },
    "unless_none_object": {
        "en": "; but the object that lacks '{signal}' is None, a value the program left unset",
        "zh": "；但缺少 '{signal}' 的对象是 None，是程序里没有赋上值的变量",
    },
    "unless_private_attribute": {
        "en": "; but '{signal}' is a private attribute, one a library sets on the objects it made",
        "zh": "；但 '{signal}' 是私有属性，是某个库给它自己生成的对象设置的",
    },
    "elsewhere": {
        "en": "but a raise site's template holds the message word for word: it is that message, not this entry's",
        "zh": "但有一个抛出位置的模板与报错信息逐字吻合：报的是那条信息，不是这个条目的",
    },
    "wrapper": {
        "en": "a wrapper: the wrapped error is known, so it comes first",
        "zh": "这是包装错误：被包装的错误是已知错误，所以它排在前面",
    },
}

# parameters that are words, not values: rendered in the language too
_KINDS = {
    "cause": "直接原因",
    "context": "处理时的上一个",
    "worker": "worker 进程里原始的",
    "group": "异常组里的",
    "other": "粘贴中另一个",
}
_WORDS: dict[str, Callable[[str], str]] = {"kind": lambda v: _KINDS.get(v, v)}


def _part(code: str, params: dict, lang: str) -> str:
    if lang != "en":
        params = {k: (_WORDS[k](v) if k in _WORDS else v) for k, v in params.items()}
    return TEXTS[code].get(lang, TEXTS[code]["en"]).format(**params)


def _render(parts: tuple, lang: str) -> str:
    return "".join(_part(code, params, lang) for code, params in parts)


class Reason(str):
    """One reason: the English text, and the coded parts it was made of (``parts``). Immutable:
    the matcher shares the ones without parameters."""

    parts: tuple

    def __new__(cls, code: str, /, **params: str) -> Reason:
        return cls._made(_part(code, params, "en"), ((code, params),))

    @classmethod
    def _made(cls, text: str, parts: tuple) -> Reason:
        self = super().__new__(cls, text)
        self.parts = parts
        return self

    @classmethod
    def _of(cls, parts: tuple) -> Reason:
        return cls._made(_render(parts, "en"), parts)

    def __reduce__(self):  # pickled by its parts (str's own reduction would call __new__ with the text)
        return (Reason._of, (self.parts,))

    def plus(self, code: str, /, **params: str) -> Reason:
        """This reason with one more part ("; type X fits", " (from the cause exception)")."""
        return Reason._made(self + _part(code, params, "en"), (*self.parts, (code, params)))

    def text(self, lang: str) -> str:
        return _render(self.parts, lang)


def reason(text: str, lang: str) -> str:
    """``text`` in ``lang``: a :class:`Reason` rendered from its codes; any other text as it is."""
    if lang == "en" or not isinstance(text, Reason):
        return str(text)
    return text.text(lang)
