"""The predictions file (`piilab.predictions`): one row shape, one writer, one reader."""

from __future__ import annotations

import json
import stat

import pytest

from piilab.dataset import DatasetError
from piilab.predictions import (
    PredictionError,
    make_prediction,
    read_predictions,
    validate_predictions,
    write_predictions,
)

SOURCE = "고객 김가상 님, 연락처 010-0123-4567"
SECRET_OUTPUT = "PERSON\t김가상\nPHONE\t010-0123-4567"


def test_a_row_carries_the_parse_flag_of_the_parser():
    row = make_prediction("d1", SECRET_OUTPUT, SOURCE)
    assert row == {"id": "d1", "output": SECRET_OUTPUT, "parse_success": True}
    assert make_prediction("d2", "", SOURCE)["parse_success"] is True  # "no PII"
    assert make_prediction("d3", "I cannot help", SOURCE)["parse_success"] is False


def test_written_owner_only_and_read_back(tmp_path):
    rows = [make_prediction("d1", SECRET_OUTPUT, SOURCE), make_prediction("d2", "", SOURCE)]
    path = tmp_path / "preds.jsonl"
    assert write_predictions(path, rows) == 2
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_predictions(path) == rows
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert list(json.loads(first)) == ["id", "output", "parse_success"]  # sorted keys


def test_extra_fields_are_not_written(tmp_path):
    path = tmp_path / "preds.jsonl"
    write_predictions(path, [{**make_prediction("d1", "", SOURCE), "source_text": SOURCE}])
    assert "김가상" not in path.read_text(encoding="utf-8")


@pytest.mark.parametrize(("rows", "reason"), [
    ([{"output": SECRET_OUTPUT, "parse_success": True}], "missing string field 'id'"),
    ([{"id": "d1", "output": 3, "parse_success": True}], "field 'output' must be a string"),
    ([{"id": "d1", "output": SECRET_OUTPUT, "parse_success": "yes"}],
     "field 'parse_success' must be true or false"),
    ([make_prediction("d1", "", SOURCE)] * 2, "duplicate prediction id"),
])
def test_bad_rows_are_named_without_their_output(rows, reason):
    with pytest.raises(PredictionError) as info:
        validate_predictions(rows)
    assert info.value.reason == reason
    assert "김가상" not in str(info.value) and "010-0123" not in str(info.value)


def test_an_unknown_record_is_refused_only_when_records_are_given():
    rows = [make_prediction("elsewhere", "", SOURCE)]
    assert list(validate_predictions(rows)) == ["elsewhere"]
    with pytest.raises(PredictionError, match="prediction for record elsewhere: no such record"):
        validate_predictions(rows, ["d1"])


def test_a_broken_file_names_the_line(tmp_path):
    path = tmp_path / "preds.jsonl"
    path.write_text(json.dumps(make_prediction("d1", "", SOURCE)) + "\n{not json\n")
    with pytest.raises(DatasetError, match=r"preds.jsonl:2"):
        read_predictions(path)
    path.write_text(json.dumps({"id": "d1", "output": SECRET_OUTPUT}) + "\n")
    with pytest.raises(PredictionError, match=r"record d1: field 'parse_success'") as info:
        read_predictions(path)
    assert "김가상" not in str(info.value)
