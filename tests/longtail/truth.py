"""Run the long-tail snippets under the pinned torch and print, per snippet, the message a user would
paste and the true raise site (JSON lines). Run as a script in a fresh interpreter:
``TORCH_SHOW_CPP_STACKTRACES=1 python tests/longtail/truth.py``."""

import json
import os
import re
import sys
import traceback
import warnings

sys.path.insert(0, os.path.dirname(__file__))
from snippets import PRELUDE, SNIPPETS  # noqa: E402

RAISED = re.compile(r"Exception raised from (\S+) at (\S+?):(\d+) \(most recent call first\)")


def main() -> None:
    env: dict = {}
    exec(PRELUDE, env)  # the project's own snippets, not user input
    torch_dir = os.path.dirname(env["torch"].__file__)
    for name, code in SNIPPETS.items():
        row = {"name": name}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(code, dict(env))
            row["raised"] = False
        except Exception as exc:  # noqa: BLE001 - every snippet is meant to raise
            text = str(exc)
            m = RAISED.search(text)
            row.update(raised=True, exc_type=type(exc).__name__, module=type(exc).__module__)
            if m:
                row["message"] = text[: m.start()].rstrip()
                file = re.sub(r"^.*?/(?=(?:aten|c10|torch|caffe2)/)", "", m.group(2))
                row["site"] = {"file": file, "line": int(m.group(3)), "function": m.group(1)}
            else:
                row["message"] = text
                frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(torch_dir)]
                if frames:
                    f = frames[-1]
                    row["site"] = {
                        "file": "torch/" + os.path.relpath(f.filename, torch_dir).replace(os.sep, "/"),
                        "line": f.lineno,
                        "function": f.name,
                    }
            row["paste"] = "".join(traceback.format_exception_only(type(exc), exc)).split("\nException raised from")[0]
        print(json.dumps(row, ensure_ascii=False))


if __name__ == "__main__":
    main()
