"""The tiny offline model (`piilab.tiny`, docs/contract.md, section 8): loadable,
deterministic, offline."""

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
    assert model.config.num_hidden_layers == TINY_CONFIG["num_hidden_layers"] == 3
    assert model.config.hidden_size == TINY_CONFIG["hidden_size"] == 192
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
    assert differ == {"model.safetensors", "piilab_tiny.json"}  # not the tokenizer or prompt


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
    assert 1_000_000 < info["parameters"] < 2_500_000
    assert info["copy_friendly"] is True and info["system_prompt"] == "none"


def test_every_gold_value_is_the_same_tokens_in_the_answer_and_the_document(tiny_dir, corpus):
    """The copy-friendly pre-tokenizer: a value is copied token by token, never translated."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_dir)

    def occurs(part, whole):
        return any(whole[i:i + len(part)] == part for i in range(len(whole) - len(part) + 1))

    checked = 0
    for record in corpus["train"][:300] + corpus["test"][:100]:
        doc = tokenizer(record["source_text"], add_special_tokens=False)["input_ids"]
        answer = tokenizer(record["target_tsv"], add_special_tokens=False)["input_ids"]
        for entity in record["entities"]:
            value = tokenizer(entity["value"], add_special_tokens=False)["input_ids"]
            assert occurs(value, doc) and occurs(value, answer), record["id"]
            checked += 1
    assert checked > 500


def test_the_plain_bpe_breaks_that_which_is_why_it_is_not_the_default(corpus):
    from piilab.tiny import train_tokenizer

    records = corpus["train"][:300]
    plain = train_tokenizer(records, copy_friendly=False)
    matched = total = 0
    for record in records:
        doc = plain(record["source_text"], add_special_tokens=False)["input_ids"]
        for line in record["target_tsv"].splitlines():
            ids = plain(line, add_special_tokens=False)["input_ids"]
            value = plain(line.split("\t", 1)[1], add_special_tokens=False)["input_ids"]
            total += 1
            matched += ids[-len(value):] == value and any(
                doc[i:i + len(value)] == value for i in range(len(doc)))
    assert total > 500 and matched / total < 0.5


def test_the_prompt_setting_is_saved_with_the_model(tiny_dir):
    from piilab.sft import read_prompt_setting

    assert read_prompt_setting(tiny_dir) == "none"


def test_architecture_overrides_are_applied_and_unknown_ones_refused(tmp_path, corpus):
    out = build_tiny_model(tmp_path / "m", corpus["train"][:50], config={"num_hidden_layers": 1})
    assert json.loads((out / "config.json").read_text())["num_hidden_layers"] == 1
    with pytest.raises(ValueError, match="layers"):
        build_tiny_model(tmp_path / "n", corpus["train"][:50], config={"layers": 1})


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
