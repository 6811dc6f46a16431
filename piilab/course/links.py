"""The course's address: its repository, the branch readers get, and Colab.

It is written once, as `repository.url` and `repository.branch` in `_config.yml`; chapter
sources carry the placeholders of `CourseLinks.expand` instead, which the book's Sphinx
extension (`book/_ext/piilab_book.py`) and `tools/build_notebooks.py` fill in from that file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piilab.course.lang import repo_root
from piilab.errors import PiilabError

#: The book's configuration, at the repository root: the one place that names the course's
#: repository (`repository.url`, `repository.branch`) and Colab (`launch_buttons.colab_url`).
CONFIG_FILE = "_config.yml"
#: Used when `_config.yml` leaves `repository.branch` or `launch_buttons.colab_url` out.
DEFAULT_BRANCH = "main"
DEFAULT_COLAB_URL = "https://colab.research.google.com"
#: What chapter sources write instead of the address (see `CourseLinks.expand`).
PLACEHOLDERS: tuple[str, ...] = ("@REPOSITORY_URL@", "@REPOSITORY_BRANCH@", "@COLAB_PATH@")



class LinkConfigError(PiilabError):
    """A `_config.yml` whose repository or launch settings cannot make the course links."""

@dataclass(frozen=True)
class CourseLinks:
    """Where the course lives: its GitHub repository, the branch readers get, and Colab.

    Built from `_config.yml` by `course_links()`; nothing in the package holds a copy.

    >>> links = CourseLinks("https://github.com/OWNER/NAME")
    >>> links.colab("notebooks/en/00_welcome.ipynb")
    'https://colab.research.google.com/github/OWNER/NAME/blob/main/notebooks/en/00_welcome.ipynb'
    >>> links.expand("git clone --branch @REPOSITORY_BRANCH@ @REPOSITORY_URL@")
    'git clone --branch main https://github.com/OWNER/NAME'
    """

    repository_url: str
    branch: str = DEFAULT_BRANCH
    colab_url: str = DEFAULT_COLAB_URL

    def __post_init__(self) -> None:
        object.__setattr__(self, "repository_url", self.repository_url.strip().rstrip("/"))
        object.__setattr__(self, "colab_url", self.colab_url.strip().rstrip("/"))
        if not self.repository_url.startswith("https://github.com/"):
            # Colab opens notebooks from GitHub only (`colab.research.google.com/github/...`).
            raise LinkConfigError(
                f"{CONFIG_FILE}: repository.url must be a https://github.com/OWNER/NAME address"
            )

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> CourseLinks:
        """From the parsed `_config.yml`: `repository.url` (required), `repository.branch`,
        `launch_buttons.colab_url`."""
        repository = config.get("repository") or {}
        url = repository.get("url")
        if not url:
            raise LinkConfigError(f"{CONFIG_FILE} has no repository.url")
        launch = config.get("launch_buttons") or {}
        return cls(
            repository_url=str(url),
            branch=str(repository.get("branch") or DEFAULT_BRANCH),
            colab_url=str(launch.get("colab_url") or DEFAULT_COLAB_URL),
        )

    @property
    def colab_path(self) -> str:
        """`github/OWNER/NAME/blob/BRANCH`: how Colab addresses the repository's files."""
        owner_name = self.repository_url.removeprefix("https://github.com/").removesuffix(".git")
        return f"github/{owner_name}/blob/{self.branch}"

    def colab(self, path: str) -> str:
        """The Colab address that opens the repository's notebook `path` (from the root)."""
        return f"{self.colab_url}/{self.colab_path}/{path.lstrip('/')}"

    def placeholders(self) -> dict[str, str]:
        """Each of `PLACEHOLDERS` and what it stands for: the repository's URL, its branch,
        and `colab_path`."""
        values = (self.repository_url, self.branch, self.colab_path)
        return dict(zip(PLACEHOLDERS, values, strict=True))

    def expand(self, text: str) -> str:
        """`text` with every placeholder of `placeholders()` replaced by its value."""
        for placeholder, value in self.placeholders().items():
            text = text.replace(placeholder, value)
        return text


def course_links(config: Path | str | None = None) -> CourseLinks:
    """The course's address, read from `_config.yml` (PyYAML is imported on use).

    The file is `config` if given; otherwise the `_config.yml` of `repo_root()` (the clone
    the notebook runs in); otherwise, as a fallback, the one of the checkout this package is
    imported from (an editable install, or Colab's `/content/piilab` on `sys.path`). There is
    no built-in copy of the address: outside a clone this raises FileNotFoundError, as
    `quiz_path()` does.
    """
    import yaml

    if config is None:
        candidates = []
        with contextlib.suppress(FileNotFoundError):
            candidates.append(repo_root() / CONFIG_FILE)
        candidates.append(Path(__file__).resolve().parent.parent / CONFIG_FILE)
        config = next((path for path in candidates if path.is_file()), None)
        if config is None:
            raise FileNotFoundError(
                f"no {CONFIG_FILE} found (looked at {', '.join(map(str, candidates))}); "
                "the course's address is read from the repository's configuration"
            )
    data = yaml.safe_load(Path(config).read_text(encoding="utf-8")) or {}
    return CourseLinks.from_config(data)


def colab_url(chapter: str, lang: str, links: CourseLinks | None = None) -> str:
    """The Colab address that opens the executed twin `notebooks/<lang>/<chapter>.ipynb`
    (`links` defaults to `course_links()`, that is `_config.yml`).

    >>> colab_url("00_welcome", "ja", CourseLinks("https://github.com/OWNER/NAME"))
    'https://colab.research.google.com/github/OWNER/NAME/blob/main/notebooks/ja/00_welcome.ipynb'
    """
    links = links or course_links()
    return links.colab(f"notebooks/{lang}/{chapter}.ipynb")
