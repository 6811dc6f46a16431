"""Helpers the book's chapters call (chapters 00 and 01, and the quiz cell of every chapter).

A chapter's code cells are byte-identical in English and Japanese (a parity test enforces it),
so anything that depends on the reader's language is resolved here, at run time, instead of
being written into the cell:

- `page_language()` tells which track a notebook belongs to: `PIILAB_LANG` if set, else the
  folder it runs in (`book/ja`, `notebooks/ja`, ...), else, on Colab, the notebook's own
  metadata (`piilab.language`), else English.
- `repo_root()` and `quiz_path()` find course files from wherever the notebook runs.
- `course_links()` and `colab_url()` give the course's address. It is written once, as
  `repository.url` and `repository.branch` in `_config.yml`; chapter sources carry the
  placeholders of `CourseLinks.expand` instead, which the book's Sphinx extension
  (`book/_ext/piilab_book.py`) and `tools/build_notebooks.py` fill in from that file.
- `PIPELINE`, `ARTIFACTS` and `pipeline_diagram()` are the architecture overview of chapter 01
  ("Platform architecture"): the stages, what each one holds, and an inline SVG drawing of them.

This module does not execute notebooks or build the book (see `tools/build_notebooks.py` and
the Makefile), and it prints nothing: it returns values that the notebook displays.
"""

from __future__ import annotations

import contextlib
import html
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The two tracks of the course. A chapter exists under the same file name in both.
LANGUAGES: tuple[str, ...] = ("en", "ja")

#: The book's configuration, at the repository root: the one place that names the course's
#: repository (`repository.url`, `repository.branch`) and Colab (`launch_buttons.colab_url`).
CONFIG_FILE = "_config.yml"
#: Used when `_config.yml` leaves `repository.branch` or `launch_buttons.colab_url` out.
DEFAULT_BRANCH = "main"
DEFAULT_COLAB_URL = "https://colab.research.google.com"
#: What chapter sources write instead of the address (see `CourseLinks.expand`).
PLACEHOLDERS: tuple[str, ...] = ("@REPOSITORY_URL@", "@REPOSITORY_BRANCH@", "@COLAB_PATH@")


def page_language(default: str = "en") -> str:
    """The language of the notebook that is running: `"en"` or `"ja"`.

    Resolution order: the environment variable `PIILAB_LANG`; the current folder when it is
    `<...>/book/<lang>` or `<...>/notebooks/<lang>` (Jupyter Book and nbval run a chapter in its
    own folder); on Colab, the `piilab.language` field of the notebook's metadata; `default`.

    """
    forced = os.environ.get("PIILAB_LANG", "").strip()
    if forced:
        if forced not in LANGUAGES:
            raise ValueError(f"PIILAB_LANG must be one of {LANGUAGES}, got {forced!r}")
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
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    return repo_root() / "book" / "quizzes" / lang / f"{chapter}.json"


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
            raise ValueError(
                f"repository.url must be a https://github.com/OWNER/NAME address, "
                f"got {self.repository_url!r}"
            )

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> CourseLinks:
        """From the parsed `_config.yml`: `repository.url` (required), `repository.branch`,
        `launch_buttons.colab_url`."""
        repository = config.get("repository") or {}
        url = repository.get("url")
        if not url:
            raise ValueError(f"{CONFIG_FILE} has no repository.url")
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


# --------------------------------------------------------------------------------------------
# Chapter 01: the architecture overview
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    """One stage of the pipeline as chapter 01 draws it.

    `raw_pii` is True when the stage reads or writes original PII values (synthetic ones, in
    this course); only a stage that sees masked text alone has it False.
    """

    id: str
    title: dict[str, str]
    api: str
    chapter: str
    raw_pii: bool


#: The stages in pipeline order: generate -> fine-tune -> infer -> parse -> mask ->
#: downstream use -> restore -> evaluate.
PIPELINE: tuple[Stage, ...] = (
    Stage("generate", {"en": "generate", "ja": "生成"}, "generate_dataset", "02", True),
    Stage("fine-tune", {"en": "fine-tune", "ja": "ファインチューニング"}, "piilab.sft", "06", True),
    Stage("infer", {"en": "infer", "ja": "推論"}, "piilab.inference", "07", True),
    Stage("parse", {"en": "parse", "ja": "パース"}, "parse_model_output", "03", True),
    Stage("mask", {"en": "mask", "ja": "マスキング"}, "mask_text", "03", True),
    Stage(
        "downstream", {"en": "downstream use", "ja": "下流での利用"}, "any LLM or service", "01",
        False,
    ),
    Stage("restore", {"en": "restore", "ja": "復元"}, "reassemble_text", "03", True),
    Stage("evaluate", {"en": "evaluate", "ja": "評価"}, "evaluate", "04", True),
)

STAGE_IDS: tuple[str, ...] = tuple(stage.id for stage in PIPELINE)


@dataclass(frozen=True)
class Artifact:
    """Something the pipeline stores or passes on, and whether it carries PII values."""

    id: str
    title: dict[str, str]
    sensitive: bool
    why: dict[str, str]


#: What the pipeline produces, in pipeline order, and whether each item must be protected like
#: the source documents themselves. Chapter 01's exercise checks a learner's answer against it.
ARTIFACTS: tuple[Artifact, ...] = (
    Artifact(
        "training_data", {"en": "training data (data/*.jsonl)", "ja": "学習データ (data/*.jsonl)"},
        True,
        {
            "en": "each record holds the source text and its gold PII values",
            "ja": "各レコードに原文と正解の PII 値がそのまま入っている",
        },
    ),
    Artifact(
        "model_weights", {"en": "fine-tuned model weights", "ja": "ファインチューニング済みの重み"},
        True,
        {
            "en": "a model can memorise and reproduce training values, so treat it like its data",
            "ja": "モデルは学習した値を記憶して再現しうるので、学習データと同じ扱いにする",
        },
    ),
    Artifact(
        "model_output", {"en": "raw model output (TYPE<TAB>VALUE rows)",
                         "ja": "モデルの生出力 (TYPE<TAB>VALUE の行)"},
        True,
        {
            "en": "every row repeats a PII value from the document",
            "ja": "どの行も文書中の PII 値をそのまま繰り返している",
        },
    ),
    Artifact(
        "masked_text", {"en": "masked text", "ja": "マスク済みテキスト"},
        False,
        {
            "en": "it carries tokens such as [PERSON_1] instead of the values: this is what may "
            "leave (still check it for context that identifies someone)",
            "ja": "値の代わりに [PERSON_1] のようなトークンが入っている。外に出してよいのはこれだけ"
            "(ただし文脈から個人が特定できないかは別途確認する)",
        },
    ),
    Artifact(
        "mapping", {"en": "the mapping (token -> value)", "ja": "対応表 (トークン -> 値)"},
        True,
        {
            "en": "it lists every original value next to its token: masked text + mapping = source",
            "ja": "すべての元の値がトークンと並んで入っている。マスク済みテキスト + 対応表 = 原文",
        },
    ),
    Artifact(
        "restored_text", {"en": "restored downstream result", "ja": "復元した下流の結果"},
        True,
        {
            "en": "restoring puts the original values back in",
            "ja": "復元で元の値が戻っている",
        },
    ),
    Artifact(
        "metrics", {"en": "evaluation metrics (counts and rates)", "ja": "評価指標 (件数と率)"},
        False,
        {
            "en": "counts and rates carry no values, which is why only they go to logs and "
            "experiment tracking",
            "ja": "件数と率には値が含まれない。だからログや実験管理に送るのはこれだけにする",
        },
    ),
)

ARTIFACT_IDS: tuple[str, ...] = tuple(artifact.id for artifact in ARTIFACTS)


class SvgFigure:
    """An SVG drawing that notebooks and the book display inline (`_repr_svg_`, `_repr_html_`).

    The HTML form embeds the SVG in the page, so its text is selectable and searchable.
    """

    def __init__(self, svg: str, alt: str) -> None:
        self.svg = svg
        self.alt = alt

    def _repr_svg_(self) -> str:
        return self.svg

    def _repr_html_(self) -> str:
        label = html.escape(self.alt)
        return f'<div class="piilab-figure" role="img" aria-label="{label}">{self.svg}</div>'

    def __repr__(self) -> str:
        return f"<SvgFigure: {self.alt}>"


_DIAGRAM_TEXT = {
    "en": {
        "alt": "The PII Lab pipeline: eight stages from data generation to evaluation",
        "mapping": "mapping (token → value)",
        "mapping_note": "kept in the trusted zone",
        "gold": "gold labels",
        "legend_raw": "handles raw PII",
        "legend_masked": "sees masked text only",
        "legend_mapping": "sensitive key",
    },
    "ja": {
        "alt": "PII Lab のパイプライン: データ生成から評価までの 8 段階",
        "mapping": "対応表 (トークン → 値)",
        "mapping_note": "信頼できる領域の中に保管",
        "gold": "正解ラベル",
        "legend_raw": "生の PII を扱う",
        "legend_masked": "マスク済みテキストのみ",
        "legend_mapping": "機密の鍵",
    },
}

_RAW = ("#fde4e1", "#b83227")  # fill, stroke: stages that handle raw PII
_MASKED = ("#e2f3df", "#2e7d32")  # the stage that sees masked text only
_KEY = ("#fff1c7", "#9a6b00")  # the mapping


def pipeline_diagram(lang: str | None = None) -> SvgFigure:
    """Draw `PIPELINE` as an inline SVG (labels in `lang`, default `page_language()`).

    The stages run left to right on the top row and right to left on the bottom row; colours
    say which stages see raw PII; dashed lines carry the gold labels and the mapping.
    """
    lang = lang or page_language()
    text = _DIAGRAM_TEXT[lang]
    width, height = 900, 410
    box_w, box_h = 190, 66
    columns = (20, 240, 460, 680)
    top, bottom = 24, 174
    # Snake layout: stages 1-4 on the top row (left to right), 5-8 below (right to left).
    positions = [(columns[i], top) for i in range(4)] + [(columns[3 - i], bottom) for i in range(4)]
    font = "font-family=\"'Noto Sans CJK JP','Noto Sans JP','Hiragino Sans',system-ui,sans-serif\""
    mono = "font-family=\"'DejaVu Sans Mono',Menlo,Consolas,monospace\""

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="100%" style="max-width:{width}px" role="img" '
        'aria-labelledby="piilab-pipeline-title">',
        f'<title id="piilab-pipeline-title">{html.escape(text["alt"])}</title>',
        "<defs>"
        '<marker id="piilab-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker>'
        "</defs>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
    ]

    def arrow(x1: float, y1: float, x2: float, y2: float, dashed: bool = False) -> str:
        dash = ' stroke-dasharray="6 5"' if dashed else ""
        return (
            f'<path d="M{x1},{y1} L{x2},{y2}" stroke="#444" stroke-width="2" fill="none"{dash} '
            'marker-end="url(#piilab-arrow)"/>'
        )

    def polyline(points: list[tuple[float, float]]) -> str:
        d = " ".join(f"{'M' if i == 0 else 'L'}{x},{y}" for i, (x, y) in enumerate(points))
        return (
            f'<path d="{d}" stroke="#9a6b00" stroke-width="2" fill="none" stroke-dasharray="6 5" '
            'marker-end="url(#piilab-arrow)"/>'
        )

    # Solid arrows: the pipeline order.
    for i in range(len(PIPELINE) - 1):
        (x1, y1), (x2, y2) = positions[i], positions[i + 1]
        if y1 == y2 and x2 > x1:  # top row, rightwards
            parts.append(arrow(x1 + box_w, y1 + box_h / 2, x2 - 2, y2 + box_h / 2))
        elif y1 == y2:  # bottom row, leftwards
            parts.append(arrow(x1, y1 + box_h / 2, x2 + box_w + 2, y2 + box_h / 2))
        else:  # down from the end of the top row
            parts.append(arrow(x1 + box_w / 2, y1 + box_h, x2 + box_w / 2, y2 - 2))

    # Dashed: gold labels from the generated data to the evaluation.
    gx = columns[0] + box_w / 2
    parts.append(arrow(gx, top + box_h, gx, bottom - 2, dashed=True))
    parts.append(
        f'<text x="{gx + 8}" y="{(top + box_h + bottom) / 2 + 5}" font-size="13" fill="#444" '
        f"{font}>{html.escape(text['gold'])}</text>"
    )

    # The mapping: written by `mask`, read by `restore`, never handed downstream.
    key_x, key_y, key_w, key_h = columns[2], 286, box_w, 54
    mask_x, restore_x = positions[4][0], positions[6][0]
    key_mid = key_y + key_h / 2
    mask_mid, restore_mid = mask_x + box_w / 2, restore_x + box_w / 2
    below = bottom + box_h
    parts.append(polyline([(mask_mid, below), (mask_mid, key_mid), (key_x + key_w + 2, key_mid)]))
    parts.append(polyline([(key_x, key_mid), (restore_mid, key_mid), (restore_mid, below + 2)]))
    parts.append(
        f'<rect x="{key_x}" y="{key_y}" width="{key_w}" height="{key_h}" rx="8" '
        f'fill="{_KEY[0]}" stroke="{_KEY[1]}" stroke-width="2"/>'
        f'<text x="{key_x + key_w / 2}" y="{key_y + 22}" text-anchor="middle" font-size="14" '
        f'font-weight="bold" fill="#222" {font}>{html.escape(text["mapping"])}</text>'
        f'<text x="{key_x + key_w / 2}" y="{key_y + 42}" text-anchor="middle" font-size="12" '
        f'fill="#444" {font}>{html.escape(text["mapping_note"])}</text>'
    )

    # The stage boxes, drawn last so arrows end at their edges.
    for number, (stage, (x, y)) in enumerate(zip(PIPELINE, positions, strict=True), start=1):
        fill, stroke = _RAW if stage.raw_pii else _MASKED
        title = f"{number} · {stage.title[lang]}"
        size = min(16, int((box_w - 14) / _text_width(title)))  # shrink long (CJK) titles to fit
        parts.append(
            f'<g class="piilab-stage" data-stage="{stage.id}">'
            f'<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="8" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="2"/>'
            f'<text x="{x + box_w / 2}" y="{y + 27}" text-anchor="middle" font-size="{size}" '
            f'font-weight="bold" fill="#222" {font}>{html.escape(title)}</text>'
            f'<text x="{x + box_w / 2}" y="{y + 50}" text-anchor="middle" font-size="12" '
            f'fill="#333" {mono}>{html.escape(stage.api)}</text>'
            "</g>"
        )

    # Legend.
    legend_y = 375
    for i, ((fill, stroke), label) in enumerate(
        (
            (_RAW, text["legend_raw"]),
            (_MASKED, text["legend_masked"]),
            (_KEY, text["legend_mapping"]),
        )
    ):
        x = 20 + i * 290
        parts.append(
            f'<rect x="{x}" y="{legend_y}" width="22" height="16" rx="3" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="2"/>'
            f'<text x="{x + 30}" y="{legend_y + 13}" font-size="14" fill="#222" {font}>'
            f"{html.escape(label)}</text>"
        )
    parts.append("</svg>")
    return SvgFigure("".join(parts), text["alt"])


def _text_width(text: str) -> float:
    """Rough width of `text` in ems: a CJK character is one em, anything else about 0.6."""
    return sum(1.0 if ord(char) > 0x2E80 else 0.6 for char in text)
