"""Execute the chapters for the book build, two at a time, into its cache (`.jupyter_cache`).

    .venv/bin/python tools/execute_chapters.py            # every chapter not cached yet
    .venv/bin/python tools/execute_chapters.py --jobs 1   # one at a time

`jupyter-book build` executes the chapters one after another (`execute_notebooks: cache`).
This script runs them first, `--jobs` kernels at a time (default: the number of CPUs, at most
2), exactly as myst-nb would: the chapter read with myst-nb's own MyST reader after the book
extension's substitutions (the course's address, `piilab.course.links`), executed with
jupyter-cache's `single_nb_execution` in the chapter's folder with the book's cell timeout,
and stored in the cache under the chapter's path. The build then finds every chapter cached
and executes none; `tools/check_twins.py` compares these runs with the committed twins.

A chapter that fails here is not cached: the script says which and exits 1, and the build
executes it again itself and shows its traceback. Nothing is printed of a chapter's outputs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_notebooks import BOOK_CACHE, REPO, chapter_sources, configured_links


def read_chapter(source: Path) -> nbformat.NotebookNode:
    """The chapter as the book build reads it (the key of its cache entry)."""
    from myst_nb.core.read import read_myst_markdown_notebook

    text = configured_links().expand(source.read_text(encoding="utf-8"))
    return read_myst_markdown_notebook(text, add_source_map=True, path=str(source))


def cell_timeout() -> int:
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    return int(config.get("execute", {}).get("timeout", 300))


def run(source: str, timeout: int) -> tuple[str, dict | None, float, str | None]:
    """Execute one chapter in a fresh kernel in its folder (in a worker process)."""
    from jupyter_cache.executors.utils import single_nb_execution

    path = Path(source)
    notebook = read_chapter(path)
    result = single_nb_execution(notebook, cwd=str(path.parent), allow_errors=False,
                                 timeout=timeout, meta_override=True)
    if result.err is not None:
        return source, None, result.time, type(result.err).__name__
    return source, notebook, result.time, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", help="chapter .md files (default: all)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(str(BOOK_CACHE))
    pending = []
    for source in chapter_sources(args.sources):
        try:
            cache.match_cache_notebook(read_chapter(source))
        except KeyError:
            pending.append(source)
    # The longest chapters first, so that two kernels stay busy to the end.
    pending.sort(key=lambda p: p.stat().st_size, reverse=True)
    print(f"execute_chapters: {len(pending)} chapter(s) to run, {args.jobs} at a time")
    started, failed = time.perf_counter(), []
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run, str(p), cell_timeout()) for p in pending]
        for future in as_completed(futures):
            source, notebook, seconds, error = future.result()
            name = Path(source).relative_to(REPO)
            if error:
                failed.append(name)
                print(f"{name}: failed ({error}) after {seconds:.0f} s; the build runs it again")
                continue
            cache.cache_notebook_bundle(
                CacheBundleIn(nbformat.from_dict(notebook), source,
                              data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True)
            print(f"{name}: {seconds:.1f} s")
    print(f"execute_chapters: done in {time.perf_counter() - started:.0f} s, "
          f"{len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
