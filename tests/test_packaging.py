"""Packaging: the conda environment installs what pyproject.toml declares."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ENV_EXTRAS = ("book", "train", "test", "finance", "wide", "scale")


def _pip_section(text: str) -> list[str]:
    """The entries under `- pip:` in environment.yml (parsed without a YAML library)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"\s*-\s*pip:\s*$", line))
    indent = None
    out = []
    for line in lines[start + 1:]:
        if not line.strip() or line.strip().startswith("#"):
            continue
        m = re.match(r"(\s*)-\s+(.*?)\s*$", line)
        if not m:
            break
        if indent is None:
            indent = len(m.group(1))
        if len(m.group(1)) != indent:
            break
        out.append(m.group(2))
    return out


def _normalize(req: str) -> str:
    return re.sub(r"\s+", "", req).lower()


@pytest.fixture(scope="module")
def pyproject():
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_environment_pip_part_matches_pyproject_extras(pyproject):
    entries = _pip_section((REPO / "environment.yml").read_text())
    assert "-e ." in entries
    extras = pyproject["project"]["optional-dependencies"]
    expected = {_normalize(r) for name in ENV_EXTRAS for r in extras[name]}
    got = {_normalize(e) for e in entries if e != "-e ."}
    assert got == expected


def test_core_depends_on_pyyaml_only(pyproject):
    # The taxonomy file is YAML (piilab.taxonomy); everything else is the standard library
    # (tests/test_layering.py checks the core modules' imports).
    assert pyproject["project"]["dependencies"] == ["PyYAML>=6.0,<7"]


def test_moving_apis_have_floor_and_ceiling(pyproject):
    train = {_normalize(r).split(">")[0]: _normalize(r) for r in
             pyproject["project"]["optional-dependencies"]["train"]}
    for name in ("transformers", "trl", "peft"):
        assert ">=" in train[name] and "<" in train[name].split(">=")[1], name


def test_constraints_pin_the_cpu_torch_wheel():
    lines = [x.strip() for x in (REPO / "constraints.txt").read_text().splitlines()]
    assert "torch==2.13.0" in lines


def test_every_module_imports_without_the_heavy_stack():
    """Heavy libraries are imported inside functions only, so `import piilab.x` is cheap."""
    import subprocess
    import sys

    code = (
        "import sys, piilab\n"
        "for m in ('labels','checksums','generator','dataset','matching','parsing',"
        "'tokenization','predictions','evaluation','inference','baseline','splits','augment','bioes',"
        "'taxonomy','ner','sft','train','tiny','tracking','fast_generate','_compat'):\n"
        "    __import__('piilab.' + m)\n"
        "heavy = [m for m in ('torch','transformers','trl','numpy','matplotlib','datasets')"
        " if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

