"""Gold spans, the NER export and `piilab export-ner` (`piilab.ner`, chapter 08)."""

from __future__ import annotations

import doctest
import itertools
import json
import os
import stat
import sys

import pytest
from conftest import record as shared_record

from piilab import cli, ner
from piilab.bioes import bioes_classes
from piilab.evaluation import evaluate
from piilab.labels import LABELS
from piilab.ner import (
    EXPORT_COLUMNS,
    MisalignedRecordError,
    NERDataError,
    gold_spans,
    model_predictions,
    row_mapping,
    spans_to_model_output,
    verify_row,
)
from piilab.tokenization import mask_text

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

TRAIN_EXTRA = "needs the train extra: pip install -e '.[train]'"


def _record(source, *entities, rid="r1", language="ko", split="test"):
    return shared_record(source, *entities, id=rid, language=language, split=split,
                         ordered=False)


def test_doctests_pass():
    assert doctest.testmod(ner).failed == 0


# --- gold spans ------------------------------------------------------------------


def test_gold_spans_are_every_occurrence_literal_or_variant():
    record = _record("김가상님, 김 가 상 님 / 010-1234-5678 또는 010 1234 5678",
                     ("PERSON", "김가상"), ("PHONE", "010-1234-5678"))
    assert gold_spans(record) == [(0, 3, "PERSON"), (6, 11, "PERSON"), (16, 29, "PHONE"),
                                  (33, 46, "PHONE")]


def test_one_span_with_two_labels_keeps_the_label_earlier_in_LABELS():
    record = _record("번호 12345678", ("PHONE", "12345678"), ("ACCOUNT", "12345678"))
    assert LABELS.index("ACCOUNT") < LABELS.index("PHONE")
    assert gold_spans(record) == [(3, 11, "ACCOUNT")]


def test_partly_overlapping_occurrences_are_rejected_naming_offsets_not_values():
    record = _record("고객 김가상님", ("PERSON", "김가상"), ("PERSON", "가상님"), rid="doc-7")
    with pytest.raises(NERDataError) as info:
        gold_spans(record)
    message = str(info.value)
    assert "doc-7" in message and "(3, 6)" in message and "(4, 7)" in message
    assert "김가상" not in message and "가상님" not in message


def test_nested_occurrences_are_rejected():
    record = _record("RRN 900101-1234567", ("RRN", "900101-1234567"), ("DOB", "900101"))
    with pytest.raises(NERDataError, match="overlap"):
        gold_spans(record)


def test_a_gold_value_missing_from_the_source_is_an_error_without_the_value():
    with pytest.raises(NERDataError) as info:
        gold_spans(_record("고객 이름 없음", ("PERSON", "김가상")))
    assert "PERSON" in str(info.value) and "김가상" not in str(info.value)


def test_a_type_outside_LABELS_is_an_error_without_echo():
    with pytest.raises(NERDataError) as info:
        gold_spans(_record("고객 김가상", ("김가상", "PERSON")))
    assert "김가상" not in str(info.value)


def test_gold_spans_of_the_corpus_never_overlap(all_records):
    total = 0
    for record in all_records:
        spans = gold_spans(record)
        total += len(spans)
        assert all(a.end <= b.start for a, b in itertools.pairwise(spans))
    assert total > 5000


# --- model-style output and the leak metric ---------------------------------------


def test_spans_become_tsv_rows_once_each_in_source_order():
    text = "김가상님, 김가상님, 010-1234-5678"
    spans = [(12, 25, "PHONE"), (0, 3, "PERSON"), (6, 9, "PERSON")]
    assert spans_to_model_output(text, spans) == "PERSON\t김가상\nPHONE\t010-1234-5678"
    assert spans_to_model_output(text, []) == ""


def test_a_value_with_line_breaks_becomes_one_row_that_still_masks_the_original():
    source = "이름: 김\n가\n상 (확인)"
    record = _record(source, ("PERSON", "김가상"))
    spans = gold_spans(record)
    assert spans == [(4, 9, "PERSON")]
    output = spans_to_model_output(source, spans)
    assert output == "PERSON\t김 가 상"
    result = evaluate([record], model_predictions([record], [spans]))
    assert result.documents.leak_rate == 0.0
    assert result.entities.hallucination_rate == 0.0


def test_gold_spans_fed_through_the_bridge_leak_nothing_on_the_corpus(all_records):
    # A sanity check of the span -> TYPE<TAB>VALUE -> mask path, not a model result.
    predictions = model_predictions(all_records, [gold_spans(r) for r in all_records])
    result = evaluate(all_records, predictions)
    assert result.documents.leak_rate == 0.0
    assert result.entities.leak_rate == 0.0
    assert result.entities.hallucination_rate == 0.0
    assert result.parse.success_rate == 1.0
    assert result.tokenization.round_trip_rate == 1.0
    assert result.tokenization.deterministic_rate == 1.0
    # Variant spellings (김 가 상 for 김가상) are written as seen, so pair-level F1 is
    # below 1 while nothing leaks: entity F1 is not span F1 (docs/contract.md, section 6).
    assert 0.95 < result.entity.f1 < 1.0
    assert result.entity.precision < 1.0


def test_model_predictions_need_one_span_list_per_record():
    with pytest.raises(ValueError):
        model_predictions([_record("x")], [])


# --- export rows ---------------------------------------------------------------


@pytest.fixture(scope="module")
def encoder_tokenizer(corpus):
    pytest.importorskip("transformers", reason=TRAIN_EXTRA)
    return ner.train_encoder_tokenizer(corpus["train"])


@pytest.fixture(scope="module")
def encoder_tokenizer_dir(encoder_tokenizer, tmp_path_factory):
    path = tmp_path_factory.mktemp("encoder-tokenizer")
    encoder_tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def word_tokenizer_dir(corpus, tmp_path_factory):
    """A word-level tokenizer: "김가상님" is one token, so the name cannot be tagged."""
    pytest.importorskip("transformers", reason=TRAIN_EXTRA)
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator([r["source_text"] for r in corpus["train"]],
                            trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]"]))
    path = tmp_path_factory.mktemp("word-tokenizer")
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]",
                            pad_token="[PAD]").save_pretrained(path)
    return path


def _first_korean_record_with_a_name(corpus):
    return next(r for r in corpus["test"] if r["language"] == "ko"
                and any(e["type"] == "PERSON" for e in r["entities"]))


@pytest.mark.train
def test_an_exported_row_has_the_layout_and_the_course_numbering(corpus, encoder_tokenizer):
    record = _first_korean_record_with_a_name(corpus)
    row = ner.export_row(record, encoder_tokenizer)
    assert tuple(row) == EXPORT_COLUMNS
    assert row["uid"] == record["id"] and row["split"] == "test" and row["language"] == "ko"
    assert row["source_dataset"].startswith("piilab-synthetic-")
    pairs = [(e["type"], e["value"]) for e in record["entities"]]
    assert row["masked_text"] == mask_text(record["source_text"], pairs).masked_text
    assert [(e["start"], e["end"], e["label"]) for e in row["privacy_mask"]] == \
        gold_spans(record)
    assert all(row["source_text"][e["start"]:e["end"]] == e["value"] for e in row["privacy_mask"])
    assert set(row["token_classes"]) <= set(bioes_classes(LABELS))
    ids = encoder_tokenizer.convert_tokens_to_ids(row["tokens"])
    assert ids == encoder_tokenizer(row["source_text"], add_special_tokens=False)["input_ids"]
    assert verify_row(row) == []


@pytest.mark.train
@pytest.mark.parametrize("tamper", ["tags", "masked", "value", "offsets", "length"])
def test_verify_row_catches_a_tampered_row_without_echoing_text(corpus, encoder_tokenizer,
                                                               tamper):
    record = _first_korean_record_with_a_name(corpus)
    row = json.loads(json.dumps(ner.export_row(record, encoder_tokenizer)))
    first = row["privacy_mask"][0]
    value = first["value"]
    if tamper == "tags":
        index = row["token_classes"].index(next(t for t in row["token_classes"] if t != "O"))
        row["token_classes"][index] = "O"
    elif tamper == "masked":
        row["masked_text"] = row["masked_text"].replace("[PERSON_1]", value, 1)
    elif tamper == "value":
        first["value"] = value[::-1]
    elif tamper == "offsets":
        first["end"] += 1
        first["value"] = row["source_text"][first["start"]:first["end"]]
    else:
        row["tokens"].pop()
    problems = verify_row(row)
    assert problems
    assert all(value not in p and record["id"] in p for p in problems)


def test_row_mapping_leaves_placeholders_that_were_already_in_the_source():
    source = "[PERSON_1] 님과 김가상 님"
    record = _record(source, ("PERSON", "김가상"))
    mask = mask_text(source, [("PERSON", "김가상")])
    assert mask.masked_text == "[PERSON_1] 님과 [PERSON_2] 님"
    row = {"source_text": source, "masked_text": mask.masked_text,
           "privacy_mask": [{"label": "PERSON", "start": 14, "end": 17, "value": "김가상"}]}
    assert gold_spans(record) == [(14, 17, "PERSON")]
    assert row_mapping(row) == {"[PERSON_2]": "김가상"}


@pytest.mark.train
def test_a_misaligned_record_is_an_error_naming_position_and_offsets_or_is_skipped(
        corpus, word_tokenizer_dir):
    import re

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(word_tokenizer_dir)
    records = corpus["validation"][:40]
    with pytest.raises(MisalignedRecordError) as info:
        ner.export_rows(records, tokenizer)
    message = str(info.value)
    assert "inside a token" in message or "no token" in message
    position = re.match(r"record (\d+): ", message)  # its place, never its id (issue 26, D4)
    assert position, message
    bad = records[int(position.group(1)) - 1]
    assert bad["id"] not in message
    assert all(e["value"] not in message for e in bad["entities"])
    with pytest.raises(MisalignedRecordError, match=r"^v\.jsonl:\d+: "):
        ner.export_rows(records, tokenizer, where=[f"v.jsonl:{i}" for i in range(1, 41)])

    result = ner.export_rows(records, tokenizer, skip_misaligned=True)
    assert result.skipped and len(result.rows) + len(result.skipped) == len(records)
    assert all(verify_row(row) == [] for row in result.rows)
    skipped_ids = {uid for uid, _ in result.skipped}
    assert bad["id"] in skipped_ids


@pytest.mark.train
def test_alignment_report_counts_misaligned_spans_by_reason(corpus, encoder_tokenizer,
                                                           word_tokenizer_dir):
    from transformers import AutoTokenizer

    records = corpus["validation"]
    clean = ner.alignment_report(records, encoder_tokenizer)
    assert clean["records"] == 200 and clean["spans"] > 500
    assert clean["misaligned_spans"] == clean["misaligned_records"] == 0
    report = ner.alignment_report(records, AutoTokenizer.from_pretrained(word_tokenizer_dir))
    assert report["misaligned_records"] > 0
    assert sum(report["reasons"].values()) == report["misaligned_spans"]
    assert 0 < len(report["examples"]) <= 20
    text = json.dumps(report, ensure_ascii=False)
    assert all(e["value"] not in text for r in records for e in r["entities"])


def test_a_slow_tokenizer_is_refused():
    class Slow:
        is_fast = False

    with pytest.raises(TypeError, match="fast tokenizer"):
        ner.export_row(_record("김가상", ("PERSON", "김가상")), Slow())


# --- the command line --------------------------------------------------------------


def test_read_export_reads_rows_back_and_names_a_bad_line(tmp_path):
    from piilab.inputs import InputError

    rows = [{"uid": "r1", "source_text": "김가상 님", "privacy_mask": []},
            {"uid": "r2", "source_text": "Hi", "privacy_mask": []}]
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows) + "\n",
                    encoding="utf-8")
    assert ner.read_export(path) == rows  # the blank last line is skipped
    path.write_text(json.dumps(rows[0], ensure_ascii=False) + '\n{"uid": "김가상\n',
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"test\.jsonl:2: malformed JSON") as info:
        ner.read_export(path)
    assert "김가상" not in str(info.value)


@pytest.fixture()
def run(monkeypatch, capsys):
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("piilab.cli.ner",))

    def invoke(*args: str):
        code = cli.main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.slow
@pytest.mark.train
def test_export_ner_writes_the_whole_corpus_that_datasets_loads(run, dataset_dir, corpus,
                                                                encoder_tokenizer_dir, tmp_path):
    datasets = pytest.importorskip("datasets", reason=TRAIN_EXTRA)
    out = tmp_path / "ner"
    code, stdout, _ = run("export-ner", dataset_dir, "--tokenizer", encoder_tokenizer_dir,
                          "--out", out)
    assert code == 0, stdout
    assert "2200 rows" in stdout and "0 misaligned" in stdout
    manifest = json.loads((out / "export_manifest.json").read_text())
    assert manifest["splits"] == {"train": {"rows": 1600}, "validation": {"rows": 200},
                                  "test": {"rows": 400}}
    assert manifest["token_classes"] == list(bioes_classes(LABELS))
    assert manifest["skipped"] == {"train": [], "validation": [], "test": []}
    assert _mode(out) == 0o700
    for split in ("train", "validation", "test"):
        for suffix in ("jsonl", "parquet"):
            assert _mode(out / f"{split}.{suffix}") == 0o600
    # The manifest holds no text from the data.
    manifest_text = (out / "export_manifest.json").read_text()
    assert all(e["value"] not in manifest_text for e in corpus["test"][0]["entities"])

    cache = tmp_path / "hf-cache"
    for split, records in corpus.items():
        from_json = datasets.load_dataset("json", data_files={split: str(out / f"{split}.jsonl")},
                                          cache_dir=str(cache))[split]
        from_parquet = datasets.load_dataset(
            "parquet", data_files={split: str(out / f"{split}.parquet")},
            cache_dir=str(cache))[split]
        assert from_json.column_names == list(EXPORT_COLUMNS)
        assert from_parquet.column_names == list(EXPORT_COLUMNS)
        assert len(from_json) == len(from_parquet) == len(records)
        assert from_json.to_list() == from_parquet.to_list()
        for record, row in zip(records, from_parquet, strict=True):
            assert row["uid"] == record["id"]
            assert row["source_text"] == record["source_text"]
            assert (row["split"], row["language"]) == (record["split"], record["language"])
            assert [(e["start"], e["end"], e["label"]) for e in row["privacy_mask"]] == \
                gold_spans(record)
            assert verify_row(row) == [], record["id"]


@pytest.mark.train
def test_export_ner_stops_at_a_misaligned_record_unless_told_to_skip(run, dataset_dir, corpus,
                                                                      word_tokenizer_dir,
                                                                      tmp_path):
    out = tmp_path / "ner"
    code, _, err = run("export-ner", dataset_dir, "--tokenizer", word_tokenizer_dir, "--out", out,
                       "--split", "validation", "--format", "jsonl")
    assert code == 2
    assert "validation.jsonl:" in err and "--skip-misaligned" in err
    assert "record validation-" not in err  # records are named by line, never by id
    assert all(e["value"] not in err for r in corpus["validation"] for e in r["entities"])
    assert not out.exists() or not any(out.iterdir())

    code, stdout, _ = run("export-ner", dataset_dir, "--tokenizer", word_tokenizer_dir, "--out",
                          out, "--split", "validation", "--format", "jsonl", "--skip-misaligned")
    assert code == 0
    manifest = json.loads((out / "export_manifest.json").read_text())
    skipped = manifest["skipped"]["validation"]
    assert skipped and manifest["splits"]["validation"]["rows"] + len(skipped) == 200
    assert sorted(p.name for p in out.iterdir()) == ["export_manifest.json", "validation.jsonl"]
    assert f"{len(skipped)} misaligned records skipped" in stdout


@pytest.mark.train
def test_export_ner_reports_bad_inputs(run, dataset_dir, tmp_path):
    # `export-ner` loads the tokenizer with transformers
    pytest.importorskip("transformers", reason=TRAIN_EXTRA)
    code, _, err = run("export-ner", tmp_path / "missing", "--tokenizer", tmp_path, "--out",
                       tmp_path / "o")
    assert code == 2 and "not a directory" in err
    code, _, err = run("export-ner", dataset_dir, "--tokenizer", tmp_path / "no-tokenizer",
                       "--out", tmp_path / "o")
    assert code == 2 and "cannot load a tokenizer" in err


def test_export_ner_is_a_registered_command():
    assert "piilab.cli.ner" in cli.COMMAND_MODULES
    parser = cli.build_parser()
    args = parser.parse_args(["export-ner", "data", "--tokenizer", "t", "--out", "o"])
    assert args.func.__module__ == "piilab.cli.ner"


def test_importing_the_ner_modules_stays_standard_library():
    import subprocess

    code = ("import sys\nimport piilab.bioes, piilab.ner, piilab.taxonomy, piilab.cli.ner\n"
            "heavy = [m for m in ('torch', 'transformers', 'tokenizers', 'datasets', 'pyarrow',"
            " 'numpy', 'yaml', 'seqeval') if m in sys.modules]\nassert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True)
