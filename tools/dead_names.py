"""Fail on public names that `piilab` defines and nothing uses (``make lint`` runs it).

    python tools/dead_names.py

A *top-level public name* is a function, class or variable defined at the top of a module
of ``piilab/`` whose name does not start with ``_``. It is *used* when something refers to
it:

* Python code in ``piilab/``, ``tools/``, ``benchmarks/`` or ``tests/``: a name, an
  attribute, an ``import`` of it, or a string equal to it (``getattr(module, "name")``,
  the lazy exports of ``piilab/__init__.py``). Its own definition does not count, nor
  its entry in its module's ``__all__``, nor a package ``__init__`` re-exporting it from
  one of its own submodules;
* the text of the book (``book/**/*.md``) or of the behaviour contract
  (``docs/contract.md``, and ``../shared/SPEC.md`` when that file is present): the name as
  a whole word.

A name used nowhere is dead: delete it, or, if it must stay (a name that outside code is
promised), add it to `ALLOWED` with the reason. The check reads files only (the AST of
each Python file); it imports nothing.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "piilab"
CODE_DIRS = ("piilab", "tools", "benchmarks", "tests")
TEXTS = ("book/**/*.md", "docs/**/*.md")
SPEC = ROOT.parent / "shared" / "SPEC.md"

#: Names kept although nothing in the repository uses them, each with its reason.
ALLOWED: dict[str, str] = {
    "main": "the entry point of a module run as a program (python -m, console scripts)",
}

def _module(path: Path) -> str:
    parts = (path.relative_to(ROOT) if path.is_relative_to(ROOT) else Path(path.name)
             ).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def definitions(path: Path) -> list[tuple[str, int]]:
    """``(name, line)`` of every top-level public name defined in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append((node.name, node.lineno))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [(t.id, node.lineno) for t in targets if isinstance(t, ast.Name)]
    return [(name, line) for name, line in found
            if not name.startswith("_") and not (name.startswith("__") and name.endswith("__"))]


def _all_strings(tree: ast.Module) -> set[int]:
    """The ids of the string nodes of ``__all__ = [...]`` (they define, not use)."""
    ids: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                ids |= {id(n) for n in ast.walk(node) if isinstance(n, ast.Constant)}
    return ids


def code_uses(path: Path) -> tuple[Counter[str], set[str]]:
    """The names the Python file `path` uses from elsewhere (attributes, imports, strings),
    and the names it reads as plain names (which count only for its own definitions: a
    local variable elsewhere that happens to share a name uses nothing)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = _module(path)
    own_package = module if path.name == "__init__.py" else None
    skipped = _all_strings(tree)
    uses: Counter[str] = Counter()
    loads: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load | ast.Del):
            loads.add(node.id)
        elif isinstance(node, ast.Attribute):
            uses[node.attr] += 1
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if own_package and node.level == 0 and source.startswith(own_package + "."):
                continue  # a package re-exporting its own submodules' names
            for alias in node.names:
                uses[alias.name] += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in skipped and node.value.isidentifier():
            uses[node.value] += 1
    return uses, loads


def text_files() -> list[Path]:
    files = [p for pattern in TEXTS for p in sorted(ROOT.glob(pattern))]
    return files + ([SPEC] if SPEC.is_file() else [])


def dead_names() -> list[tuple[str, str, int]]:
    """``(path, name, line)`` of every public name of ``piilab/`` that nothing uses."""
    uses: Counter[str] = Counter()
    loads: dict[Path, set[str]] = {}
    for folder in CODE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            used, loads[path] = code_uses(path)
            uses.update(used)
    candidates = [(path, name, line) for path in sorted(PACKAGE.rglob("*.py"))
                  for name, line in definitions(path)]
    used_at_home = {name for path, name, _ in candidates if name in loads[path]}
    unused = {name for _, name, _ in candidates
              if not uses[name] and name not in used_at_home and name not in ALLOWED}
    if unused:
        words = re.compile(r"\b(" + "|".join(map(re.escape, sorted(unused))) + r")\b")
        for path in text_files():
            unused -= set(words.findall(path.read_text(encoding="utf-8")))
    return [(str(path.relative_to(ROOT)), name, line) for path, name, line in candidates
            if name in unused]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    dead = dead_names()
    for path, name, line in dead:
        print(f"{path}:{line}: {name} is defined but used nowhere (tools/dead_names.py)")
    return 1 if dead else 0


if __name__ == "__main__":
    sys.exit(main())
