"""Where a chapter runs: its language and the course files it reads.

A chapter's code cells are byte-identical in English and Japanese (a parity test enforces it),
so anything that depends on the reader's language is resolved here, at run time:

- `page_language()` tells which track a notebook belongs to: `PIILAB_LANG` if set, else the
  folder it runs in (`book/ja`, `notebooks/ja`, ...), else, on Colab, the notebook's own
  metadata (`piilab.language`), else English.
- `repo_root()` and `quiz_path()` find course files from wherever the notebook runs.
- `say(key, **fields)` is a label a chapter prints (``"16 test documents: ..."``), in the
  page's language, from the message data ``piilab/course/messages/<lang>.json`` (which
  textlint reads, like the checkers' messages), so the code cell stays the same in both tracks.
"""

from __future__ import annotations

import json
import os
from functools import cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from piilab.errors import PiilabError

#: The two tracks of the course. A chapter exists under the same file name in both.
LANGUAGES: tuple[str, ...] = ("en", "ja")



class LanguageError(PiilabError):
    """A language the course has no text for (the course speaks `LANGUAGES`)."""


class MessageKeyError(PiilabError, KeyError):
    """A message key that a catalog lacks, or a field its template needs (a `KeyError`
    too, as a lookup that fails)."""

    def __str__(self) -> str:  # the message as written, not KeyError's quoted repr
        return str(self.args[0]) if self.args else ""

def page_language(default: str = "en") -> str:
    """The language of the notebook that is running: `"en"` or `"ja"`.

    Resolution order: the environment variable `PIILAB_LANG`; the current folder when it is
    `<...>/book/<lang>` or `<...>/notebooks/<lang>` (Jupyter Book and nbval run a chapter in its
    own folder); on Colab, the `piilab.language` field of the notebook's metadata; `default`.

    """
    forced = os.environ.get("PIILAB_LANG", "").strip()
    if forced:
        if forced not in LANGUAGES:
            raise LanguageError(f"PIILAB_LANG must be one of {LANGUAGES}")
        return forced
    cwd = Path.cwd()
    if cwd.name in LANGUAGES and cwd.parent.name in ("book", "notebooks"):
        return cwd.name
    return _colab_notebook_language() or default


def _colab_notebook_language() -> str | None:
    """Best effort: read `metadata.piilab.language` of the open notebook on Colab, else None.

    Colab runs a notebook opened from GitHub in `/content`, which says nothing about its
    language; its front end can hand the kernel the notebook itself. Outside Colab, or if that
    private API changes, this returns None and the caller falls back to its default.
    """
    try:
        from google.colab import _message  # type: ignore[import-not-found]

        notebook = _message.blocking_request("get_ipynb", timeout_sec=5)["ipynb"]
        language = notebook["metadata"]["piilab"]["language"]
    except Exception:
        return None
    return language if language in LANGUAGES else None


def repo_root(start: Path | str | None = None) -> Path:
    """The course repository's root: the nearest folder at or above `start` (default: the
    current folder) that holds `_toc.yml` and `book/`.

    Raises FileNotFoundError, saying where it looked, when there is none (for example a
    notebook copied out of the repository).
    """
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file() and (folder / "book").is_dir():
            return folder
    raise FileNotFoundError(
        f"no PII Lab repository (a folder with _toc.yml and book/) at or above {here}; "
        "run the notebook from inside a clone of the course repository"
    )


def quiz_path(chapter: str, lang: str | None = None) -> Path:
    """The quiz file of `chapter` (e.g. `"01_architecture"`) for `lang` (default: the page's)."""
    lang = lang or page_language()
    if lang not in LANGUAGES:
        raise LanguageError(f"lang must be one of {LANGUAGES}")
    return repo_root() / "book" / "quizzes" / lang / f"{chapter}.json"


@cache
def page_messages(language: str):
    """The printed labels of `language` ("en" or "ja"): key -> `str.format` template, read-only."""
    if language not in LANGUAGES:
        raise LanguageError(f"no page messages for that language; the languages are "
                            f"{', '.join(LANGUAGES)}")
    path = resources.files("piilab.course").joinpath("messages", f"{language}.json")
    return MappingProxyType(json.loads(path.read_text(encoding="utf-8")))


def say(key: str, /, *, lang: str | None = None, **fields: Any) -> str:
    """The label `key` in `lang` (default: the page's language), formatted with `fields`.

    Raises KeyError naming the key and the file when the catalog lacks it.
    """
    language = lang or page_language()
    try:
        template = page_messages(language)[key]
    except KeyError:
        raise MessageKeyError(f"no page message {key!r} in "
                              f"piilab/course/messages/{language}.json") from None
    return template.format(**fields)
