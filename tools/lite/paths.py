"""Where the lite build reads and writes, the chapters it takes, and its one error type."""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent.parent
CONFIG = REPO / "_config.yml"
REQUIREMENTS = REPO / "tools" / "lite-requirements.txt"
WHEEL_CACHE = REPO / ".cache" / "lite" / "wheels"
PYODIDE_NPM = REPO / "node_modules" / "pyodide"
#: The JupyterLite source folder (config, static/pyodide, pypi, contents); rebuilt every time.
STAGING = REPO / "_build" / "lite-src"
LANGUAGES = ("en", "ja")


class BuildError(RuntimeError):
    pass



def lite_config() -> tuple[list[str], str]:
    """The chapters (two-digit prefixes) and the site's folder under the HTML output."""
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    sphinx = (config.get("sphinx") or {}).get("config") or {}
    chapters = [str(c) for c in sphinx.get("piilab_lite_chapters") or []]
    if not chapters:
        raise BuildError(f"{CONFIG.name}: sphinx.config.piilab_lite_chapters is empty")
    return chapters, str(sphinx.get("piilab_lite_path") or "lite")


def chapter_notebooks(source: Path, chapters: list[str]) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for lang in LANGUAGES:
        folder = source / "notebooks" / lang
        found[lang] = []
        for prefix in chapters:
            matches = sorted(folder.glob(f"{prefix}_*.ipynb"))
            if len(matches) != 1:
                raise BuildError(f"expected one notebooks/{lang}/{prefix}_*.ipynb, found {matches}")
            found[lang].append(matches[0])
    return found
