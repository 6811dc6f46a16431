"""Shared fixtures. The default corpus is generated once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def record(source: str, *pairs: tuple[str, str], id: str = "r1", split: str = "train",
           language: str = "ko", template_id: str = "fam", ordered: bool = True,
           **metadata) -> dict:
    """A record built as the generators build theirs (`piilab.records.new_record`).

    ``entities`` and ``target_tsv`` are derived from `pairs`; with ``ordered=False`` the
    entities keep the order given (to build records that break the order rule). The one
    way tests build records: through the `make_record` fixture, or this function where a
    record is needed at import time (in a ``parametrize`` list).
    """
    from piilab.records import new_record, target_tsv

    built = new_record(id=id, split=split, language=language, source_text=source,
                       pairs=pairs if ordered else (), template_id=template_id, **metadata)
    if not ordered:
        built["entities"] = [{"type": label, "value": value} for label, value in pairs]
        built["target_tsv"] = target_tsv(built["entities"])
    return built


@pytest.fixture
def make_record():
    """`record`: build a test record (``make_record("김가상 님", ("PERSON", "김가상"))``)."""
    return record


@pytest.fixture(scope="session")
def corpus() -> dict[str, list[dict]]:
    """The default (seed 42) corpus, in memory: {"train": [...], ...}."""
    from piilab.generator import generate_dataset

    return generate_dataset()


@pytest.fixture(scope="session")
def all_records(corpus) -> list[dict]:
    return [r for split in corpus.values() for r in split]


@pytest.fixture(scope="session")
def dataset_dir(tmp_path_factory):
    """The default corpus written by `piilab generate` into a session temp directory.

    Tests must not modify it: copy it first (see tests/test_dataset_cli.py).
    """
    from piilab.cli import main

    d = tmp_path_factory.mktemp("data")
    assert main(["generate", "--out", str(d)]) == 0
    return d


@pytest.fixture(scope="module")
def one_torch_thread():
    """One intra-op thread: the tiny models gain nothing from more, and on a shared,
    oversubscribed CI runner two spinning threads make each step several times slower."""
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)

