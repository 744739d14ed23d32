"""What explaining a failing script costs its user: the script hook against friendly-traceback, run
alternately in one loop, each against the plain interpreter.

    pip install friendly_traceback     # only for this benchmark; it is no dependency of the project
    python tests/bench/bench_hook.py [--runs 11] [--record]

Three failing scripts, written to a temporary folder: a torch shape error raised inside a model's
forward (torch imported: the case users meet), the same without torch (a plain Python KeyError
in a training loop: the hook says nothing to add, friendly-traceback explains it), and torch's
``backward`` on a non-scalar loss. Each is run as

- ``python SCRIPT`` (the interpreter's own traceback: the baseline),
- ``python -m explainer run SCRIPT`` (the script hook: the traceback, then the explanation),
- ``python -m friendly_traceback SCRIPT`` (friendly-traceback's explanation), where it is installed,

one after the other, ``--runs`` times; the figure is each one's median wall time and its median
time over the baseline. Every run's output is checked (the hook's explanation must be there), so a
broken hook cannot look fast.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPTS = {
    "torch-shape": (
        "import torch\n"
        "from torch import nn\n"
        "\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(784, 10)\n"
        "\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "\n"
        "model = Net()\n"
        "images = torch.zeros(8, 1, 28, 28)\n"
        "out = model(images)\n",
        "mat1 and mat2 shapes cannot be multiplied",
    ),
    "torch-backward": (
        "import torch\nw = torch.ones(3, requires_grad=True)\nloss = (w * 2) ** 2\nloss.backward()\n",
        "grad can be implicitly created only for scalar outputs",
    ),
    "python-keyerror": (
        "config = {'lr': 0.1}\nfor epoch in range(2):\n    batch_size = config['batch_size']\n",
        "KeyError",
    ),
}


def has_torch() -> bool:
    return importlib.util.find_spec("torch") is not None


def commands(script: Path, friendly: bool) -> dict[str, list[str]]:
    out = {
        "python": [sys.executable, str(script)],
        "tbx hook": [sys.executable, "-m", "explainer", "run", str(script)],
    }
    if friendly:
        out["friendly-traceback"] = [sys.executable, "-m", "friendly_traceback", str(script)]
    return out


def run_once(cmd: list[str], env: dict) -> tuple[float, str]:
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    return time.perf_counter() - t, p.stdout + p.stderr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--record", action="store_true", help="store the figures for the README (tests/bench/results.py)")
    args = ap.parse_args()
    friendly = importlib.util.find_spec("friendly_traceback") is not None
    if not friendly:
        print("friendly_traceback is not installed: only the hook against the plain interpreter")
    env = dict(os.environ, TBX_LANG="en", NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (source, expect) in SCRIPTS.items():
            if name.startswith("torch") and not has_torch():
                print(f"{name}: skipped (torch is not installed)")
                continue
            script = Path(tmp) / f"{name.replace('-', '_')}.py"
            script.write_text(source, encoding="utf-8")
            cmds = commands(script, friendly)
            times: dict[str, list[float]] = {k: [] for k in cmds}
            for cmd in cmds.values():  # a first run of each, untimed: the page cache, .pyc files
                run_once(cmd, env)
            for _ in range(args.runs):
                for k, cmd in cmds.items():
                    took, output = run_once(cmd, env)
                    if expect not in output:
                        raise SystemExit(f"{name} / {k}: the run did not show {expect!r}:\n{output[-2000:]}")
                    if k == "tbx hook" and name.startswith("torch") and "traceback-explainer" not in output:
                        raise SystemExit(f"{name}: the hook printed no explanation:\n{output[-2000:]}")
                    times[k].append(took * 1000)
            base = statistics.median(times["python"])
            print(f"\n{name} ({args.runs} alternating runs, median wall time)")
            line = {}
            for k, ts in times.items():
                med = statistics.median(ts)
                extra = statistics.median(t - b for t, b in zip(ts, times["python"]))
                line[k] = extra
                print(f"  {k:<20} {med:8.1f} ms" + ("" if k == "python" else f"   +{extra:.1f} ms over python"))
            summary.append((name, base, line))
    if args.record and summary:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from results import record

        parts = []
        for name, base, line in summary:
            fr = f", friendly-traceback +{line['friendly-traceback']:.0f} ms" if "friendly-traceback" in line else ""
            parts.append(f"{name}: python {base:.0f} ms, hook +{line['tbx hook']:.0f} ms{fr}")
        record(
            "hook",
            "a failing script: the script hook and friendly-traceback over the plain interpreter, alternating",
            "; ".join(parts),
        )


if __name__ == "__main__":
    main()
