"""The two language tracks of the book stay twins, and the book's machinery stays honest.

- `_toc.yml` lists the same chapter files, in the same order, in its English and Japanese parts,
  and every chapter file in `book/en` and `book/ja` is listed;
- the code cells (and their tags) of a chapter are byte-identical in both languages;
- each committed notebook twin in `notebooks/` matches its `.md` source and is executed;
- every chapter links its twin and has a Colab badge that opens its notebook twin (at the
  address `_config.yml` gives, filled into the source's placeholders: tests/test_course_url.py);
- every chapter has the lesson structure (objectives, pitfalls, summary, quiz, 2-4 exercises,
  at least one checked by `piilab.course.exercises`);
- quizzes validate against `piilab/course/quiz_schema.json` and share ids and correct answers;
- nbval stays strict: only quiz cells skip output comparison, sanitizers leave ordinary numbers
  alone, and a changed printed number fails nbval.
"""

from __future__ import annotations

import configparser
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

# The book's tooling (the book extra): without it, this whole module is skipped.
pytest.importorskip("jsonschema", reason="needs the book extra: pip install -e '.[book]'")
pytest.importorskip("jupytext", reason="needs the book extra: pip install -e '.[book]'")
pytest.importorskip("nbformat", reason="needs the book extra: pip install -e '.[book]'")
pytest.importorskip("yaml", reason="needs the book extra: pip install -e '.[book]'")

import jsonschema
import jupytext
import nbformat
import yaml

from piilab.course import ch01, diagram, links
from piilab.course import lang as course_lang
from piilab.course.quiz import answer_key, load_quiz, quiz_schema

REPO = Path(__file__).resolve().parent.parent
LANGS = ("en", "ja")
OTHER = {"en": "ja", "ja": "en"}
CHAPTER = re.compile(r"^\d\d_[A-Za-z0-9_]+$")
SECTIONS = {
    "en": ["## Learning objectives", "## Pitfalls", "## Summary", "## Quiz", "## Exercises"],
    "ja": ["## 学習目標", "## つまずきやすい点", "## まとめ", "## 確認クイズ", "## 演習"],
}
EXERCISE_HEADING = {"en": "### Exercise ", "ja": "### 演習 "}


def _toc() -> dict:
    return yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))


def _config() -> dict:
    return yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))


def _chapter_files(lang: str) -> list[str]:
    return sorted(p.stem for p in (REPO / "book" / lang).glob("*.md") if CHAPTER.match(p.stem))


CHAPTERS = _chapter_files("en")
PAGES = [(lang, chapter) for chapter in CHAPTERS for lang in LANGS]


def _read(lang: str, chapter: str) -> nbformat.NotebookNode:
    return jupytext.read(REPO / "book" / lang / f"{chapter}.md", fmt="md:myst")


def _code_cells(notebook: nbformat.NotebookNode) -> list[tuple[str, list[str]]]:
    return [
        (cell.source, list(cell.metadata.get("tags", [])))
        for cell in notebook.cells
        if cell.cell_type == "code"
    ]


def _build_tool():
    from _tools import load_tool

    return load_tool("build_notebooks")


# ---------------------------------------------------------------------------- table of contents


def test_toc_has_an_english_and_a_japanese_part_with_the_same_chapters():
    toc = _toc()
    assert toc["format"] == "jb-book"
    assert toc["root"] == "book/index"
    parts = {p["caption"]: [entry["file"] for entry in p["chapters"]] for p in toc["parts"]}
    assert list(parts) == ["English", "日本語"]
    english = [f.removeprefix("book/en/") for f in parts["English"]]
    japanese = [f.removeprefix("book/ja/") for f in parts["日本語"]]
    assert all(f.startswith("book/en/") for f in parts["English"])
    assert all(f.startswith("book/ja/") for f in parts["日本語"])
    assert english == japanese, "both parts must list the same chapter files in the same order"
    assert english == sorted(english), "chapters are listed in number order"


def test_every_chapter_file_is_in_both_languages_and_in_the_toc():
    assert CHAPTERS, "no chapters found under book/en"
    assert _chapter_files("ja") == CHAPTERS, "book/en and book/ja must hold the same chapter files"
    listed = [entry["file"].removeprefix("book/en/") for entry in _toc()["parts"][0]["chapters"]]
    assert listed == CHAPTERS, "_toc.yml must list every chapter of book/en, and nothing else"


def test_config_builds_only_the_toc_and_fails_on_cell_errors():
    config = _config()
    assert config["title"] == "PII Lab"
    assert config["only_build_toc_files"] is True
    execute = config["execute"]
    assert execute["execute_notebooks"] == "cache"
    assert execute["allow_errors"] is False
    assert execute["run_in_temp"] is False, (
        "piilab.course.lang.page_language() reads the chapter's folder")
    for excluded in ("notebooks", ".venv", "_build", "data", "tests", "README.md"):
        assert excluded in config["exclude_patterns"]


def test_repository_links_are_read_from_the_config():
    config = _config()
    configured = links.course_links()
    assert configured.repository_url == config["repository"]["url"]
    assert configured.branch == config["repository"]["branch"]
    assert configured.colab_url == config["launch_buttons"]["colab_url"]


# ---------------------------------------------------------------------------- twin chapters


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_code_cells_are_identical_in_both_languages(chapter):
    english, japanese = _code_cells(_read("en", chapter)), _code_cells(_read("ja", chapter))
    assert len(english) == len(japanese), f"{chapter}: different number of code cells"
    for index, (en_cell, ja_cell) in enumerate(zip(english, japanese, strict=True)):
        assert en_cell == ja_cell, f"{chapter}: code cell #{index + 1} differs between en and ja"


#: The width of the book's code column at 1366 px, in monospace characters (the browser test
#: measures the page itself).
CODE_WIDTH = 88


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_code_fits_the_page(chapter):
    """No line of a shown code cell is longer than the code column (the Colab set-up cell is
    removed from the page, so it is the one exception)."""
    too_long = [
        (i, len(line)) for i, (source, tags) in enumerate(_code_cells(_read("en", chapter)))
        if "remove-cell" not in tags and "remove-input" not in tags
        for line in source.split("\n") if len(line) > CODE_WIDTH
    ]
    assert not too_long, f"{chapter}: (cell, length) of lines over {CODE_WIDTH}: {too_long}"


@pytest.mark.parametrize(("lang", "chapter"), PAGES)
def test_chapter_is_a_myst_notebook_for_its_language(lang, chapter):
    notebook = _read(lang, chapter)
    text = (REPO / "book" / lang / f"{chapter}.md").read_text(encoding="utf-8")
    assert "format_name: myst" in text
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    # The display name carries the language: Jupyter Book's execution cache is keyed on the
    # code cells and the kernelspec only, and twins have identical code cells.
    assert notebook.metadata["kernelspec"]["display_name"] == f"Python 3 ({lang})"
    assert notebook.metadata["piilab"] == {"language": lang, "chapter": chapter}
    sources = [source for source, _ in _code_cells(notebook)]
    assert any("import piilab" in s or "from piilab" in s for s in sources)


@pytest.mark.parametrize(("lang", "chapter"), PAGES)
def test_chapter_links_its_twin_and_its_colab_notebook_near_the_top(lang, chapter):
    text = (REPO / "book" / lang / f"{chapter}.md").read_text(encoding="utf-8")
    top = links.course_links().expand(text.split("\n## ", 1)[0])  # before the first section
    assert f"](../{OTHER[lang]}/{chapter}.md)" in top, f"{lang}/{chapter}: no link to its twin"
    colab = links.colab_url(chapter, lang)
    assert f"]({colab})" in top, f"{lang}/{chapter}: no Colab badge for {colab}"
    assert (REPO / "notebooks" / lang / f"{chapter}.ipynb").exists()


@pytest.mark.parametrize(("lang", "chapter"), PAGES)
def test_chapter_is_a_full_lesson(lang, chapter):
    text = (REPO / "book" / lang / f"{chapter}.md").read_text(encoding="utf-8")
    positions = [text.find(f"\n{heading}\n") for heading in SECTIONS[lang]]
    assert -1 not in positions, f"{lang}/{chapter}: missing one of {SECTIONS[lang]}"
    assert positions == sorted(positions), f"{lang}/{chapter}: sections out of order"
    exercises = text[positions[-1]:].count(f"\n{EXERCISE_HEADING[lang]}")
    assert 2 <= exercises <= 4, f"{lang}/{chapter}: {exercises} exercises (want 2-4)"

    cells = _code_cells(_read(lang, chapter))
    quiz_cells = [(s, tags) for s, tags in cells if "show_quiz(" in s]
    assert len(quiz_cells) == 1, f"{lang}/{chapter}: want exactly one quiz cell"
    source, tags = quiz_cells[0]
    assert f'quiz_path("{chapter}")' in source
    assert "nbval-ignore-output" in tags
    assert "remove-input" in tags or "hide-input" in tags
    assert any(re.search(r"from piilab\.course\.exercises(\.\w+)? import", s) and "check_" in s
               for s, _ in cells), (
        f"{lang}/{chapter}: at least one exercise must use a checker from piilab.course.exercises"
    )
    assert any("hide-cell" in tags for _, tags in cells) or ":class: dropdown" in text, (
        f"{lang}/{chapter}: solutions must be hidden (hide-cell or a dropdown admonition)"
    )


# ---------------------------------------------------------------------------- notebook twins


@pytest.mark.parametrize(("lang", "chapter"), PAGES)
def test_notebook_twin_matches_its_source_and_is_executed(lang, chapter):
    tool = _build_tool()
    source = REPO / "book" / lang / f"{chapter}.md"
    problem = tool.check(source)
    assert problem is None, f"{problem} (run `make notebooks`)"
    twin = nbformat.read(REPO / "notebooks" / lang / f"{chapter}.ipynb", as_version=4)
    assert [c.source for c in twin.cells if c.cell_type == "code"] == [
        links.course_links().expand(s) for s, _ in _code_cells(_read(lang, chapter))
    ]
    assert any(cell.get("outputs") for cell in twin.cells if cell.cell_type == "code")
    for cell in twin.cells:
        if cell.cell_type == "code":
            errors = [o for o in cell.outputs if o.output_type == "error"]
            assert not errors, f"error stored in {lang}/{chapter}"


def test_twin_links_point_at_notebooks():
    tool = _build_tool()
    notebook = tool.md_to_notebook(REPO / "book" / "en" / f"{CHAPTERS[0]}.md")
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    assert f"](../ja/{CHAPTERS[0]}.ipynb)" in markdown
    assert f"](../ja/{CHAPTERS[0]}.md)" not in markdown


# ---------------------------------------------------------------------------- numbers in prose

#: Number words the prose may count with. English "one" is left out: it is far more often a
#: pronoun ("one of them") than a count. Japanese counts are digits by house style; a kanji
#: numeral counts only before a counter (九つ, 十個), so 一致 or 十分 are not numbers.
_ENGLISH_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
NUMBER_WORDS = {
    word: value for value, word in enumerate(_ENGLISH_NUMBERS.split()) if word != "one"
}
KANJI_NUMBERS = {kanji: value for value, kanji in enumerate("〇一二三四五六七八九十")}
_LABELLED_LIST = re.compile(r"^\s*(?P<name>[^\[\]:\n]{1,60}): (?P<items>\[.*\])\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s|(?<=[。:])")


def _output_text(outputs) -> str:
    parts = []
    for output in outputs:
        text = output.get("text") if output.get("output_type") == "stream" else \
            output.get("data", {}).get("text/plain")
        parts.append("".join(text) if isinstance(text, list) else (text or ""))
    return "\n".join(parts)


def printed_lists(outputs) -> list[tuple[str, int]]:
    """Each `name: [item, ...]` line a cell printed, as (name, number of items)."""
    import ast

    found = []
    for line in _output_text(outputs).splitlines():
        match = _LABELLED_LIST.match(line)
        if match:
            try:
                items = ast.literal_eval(match["items"])
            except (ValueError, SyntaxError):
                continue
            if isinstance(items, (list, tuple)):
                found.append((match["name"].strip(), len(items)))
    return found


def stated_numbers(sentence: str) -> list[int]:
    """The counts a prose sentence states: number words and digit runs, outside inline code,
    links and chapter numbers (`chapter 03`, `03 章`, two digits with a leading zero)."""
    text = re.sub(r"`[^`]*`|\]\([^)]*\)", " ", sentence)
    numbers = [NUMBER_WORDS[w.lower()] for w in re.findall(r"[A-Za-z]+", text)
               if w.lower() in NUMBER_WORDS]
    numbers += [int(d) for d in re.findall(r"(?<![\w.,\-/])(\d+)(?![\w.,%/\-])", text)
                if not (len(d) == 2 and d.startswith("0"))]
    kanji = re.findall(r"([〇一二三四五六七八九十])(?=つ|個|件|行|種類)", text)
    numbers += [KANJI_NUMBERS[k] for k in kanji]
    return numbers


def _first_sentence(markdown: str) -> str:
    return _SENTENCE_END.split(markdown.strip(), maxsplit=1)[0]


def list_count_problems(cells) -> list[str]:
    """Prose that counts a printed list with another number.

    `cells` are (kind, source, outputs) in page order. When a code cell prints exactly one
    labelled list (`no counterpart: [...]`) and the prose right after it states a number in its
    first sentence, that number is the list's length: prose that says "nine" under a printed
    list of ten is wrong, and a number typed by hand would go stale when the list changes.
    """
    problems = []
    for (kind, _, outputs), (next_kind, prose, _) in itertools.pairwise(cells):
        if kind != "code" or next_kind != "markdown":
            continue
        lists = printed_lists(outputs)
        if len(lists) != 1:
            continue
        (name, length), sentence = lists[0], _first_sentence(prose)
        wrong = [n for n in stated_numbers(sentence) if n != length]
        if wrong:
            problems.append(f"{sentence[:80]!r} states {wrong}, but the cell above printed "
                            f"{length} item(s) under {name!r}")
    return problems


def _page_cells(lang: str, chapter: str) -> list[tuple[str, str, list]]:
    """The chapter's cells: prose from its source, outputs from its executed twin (matched by
    code-cell position; if the twin has another number of code cells, the twin alone)."""
    twin = nbformat.read(REPO / "notebooks" / lang / f"{chapter}.ipynb", as_version=4)
    source = _read(lang, chapter)
    twin_code = [c for c in twin.cells if c.cell_type == "code"]
    if len([c for c in source.cells if c.cell_type == "code"]) != len(twin_code):
        source = twin
    outputs = iter(c.get("outputs", []) for c in twin_code)
    return [(c.cell_type, c.source, next(outputs) if c.cell_type == "code" else [])
            for c in source.cells]


def test_list_count_check_catches_a_wrong_count():
    printed = [{"output_type": "stream", "name": "stdout",
                "text": "no counterpart: ['SECRET', 'USER_ID', 'PASSPORT']\n"}]
    for prose in ("Two finance labels have no experiment label: a model trained on it ...",
                  "金融の 2 ラベルには実験側の対応ラベルがありません。",
                  "金融の二つのラベルには対応がありません。"):
        assert list_count_problems([("code", "", printed), ("markdown", prose, [])]), prose
    for prose in ("Three finance labels have no experiment label.",
                  "The finance labels listed above have no experiment label (see chapter 03).",
                  "金融の 3 ラベルには実験側の対応ラベルがありません。"):
        assert not list_count_problems([("code", "", printed), ("markdown", prose, [])]), prose


@pytest.mark.parametrize(("lang", "chapter"), PAGES)
def test_prose_counts_of_printed_lists_agree_with_the_output(lang, chapter):
    problems = list_count_problems(_page_cells(lang, chapter))
    assert not problems, f"{lang}/{chapter}: " + "; ".join(problems)


# ---------------------------------------------------------------------------- quizzes


@pytest.mark.parametrize(("lang", "chapter"), PAGES)
def test_quiz_file_validates_against_the_schema(lang, chapter):
    path = REPO / "book" / "quizzes" / lang / f"{chapter}.json"
    assert path.exists(), f"missing quiz {path.relative_to(REPO)}"
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(quiz_schema())
    jsonschema.validate(data, quiz_schema(), cls=jsonschema.Draft202012Validator)
    load_quiz(path)  # the schema plus piilab.course.quiz's own rules


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_quiz_has_the_same_ids_and_correct_answers_in_both_languages(chapter):
    english = load_quiz(REPO / "book" / "quizzes" / "en" / f"{chapter}.json")
    japanese = load_quiz(REPO / "book" / "quizzes" / "ja" / f"{chapter}.json")
    assert [q["id"] for q in english] == [q["id"] for q in japanese]
    assert answer_key(english) == answer_key(japanese)


def test_every_quiz_file_belongs_to_a_chapter():
    for lang in LANGS:
        stems = sorted(p.stem for p in (REPO / "book" / "quizzes" / lang).glob("*.json"))
        assert stems == CHAPTERS, f"book/quizzes/{lang} must hold one quiz per chapter"


# ---------------------------------------------------------------------------- nbval strictness


@pytest.mark.parametrize(("lang", "chapter"), PAGES)
def test_only_quiz_cells_skip_output_comparison(lang, chapter):
    for source, tags in _code_cells(_read(lang, chapter)):
        skipping = {"nbval-ignore-output", "nbval-skip", "nbval-check-output"} & set(tags)
        if skipping:
            assert "show_quiz(" in source and skipping == {"nbval-ignore-output"}, (
                f"{lang}/{chapter}: only the quiz cell may ignore its output, not:\n{source}"
            )


def _sanitizers() -> list[tuple[re.Pattern, str]]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(REPO / "notebooks" / "nbval_sanitize.cfg", encoding="utf-8")
    return [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]


def _sanitize(text: str) -> str:
    for pattern, replacement in _sanitizers():
        text = pattern.sub(replacement, text)
    return text


@pytest.mark.parametrize(
    "text",
    [
        "{'precision': 0.8, 'recall': 1.0, 'documents.leak_rate': 0.0}",
        "2200 records, 1600 train",
        "10 13 [PERSON_1]",
        "piilab 0.1.0",
        "her birthday is 1958-11-03, call 555-0142",
        "F1 = 0.889 in 3 documents",
        "❌ ラベルが 5 つ足りません",
    ],
)
def test_sanitizers_leave_ordinary_numbers_alone(text):
    assert _sanitize(text) == text


def test_sanitizers_hide_volatile_details():
    assert _sanitize("<Foo object at 0x7f3a2b1c4d50>") == "<Foo object at 0xADDRESS>"
    assert _sanitize("Wall time: 1.21 s") == "Wall time: TIME"
    assert _sanitize("took 12.5 s") == "took SECONDS"
    assert _sanitize("/home/me/piilab/notebooks/en/x.json") == "<REPO>/notebooks/en/x.json"


@pytest.mark.slow
def test_nbval_fails_when_a_printed_number_changes(tmp_path):
    """Tamper with one stored number and run nbval on the copy: it must fail."""
    chapter = "01_architecture" if "01_architecture" in CHAPTERS else CHAPTERS[-1]
    notebook = nbformat.read(REPO / "notebooks" / "en" / f"{chapter}.ipynb", as_version=4)
    tampered = False
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/plain") or output.get("text") or ""
            new = re.sub(r"\b0\.8\b", "0.81", text, count=1)
            if not tampered and new != text:
                if "data" in output:
                    output["data"]["text/plain"] = new
                else:
                    output["text"] = new
                tampered = True
    assert tampered, "no number 0.8 found to tamper with; pick another"
    # A minimal course tree, so that the kernel (started in the notebook's folder) finds the quiz.
    (tmp_path / "_toc.yml").write_text("root: book/index\n", encoding="utf-8")
    quiz = tmp_path / "book" / "quizzes" / "en" / f"{chapter}.json"
    quiz.parent.mkdir(parents=True)
    quiz.write_bytes((REPO / "book" / "quizzes" / "en" / f"{chapter}.json").read_bytes())
    copy = tmp_path / "notebooks" / "en" / f"{chapter}.ipynb"
    copy.parent.mkdir(parents=True)
    nbformat.write(notebook, copy)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", str(copy),
         "--nbval-current-env",
         "--nbval-sanitize-with", str(REPO / "notebooks" / "nbval_sanitize.cfg"),
         "--rootdir", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 1, result.stdout[-2000:]
    assert "1 failed" in result.stdout, result.stdout[-2000:]


# ---------------------------------------------------------------------------- piilab.course helpers


def test_page_language_follows_the_chapter_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("PIILAB_LANG", raising=False)
    for folder in ("book", "notebooks"):
        for lang in LANGS:
            path = tmp_path / folder / lang
            path.mkdir(parents=True)
            monkeypatch.chdir(path)
            assert course_lang.page_language() == lang
    monkeypatch.chdir(tmp_path)
    assert course_lang.page_language() == "en"
    monkeypatch.setenv("PIILAB_LANG", "ja")
    assert course_lang.page_language() == "ja"
    monkeypatch.setenv("PIILAB_LANG", "fr")
    with pytest.raises(ValueError, match="PIILAB_LANG"):
        course_lang.page_language()


def test_quiz_path_finds_the_repository_from_a_chapter_folder(monkeypatch):
    monkeypatch.delenv("PIILAB_LANG", raising=False)
    monkeypatch.chdir(REPO / "notebooks" / "ja")
    expected = REPO / "book" / "quizzes" / "ja" / "00_welcome.json"
    assert course_lang.quiz_path("00_welcome") == expected


def test_repo_root_explains_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"_toc\.yml"):
        course_lang.repo_root(tmp_path)


@pytest.mark.parametrize("lang", LANGS)
def test_pipeline_diagram_draws_every_stage_in_the_language(lang):
    figure = diagram.pipeline_diagram(lang)
    svg = figure._repr_svg_()
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert svg.count('class="piilab-stage"') == len(ch01.PIPELINE) == 8
    for stage in ch01.PIPELINE:
        assert stage.title[lang] in svg
    assert figure._repr_html_().count("<svg") == 1
    assert diagram.pipeline_diagram(lang).svg == svg  # deterministic


# ---------------------------------------------------------------------------- figure provenance


def test_a_twin_with_stale_figures_is_caught(monkeypatch):
    tool = _build_tool()
    notebook = nbformat.read(REPO / "notebooks" / "en" / "04_evaluation.ipynb", as_version=4)
    assert tool.image_hashes(notebook), "chapter 04 draws figures"
    assert tool.check_figures(notebook) is None  # as committed
    # The plotting code changed since the twin was executed:
    monkeypatch.setattr(tool, "figure_code_sha256", lambda: "0" * 64)
    assert "older plotting code" in tool.check_figures(notebook)
    monkeypatch.undo()
    # An image that is not the one recorded:
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if "image/png" in output.get("data", {}):
                output["data"]["image/png"] = output["data"]["image/png"][::-1]
                break
    assert "differ from the ones recorded" in tool.check_figures(notebook)
    notebook.metadata.pop(tool.FIGURE_KEY)
    assert "without a record" in tool.check_figures(notebook)
