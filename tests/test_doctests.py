"""Every ``>>>`` example in `piilab` runs, and shows what it says (issue 36, item 6).

The docstring examples are part of the contract the chapters rely on, so each module's
examples run here as tests, one test per module. A module that needs an optional extra
that is not installed (torch, transformers, ray, mlflow, faker, ...) is skipped with the
missing package named, never reported as passing.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import piilab

PACKAGE = Path(piilab.__file__).parent
MODULES = sorted(info.name for info in pkgutil.walk_packages([str(PACKAGE)], "piilab.")
                 if not info.name.endswith("__main__"))


def _import(name: str):
    """The module, or a skip naming the missing third-party package."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing and missing != "piilab":
            pytest.skip(f"{name} needs {missing!r}, an optional extra that is not installed")
        raise


def _examples(module) -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, module.__name__) if t.examples]


def test_the_walk_finds_modules_with_examples():
    assert {"piilab.masking", "piilab.splits.audit", "piilab.records"} <= set(MODULES)
    import piilab.splits.audit

    assert {t.name.rpartition(".")[2] for t in _examples(piilab.splits.audit)} >= {
        "audit_splits"}


def test_a_missing_extra_is_a_skip_that_names_it(monkeypatch):
    def missing(name):
        raise ModuleNotFoundError("No module named 'faker'", name="faker")

    monkeypatch.setattr(importlib, "import_module", missing)
    with pytest.raises(pytest.skip.Exception, match="needs 'faker'"):
        _import("piilab.wide")


@pytest.mark.parametrize("name", ["piilab", *MODULES])
def test_the_examples_of_every_module_run(name):
    tests = _examples(_import(name))
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    failed = [t.name for t in tests if runner.run(t, out=report.append).failed]
    assert not failed, f"failing examples in {name}: {failed}\n" + "".join(report)
