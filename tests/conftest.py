"""Shared fixtures. The default corpus is generated once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


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
