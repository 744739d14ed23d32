"""Facts for an answer about the environment: which distribution provides a missing module, what is
installed here, and where to look next (``tbx doctor``).

Where the surface may look at the user's machine (the CLI, the hooks: they pass a ``source`` reader),
installed versions come from :mod:`importlib.metadata`, never by importing the package; the HTTP API
uses only the paste.
"""

from __future__ import annotations

import sys

from explainer.match.origin import MODULE_LACKS, found_package, missing_module
from explainer.textio import Lazy

_CANNOT_IMPORT = Lazy(r"cannot import name '(\w{1,200})' from '([A-Za-z_][\w.]{0,200})'")
_MODEL_TYPE = Lazy(r"model type `(\w[\w-]{0,80})`|^'(\w[\w-]{0,80})'$")


def installed_version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except (metadata.PackageNotFoundError, ValueError, OSError):
        return None


def _note(en: str, zh: str) -> dict:
    return {"en": en, "zh": zh}


def _alternatives(dists: list[str]) -> tuple[str, str]:
    first, rest = f"`{dists[0]}`", ", ".join(f"`{d}`" for d in dists[1:4])
    return (first + (f" (or {rest})" if rest else ""), first + (f"（或 {rest}）" if rest else ""))


def notes(parsed, raised_by: dict, *, local: bool = False, answered: bool = False) -> list[dict]:
    """What the answer adds about the environment, ``{"en", "zh"}`` each (``answered``: an entry answers
    the paste, and says what a missing submodule means itself)."""
    from explainer.facts import distributions_of, known_module

    out: list[dict] = release_notes(parsed, local=local)  # what the library's releases say, first
    told = bool(out)
    message = (parsed.message or "")[:2000]
    name = missing_module(message)
    found = found_package(parsed)
    if name and (parsed.exc_type or "").rsplit(".", 1)[-1] in ("ModuleNotFoundError", "ImportError", ""):
        top = name.split(".", 1)[0]
        dists = distributions_of(top) if top not in sys.stdlib_module_names else []
        if dists:
            en, zh = _alternatives(dists)
            if dists != [top]:  # worth saying where the names differ (cv2 -> opencv-python)
                out.append(_note(f"`{top}` is provided by {en}.", f"`{top}` 由 {zh} 提供。"))
            have = [(d, v) for d in dists if (v := installed_version(d))] if local else []
            if have and not found:  # (a found package's missing submodule: said below, with what is installed)
                d, v = have[0]
                out.append(
                    _note(
                        f"{d} {v} is installed for {sys.executable}, yet `{name}` cannot be imported: the program "
                        "runs another Python, or a file or folder named `{top}` hides it (`tbx doctor` checks).".replace(
                            "{top}", top
                        ),
                        f"{d} {v} 已经装在 {sys.executable} 里，但 `{name}` 导入不了：程序用的是另一个 Python，"
                        f"或者有同名的文件或文件夹 `{top}` 把它遮住了（`tbx doctor` 会检查）。",
                    )
                )
            elif local and "." not in name:  # a missing submodule: the package is installed where it ran
                out.append(
                    _note(
                        f"None of them is installed for {sys.executable}: `{sys.executable} -m pip install {dists[0]}`.",
                        f"{sys.executable} 里一个都没装：`{sys.executable} -m pip install {dists[0]}`。",
                    )
                )
            elif "." not in name:
                out.append(
                    _note(
                        f"Install it with `python -m pip install {dists[0]}`.",
                        f"安装：`python -m pip install {dists[0]}`。",
                    )
                )
        elif not known_module(top) and not any(s.kind == "own_package" for s in parsed.signals):
            out.append(
                _note(
                    f"No known distribution provides `{top}`: it is most likely a module of the project itself "
                    f"(a `{top}.py` or `{top}/` the code expects beside it or on `sys.path`: run from the folder "
                    "its README says, or add that folder to `PYTHONPATH`); if it is a package, its pip name may differ.",
                    f"没有已知的发行包提供 `{top}`：它多半是项目自己的模块（代码期望在旁边或 `sys.path` 上有 `{top}.py` "
                    "或 `{top}/`：按 README 说的目录运行，或者把那个目录加进 `PYTHONPATH`）；如果它确实是个包，"
                    "pip 上的名字可能不一样。".replace("{top}", top),
                )
            )
    if found and not answered and not told:  # an entry, or the module's releases, said it already
        out += _found_package_notes(found, local=local)
    m = _CANNOT_IMPORT.search(message)
    if m and local and not told:
        module = m.group(2)
        dists = distributions_of(module.split(".", 1)[0])
        have = [(d, v) for d in dists if (v := installed_version(d))]
        if have and "unknown location" not in message and "partially initialized" not in message:
            d, v = have[0]
            out.append(
                _note(
                    f"Installed here: {d} {v}, which does not offer `{m.group(1)}`: names move between releases, "
                    "so compare with the release the importing code was written for.",
                    f"这里安装的是 {d} {v}，它不提供 `{m.group(1)}`：名字会在版本之间移动，"
                    "请对照导入它的代码所针对的版本。",
                )
            )
    m = MODULE_LACKS.search(message) if raised_by.get("kind") == "environment" and not (told or answered) else None
    if m and raised_by.get("library") and raised_by["library"] != "torch":  # (torch's: its entry says it)
        d, name = raised_by["library"], f"`{m.group(1)}.{m.group(2)}`"
        v = installed_version(d) if local else None
        here_en, here_zh = (f" (installed here: {d} {v})", f"（这里装的是 {d} {v}）") if v else ("", "")
        out.append(
            _note(
                f"The installed {d}{here_en} has no {name}: the code was written for another release of it (one "
                "that added the name later or still had it), or another package installs a module of that name. "
                "Install the release the project pins (its requirements or README), or use the name that release has.",
                f"装的 {d}{here_zh} 里没有 {name}：代码是照着它的另一个版本写的（这个名字是后来才加的，或者当时还在），"
                "或者另一个包装了同名的模块。请装项目指定的版本（看它的 requirements 或 README），或者改用已装版本里的名字。",
            )
        )
    if local and raised_by.get("kind") == "environment":
        out.append(
            _note(
                "`tbx doctor` checks this environment: versions that do not fit together, NumPy's ABI, CUDA and the driver.",
                "`tbx doctor` 可以检查这个环境：互不匹配的版本、NumPy 的 ABI、CUDA 与驱动。",
            )
        )
    return out


def _has_module(dist: str, name: str) -> bool | None:
    """Whether the installed ``dist`` lists a file of module ``name`` (its record of installed files,
    read without importing it); None where it keeps no record."""
    from importlib import metadata

    try:
        files = metadata.files(dist)
    except (metadata.PackageNotFoundError, ValueError, OSError):
        return None
    if files is None:
        return None
    path = name.replace(".", "/")
    return any(f.startswith(path + "/") or f.startswith(path + ".") for f in (str(p).replace("\\", "/") for p in files))


def _found_package_notes(name: str, *, local: bool) -> list[dict]:
    """What a missing submodule of a package that was found means (``pkg.sub``: Python names the first
    part it cannot find), and where the surface may look, what is installed here."""
    from explainer.facts import RUNTIME_NAMESPACES, distributions_of

    top = name.split(".", 1)[0]
    if top in RUNTIME_NAMESPACES:  # transformers_modules.<folder>: a model's remote code
        return [
            _note(
                f"`{top}` is where {RUNTIME_NAMESPACES[top]} imports a model's remote code "
                "(`trust_remote_code=True`), as `transformers_modules.<folder name>`. Up to transformers 4.56.2 "
                "a local folder whose name has a dot (`Qwen1.5-7B-Chat`, `...-v2.0`) is cut at the dot, and this "
                "import fails with the name up to it; 4.57.0 rewrites such names. Rename the folder without "
                "the dot (`Qwen1_5-7B-Chat`) and load from the new path, or upgrade transformers.",
                f"`{top}` 是 {RUNTIME_NAMESPACES[top]} 导入模型远程代码（`trust_remote_code=True`）的地方，"
                "模块名是 `transformers_modules.<文件夹名>`。到 transformers 4.56.2 为止，名字里带点的本地文件夹"
                "（`Qwen1.5-7B-Chat`、`...-v2.0`）会在点的位置被切开，导入就在点前面的名字上失败；4.57.0 起会改写这种名字。"
                "把文件夹改成不带点的名字（`Qwen1_5-7B-Chat`）再从新路径加载，或者升级 transformers。",
            )
        ]
    out = [
        _note(
            f"`{top}` was found, but not `{name}`: Python names the first part of a dotted import it cannot "
            f"find. Either the installed release of `{top}` moved or removed that submodule (install the "
            "release the code was written for, or update the import to where it lives now), or a file or "
            f"folder named `{top}` in the working directory is found before the package: "
            f'`python -c "import {top}; print({top}.__file__)"` shows which copy was found.',
            f"`{top}` 找到了，`{name}` 没找到：带点的 import 失败时，Python 报的是第一个找不到的部分。要么是装的 `{top}` "
            "版本把这个子模块挪走或删掉了（装代码所针对的那个版本，或者把 import 改到它现在的位置），要么是工作目录里"
            f'有个叫 `{top}` 的文件或文件夹抢在真正的包前面被找到了：`python -c "import {top}; print({top}.__file__)"` '
            "能看出找到的是哪一份。",
        )
    ]
    if local:
        for d in distributions_of(top):
            v = installed_version(d)
            if not v:
                continue
            has = _has_module(d, name)
            if has is True:
                out.append(
                    _note(
                        f"{d} {v} installed here has `{name}`: the program runs another Python, or a local "
                        f"`{top}` hides the package.",
                        f"这里装的 {d} {v} 里有 `{name}`：程序用的是另一个 Python，或者本地的 `{top}` 把包挡住了。",
                    )
                )
            elif has is False:
                out.append(
                    _note(
                        f"{d} {v} installed here has no `{name}` either.",
                        f"这里装的 {d} {v} 里也没有 `{name}`。",
                    )
                )
            break
    return out


def _dist(lib: str) -> str:
    from explainer.facts import names

    return names().get(lib, {}).get("distribution", lib)


def _installed_line(dist: str, h, what: str) -> dict | None:
    """The installed release of ``dist`` and whether it has ``what`` (unknown outside the indexed releases)."""
    v = installed_version(dist)
    if not v:
        return None
    has = h.has(v)
    if has is None:
        return _note(f"Installed here: {dist} {v}.", f"这里安装的是 {dist} {v}。")
    return _note(
        f"Installed here: {dist} {v}, which {'has' if has else 'does not have'} {what}.",
        f"这里安装的是 {dist} {v}，其中{'有' if has else '没有'} {what}。",
    )


def _same_minor(a: str, b: str) -> bool:
    return a.split(".")[:2] == b.split(".")[:2]


def _history_notes(h, dist: str, what: str, local: bool) -> list[dict]:
    out = []
    if h.removed_in and _same_minor(h.last, h.removed_in):
        # the data keeps each minor release's first and last: a patch release between them removed it
        out.append(
            _note(
                f"{what} is in {dist} {'from ' + h.added_in + ' ' if h.added_in else ''}up to {h.last} at least and "
                f"is gone by {h.removed_in} (a release between them removed it): update the code that uses it "
                f'to the newer API, or pin `pip install "{dist}=={h.last}"`.',
                f"{what} 在 {dist} {h.added_in + ' 至 ' if h.added_in else ''}{h.last} 里还在，到 {h.removed_in} 已经没有了"
                "（是两者之间的某个版本移除的）：把使用它的代码改成新版 API，"
                f'或者固定版本 `pip install "{dist}=={h.last}"`。',
            )
        )
    elif h.removed_in:
        out.append(
            _note(
                f"{what} is in {dist} {'from ' + h.added_in + ' ' if h.added_in else ''}up to {h.last} and was "
                f"removed in {h.removed_in}: update the code "
                f'that uses it to the newer API, or pin `pip install "{dist}<{h.removed_in}"`.',
                f"{what} 存在于 {dist} {h.added_in + ' 至 ' if h.added_in else ''}{h.last}（含）之前的版本，在 {h.removed_in} 中被移除："
                "把使用它的代码改成新版 API，"
                f'或者固定版本 `pip install "{dist}<{h.removed_in}"`。',
            )
        )
    elif h.added_in:
        out.append(
            _note(
                f'{what} exists from {dist} {h.added_in} on: upgrade with `pip install -U "{dist}>={h.added_in}"`.',
                f'{what} 从 {dist} {h.added_in} 开始才有：升级 `pip install -U "{dist}>={h.added_in}"`。',
            )
        )
    line = _installed_line(dist, h, what) if local and out else None
    if line:
        out.append(line)
    return out


def release_notes(parsed, *, local: bool = False) -> list[dict]:
    """What the releases of the library say about the module, name or model type the paste misses
    (``data/names.json.gz``): removed in which release, added in which."""
    from explainer.facts import history, library_of

    message = (parsed.message or "")[:2000]
    exc = (parsed.exc_type or "").rsplit(".", 1)[-1]
    name = missing_module(message)
    if name and exc in ("ModuleNotFoundError", "ImportError", "") and "." in name:
        lib = library_of(name.split(".", 1)[0])
        h = history(lib, "modules", name) if lib else None
        if lib and h:
            return _history_notes(h, _dist(lib), f"`{name}`", local)
    m = _CANNOT_IMPORT.search(message)
    if m and "partially initialized" not in message:
        name, module = m.group(1), m.group(2)
        lib = library_of(module)  # a name imported from the package's top level
        h = history(lib, "names", name) if lib else None
        if lib and h:
            return _history_notes(h, _dist(lib), f"`{module}.{name}`", local)
    if "unexpected keyword argument" in message or "has no attribute" in message:
        from explainer.match.origin import api_change

        changed = api_change(parsed)
        if changed:
            lib, what, h = changed
            return _history_notes(h, _dist(lib), what, local)
    frames = " ".join(f.file or "" for f in parsed.frames[-6:])
    m = _MODEL_TYPE.search(message.strip())
    if m and ("model type" in message or (exc == "KeyError" and "configuration_auto" in frames)):
        t = m.group(1) or m.group(2)
        h = history("transformers", "model_types", t)
        if h and h.added_in:
            out = [
                _note(
                    f"The model type `{t}` is known to transformers from {h.added_in} on: "
                    f'`pip install -U "transformers>={h.added_in}"`.',
                    f"transformers 从 {h.added_in} 开始才认识模型类型 `{t}`："
                    f'`pip install -U "transformers>={h.added_in}"`。',
                )
            ]
            v = installed_version("transformers") if local else None
            if v:
                out.append(
                    _note(
                        f"Installed here: transformers {v}.",
                        f"这里安装的是 transformers {v}。",
                    )
                )
            return out
    return []
