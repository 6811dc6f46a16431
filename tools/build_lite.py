"""Build the in-browser exercises: a JupyterLite site whose Pyodide kernel runs chapters 00-05.

    .venv/bin/python tools/build_lite.py                 # into _build/html/lite (make lite)
    .venv/bin/python tools/build_lite.py --out DIR
    .venv/bin/python tools/build_lite.py --offline       # no download: fail if a wheel is missing

The site is static and self-contained: a learner's browser loads the JupyterLite app, the
Pyodide runtime and every Python wheel from the site itself, never from a CDN or PyPI
(tests/test_lite.py checks it in Chromium). The work is split by job in `tools/lite/`:

- `lite.paths`: where the build reads and writes, the chapters it takes (`_config.yml`:
  `sphinx.config.piilab_lite_chapters`, the same list the book's "open in the browser"
  buttons use), and `BuildError`;
- `lite.wheels`: the Python side. The JupyterLite app and the Pyodide kernel are the Python
  packages `jupyterlite-core` and `jupyterlite-pyodide-kernel` (the `lite` extra); the Pyodide
  runtime is the npm package `pyodide` (package.json / package-lock.json, `npm ci`), whose
  version must be the one the kernel was built for; the pure-Python wheels the kernel and the
  chapters load are pinned with their PyPI hashes in `tools/lite-requirements.txt`, downloaded
  once into `.cache/lite/wheels/` (the only step that needs the network) and listed, with the
  kernel's own wheels, in a rebuilt `pyodide-lock.json`. PyYAML (no pure-Python wheel on PyPI)
  is its sdist repacked without the C extension; jupyterquiz is patched not to load MathJax
  from a CDN (`WHEEL_PATCHES`). `piilab` is a wheel built from the checkout, served from the
  site's piplite index; each notebook's set-up cell installs it;
- `lite.notebooks`: the executed twins `notebooks/<lang>/NN_*.ipynb`, changed where Pyodide
  differs (see `lite_notebook`): the Colab set-up cell becomes the Pyodide one; a cell that
  needs matplotlib, Faker or another process keeps its code, commented out, and the book's
  output follows it in a Markdown cell, so *Run All* never wipes a figure; solutions become
  closed `<details>` in Markdown, so *Run All* neither runs nor shows them; answer cells lose
  the stored verdict; code cells are marked trusted; MyST admonitions become Markdown. The
  contents mirror the repository's layout (`_toc.yml`, `book/quizzes/`, `data/manifest.json`,
  `data/holdout/`) so that `piilab.course.lang` works unchanged in the browser;
- `lite.site`: the JupyterLite settings (only the Pyodide kernel; no PyPI fallback; the
  kernel's start-up packages loaded by Pyodide in one parallel step), `jupyter lite build`,
  and the checks of the result.

The built site's `piilab-lite.json` records the versions and the chapters.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lite.paths import REPO, BuildError, lite_config
from lite.site import build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: _build/html/<piilab_lite_path>)")
    parser.add_argument("--offline", action="store_true",
                        help="do not download the pinned wheels; fail if one is missing")
    parser.add_argument("--source", type=Path, default=REPO,
                        help="the checkout to take piilab, the notebooks, quizzes and data "
                             "from (default: this one), e.g. a snapshot made with "
                             "`git archive HEAD | tar -x -C DIR`")
    args = parser.parse_args(argv)
    out = (args.out or REPO / "_build" / "html" / lite_config()[1]).resolve()
    try:
        info = build(out, args.offline, args.source.resolve())
    except BuildError as error:
        print(f"build_lite: {error}", file=sys.stderr)
        return 1
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"build_lite: {len(info['notebooks'])} notebooks, Pyodide {info['versions']['pyodide']}, "
          f"{size / 1e6:.1f} MB in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
