"""What Python's own exceptions mean, in both languages: the answer to a plain Python error in the
user's code (``raised_by`` python) says what the exception means and points at the user's line; it
invents no cause. Python's own hint in the message ("Did you mean ...?") is kept as it is printed."""

from __future__ import annotations

MEANING: dict[str, tuple[str, str]] = {
    "NameError": (
        "a name is used that is not defined at that point: a typo, a variable defined only in another "
        "branch, function or notebook cell, or a missing import.",
        "用到了一个在这里还没有定义的名字：拼写错误、变量只在别的分支/函数/notebook 单元里定义过，或者漏了 import。",
    ),
    "UnboundLocalError": (
        "a local variable is read before it is assigned in this function (an assignment anywhere in the "
        "function makes the name local to it).",
        "函数里的局部变量在赋值之前就被读取了（函数中任何地方对这个名字赋值，都会让它成为局部变量）。",
    ),
    "SyntaxError": (
        "Python cannot parse the file: the line shown (or the one just before it) is not valid Python.",
        "Python 无法解析这个文件：提示的这一行（或它的上一行）不是合法的 Python 语法。",
    ),
    "IndentationError": (
        "the indentation of the line shown does not fit the block it belongs to.",
        "提示的这一行缩进和所在代码块不一致。",
    ),
    "TabError": (
        "tabs and spaces are mixed in the indentation of one block.",
        "同一个代码块的缩进里混用了制表符和空格。",
    ),
    "TypeError": (
        "an operation or call got a value of a type it does not accept, or a function was called with "
        "arguments its signature does not have (a library upgrade can change a signature).",
        "某个操作或调用拿到了它不接受的类型，或者调用函数时传了它签名里没有的参数（升级库可能改变函数签名）。",
    ),
    "AttributeError": (
        "the object has no attribute of that name: often a `None` where an object was expected, or an "
        "attribute that another release of the library names differently.",
        "对象上没有这个名字的属性：常见原因是本该是对象的地方拿到了 `None`，或者库的另一个版本里这个属性换了名字。",
    ),
    "KeyError": (
        "a dictionary (or a mapping such as a DataFrame's columns or a `state_dict`) has no entry under that key.",
        "字典（或 DataFrame 的列、`state_dict` 这类映射）里没有这个键。",
    ),
    "IndexError": (
        "an index is past the end of a list, tuple or string (Python counts from 0; the last item is `len - 1`).",
        "下标超出了列表、元组或字符串的范围（Python 从 0 开始计数，最后一个元素是 `len - 1`）。",
    ),
    "ValueError": (
        "a value has the right type but an unacceptable content (a string that is not a number, unpacking "
        "that expects another count of items).",
        "值的类型对，但内容不被接受（不是数字的字符串、解包时元素个数不对）。",
    ),
    "ZeroDivisionError": (
        "a division or modulo by zero (an empty dataset or batch often makes a count 0).",
        "除以零或对零取模（空数据集或空批次常常让计数变成 0）。",
    ),
    "FileNotFoundError": (
        "the path does not exist as written, relative paths are resolved from the current working "
        "directory, not from the script's folder.",
        "按写的路径找不到文件；相对路径是相对于当前工作目录解析的，而不是脚本所在目录。",
    ),
    "RecursionError": (
        "a function calls itself (directly or through others) without reaching an end.",
        "函数（直接或间接地）不停地调用自己，没有终止。",
    ),
    "AssertionError": (
        "an `assert` in the code found its condition false.",
        "代码里的一条 `assert` 发现它的条件不成立。",
    ),
    "StopIteration": (
        "`next()` was called on an iterator that has no more items (an exhausted DataLoader iterator).",
        "对已经没有元素的迭代器调用了 `next()`（例如已经耗尽的 DataLoader 迭代器）。",
    ),
    "UnicodeDecodeError": (
        "a file or bytes were read with an encoding they are not in (pass `encoding=` explicitly).",
        "用错误的编码读取了文件或字节串（请显式传入 `encoding=`）。",
    ),
    "PermissionError": (
        "the operating system refused the file operation: no permission, or the file is open elsewhere.",
        "操作系统拒绝了这次文件操作：没有权限，或者文件正被别的程序占用。",
    ),
    "json.decoder.JSONDecodeError": (
        "the text given to `json` is not valid JSON (an empty file, an HTML error page, a trailing comma).",
        "交给 `json` 的文本不是合法的 JSON（空文件、HTML 错误页面、多余的逗号）。",
    ),
}
MEANING["JSONDecodeError"] = MEANING["json.decoder.JSONDecodeError"]


def python_notes(parsed) -> list[dict]:
    """``{"en", "zh"}``: that this is Python's own error in the user's code, where, and what it means."""
    exc = parsed.exc_type or ""
    meaning = MEANING.get(exc) or MEANING.get(exc.rsplit(".", 1)[-1])
    if meaning is None:
        return []
    frame = parsed.user_frame
    where_en = where_zh = ""
    if frame is not None and frame.file:
        place = f"`{frame.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{frame.line}`"
        code = f" `{frame.code.strip()[:120]}`" if frame.code else ""
        where_en, where_zh = f" at {place}{code}", f"，位置 {place}{code}"
    name = exc.rsplit(".", 1)[-1]
    return [
        {
            "en": f"This is Python's own `{name}` in your code{where_en}, not an error of PyTorch or of a library: {meaning[0]}",
            "zh": f"这是 Python 自己在你的代码里抛出的 `{name}`{where_zh}，不是 PyTorch 或某个库的错误：{meaning[1]}",
        }
    ]
