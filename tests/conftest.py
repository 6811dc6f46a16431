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


@pytest.fixture(scope="module")
def compiled_core():
    """`piilab._fastmask.mask_core` as `mask_text` uses it.

    Skipped where the core is not in use (not built: no C compiler at install
    time; or PIILAB_PURE_PYTHON set), unless PIILAB_REQUIRE_COMPILED=1, which
    `make test` sets where a C compiler works.
    """
    import os

    import piilab.tokenization as tokenization

    if tokenization._compiled_core is None:
        if os.environ.get("PIILAB_REQUIRE_COMPILED") == "1":
            pytest.fail("piilab._fastmask is not in use (PIILAB_REQUIRE_COMPILED=1)")
        pytest.skip("piilab._fastmask is not in use (not built, or PIILAB_PURE_PYTHON set)")
    return tokenization._compiled_core


@pytest.fixture(scope="module", params=["compiled", "python"])
def mask_implementation(request):
    """Run a module's tests once with each implementation of `mask_text` (steps 2-4):
    the compiled core (see `compiled_core`) and the Python reference code."""
    import piilab.tokenization as tokenization

    if request.param == "compiled":
        request.getfixturevalue("compiled_core")
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "python":
            patch.setattr(tokenization, "_compiled_core", None)
        yield request.param
