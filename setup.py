"""Build hook: a wheel carries the knowledge base and its compiled index.

``build_py`` copies ``kb/*.md`` into ``explainer/_data/kb/`` and compiles them into
``explainer/_data/index.sqlite`` inside the build tree (and ``data/longtail-*.jsonl.gz`` into
``explainer/_data/longtail-*.sqlite``), so ``pip install .`` (not editable) gives a
``tbx`` that works from any folder. Everything else is declared in pyproject.toml.
"""

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildWithIndex(build_py):
    def run(self):
        super().run()
        sys.path.insert(0, str(HERE))
        from explainer.knowledge.index import build_index

        data = Path(self.build_lib) / "explainer" / "_data"
        kb = data / "kb"
        kb.mkdir(parents=True, exist_ok=True)
        for md in (HERE / "kb").glob("*.md"):
            shutil.copy2(md, kb / md.name)
        build_index(kb, data / "index.sqlite")
        # the long tail: each shipped data file compiled to the SQLite its lookups read, with PyTorch's notice
        from explainer.match.longtail import compile_index
        from explainer.match.longtail import read_data as read

        for gz in sorted((HERE / "data").glob("longtail-*.jsonl.gz")):
            meta, records = read(gz)
            compile_index(records, meta, str(data / gz.name.replace(".jsonl.gz", ".sqlite")))
        shutil.copy2(HERE / "data" / "LICENSE.pytorch", data / "LICENSE.pytorch")
        # torch's other releases and the libraries' raise sites, compiled the same way
        for name in ("torchhistory", "libsites"):
            meta, records = read(HERE / "data" / f"{name}.jsonl.gz")
            compile_index(records, meta, str(data / f"{name}.sqlite"))
        shutil.copy2(HERE / "data" / "facts.json", data / "facts.json")  # packages, pins, drivers
        shutil.copy2(HERE / "data" / "names.json.gz", data / "names.json.gz")  # libraries' names per release
        shutil.copy2(HERE / "data" / "torchasserts.json.gz", data / "torchasserts.json.gz")  # asserts per release


setup(cmdclass={"build_py": BuildWithIndex})
