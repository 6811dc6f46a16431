"""One base for every error: `piilab.errors.PiilabError` (issue 23, item 4).

Every exception class defined anywhere in `piilab` derives from `PiilabError`, so the
command line prints its (value-free) message and no command needs its own conversion.
Modules that cannot be imported here (an extra is missing) are checked on their source.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import piilab
from piilab.errors import PiilabError

PACKAGE = Path(piilab.__file__).parent
MODULES = sorted(info.name for info in pkgutil.walk_packages([str(PACKAGE)], "piilab.")
                 if not info.name.endswith("__main__"))


def _source_classes(name: str) -> list[tuple[str, list[str]]]:
    """(class name, base names) of every class in the module's source."""
    path = PACKAGE.joinpath(*name.split(".")[1:])
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.name, [ast.unparse(base) for base in node.bases])
            for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


def test_the_walk_finds_the_package():
    assert {"piilab.files", "piilab.cli", "piilab.finance.build", "piilab.errors"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_every_exception_class_derives_from_piilab_error(name):
    try:
        module = importlib.import_module(name)
    except ImportError:  # an extra is missing: judge the source
        for cls, bases in _source_classes(name):
            looks_like_error = cls.endswith(("Error", "Exception")) or any(
                base.endswith(("Error", "Exception", "Interrupt")) for base in bases)
            if looks_like_error:
                assert any(base.endswith("Error") and base != "ValueError"
                           and base not in {"RuntimeError", "TypeError", "OSError"}
                           for base in bases), f"{name}.{cls} has bases {bases}"
        return
    # A private class (``_Misaligned``) is control flow inside its module, never raised out.
    defined = [obj for _, obj in inspect.getmembers(module, inspect.isclass)
               if obj.__module__ == name and issubclass(obj, BaseException)
               and not obj.__name__.startswith("_")]
    for cls in defined:
        assert issubclass(cls, PiilabError), f"{name}.{cls.__name__} does not derive from it"


def test_errors_keep_what_except_clauses_relied_on():
    from piilab.cli import CLIError
    from piilab.files import OutputError
    from piilab.models import ModelError

    assert issubclass(CLIError, PiilabError) and issubclass(OutputError, ValueError)
    assert issubclass(ModelError, RuntimeError)  # "the environment failed" stays a RuntimeError
    assert issubclass(PiilabError, ValueError)


def test_the_cli_prints_any_piilab_error_as_its_one_line(tmp_path, monkeypatch, capsys):
    from piilab import cli
    from piilab.cli import data as data_cli

    class SomeNewError(PiilabError):
        pass

    def failing(args):
        raise SomeNewError("data/x.jsonl:3: field 'entities' is wrong")

    monkeypatch.setattr(data_cli, "cmd_stats", failing)
    assert cli.main(["stats", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "piilab: error: data/x.jsonl:3: field 'entities' is wrong\n"


def _all_subclasses(cls: type) -> set[type]:
    """Every class that derives from `cls`, at any depth."""
    found: set[type] = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_all_subclasses(sub)}
    return found


def test_the_cli_has_no_per_command_conversion_of_library_errors():
    for name in MODULES:  # import what can be imported, so that every subclass is known
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    names = {cls.__name__ for cls in _all_subclasses(PiilabError)
             if cls.__module__.startswith("piilab.") and not cls.__module__.startswith(
                 "piilab.cli") and not cls.__name__.startswith("_")}
    assert {"DatasetError", "SplitError", "LossMaskError", "TaxonomyError"} <= names
    for path in (PACKAGE / "cli").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                caught = {ast.unparse(n) for n in ast.walk(node.type) if isinstance(n, ast.Name)}
                converted = caught & names - ADDS_A_LOCATION.get(path.name, set())
                assert not converted, f"{path.name}:{node.lineno} converts {converted}"


#: Catches that add what the library cannot know, and so are not mere conversions:
#: ``piilab evaluate`` turns the record's position in memory into its ``file:line``, and
#: ``piilab predict`` names the flag (``--model``) whose value the detector rejected, and
#: ``piilab mask`` the line of the candidates file.
ADDS_A_LOCATION = {"evaluation.py": {"EvaluationError"}, "training.py": {"DetectorError"},
                   "masking.py": {"PairError"}}
