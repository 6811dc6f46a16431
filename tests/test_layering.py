"""The package's floors: the library never imports the course wing, the CLI or training code.

Checked on the source (every ``import``/``from ... import`` statement, at any depth, lazy
imports included), so a lazy import inside a function counts as much as a top-level one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "piilab"

#: Modules of the reference implementation: standard library only, and only each other.
CORE = ("labels", "checksums", "templates", "generator", "dataset", "files", "matching",
        "parsing", "tokenization", "predictions", "evaluation", "baseline", "splits",
        "augment", "bioes", "safety", "masking", "records", "errors", "inputs",
        "pools", "safe_values", "templating")


def _module_name(path: Path, root: Path = PACKAGE.parent) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, root: Path = PACKAGE.parent) -> set[str]:
    """Every module `path` imports (absolute names; relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


#: Every module outside the course wing.
OUTSIDE_COURSE = sorted(p for p in PACKAGE.rglob("*.py")
                        if not _module_name(p).startswith("piilab.course"))


def test_the_scan_sees_lazy_and_relative_imports(tmp_path):
    folder = tmp_path / "piilab" / "sub"
    folder.mkdir(parents=True)
    source = folder / "probe.py"
    source.write_text("def f():\n    from piilab.course import quiz\n    import torch\n"
                      "    from ..labels import LABELS\n    from . import sibling\n")
    found = _imports(source, tmp_path)
    assert {"piilab.course", "piilab.course.quiz", "torch", "piilab.labels",
            "piilab.sub.sibling"} <= found


@pytest.mark.parametrize("path", OUTSIDE_COURSE, ids=lambda p: _module_name(p))
def test_nothing_outside_the_course_wing_imports_it(path):
    offenders = sorted(n for n in _imports(path) if n.startswith("piilab.course"))
    assert not offenders, f"{_module_name(path)} imports the course wing: {offenders}"


@pytest.mark.parametrize("name", CORE)
def test_the_core_imports_only_the_core_and_the_standard_library(name):
    import sys

    # A core module may be a package (``splits/``): every file of it is held to the rule.
    paths = [PACKAGE / f"{name}.py"] if (PACKAGE / f"{name}.py").exists() \
        else sorted((PACKAGE / name).rglob("*.py"))
    assert paths, f"piilab.{name}: no such module or package"
    allowed = {f"piilab.{other}" for other in CORE} | {"piilab"}
    for imported in (i for path in paths for i in _imports(path)):
        top = imported.split(".")[0]
        if top == "piilab":
            module = ".".join(imported.split(".")[:2])
            assert module in allowed or imported in allowed or \
                imported.rsplit(".", 1)[0] in allowed, f"piilab.{name} imports {imported}"
        else:
            assert top in sys.stdlib_module_names or top == "__future__", \
                f"piilab.{name} imports {imported}, outside the standard library"
