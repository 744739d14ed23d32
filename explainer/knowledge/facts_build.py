"""Build ``data/facts.json``: facts about packages, read from the packages themselves.

What it holds (each fact with where it came from):

- ``pins``: for torchvision, torchaudio and xformers (the companions that pin torch exactly), each
  release's ``torch`` requirement, from the wheel's own metadata (``Requires-Dist``);
- ``torch_cuda``: the CUDA runtime the default Linux x86-64 torch wheel of each release requires
  (its ``nvidia-cuda-runtime-cu*`` pin), from the same metadata;
- ``commands``: a command (console script, a wheel's ``.data/scripts``) -> the distributions that
  install it, from the same files as the import names;
- ``import_names``: import name -> distributions, from the ``top_level`` names in the wheels of the
  distributions PyTorch users install (read from each wheel's zip directory, fetched by HTTP range
  requests, not the whole file), then pipreqs' mapping (Apache-2.0, ``pipreqs/mapping`` of the pinned
  pipreqs wheel) for the rest.

The build has two steps. ``fetch`` asks the package index (``pip install --dry-run --report``, which
reads only metadata) and the wheel files' zip directories, and stores the raw answers in a cache
folder; ``build`` turns the cache into the data file and is a pure function of it, so the same cache
rebuilds the same bytes (``tests/test_facts.py``). Every record keeps the wheel's file name and the
sha256 the index gives for it. Rebuild::

    python -m explainer.knowledge.facts_build fetch  --cache /tmp/tbx-facts   # network: the index
    python -m explainer.knowledge.facts_build build  --cache /tmp/tbx-facts   # writes data/facts.json
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import zipfile
import zlib
from pathlib import Path

# the companions that pin torch, and the oldest release of each worth knowing (torch 1.8, 2021)
COMPANIONS = {"torchvision": "0.9.0", "torchaudio": "0.8.0", "xformers": "0.0.20"}
TORCH_SINCE = "1.8.0"
# distributions whose wheels name the import names users miss (measured on the population's pastes:
# the packages their `No module named` and `cannot import name` lines name, and their neighbours)
TOP_LEVEL_DISTS = (
    "opencv-python", "opencv-python-headless", "opencv-contrib-python", "scikit-learn", "scikit-image",
    "Pillow", "PyYAML", "mmcv", "mmengine", "mmdet", "mmsegmentation", "timm", "transformers", "diffusers",
    "huggingface-hub", "accelerate", "peft", "bitsandbytes", "xformers", "sentencepiece", "tokenizers",
    "einops", "safetensors", "onnx", "onnxruntime", "tensorboard", "lightning", "pytorch-lightning",
    "torchmetrics", "segment-anything", "ultralytics", "open-clip-torch", "protobuf", "python-dateutil",
    "beautifulsoup4", "ffmpeg-python", "soundfile", "librosa", "torch-geometric", "triton", "vllm",
    "numpy", "scipy", "pandas", "matplotlib", "gradio", "fairscale", "nvidia-ml-py", "pycocotools",
    "albumentations", "imageio", "av", "decord", "moviepy", "jieba", "modelscope", "tiktoken", "wandb",
    "hydra-core", "omegaconf", "basicsr", "facexlib", "insightface", "addict", "yapf", "fvcore", "iopath",
    "torchvision", "torchaudio", "torch", "openai-whisper", "sentence-transformers", "datasets", "evaluate",
    "trl", "auto-gptq", "optimum", "onnxsim", "tensorrt", "pytorch-msssim", "lpips", "kornia", "natsort",
    "termcolor", "tqdm", "rich", "fire", "easydict", "pyzmq", "msgpack", "attrs", "typing-extensions",
    "importlib-metadata", "setuptools", "packaging", "filelock", "fsspec", "jinja2", "networkx", "sympy",
)  # fmt: skip
# the communities PyTorch users paste from (the issue trackers sampled in shared/eval/POPULATION.md and the
# catalog's libraries: OpenMMLab, detectron2-style CUDA ops, the webui and ComfyUI, LLM serving and
# fine-tuning, speech, graphs, face restoration): their import names, and those of every distribution
# they or the distributions above require (``requires_dist`` without extras, followed to the end)
COMMUNITY_DISTS = (
    "mmcv-full", "mmcv-lite", "mmpretrain", "mmcls", "mmocr", "mmpose", "mmdet3d", "mmaction2", "mmagic",
    "mmrotate", "mmyolo", "openmim", "deepspeed", "flash-attn", "dgl", "torch-scatter", "torch-sparse",
    "torch-cluster", "torch-spline-conv", "pyg-lib", "ogb", "torchtext", "torchdata", "torchserve",
    "fschat", "lmdeploy", "llamafactory", "xtuner", "ms-swift", "autoawq", "optimum-quanto",
    "llama-cpp-python", "langchain", "langchain-community", "chromadb", "faiss-cpu", "sentence-transformers",
    "qwen-vl-utils", "transformers-stream-generator", "cpm-kernels", "mamba-ssm", "causal-conv1d", "vllm-flash-attn",
    "openai", "fastapi", "uvicorn", "streamlit", "gradio-client", "pydantic", "httpx", "requests", "aiohttp",
    "gfpgan", "basicsr", "realesrgan", "facexlib", "codeformer-pip", "face-alignment", "dlib", "mediapipe",
    "insightface", "onnxruntime-gpu", "controlnet-aux", "invisible-watermark", "k-diffusion", "compel",
    "open-clip-torch", "clip-anytorch", "segmentation-models-pytorch", "pretrainedmodels", "efficientnet-pytorch",
    "yacs", "lvis", "shapely", "open3d", "trimesh", "pyrender", "nerfstudio", "plyfile", "spconv-cu120",
    "whisperx", "faster-whisper", "ctranslate2", "funasr", "modelscope", "nemo-toolkit", "speechbrain",
    "espnet", "fairseq", "coqui-tts", "encodec", "demucs", "audiocraft", "pyannote-audio", "pydub",
    "sounddevice", "pyaudio", "webrtcvad", "praat-parselmouth", "pyworld", "torchcrepe", "resampy",
    "nnunetv2", "monai", "simpleitk", "nibabel", "hiddenlayer", "timm", "ultralytics", "yolov5", "supervision",
    "lap", "filterpy", "cython-bbox", "thop", "ptflops", "fvcore", "tensorboardx", "mlflow", "ray", "optuna",
    "spacy", "nltk", "gensim", "pypinyin", "jieba", "cn2an", "opencc", "zhconv", "seaborn", "plotly",
    "numba", "cupy-cuda12x", "pycuda", "ninja", "cmake", "cython", "pybind11", "wheel", "pip", "scikit-build",
    "imgaug", "kornia", "lpips", "pytorch-fid", "torch-fidelity", "clean-fid", "piq", "accelerate", "peft",
    "bitsandbytes", "auto-gptq", "optimum", "xformers", "triton", "einops", "safetensors", "sentencepiece",
    "tiktoken", "jsonlines", "easydict", "loguru", "colorama", "pyyaml", "toml", "tomli", "h5py", "lmdb",
    "pyarrow", "polars", "openpyxl", "psutil", "gputil", "pynvml", "py3nvml", "nvitop", "tensorflow",
    "keras", "jax", "flax", "paddlepaddle", "mxnet", "torch-npu", "intel-extension-for-pytorch",
    "torch-directml", "pytorch-lightning", "lightning", "hydra-core", "wandb", "comet-ml", "neptune",
    # reinforcement learning, robots and simulators; 3D and rendering; deployment and export
    "gymnasium", "gym", "stable-baselines3", "sb3-contrib", "torchrl", "pettingzoo", "mujoco", "pybullet",
    "lerobot", "nerfacc", "gsplat", "torch-tensorrt", "onnx2torch", "openvino", "pnnx", "coremltools",
    # documents, OCR and retrieval; LLM training, serving and agents
    "easyocr", "paddleocr", "rapidocr-onnxruntime", "pymupdf", "pdfplumber", "docx2txt", "magic-pdf",
    "unstructured", "llama-index", "langchain-core", "flagembedding", "gliner", "sglang", "xinference",
    "xoscar", "ollama", "litgpt", "torchtune", "unsloth", "colossalai", "megatron-core", "instructlab",
    "autotrain-advanced", "text-generation", "lemonade-sdk",
    # speech and music; vision research code bases published as packages
    "s3prl", "chattts", "audio-separator", "asteroid", "basic-pitch", "yolox", "torchreid", "anomalib",
    "pytorch-metric-learning", "torchattacks", "deeprobust", "cityscapesscripts", "x-transformers",
    "vector-quantize-pytorch",
    # science: physics-informed nets, molecules, biology, time series, federated, spiking, quantum, tabular
    "deepxde", "neuraloperator", "torchdiffeq", "torchsde", "e3nn", "mace-torch", "torchani", "dgllife",
    "rdkit", "deepchem", "fair-esm", "scanpy", "anndata", "scvi-tools", "darts", "pytorch-forecasting",
    "neuralforecast", "gluonts", "tsai", "pyqlib", "recbole", "flwr", "opacus", "snntorch", "spikingjelly",
    "pennylane", "pytorch-tabnet", "tabpfn", "lightgbm", "xgboost", "catboost",
    # medical and microscopy images; notebooks; tuning and utilities the population's pastes name
    "openslide-python", "tifffile", "pydicom", "totalsegmentator", "zarr", "notebook", "jupyterlab",
    "ipykernel", "ipywidgets", "nni", "bayesian-optimization", "hyperopt", "fastai", "fastprogress",
    "test-tube", "chainer",
    # evaluation, RLHF and agents; export toolkits; EEG and federated learning
    "lm-eval", "opencompass", "openrlhf", "smolagents", "rwkv", "text2vec", "mmdeploy", "openvino-dev",
    "rknn-toolkit2", "mne", "braindecode", "fedml",
    # accelerator back ends outside torch's tree, cluster training and serving
    "torch-xla", "horovod", "sagemaker", "bentoml",
)  # fmt: skip
MAX_CLOSURE = 3000  # distributions followed through requirements, at most
MAX_SDIST = 40_000_000  # bytes of a source archive read whole (for a project without wheels)
PIPREQS = "pipreqs==0.5.0"
MAX_ZIP_MEMBER = 2_000_000  # bytes of one file read out of a remote wheel
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64", "macosx_11_0_arm64", "any")


def _version_key(v: str) -> tuple:
    parts = re.findall(r"\d+|[a-z]+", v.lower())
    return tuple((0, int(p)) if p.isdigit() else (-1, p) for p in parts)


def _pip(*args: str) -> subprocess.CompletedProcess:
    # no configuration files: a machine's own constraints or mirrors must not change what the index says
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, env=env, timeout=300)


PYTHONS = ("3.12", "3.8")  # the releases a current and an old Python can install, together


def versions(dist: str) -> list[str]:
    found: set[str] = set()
    for py in PYTHONS:
        out = _pip("index", "versions", dist, "--python-version", py).stdout
        m = re.search(r"Available versions: (.*)", out)
        found.update(m.group(1).split(", ") if m else ())
    return sorted((v for v in found if "+" not in v), key=_version_key)


def report(dist: str, version: str, platform: str) -> dict | None:
    """The index's metadata of one release's wheel for ``platform`` (no download of the wheel), for
    the newest Python that has one."""
    for py in PYTHONS:
        rec = _report(dist, version, platform, py)
        if rec:
            return rec
    return None


def _report(dist: str, version: str, platform: str, python: str) -> dict | None:
    with tempfile.TemporaryDirectory() as tmp:
        rep = Path(tmp) / "r.json"
        plat = [] if platform == "any" else ["--platform", platform]
        r = _pip(
            "install", "--dry-run", "--no-deps", "--ignore-installed", "--quiet", "--report", str(rep),
            "--only-binary=:all:", *plat, "--python-version", python, "--target", str(Path(tmp) / "t"),
            f"{dist}=={version}",
        )  # fmt: skip
        if r.returncode != 0 or not rep.exists():
            return None
        item = json.loads(rep.read_text())["install"][0]
        info = item["download_info"]
        return {
            "file": info["url"].rsplit("/", 1)[-1],
            "url": info["url"],
            "sha256": info.get("archive_info", {}).get("hashes", {}).get("sha256"),
            "requires_dist": item["metadata"].get("requires_dist", []),
        }


class RemoteZip:
    """A zip (a wheel) on the package index, read by HTTP range requests over one kept-alive HTTPS
    connection per thread: thousands of members cost one request each, without a name lookup or a
    TLS handshake apiece (opened anew for every request, the lookups failed now and then)."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.url, self.host, self.path = url, parts.netloc, parts.path
        self.local = threading.local()

    def get(self, start: int, end: int | None = None) -> bytes:
        """Bytes ``start`` to ``end`` (inclusive); a negative ``start`` alone: the last ``-start``."""
        spec = f"bytes={start}" if start < 0 else f"bytes={start}-{'' if end is None else end}"
        for attempt in range(6):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = http.client.HTTPSConnection(self.host, timeout=60)
            try:
                conn.request("GET", self.path, headers={"Range": spec})
                r = conn.getresponse()
                body = r.read()
                if r.status != 206:
                    raise OSError(f"HTTP {r.status} for a range of {self.path}")
                return body
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 5:
                    raise
                time.sleep(2**attempt)
        raise AssertionError("unreachable")

    def directory(self) -> dict[str, tuple[int, int, int, int]]:
        """The zip's entries: name -> (method, compressed size, local header offset, size)."""
        tail = self.get(-65536)
        at = tail.rfind(b"PK\x05\x06")
        if at < 0:
            raise ValueError(f"{self.url}: no zip directory in the last 64 KiB")
        size, offset = struct.unpack("<II", tail[at + 12 : at + 20])
        directory = self.get(offset, offset + size - 1)
        out, i = {}, 0
        while directory[i : i + 4] == b"PK\x01\x02":
            method = struct.unpack("<H", directory[i + 10 : i + 12])[0]
            csize, usize = struct.unpack("<II", directory[i + 20 : i + 28])
            n, m, k = struct.unpack("<HHH", directory[i + 28 : i + 34])
            local = struct.unpack("<I", directory[i + 42 : i + 46])[0]
            out[directory[i + 46 : i + 46 + n].decode("utf-8", "replace")] = (method, csize, local, usize)
            i += 46 + n + m + k
        return out

    def member(self, entry: tuple[int, int, int, int]) -> bytes:
        """One member, its local header and data in one request (with a margin for the header's
        extra field, which may be longer than the central directory's); ValueError when larger
        than any file read here (generated data)."""
        method, csize, local, usize = entry
        if usize > MAX_ZIP_MEMBER:
            raise ValueError("file too large")
        blob = self.get(local, local + 30 + 1024 + csize)
        n, m = struct.unpack("<HH", blob[26:30])
        data = blob[30 + n + m : 30 + n + m + csize]
        if len(data) < csize:
            data = self.get(local + 30 + n + m, local + 30 + n + m + csize - 1)
        return zlib.decompress(data, -15) if method == 8 else data


def zip_directory(url: str) -> dict[str, tuple[int, int, int, int]]:
    """A remote zip's entries: name -> (method, compressed size, local header offset, size)."""
    return RemoteZip(url).directory()


def zip_read(url: str, entry: tuple[int, int, int, int]) -> bytes:
    return RemoteZip(url).member(entry)


def zip_names(url: str) -> list[str]:
    """The file names in a remote zip (a wheel), read from its central directory by range requests."""
    return list(zip_directory(url))


def top_level(names: list[str]) -> list[str]:
    """Import names a wheel provides: its top-level packages (folders with ``__init__.py``, or
    namespace folders of modules) and modules (``.py``, extension modules)."""
    out = set()
    for name in names:
        first, _, rest = name.partition("/")
        if first.endswith((".dist-info", ".data")) or first.startswith(("_", ".")) and not rest:
            continue
        if rest:
            if rest.endswith((".py", ".so", ".pyd")) and first.isidentifier():
                out.add(first)
        else:
            mod = re.match(r"([A-Za-z_]\w*)(?:\.[\w-]+)?\.(?:py|so|pyd)$", first)
            if mod:
                out.add(mod.group(1))
    return sorted(out)


def _index_json(dist: str) -> dict | None:
    """The package index's JSON record of a project's newest release (None: no such project)."""
    import urllib.error
    import urllib.request

    url = f"https://pypi.org/pypi/{urllib.parse.quote(dist)}/json"
    for attempt in range(5):
        try:
            with urllib.request.urlopen(url, timeout=60) as r:
                return json.load(r)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
        except (OSError, ValueError):
            pass
        time.sleep(2**attempt)
    raise OSError(f"{url}: no answer")


_WHEEL_PREFERENCE = ("-none-any.whl", "manylinux_2_28_x86_64.whl", "manylinux2014_x86_64.whl", "x86_64.whl", ".whl")


def _requirements(requires: list[str] | None) -> list[str]:
    """The distributions a release requires without extras (the name as pip prints it)."""
    out = []
    for req in requires or ():
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if m and "extra ==" not in req.partition(";")[2]:
            out.append(_canon(m.group(1)))
    return out


def sdist_top_level(members: list[str], read) -> list[str]:
    """Import names a source archive provides: its ``top_level.txt`` where setuptools wrote one
    (``read(member)`` gives the file), else its packages (folders with ``__init__.py``, at the root or
    under ``src/``); the project's own tests, docs and examples are not import names users miss."""
    for m in sorted(members, key=len):
        if re.fullmatch(r"[^/]+/(?:src/)?[^/]+\.egg-info/top_level\.txt", m):
            names = read(m).decode("utf-8", "replace").split()
            return sorted({n for n in names if n.isidentifier()})
    out = set()
    for m in members:
        parts = m.split("/")
        if parts[-1] != "__init__.py":
            continue
        if len(parts) == 3 or (len(parts) == 4 and parts[1] == "src"):
            name = parts[-2]
            if name.isidentifier() and name.lower() not in PROJECT_NAMES | {"docs", "examples", "demo", "benchmarks"}:
                out.add(name)
    return sorted(out)


def _sdist_names(url: str, sha256: str) -> tuple[list[str], list[str]]:
    import hashlib
    import io
    import tarfile
    import urllib.request

    with urllib.request.urlopen(url, timeout=300) as r:
        blob = r.read(MAX_SDIST + 1)
    if len(blob) > MAX_SDIST or hashlib.sha256(blob).hexdigest() != sha256:
        raise ValueError("too large or not the index's sha256")
    if url.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(blob)) as z:
            return sdist_top_level(z.namelist(), z.read), _sdist_commands(z.namelist(), z.read)
    with tarfile.open(fileobj=io.BytesIO(blob)) as t:
        members = {m.name: m for m in t.getmembers() if m.isfile()}
        read = lambda n: t.extractfile(members[n]).read()  # type: ignore[union-attr]  # noqa: E731
        return sdist_top_level(list(members), read), _sdist_commands(list(members), read)


def _sdist_commands(members: list[str], read) -> list[str]:
    """A source archive's commands: the ``entry_points.txt`` setuptools wrote into it, and the files
    of its ``bin/`` folder (the ``scripts=`` of setup(): deepspeed's ``deepspeed``, ``ds_report``)."""
    text = ""
    for m in sorted(members, key=len):
        if re.fullmatch(r"[^/]+/(?:src/)?[^/]+\.egg-info/entry_points\.txt", m):
            text = read(m).decode("utf-8", "replace")
            break
    scripts = [f"x.data/scripts/{m.split('/')[-1]}" for m in members if re.fullmatch(r"[^/]+/bin/[^/]+", m)]
    return console_scripts(text, scripts)


def _files(dist: str, info: dict, version: str | None = None) -> list[dict]:
    base = f"https://pypi.org/pypi/{urllib.parse.quote(dist)}/json"  # a mirror may answer relative links
    listed = info.get("urls", []) if version is None else info.get("releases", {}).get(version, [])
    return [{**f, "url": urllib.parse.urljoin(base, f["url"])} for f in listed if not f.get("yanked")]


def _wheel(files: list[dict]) -> dict | None:
    wheels = [f for f in files if f["filename"].endswith(".whl")]
    return next((f for suffix in _WHEEL_PREFERENCE for f in wheels if f["filename"].endswith(suffix)), None)


def _wheel_contents(url: str) -> tuple[list[str], list[str]]:
    """A remote wheel's import names and commands."""
    remote = RemoteZip(url)
    members = remote.directory()
    points = next((m for m in members if re.fullmatch(r"[^/]+\.dist-info/entry_points\.txt", m)), None)
    text = remote.member(members[points]).decode("utf-8", "replace") if points else ""
    return top_level(list(members)), console_scripts(text, list(members))


def _older_majors(info: dict) -> list[str]:
    """The newest final release of each major version before the newest one (huggingface-hub 0.36.2,
    whose ``huggingface-cli`` 1.0 renamed: users still paste the old commands)."""
    newest: dict[int, tuple] = {}
    for v, files in info.get("releases", {}).items():
        if not re.fullmatch(r"\d+(\.\d+)*", v) or not any(not f.get("yanked") for f in files):
            continue
        key = _version_key(v)
        major = int(v.split(".")[0])
        if major not in newest or key > newest[major][0]:
            newest[major] = (key, v)
    top = int(info["info"]["version"].split(".")[0]) if info["info"]["version"][:1].isdigit() else None
    return [v for m, (_k, v) in sorted(newest.items()) if top is not None and m < top]


def release_names(dist: str, older: bool = False) -> dict | None:
    """The newest release of ``dist``: its wheel's (else its source archive's) import names and
    commands, the file and its sha256 as the index gives them, and what it requires; ``older``: also
    the commands of the newest wheel of each earlier major version."""
    info = _index_json(dist)
    if not info:
        return None
    files = _files(dist, info)
    pick = _wheel(files)
    rec: dict = {
        "name": info["info"]["name"],  # as the project spells it (Pillow, PyYAML)
        "version": info["info"]["version"],
        "requires_dist": info["info"].get("requires_dist") or [],
    }
    if older:
        rec["older"] = []
        for v in _older_majors(info):
            old = _wheel(_files(dist, info, v))
            if old:
                _names, cmds = _wheel_contents(old["url"])
                rec["older"].append(
                    {"version": v, "file": old["filename"], "sha256": old["digests"]["sha256"], "commands": cmds}
                )
    if pick:
        names, commands = _wheel_contents(pick["url"])
    else:
        pick = next((f for f in files if f["packagetype"] == "sdist" and f["size"] <= MAX_SDIST), None)
        if not pick:
            return None
        names, commands = _sdist_names(pick["url"], pick["digests"]["sha256"])
    return {
        **rec,
        "file": pick["filename"],
        "url": pick["url"],
        "sha256": pick["digests"]["sha256"],
        "names": names,
        "commands": commands,
    }


def console_scripts(entry_points: str, members: list[str]) -> list[str]:
    """The commands a release installs: its ``console_scripts`` and ``gui_scripts`` entry points,
    and the files of a wheel's ``.data/scripts/`` (deepspeed's ``deepspeed``), without an extension."""
    out, section = set(), ""
    for line in entry_points.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[] ")
        elif section in ("console_scripts", "gui_scripts") and "=" in line:
            out.add(line.split("=", 1)[0].strip())
    for m in members:
        found = re.fullmatch(r"[^/]+\.data/scripts/([^/]+?)(?:\.py|\.sh|\.bat|\.exe)?", m)
        if found:
            out.add(found.group(1))
    return sorted(c for c in out if c and len(c) <= 60 and not c.startswith((".", "_")))


def fetch_names(raw: dict) -> None:
    """``raw["wheels"]``: the import names of every seed distribution and of everything they require."""
    from concurrent.futures import ThreadPoolExecutor

    wanted = [_canon(d) for d in (*TOP_LEVEL_DISTS, *COMMUNITY_DISTS)]
    seen, level, out = set(wanted), list(dict.fromkeys(wanted)), {}  # type: ignore[var-annotated]
    with ThreadPoolExecutor(8) as pool:
        while level and len(out) < MAX_CLOSURE:
            found = dict(zip(level, pool.map(lambda d: release_names(d, older=d in wanted), level)))
            nxt = []
            for dist, rec in found.items():
                print(f"{dist}: {rec and rec['file']}", file=sys.stderr)
                if rec is None:
                    continue
                out[rec.pop("name")] = rec
                for req in _requirements(rec["requires_dist"]):
                    if req not in seen:
                        seen.add(req)
                        nxt.append(req)
            level = nxt
    raw["wheels"] = out


def fetch(cache: Path, names_only: bool = False) -> None:
    """The index's answers into ``cache/raw.json``; ``names_only``: the import names again, the pins
    and pipreqs' mapping kept as they were fetched."""
    cache.mkdir(parents=True, exist_ok=True)
    if names_only:
        kept = json.loads((cache / "raw.json").read_text())
        fetch_names(kept)
        (cache / "raw.json").write_text(json.dumps(kept, indent=1, sort_keys=True))
        return
    raw: dict = {"pins": {}, "torch": {}, "wheels": {}, "pipreqs": None}
    for dist, since in COMPANIONS.items():
        for v in versions(dist):
            if _version_key(v) < _version_key(since):
                continue
            rec = next((r for p in PLATFORMS if (r := report(dist, v, p))), None)
            if rec:
                raw["pins"].setdefault(dist, {})[v] = rec
            print(f"{dist} {v}: {rec and rec['file']}", file=sys.stderr)
    for v in versions("torch"):
        if _version_key(v) >= _version_key(TORCH_SINCE):
            rec = report("torch", v, "manylinux_2_28_x86_64") or report("torch", v, "manylinux1_x86_64")
            print(f"torch {v}: {rec and rec['file']}", file=sys.stderr)
            if rec:
                raw["torch"][v] = rec
    fetch_names(raw)
    with tempfile.TemporaryDirectory() as tmp:
        done = _pip("download", "--no-deps", "-d", tmp, PIPREQS)
        whl = next(Path(tmp).glob("pipreqs-*.whl"), None)
        if done.returncode == 0 and whl:
            import hashlib

            with zipfile.ZipFile(whl) as z:
                mapping = z.read("pipreqs/mapping").decode()
            raw["pipreqs"] = {
                "file": whl.name,
                "sha256": hashlib.sha256(whl.read_bytes()).hexdigest(),
                "mapping": mapping,
            }
    (cache / "raw.json").write_text(json.dumps(raw, indent=1, sort_keys=True))


def _torch_spec(requires: list[str]) -> str | None:
    for req in requires:
        m = re.match(r"torch\s*(?:\((.*?)\)|([^;]*))\s*(;.*)?$", req)
        if m and "extra ==" not in (m.group(3) or ""):
            return (m.group(1) or m.group(2) or "").strip() or "*"
    return None


def _cuda_runtime(requires: list[str]) -> str | None:
    """The CUDA runtime a torch wheel depends on: ``nvidia-cuda-runtime-cu12==12.1.105`` (to 2.12),
    ``cuda-toolkit[cudart,...]==13.0.3`` (from 2.13); None where the wheel bundles it (before 1.13)."""
    for req in requires:
        m = re.match(r"(?:nvidia-cuda-runtime-cu\d+|cuda-toolkit\[[^\]]*\bcudart\b[^\]]*\])\s*\(?==\s*([\d.]+)", req)
        if m:
            return ".".join(m.group(1).split(".")[:2])
    return None


# names a project's own folders take far more often than any package (``from utils import ...`` in a
# cloned repository): a mapping never answers them with a distribution
PROJECT_NAMES = frozenset(
    "utils util models model common config configs data dataset datasets tools lib libs src core test tests "
    "helpers helper network networks modules module layers ops scripts train main app api base options "
    "trainer inference evaluation eval demo docs example examples sample samples benchmark benchmarks bin "
    "build third_party".split()
)


def _canon(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def _related(import_name: str, dist: str) -> bool:
    """Whether a mapping's pair reads as one project: one name inside the other, or the same first
    three letters (``yaml``/``PyYAML``, ``PIL``/``Pillow``). pipreqs' mapping also pairs generic
    names with whatever package once shipped them (``models`` -> a barcode library): those are dropped."""
    a, b = re.sub(r"[^a-z0-9]", "", import_name.lower()), re.sub(r"[^a-z0-9]", "", dist.lower())
    if import_name.lower() in PROJECT_NAMES:
        return False
    return bool(a and b) and (a in b or b in a or a[:3] == b[:3])


def build(raw: dict) -> dict:
    """The data file's content from the fetched answers (a pure function: same input, same bytes)."""
    pins: dict = {}
    for dist, rels in sorted(raw["pins"].items()):
        for v, rec in sorted(rels.items(), key=lambda kv: _version_key(kv[0])):
            spec = _torch_spec(rec["requires_dist"])
            if spec:
                pins.setdefault(dist, {})[v] = {"torch": spec, "file": rec["file"], "sha256": rec["sha256"]}
    torch_cuda = {}
    for v, rec in sorted(raw["torch"].items(), key=lambda kv: _version_key(kv[0])):
        cuda = _cuda_runtime(rec["requires_dist"])
        torch_cuda[v] = {"cuda": cuda, "file": rec["file"], "sha256": rec["sha256"]}
    names: dict[str, list[str]] = {}
    commands: dict[str, list[str]] = {}  # a console script -> the distributions that install it
    older: dict[str, list[dict]] = {}
    sources = {}
    # the seeds in their order (the commonest first: cv2 -> opencv-python before its variants), then
    # what they require, by name
    rank: dict[str, int] = {}
    for d in (*TOP_LEVEL_DISTS, *COMMUNITY_DISTS):
        rank.setdefault(_canon(d), len(rank))
    for dist, rec in sorted(raw["wheels"].items(), key=lambda kv: (rank.get(_canon(kv[0]), len(rank)), kv[0].lower())):
        sources[dist] = {"version": rec["version"], "file": rec["file"], "sha256": rec["sha256"]}
        seed = _canon(dist) in rank
        for old in rec.get("older", ()):  # commands an earlier major version had (huggingface-cli)
            older.setdefault(dist, []).append({k: old[k] for k in ("version", "file", "sha256")})
        for c in sorted({*rec.get("commands", ()), *(c for old in rec.get("older", ()) for c in old["commands"])}):
            commands.setdefault(c, []).append(dist)
        for n in rec["names"]:
            # a generic folder a release ships by mistake (tests/, utils/) is the project's own far more
            # often; a distribution reached only as a requirement keeps the names that read as its own
            if (n.lower() not in PROJECT_NAMES or _canon(n) == _canon(dist)) and (seed or _related(n, dist)):
                names.setdefault(n, []).append(dist)
    if raw.get("pipreqs"):
        for line in raw["pipreqs"]["mapping"].splitlines():
            imp, _, dist = line.strip().partition(":")
            if imp and dist and imp not in names and _related(imp, dist):
                names[imp] = [re.sub(r"[-_.]+", "-", dist)]  # the name as pip prints it (scikit_learn -> scikit-learn)
    return {
        "about": (
            "Facts read from packages' own metadata and files; rebuild: "
            "python -m explainer.knowledge.facts_build fetch --cache DIR && "
            "python -m explainer.knowledge.facts_build build --cache DIR; each fact's wheel and sha256 are in "
            "facts.provenance.json beside this file"
        ),
        "pins": pins,
        "torch_cuda": torch_cuda,
        "import_names": dict(sorted(names.items())),
        "commands": dict(sorted(commands.items())),
        "provenance": {
            "wheels": sources,
            "pipreqs": {k: raw["pipreqs"][k] for k in ("file", "sha256")} if raw.get("pipreqs") else None,
            "older_wheels": older,
            "pipreqs_licence": "Apache-2.0",
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m explainer.knowledge.facts_build")
    ap.add_argument("step", choices=("fetch", "build"))
    ap.add_argument("--cache", type=Path, required=True, help="folder of the fetched answers (raw.json)")
    ap.add_argument("--names-only", action="store_true", help="fetch: the import names again, the pins kept")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "data" / "facts.json")
    args = ap.parse_args(argv)
    if args.step == "fetch":
        fetch(args.cache, names_only=args.names_only)
        return 0
    data = build(json.loads((args.cache / "raw.json").read_text()))
    # the provenance beside the facts: an answer reads only the facts (the file every answer parses stays small)
    prov = args.out.with_name(args.out.stem + ".provenance.json")
    prov.write_text(json.dumps(data.pop("provenance"), ensure_ascii=False, indent=0, sort_keys=False) + "\n")
    args.out.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=False) + "\n")
    print(f"{args.out}: {args.out.stat().st_size} bytes; {prov}: {prov.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
