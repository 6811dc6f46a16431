"""The tiny offline model (`piilab.tiny`, SPEC section 8): loadable, deterministic, offline."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from piilab.tiny import CHAT_TEMPLATE, END_OF_TURN, TINY_CONFIG, build_tiny_model  # noqa: E402

pytestmark = pytest.mark.train


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory, corpus):
    return build_tiny_model(tmp_path_factory.mktemp("tiny"), corpus["train"], seed=0)


def _hashes(directory) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.iterdir()) if p.is_file()}


def test_auto_classes_load_it(tiny_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    assert model.config.model_type == "llama"
    assert model.config.num_hidden_layers == TINY_CONFIG["num_hidden_layers"] == 2
    assert model.dtype == torch.float32
    assert tokenizer.eos_token == END_OF_TURN
    assert tokenizer.pad_token is not None and tokenizer.pad_token != tokenizer.eos_token
    assert model.config.vocab_size == len(tokenizer)
    eot_id = tokenizer.convert_tokens_to_ids(END_OF_TURN)
    assert model.generation_config.eos_token_id == eot_id
    assert model.generation_config.do_sample is False


def test_same_records_and_seed_give_identical_files(tiny_dir, tmp_path, corpus):
    again = build_tiny_model(tmp_path / "again", corpus["train"], seed=0)
    assert _hashes(again) == _hashes(tiny_dir)


def test_a_fresh_process_builds_the_same_files(tiny_dir, tmp_path):
    # Another interpreter, another hash seed: nothing may depend on either.
    import subprocess
    import sys

    code = ("import sys\nfrom piilab.generator import generate_dataset\n"
            "from piilab.tiny import build_tiny_model\n"
            "build_tiny_model(sys.argv[1], generate_dataset()['train'], seed=0)\n")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "fresh")], check=True, env=env,
                   capture_output=True)
    assert _hashes(tmp_path / "fresh") == _hashes(tiny_dir)


def test_another_seed_changes_only_the_weights(tiny_dir, tmp_path, corpus):
    other = _hashes(build_tiny_model(tmp_path / "other", corpus["train"], seed=1))
    mine = _hashes(tiny_dir)
    differ = {name for name in mine if mine[name] != other[name]}
    assert differ == {"model.safetensors", "piilab_tiny.json"}


def test_building_leaves_the_global_rng_alone(tmp_path, corpus):
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    build_tiny_model(tmp_path / "m", corpus["train"][:50], seed=0)
    assert torch.equal(before, torch.random.get_rng_state())


def test_tokenizer_round_trips_every_training_text(tiny_dir, corpus):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_dir)
    for record in corpus["train"] + corpus["test"][:100]:
        for text in (record["source_text"], record["target_tsv"]):
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            assert tokenizer.decode(ids) == text, record["id"]


def test_chat_template_ends_the_assistant_turn_with_the_stop_token_inside(tiny_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_dir)
    assert tokenizer.chat_template == CHAT_TEMPLATE
    messages = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]
    rendered = tokenizer.apply_chat_template(messages, tokenize=False)
    assert rendered.endswith("<|im_start|>assistant\na" + END_OF_TURN)
    out = tokenizer.apply_chat_template(messages, return_dict=True,
                                        return_assistant_tokens_mask=True)
    masked = [t for t, m in zip(out["input_ids"], out["assistant_masks"], strict=True) if m]
    assert tokenizer.decode(masked) == "a" + END_OF_TURN
    prompt = tokenizer.apply_chat_template(messages[:1], tokenize=False,
                                           add_generation_prompt=True)
    assert rendered.startswith(prompt)


def test_provenance_file_records_the_build(tiny_dir, corpus):
    info = json.loads((tiny_dir / "piilab_tiny.json").read_text())
    assert info["seed"] == 0 and info["training_records"] == len(corpus["train"])
    assert 100_000 < info["parameters"] < 2_000_000


def test_no_records_is_an_error(tmp_path):
    with pytest.raises(ValueError):
        build_tiny_model(tmp_path / "m", [])


def test_cli_builds_the_tiny_model(tmp_path, corpus, capsys):
    from piilab.cli import main
    from piilab.dataset import split_bytes

    data = tmp_path / "data"
    data.mkdir()
    (data / "train.jsonl").write_bytes(split_bytes(corpus["train"][:100]))
    assert main(["tiny-model", "--out", str(tmp_path / "m"), "--data-dir", str(data)]) == 0
    assert "parameters" in capsys.readouterr().out
    assert (tmp_path / "m" / "model.safetensors").exists()
