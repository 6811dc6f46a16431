"""Regenerate the executed twins `notebooks/<lang>/NN_name.ipynb` of `book/<lang>/NN_name.md`.

    .venv/bin/python tools/build_notebooks.py                  # every chapter, both languages
    .venv/bin/python tools/build_notebooks.py book/en/01_architecture.md ...
    .venv/bin/python tools/build_notebooks.py --check          # exit 1 if a twin is stale

Each chapter (a jupytext MyST-Markdown notebook) is converted with jupytext, its links to other
chapters are pointed at the `.ipynb` twins, and it is executed with nbclient in the twin's own
folder, `notebooks/<lang>/` (the folder nbval runs it in, too). The result is written with
stable cell ids and no timing metadata, so re-running an unchanged chapter changes nothing.
These twins are the references nbval compares a fresh run with, and the Colab targets.

The course's address is written once, in `_config.yml` (`repository.url`, `repository.branch`,
read with PyYAML). Chapter sources carry placeholders instead (`@REPOSITORY_URL@`,
`@REPOSITORY_BRANCH@`, `@COLAB_PATH@`: `piilab.course.links.CourseLinks`), filled in here in every
cell of a twin. The hand-written Colab notebooks `notebooks/colab/*.ipynb` are opened straight
from GitHub, so they hold the address itself: every run re-points their Colab links and their
`pip install git+...` source at the configured repository, in place.

`--check` does not execute anything: it compares the sources (cells and tags) of the committed
twins with what the `.md` files would produce, checks that each twin's figures were drawn by
the current plotting code (`FIGURE_CODE`; the hashes are recorded in the twin's metadata when
it is executed), and checks that the Colab notebooks point at the configured repository.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

from piilab.course.links import CourseLinks, course_links

REPO = Path(__file__).resolve().parent.parent
#: The one file that names the course's repository (and Colab).
CONFIG = REPO / "_config.yml"
#: Hand-written notebooks opened from GitHub (not built from a chapter).
COLAB_NOTEBOOKS = REPO / "notebooks" / "colab"
LANGUAGES = ("en", "ja")
CHAPTER_FILE = re.compile(r"^\d\d_[A-Za-z0-9_]+\.md$")
#: A Markdown link to a chapter: `](../ja/01_architecture.md)` or `](02_data.md#anchor)`.
CHAPTER_LINK = re.compile(r"\]\(((?:\.\./(?:en|ja)/)?\d\d_[A-Za-z0-9_]+)\.md(#[^)\s]*)?\)")
#: In a Colab notebook: a link that opens one of the course's notebooks (up to `notebooks/`) ...
COLAB_NOTEBOOK_LINK = re.compile(
    r"https://[A-Za-z0-9.-]+/github/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/blob/[^\s\"'\\]+?/(?=notebooks/)"
)
#: ... and the pip requirement that installs piilab from the repository (`git+URL[@ref]`).
PIP_GIT_SOURCE = re.compile(
    r"git\+https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?(?:\.git)?(?:@[^\s\"'\\]+)?"
    r"(?=[\s\"'\\]|$)"
)
#: The code that draws the chapters' figures (besides the chapter cells themselves, which the
#: source comparison covers). A twin records its hash, so a figure drawn by older plotting
#: code is found stale without executing anything (nbval does not compare images).
FIGURE_CODE = ("piilab/course/plots.py", "piilab/course/plots_splits.py",
               "piilab/course/diagram.py", "piilab/course/ch01.py")
FIGURE_KEY = "piilab_figures"
IMAGE_TYPES = ("image/png", "image/svg+xml")
CELL_TIMEOUT_S = 600
KERNEL = "python3"


def configured_links() -> CourseLinks:
    """The course's address as `_config.yml` (`CONFIG`) gives it."""
    return course_links(CONFIG)


def chapter_sources(paths: list[str] | None = None) -> list[Path]:
    """The chapter `.md` files to convert: `paths`, or every `book/<lang>/NN_name.md`."""
    if paths:
        return [Path(p).resolve() for p in paths]
    return sorted(
        path for lang in LANGUAGES for path in (REPO / "book" / lang).glob("*.md")
        if CHAPTER_FILE.match(path.name)
    )


def twin_path(source: Path) -> Path:
    """`book/<lang>/NN_name.md` -> `notebooks/<lang>/NN_name.ipynb`."""
    return REPO / "notebooks" / source.parent.name / source.with_suffix(".ipynb").name


def md_to_notebook(source: Path, links: CourseLinks | None = None) -> nbformat.NotebookNode:
    """The unexecuted twin of `source`: jupytext conversion, the course's address filled in
    (`links`, default `configured_links()`), chapter links rewritten to `.ipynb`, stable cell
    ids, minimal metadata."""
    links = links or configured_links()
    notebook = jupytext.read(source, fmt="md:myst")
    notebook.metadata.pop("jupytext", None)
    notebook.metadata["language_info"] = {"name": "python"}
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index:03d}"
        cell.source = links.expand(cell.source)
        if cell.cell_type == "markdown":
            cell.source = CHAPTER_LINK.sub(lambda m: f"]({m[1]}.ipynb{m[2] or ''})", cell.source)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return notebook


def execute(notebook: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    """Run every cell in a fresh kernel started in `cwd`; a cell error raises."""
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name=KERNEL,
        resources={"metadata": {"path": str(cwd)}},
        record_timing=False,
        allow_errors=False,
    )
    client.execute()
    notebook.metadata["language_info"] = {"name": "python"}  # drop the kernel's version details
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.outputs)
    return notebook


def coalesce_streams(outputs: list) -> list:
    """Merge consecutive stdout (stderr) outputs into one, as a reader sees them.

    `print()` may reach the kernel client as one message or as several, depending on timing;
    merging makes the stored notebook the same on every run.
    """
    merged: list = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (
            output.output_type == "stream"
            and previous is not None
            and previous.output_type == "stream"
            and previous.name == output.name
        ):
            previous.text += output.text
        else:
            merged.append(output)
    return merged


def source_view(notebook: nbformat.NotebookNode) -> list[tuple[str, str, list[str]]]:
    """What `--check` compares: per cell, its type, source and tags (no outputs)."""
    return [
        (cell.cell_type, cell.source, list(cell.get("metadata", {}).get("tags", [])))
        for cell in notebook.cells
    ]


def figure_code_sha256() -> str:
    digest = hashlib.sha256()
    for name in FIGURE_CODE:
        digest.update(name.encode() + b"\0" + (REPO / name).read_bytes() + b"\0")
    return digest.hexdigest()


def image_hashes(notebook: nbformat.NotebookNode) -> list[str]:
    """The SHA-256 of every image output, in cell order."""
    hashes = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            for mime in IMAGE_TYPES:
                if mime in output.get("data", {}):
                    hashes.append(hashlib.sha256(str(output["data"][mime]).encode()).hexdigest())
    return hashes


def record_figures(notebook: nbformat.NotebookNode) -> None:
    """Write the figures' provenance into the twin: the plotting code and the images."""
    images = image_hashes(notebook)
    notebook.metadata.pop(FIGURE_KEY, None)
    if images:
        notebook.metadata[FIGURE_KEY] = {"code_sha256": figure_code_sha256(), "images": images}


def check_figures(notebook: nbformat.NotebookNode) -> str | None:
    """Why the twin's figures are not those of the current plotting code, or None."""
    images = image_hashes(notebook)
    if not images:
        return None
    recorded = notebook.metadata.get(FIGURE_KEY)
    if not recorded:
        return "has figures without a record of the code that drew them"
    if recorded.get("images") != images:
        return "has figures that differ from the ones recorded when it was executed"
    if recorded.get("code_sha256") != figure_code_sha256():
        return ("has figures drawn by older plotting code ("
                + ", ".join(FIGURE_CODE) + " changed since)")
    return None


def build(source: Path) -> Path:
    target = twin_path(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    notebook = execute(md_to_notebook(source), cwd=target.parent)
    record_figures(notebook)
    nbformat.validate(notebook)
    nbformat.write(notebook, target)
    return target


BOOK_CACHE = REPO / ".jupyter_cache"


def shown_outputs(cell) -> list:
    """The outputs of a code cell as the book shows them: without its stderr streams when
    the cell says ``mystnb: {output_stderr: remove}`` (chapter 10's Ray cell, whose stderr
    holds Ray's own log lines, with times and ids), else all of them."""
    outputs = list(cell.get("outputs", []))
    setting = cell.get("metadata", {}).get("mystnb", {}).get("output_stderr")
    if setting in ("remove", "remove-warn"):
        outputs = [o for o in outputs
                   if not (o.get("output_type") == "stream" and o.get("name") == "stderr")]
    return outputs


def book_execution(source: Path, cache) -> nbformat.NotebookNode | None:
    """The newest execution of the chapter `source` held in the book build's cache
    (`.jupyter_cache`, written by `jupyter-book build`), or None."""
    source = source.resolve()
    records = [r for r in cache.list_cache_records() if Path(r.uri).resolve() == source]
    if not records:
        return None
    return cache.get_cache_bundle(max(records, key=lambda r: r.created).pk).nb


def build_from_book(source: Path, cache) -> Path:
    """The twin of `source` with the outputs of the book build's run of the same code (no
    second execution). Refuses when the book has not run the chapter's current code."""
    links = configured_links()
    notebook = md_to_notebook(source, links)
    executed = book_execution(source, cache)
    if executed is None:
        raise SystemExit(f"{source.relative_to(REPO)}: not executed by the book (make book-html)")
    fresh = [c for c in executed.cells if c.cell_type == "code"]
    cells = [c for c in notebook.cells if c.cell_type == "code"]
    if [links.expand(c.source) for c in fresh] != [c.source for c in cells]:
        raise SystemExit(f"{source.relative_to(REPO)}: the book ran other code (make book-html)")
    for cell, ran in zip(cells, fresh, strict=True):
        outputs = coalesce_streams([nbformat.from_dict(o) for o in shown_outputs(ran)])
        for output in outputs:
            if output.output_type == "error":
                raise SystemExit(f"{source.relative_to(REPO)}: a cell raised in the book's run")
            if output.output_type == "stream":
                output.text = links.expand(output.text)
            for mime, data in output.get("data", {}).items():
                if isinstance(data, str) and not mime.startswith("image/"):
                    output["data"][mime] = links.expand(data)
        cell.outputs = outputs
        cell.execution_count = ran.get("execution_count")
    record_figures(notebook)
    nbformat.validate(notebook)
    target = twin_path(source)
    nbformat.write(notebook, target)
    return target


def check(source: Path) -> str | None:
    """A reason why the committed twin of `source` is stale, or None."""
    target = twin_path(source)
    if not target.exists():
        return f"{target.relative_to(REPO)} is missing"
    committed = nbformat.read(target, as_version=4)
    expected = md_to_notebook(source)
    if source_view(committed) != source_view(expected):
        return f"{target.relative_to(REPO)} does not match {source.relative_to(REPO)}"
    unexecuted = [
        i for i, cell in enumerate(committed.cells)
        if cell.cell_type == "code" and cell.execution_count is None
    ]
    if unexecuted:
        return f"{target.relative_to(REPO)} has unexecuted code cells {unexecuted}"
    stale = check_figures(committed)
    if stale:
        return f"{target.relative_to(REPO)} {stale}: run make notebooks"
    return None


def colab_notebooks() -> list[Path]:
    return sorted(COLAB_NOTEBOOKS.glob("*.ipynb"))


def point_at_repository(text: str, links: CourseLinks) -> str:
    """`text` (a Colab notebook's JSON) with its Colab links to course notebooks and its
    `git+https://github.com/...` pip source pointing at `links`' repository and branch."""
    text = COLAB_NOTEBOOK_LINK.sub(lambda m: f"{links.colab_url}/{links.colab_path}/", text)
    return PIP_GIT_SOURCE.sub(lambda m: f"git+{links.repository_url}@{links.branch}", text)


def sync_colab(path: Path, links: CourseLinks | None = None) -> bool:
    """Re-point the Colab notebook `path` at the configured repository; True if it changed."""
    text = path.read_text(encoding="utf-8")
    updated = point_at_repository(text, links or configured_links())
    if updated != text:
        path.write_text(updated, encoding="utf-8")
    return updated != text


def check_colab(path: Path, links: CourseLinks | None = None) -> str | None:
    """A reason why the Colab notebook `path` points elsewhere than `_config.yml`, or None."""
    text = path.read_text(encoding="utf-8")
    if point_at_repository(text, links or configured_links()) != text:
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        return f"{shown} does not point at the repository in _config.yml"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", help="chapter .md files (default: all)")
    parser.add_argument(
        "--check", action="store_true", help="only check that the twins are current"
    )
    parser.add_argument(
        "--from-book", action="store_true",
        help="take the outputs from the book build's run (.jupyter_cache) instead of executing"
    )
    args = parser.parse_args(argv)
    sources = chapter_sources(args.sources)
    if args.from_book:
        from jupyter_cache import get_cache

        cache = get_cache(str(BOOK_CACHE))
        for source in sources:
            print(f"{build_from_book(source, cache).relative_to(REPO)}  (from the book's run)")
        return 0
    if args.check:
        problems = [p for p in map(check, sources) if p]
        problems += [p for p in map(check_colab, colab_notebooks()) if p]
        for problem in problems:
            print(f"stale: {problem} (run `make notebooks`)", file=sys.stderr)
        return 1 if problems else 0
    for notebook in colab_notebooks():
        if sync_colab(notebook):
            print(f"{notebook.relative_to(REPO)}  (re-pointed at the repository in _config.yml)")
    for source in sources:
        started = time.perf_counter()
        target = build(source)
        print(f"{target.relative_to(REPO)}  ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
