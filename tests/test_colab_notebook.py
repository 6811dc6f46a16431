"""The Colab GPU notebooks (`notebooks/colab/finetune_lora*.ipynb`).

Their structure is checked directly; the English notebook is then executed end to end
through papermill on the tiny offline model (a few steps, a few test documents), the way
CI runs it. The Japanese twin runs the same code (a test checks the cells are identical).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from piilab.course.links import course_links

REPO = Path(__file__).resolve().parent.parent
TEST_EXTRA = "needs the test extra: pip install -e '.[test]'"
TRAIN_EXTRA = "needs the train extra: pip install -e '.[train]'"
NOTEBOOKS = {"en": REPO / "notebooks" / "colab" / "finetune_lora.ipynb",
             "ja": REPO / "notebooks" / "colab" / "finetune_lora_ja.ipynb"}
PARAMETERS = ("model_id", "max_steps", "learning_rate", "batch_size", "max_length", "data_dir",
              "output_dir", "n_eval", "max_new_tokens", "seed", "lang")


def _load(lang: str) -> dict:
    return json.loads(NOTEBOOKS[lang].read_text(encoding="utf-8"))


def _code(nb: dict) -> list[str]:
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def _prose(nb: dict) -> str:
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def test_both_languages_run_the_same_code():
    assert _code(_load("en")) == _code(_load("ja"))


def test_prose_is_translated():
    assert re.search(r"[\u3040-\u30ff]", _prose(_load("ja")))  # kana
    assert not re.search(r"[\u3040-\u30ff]", _prose(_load("en")))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_parameters_cell_is_tagged_and_declares_the_knobs(lang):
    nb = _load(lang)
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1 and tagged[0]["cell_type"] == "code"
    source = "".join(tagged[0]["source"])
    for name in PARAMETERS:
        assert re.search(rf"^{name} = ", source, re.M), name
    assert 'model_id = "smollm2-135m"' in source  # the course's base, as in the CPU runs
    assert 'system_prompt = "none"' in source  # the setting of configs/train_colab_gpu.json


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_notebook_is_a_colab_gpu_target_without_outputs(lang):
    nb = _load(lang)
    assert nb["metadata"]["accelerator"] == "GPU"
    assert nb["metadata"]["piilab"]["language"] == lang
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None
    code = "\n".join(_code(nb))
    links = course_links()  # _config.yml; tools/build_notebooks.py keeps the notebooks in step
    assert f"piilab[colab,train,wide] @ git+{links.repository_url}@{links.branch}" in code
    assert 'find_spec("piilab") is None' in code  # no install where piilab is importable
    # The course's base is fetched only for an alias: a local directory (the tiny model of the
    # papermill run below) needs no network.
    assert 'if is_alias(model_id):' in code and '"fetch-model", model_id]' in code
    for step in ("check_loss_mask(", "train(config)", "predict_records(", "evaluate(",
                 "plot_per_type("):
        assert step in code, step
    assert code.index("check_loss_mask(") < code.index("train(config)")


def test_default_model_is_justified_in_prose():
    prose = _prose(_load("en"))
    assert "Why SmolLM2-135M by default" in prose
    assert "piilab fetch-model smollm2-135m" in prose
    assert "accelerate launch" in prose


@pytest.mark.slow
@pytest.mark.train
def test_papermill_runs_the_notebook_on_the_tiny_model(tmp_path, corpus, monkeypatch):
    papermill = pytest.importorskip("papermill", reason=TEST_EXTRA)
    pytest.importorskip("trl", reason=TRAIN_EXTRA)
    from piilab.dataset import read_jsonl
    from piilab.tiny import build_tiny_model

    tiny = build_tiny_model(tmp_path / "tiny", corpus["train"], seed=0)
    for key, value in {"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
                       "TOKENIZERS_PARALLELISM": "false"}.items():
        monkeypatch.setenv(key, value)  # the kernel inherits them
    monkeypatch.delenv("PIILAB_LANG", raising=False)
    out_dir = tmp_path / "run"
    executed = tmp_path / "executed.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOKS["en"]), str(executed), cwd=str(tmp_path), kernel_name="python3",
        progress_bar=False,
        parameters={"model_id": str(tiny), "max_steps": 3, "batch_size": 4,
                    "gradient_accumulation_steps": 1, "learning_rate": 0.003,
                    "max_train_records": 32, "data_dir": str(tmp_path / "data"),
                    "wide_dir": str(tmp_path / "wide"), "wide_records": 200,
                    "mix_dir": str(tmp_path / "mix"), "wide_train_records": 40,
                    "course_train_records": 20,
                    "output_dir": str(out_dir), "n_eval": 6, "eval_batch_size": 6,
                    "max_new_tokens": 12, "track": True, "lang": "en"},
    )
    predictions = read_jsonl(out_dir / "predictions_test.jsonl")
    assert len(predictions) == 6
    assert all(set(p) == {"id", "output", "parse_success"} for p in predictions)
    assert (out_dir / "adapter" / "adapter_model.safetensors").exists()
    assert (out_dir / "mlflow.db").exists()
    prompt = json.loads((out_dir / "adapter" / "piilab_prompt.json").read_text(encoding="utf-8"))
    assert prompt == {"system_prompt": "none"}
    assert (out_dir / "merged" / "config.json").exists()  # merge = True, as in the GPU config
    nb = json.loads(executed.read_text(encoding="utf-8"))
    text = "".join(
        "".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code"
        for o in c.get("outputs", []))
    assert "system prompt: none" in text
    assert "ok=True checked=32 mismatched=0 truncated=0" in text
    assert "carry loss: '<|im_end|>'" in text
    assert "3 steps" in text
    images = [o for c in nb["cells"] for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert len(images) == 2  # the loss curve and the per-type scores
    assert not os.environ.get("PIILAB_LANG")
