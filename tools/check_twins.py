"""Compare the committed twins `notebooks/<lang>/NN_name.ipynb` with the book's own fresh run.

    .venv/bin/python tools/check_twins.py            # after `make book-html`
    .venv/bin/python tools/check_twins.py book/en/07_inference.md ...

`make book-html` executes every chapter once (myst-nb, `execute_notebooks: cache`) and keeps the
executed notebooks in `.jupyter_cache`. This script reads those executions and compares them,
cell by cell, with the outputs stored in the twins, under the rules nbval applies (`make
nbval-strict` runs nbval itself, re-executing every twin): streams by name, every output type
except the PNG/JPEG images (whose provenance `build_notebooks.py --check` checks instead), the
sanitizers of `notebooks/nbval_sanitize.cfg`, quiz cells tagged `nbval-ignore-output` skipped,
and no cell may raise. The comparison reads an execution only if its code is the chapter's code
now; a chapter that the cache lacks, or holds for older code, is an error ("run make
book-html"), never a pass. The Makefile drops the cache whenever piilab, a quiz or the book
extension changes, so an execution found here ran on the current code.

Why not nbval alone: CI would execute all twenty chapters twice (the book, then nbval); this
check gives the same verdict on the book's run. Exit status 1 when a twin differs.
"""

from __future__ import annotations

import argparse
import configparser
import re
import sys
from collections import defaultdict
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_notebooks import (
    BOOK_CACHE,
    REPO,
    book_execution,
    chapter_sources,
    coalesce_streams,
    configured_links,
    md_to_notebook,
    shown_outputs,
    twin_path,
)

SANITIZE = REPO / "notebooks" / "nbval_sanitize.cfg"
#: As nbval (without --nbdime): keys never compared.
SKIP = {
    "metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
    "application/vnd.jupyter.widget-view+json", "image/png", "image/jpeg",
}
IGNORE_TAGS = {"nbval-ignore-output", "nbval-skip"}


def sanitizers(path: Path = SANITIZE) -> list[tuple[re.Pattern[str], str]]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path, encoding="utf-8")
    return [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]


def sanitize(value, patterns):
    if not isinstance(value, str):
        return value
    for regex, replace in patterns:
        value = regex.sub(replace, value)
    return value


def comparable(outputs: list, patterns, expand=lambda s: s) -> dict[str, list]:
    """nbval's view of a cell's outputs: key -> the sanitized values, in order."""
    view: dict[str, list] = defaultdict(list)
    for output in coalesce_streams([nbformat.from_dict(o) for o in outputs]):
        if output.output_type == "stream":
            view[output.name].append(sanitize(expand(output.text), patterns))
            continue
        for key, value in output.items():
            if key in SKIP:
                continue
            if key == "data":
                for mime, data in value.items():
                    if mime not in SKIP:
                        if isinstance(data, list):
                            data = "".join(data)
                        view[mime].append(sanitize(expand(data), patterns))
            else:
                view[key].append(sanitize(value, patterns))
    return dict(view)


def compare(source: Path, cache, patterns, twin_file: Path | None = None) -> list[str]:
    """Why the twin of `source` (`twin_file`, default its twin under notebooks/) differs from
    the book's run; empty when it does not."""
    twin_file = twin_file or twin_path(source)
    name = source.name
    executed = book_execution(source, cache)
    if executed is None:
        return [f"{name}: not executed by the book (run make book-html first)"]
    links = configured_links()
    fresh = [c for c in executed.cells if c.cell_type == "code"]
    wanted = [c for c in md_to_notebook(source, links).cells if c.cell_type == "code"]
    if [links.expand(c.source) for c in fresh] != [c.source for c in wanted]:
        return [f"{name}: the book's cached run is for other code (run make book-html)"]
    twin = nbformat.read(twin_file, as_version=4)
    stored = [c for c in twin.cells if c.cell_type == "code"]
    if len(stored) != len(fresh):
        return [f"{name}: the twin has {len(stored)} code cells, the chapter {len(fresh)}"]
    problems = []
    for index, (ref, new) in enumerate(zip(stored, fresh, strict=True)):
        label = f"{twin_file.parent.name}/{twin_file.name}: code cell {index + 1}"
        if any(o.get("output_type") == "error" for o in new.get("outputs", [])):
            problems.append(f"{label}: raised an error in the book's run")
            continue
        if IGNORE_TAGS & set(ref.get("metadata", {}).get("tags", [])):
            continue
        want = comparable(shown_outputs(ref), patterns)
        got = comparable(shown_outputs(new), patterns, links.expand)
        if want != got:
            problems.append(label + ": outputs differ\n" + describe(want, got))
    return problems


def describe(want: dict, got: dict) -> str:
    lines = []
    for key in sorted(set(want) | set(got)):
        if want.get(key) != got.get(key):
            lines.append(f"  [{key}] stored:")
            lines += ["    " + line for line in "".join(map(str, want.get(key, []))).splitlines()]
            lines.append(f"  [{key}] book's run:")
            lines += ["    " + line for line in "".join(map(str, got.get(key, []))).splitlines()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", help="chapter .md files (default: all)")
    args = parser.parse_args(argv)
    from jupyter_cache import get_cache

    if not BOOK_CACHE.is_dir():
        print("check_twins: no .jupyter_cache (run make book-html first)", file=sys.stderr)
        return 1
    cache = get_cache(str(BOOK_CACHE))
    patterns = sanitizers()
    sources = chapter_sources(args.sources)
    problems = [p for source in sources for p in compare(source, cache, patterns)]
    for problem in problems:
        print(problem)
    print(f"check_twins: {len(sources)} chapters, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
