"""Where the course lives, and what each chapter's Colab set-up cell installs.

The course's address is written once, as `repository.url` (and `repository.branch`) in
`_config.yml`. Chapter sources carry the placeholders of `piilab.course.links.CourseLinks`
in their Colab
badge and Colab set-up cell; the book's Sphinx extension (`source-read`) and
`tools/build_notebooks.py` (the notebook twins) fill them in, and the build tool re-points the
hand-written Colab notebooks `notebooks/colab/*.ipynb`. A fork changes that one value.

Each chapter's first cell (Colab only) clones the course and installs `piilab` with the extras
of `pyproject.toml` that the chapter's imports need: `colab` (the quiz widget, the plots' CJK
font) everywhere, `train` where a chapter trains or loads a model.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

import jupytext
import pytest
import yaml

from piilab.course import links as course_links_mod

REPO = Path(__file__).resolve().parent.parent
LANGS = ("en", "ja")
CHAPTERS = sorted(p.stem for p in (REPO / "book" / "en").glob("*.md")
                  if re.match(r"^\d\d_", p.stem))
PAGES = [(lang, chapter) for chapter in CHAPTERS for lang in LANGS]
FORK = course_links_mod.CourseLinks("https://github.com/a-fork/course-copy", branch="teaching")


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tool():
    return _load(REPO / "tools" / "build_notebooks.py", "build_notebooks")


@pytest.fixture(scope="module")
def extension():
    return _load(REPO / "book" / "_ext" / "piilab_book.py", "piilab_book")


@pytest.fixture(scope="module")
def configured() -> course_links_mod.CourseLinks:
    return course_links_mod.CourseLinks.from_config(
        yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8")))


def _fork_config(tmp_path: Path) -> Path:
    """A copy of `_config.yml` with only the repository changed, as a fork would have it."""
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    config["repository"].update(url=FORK.repository_url, branch=FORK.branch)
    path = tmp_path / "_config.yml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- one place


def _scanned_files() -> list[Path]:
    """Chapter sources, quizzes, the book extension, tools, tests and the package, plus the
    packaging files: everything that must not spell the address itself."""
    roots = [REPO / "book", REPO / "piilab", REPO / "tools", REPO / "tests"]
    files = [REPO / name for name in ("pyproject.toml", "environment.yml", "Makefile")]
    for root in roots:
        files += [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                  and p.suffix not in {".pyc", ".so", ".png", ".svg", ".woff", ".woff2"}]
    return [p for p in files if p.is_file()]


def test_only_the_config_spells_the_repository_address(configured):
    owner_name = configured.repository_url.removeprefix("https://github.com/")
    literals = (configured.repository_url, f"/github/{owner_name}/")
    offenders = [
        str(path.relative_to(REPO)) for path in _scanned_files()
        if any(literal in path.read_text(encoding="utf-8", errors="ignore")
               for literal in literals)
    ]
    assert not offenders, (
        f"write a placeholder of piilab.course.links.CourseLinks instead: {offenders}")
    assert configured.repository_url in (REPO / "_config.yml").read_text(encoding="utf-8")


def test_course_links_reads_the_config(configured, tmp_path):
    assert course_links_mod.course_links() == configured
    assert course_links_mod.course_links(REPO / "_config.yml") == configured
    assert course_links_mod.course_links(_fork_config(tmp_path)) == FORK
    assert course_links_mod.colab_url("00_welcome", "ja", FORK) == (
        "https://colab.research.google.com/github/a-fork/course-copy/blob/teaching/"
        "notebooks/ja/00_welcome.ipynb")


def test_course_links_refuses_what_colab_cannot_open(tmp_path):
    with pytest.raises(ValueError, match=r"github\.com"):
        course_links_mod.CourseLinks("https://gitlab.com/someone/piilab")
    empty = tmp_path / "_config.yml"
    empty.write_text("title: x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"repository\.url"):
        course_links_mod.course_links(empty)


@pytest.mark.parametrize(("lang", "chapter"), PAGES)
def test_chapter_sources_use_placeholders(lang, chapter):
    text = (REPO / "book" / lang / f"{chapter}.md").read_text(encoding="utf-8")
    top = text.split("\n## ", 1)[0]
    badge = f"](https://colab.research.google.com/@COLAB_PATH@/notebooks/{lang}/{chapter}.ipynb)"
    assert badge in top
    assert "--branch @REPOSITORY_BRANCH@ @REPOSITORY_URL@ /content/piilab" in _first_cell(
        lang, chapter)


# ---------------------------------------------------------------------------- the twins


@pytest.mark.parametrize(("lang", "chapter"), PAGES)
def test_builder_fills_in_the_configured_address(tool, configured, lang, chapter):
    notebook = tool.md_to_notebook(REPO / "book" / lang / f"{chapter}.md")
    everything = "\n".join(cell.source for cell in notebook.cells)
    assert not any(p in everything for p in course_links_mod.PLACEHOLDERS)
    markdown = next(c.source for c in notebook.cells if c.cell_type == "markdown")
    assert f"]({configured.colab(f'notebooks/{lang}/{chapter}.ipynb')})" in markdown
    first = next(c for c in notebook.cells if c.cell_type == "code")
    assert "remove-cell" in first.metadata.get("tags", [])
    clone = (f"!git clone --quiet --depth 1 --branch {configured.branch} "
             f"{configured.repository_url} /content/piilab")
    assert clone in first.source


def test_a_fork_changes_one_value_and_the_twins_follow(tool, configured, tmp_path, monkeypatch):
    source = REPO / "book" / "en" / "06_finetuning.md"
    before = tool.md_to_notebook(source)
    monkeypatch.setattr(tool, "CONFIG", _fork_config(tmp_path))
    after = tool.md_to_notebook(source)
    text_before = "\n".join(c.source for c in before.cells)
    text_after = "\n".join(c.source for c in after.cells)
    assert configured.repository_url in text_before
    assert configured.repository_url not in text_after
    assert FORK.repository_url not in text_before
    first = next(c for c in after.cells if c.cell_type == "code")
    assert f"--branch teaching {FORK.repository_url} /content/piilab" in first.source
    badge = ("https://colab.research.google.com/github/a-fork/course-copy/blob/teaching/"
             "notebooks/en/06_finetuning.ipynb")
    assert badge in after.cells[0].source
    # The link to the Colab GPU notebook in the chapter body follows too.
    assert FORK.colab("notebooks/colab/finetune_lora.ipynb") in text_after
    # Only the address changed.
    assert text_after == text_before.replace(configured.repository_url, FORK.repository_url) \
        .replace(configured.colab_path, FORK.colab_path) \
        .replace(f"--branch {configured.branch} ", f"--branch {FORK.branch} ")


# ---------------------------------------------------------------------------- the Colab notebooks


def test_colab_notebooks_point_at_the_configured_repository(tool):
    notebooks = tool.colab_notebooks()
    assert notebooks
    for path in notebooks:
        assert tool.check_colab(path) is None


def test_colab_notebooks_follow_a_fork(tool, configured, tmp_path, monkeypatch):
    for path in tool.colab_notebooks():
        copy = tmp_path / path.name
        copy.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
        assert tool.sync_colab(copy, configured) is False  # already current: untouched
        assert tool.sync_colab(copy, FORK) is True
        text = copy.read_text(encoding="utf-8")
        assert configured.repository_url not in text
        assert f"piilab[colab,train,wide] @ git+{FORK.repository_url}@{FORK.branch}" in text
        assert FORK.colab(f"notebooks/colab/{path.name}") in text
        assert tool.check_colab(copy, FORK) is None
        assert tool.check_colab(copy, configured) is not None
        # Links elsewhere are left alone.
        other = "https://colab.research.google.com/github/other/repo/blob/main/demo.ipynb"
        assert tool.point_at_repository(other, FORK) == other


# ---------------------------------------------------------------------------- the book


def _sphinx_app(config_path: Path) -> SimpleNamespace:
    """What the extension sees: the Sphinx configuration Jupyter Book derives from the file."""
    from jupyter_book.config import get_final_config

    config, _ = get_final_config(user_yaml=config_path, cli_config={"latex_individualpages": False},
                                 sourcedir=REPO)
    return SimpleNamespace(config=SimpleNamespace(html_theme_options=config["html_theme_options"]))


def test_book_extension_fills_in_the_address_at_source_read(extension, configured, tmp_path):
    text = (REPO / "book" / "ja" / "00_welcome.md").read_text(encoding="utf-8")
    for config_path, links in ((REPO / "_config.yml", configured),
                               (_fork_config(tmp_path), FORK)):
        source = [text]
        extension._expand_placeholders(_sphinx_app(config_path), "book/ja/00_welcome", source)
        assert not any(p in source[0] for p in course_links_mod.PLACEHOLDERS)
        assert f"]({links.colab('notebooks/ja/00_welcome.ipynb')})" in source[0]
        assert f"--branch {links.branch} {links.repository_url} /content/piilab" in source[0]
        assert f"git clone {links.repository_url} piilab" in source[0]
    untouched = ["# A page without placeholders"]
    extension._expand_placeholders(SimpleNamespace(), "index", untouched)
    assert untouched == ["# A page without placeholders"]


def test_book_extension_points_the_colab_button_at_the_twin(extension, configured):
    button = {"text": "Colab", "url": "source.md"}
    context = {"header_buttons": [{"label": "launch-buttons", "buttons": [button]}]}
    extension._adjust_page(_sphinx_app(REPO / "_config.yml"), "book/en/03_tokenization",
                           "page.html", context, None)
    assert button["url"] == configured.colab("notebooks/en/03_tokenization.ipynb")


# ---------------------------------------------------------------------------- what Colab installs

#: Imports that need an extra of pyproject.toml on Colab (matched on the imported dotted name and
#: each of its prefixes). Colab has matplotlib, numpy, IPython, nbformat, PyYAML and jsonschema,
#: pandas, but not jupyterquiz, the CJK font, or the training stack at the versions piilab pins.
EXTRA_OF = {
    "jupyterquiz": "colab",
    "noto_cjk_sans_otc": "colab",
    "piilab.course.quiz": "colab",  # show_quiz renders with jupyterquiz
    "piilab.course.plots": "colab",  # the CJK font (noto-cjk-sans-otc)
    "piilab.course.plots_splits": "colab",
    **dict.fromkeys(("torch", "transformers", "peft", "trl", "datasets", "accelerate",
                     "mlflow", "gguf"), "train"),
    **dict.fromkeys(("piilab.train", "piilab.sft", "piilab.tiny", "piilab.models"), "train"),
    # piilab.inference: the model-facing helpers; make_prediction and parse_flag are plain Python
    **dict.fromkeys(("piilab.inference.load_for_inference", "piilab.inference.generate",
                     "piilab.inference.prompt_ids", "piilab.inference.predict_records"), "train"),
    # the finance dataset (chapter 09): o200k tokens (bpe-openai) and its Parquet files
    "piilab.finance": "finance",
    "bpe_openai": "finance",
    # the wide corpus (chapters 02, 05, 06): Faker's name lists
    "piilab.wide": "wide",
    "faker": "wide",
    # masking a corpus (chapter 10): Ray Data, and pyarrow for the Parquet files
    "piilab.corpus_mask": "scale",
    "ray": "scale",
    "pyarrow": "scale",
}
#: Third-party modules Colab already has.
ON_COLAB = {"matplotlib", "numpy", "pandas", "IPython", "nbformat", "yaml", "jsonschema"}
#: Chapters whose Colab cell also fetches a pretrained base model.
FETCHED_MODEL = {"06_finetuning": "smollm2-135m", "07_inference": "smollm2-135m"}
INSTALL = re.compile(r'^\s+!pip install --quiet -e "/content/piilab\[(?P<extras>[a-z,]+)\]"$', re.M)


def _code_cells(lang: str, chapter: str) -> list:
    notebook = jupytext.read(REPO / "book" / lang / f"{chapter}.md", fmt="md:myst")
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def _first_cell(lang: str, chapter: str) -> str:
    return _code_cells(lang, chapter)[0].source


def _imported_names(source: str) -> set[str]:
    """Dotted names a cell imports (`from a.b import c` gives `a.b.c`); shell and magic lines
    are blanked first."""
    python = "\n".join(
        re.sub(r"^(\s*)[!%].*$", r"\1pass", line) for line in source.splitlines()
    )
    names = set()
    for node in ast.walk(ast.parse(python)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _needed_extras(names: set[str]) -> set[str]:
    extras = set()
    for name in names:
        parts = name.split(".")
        prefixes = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        extras.update(EXTRA_OF[p] for p in prefixes if p in EXTRA_OF)
        top = parts[0]
        known = (top in sys.stdlib_module_names or top == "piilab" or top in ON_COLAB
                 or top in EXTRA_OF)
        assert known, f"{name}: add its top-level module to EXTRA_OF or ON_COLAB"
    return extras


def _pyproject_extras() -> dict[str, list[str]]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def test_colab_extra_is_what_colab_lacks_and_matches_the_book():
    extras = _pyproject_extras()
    names = {re.split(r"[<>=!~ ;\[]", req, maxsplit=1)[0].lower() for req in extras["colab"]}
    assert names == {"jupyterquiz", "noto-cjk-sans-otc"}
    # The same pins as the book extra, so a local build and Colab render with the same versions.
    assert set(extras["colab"]) <= set(extras["book"])


@pytest.mark.parametrize(("lang", "chapter"), PAGES)
def test_first_cell_installs_the_extras_the_chapter_imports(lang, chapter):
    cells = _code_cells(lang, chapter)
    first = cells[0].source
    assert "remove-cell" in cells[0].metadata.get("tags", [])
    assert 'if "google.colab" in sys.modules:' in first
    installs = INSTALL.findall(first)
    assert len(installs) == 1, f"{lang}/{chapter}: want one `pip install -e` of the clone"
    extras = set(installs[0].split(","))
    assert extras <= set(_pyproject_extras()), f"{lang}/{chapter}: unknown extra in {extras}"
    imported = set().union(*(_imported_names(cell.source) for cell in cells))
    needed = _needed_extras(imported) | {"colab"}
    assert extras == needed, f"{lang}/{chapter}: installs {sorted(extras)}, needs {sorted(needed)}"
    model = FETCHED_MODEL.get(chapter)
    fetches = re.findall(r"^\s+!piilab fetch-model (\S+)$", first, re.M)
    assert fetches == ([model] if model else []), f"{lang}/{chapter}: fetch-model {fetches}"
    if fetches:
        assert "train" in extras  # fetch-model reads the GGUF file with the train extra's gguf
        assert first.index("!pip install") < first.index("!piilab fetch-model")


def test_import_scan_sees_the_training_stack():
    names = _imported_names('import os\n!pip install x\nfrom piilab.inference import generate\n'
                            'from piilab.course import plots\nimport transformers.utils\n')
    assert _needed_extras(names) == {"train", "colab"}
    assert _needed_extras(_imported_names(
        "from piilab.inference import make_prediction, parse_flag")) == set()
