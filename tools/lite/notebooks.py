"""The notebooks as the browser runs them, and the repository files they read.

What *Run All* does in the browser decides the shape of each cell (`lite_notebook`):

- a cell that cannot run in Pyodide (matplotlib, Faker, another process; or a cell that uses
  what such a cell defines) keeps its code, commented out, and no output; the book's output
  follows it in a Markdown cell (figures as attachments), which no run can clear;
- a solution (a hidden cell that starts with a solution comment) becomes a closed `<details>`
  in Markdown with its code: *Run All* neither runs it nor shows its verdict under the exercise;
  the build fails if a cell that does run needs a name only a solution defines;
- an answer cell (the book hides its output, `remove-output`) starts with no stored verdict;
- code cells are marked trusted (JupyterLab reads `metadata.trusted`), so the notebook opens
  "Trusted" and the quiz's HTML shows before anything runs.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import sys
from pathlib import Path

from .paths import BuildError, chapter_notebooks

#: Installed by each notebook's first code cell (piilab from the site's piplite index, the
#: others from the lock).
NOTEBOOK_PACKAGES = ("piilab", "jupyterquiz", "jsonschema")
#: Repository files the chapters read (through `repo_root()`), mirrored into the contents.
MIRRORED_FILES = ("_toc.yml", "data/manifest.json", "data/holdout/holdout.jsonl",
                  "results/holdout_counts.json", "results/runs.jsonl")

BOOTSTRAP = {
    "en": (
        "# In the browser (JupyterLite): install piilab, built from this course, and the quiz\n"
        "# widget. Everything comes from this site, nothing from the internet. Run this first.\n"
    ),
    "ja": (
        "# ブラウザ (JupyterLite) で実行中: この講座からビルドした piilab とクイズ表示を\n"
        "# インストールします。すべてこのサイトから読み込み、インターネットには\n"
        "# 接続しません。最初に実行してください。\n"
    ),
}
#: JupyterLite's contents service parses every file whose extension contains "json" as JSON,
#: so the kernel cannot open a .jsonl file (jupyterlite 0.8.6). Such files are served under
#: this suffix instead, and the set-up cell writes them back under their own name.
JSONL_COPY = "-jsonl.txt"
BOOTSTRAP_CODE = (
    f"%pip install -q {' '.join(NOTEBOOK_PACKAGES)}\n"
    "from pathlib import Path\n"
    "\n"
    "import piilab\n"
    "\n"
    "# JupyterLite does not hand .jsonl files to Python: they come as .txt, renamed here.\n"
    "for folder in (\"../../data\", \"../../results\"):\n"
    f'    for copy in Path(folder).rglob("*{JSONL_COPY}"):\n'
    f'        copy.with_name(copy.name.removesuffix("{JSONL_COPY}") + ".jsonl").write_bytes(\n'
    "            copy.read_bytes())\n"
    'print("piilab", piilab.__version__, "ready")'
)
BADGE = re.compile(r"\[!\[[^\]]*\]\([^)]*colab-badge[^)]*\)\]\([^)]*\)")
#: An image the notebook would load from another host (markdown or HTML).
REMOTE_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*(?:https?:)?//|<img[^>]+src=[\"'](?:https?:)?//", re.I)
BADGE_TEXT = {
    "en": ("*In your browser (JupyterLite): run the set-up cell below first. Your edits are kept "
           "in this browser; to start again from the original notebook, choose Help → Clear "
           "Browser Data → Clear (it clears your edits to every notebook of this site).*"),
    "ja": ("*ブラウザ (JupyterLite) で実行中: まず下のセットアップのセルを実行してください。"
           "編集した内容はこのブラウザに保存されます。元のノートブックからやり直すには、"
           "メニューの Help → Clear Browser Data → Clear を選びます"
           "(このサイトのすべてのノートブックの編集内容が消えます)。*"),
}
#: Cells that cannot run in Pyodide: (pattern over the code, why, per language).
UNSUPPORTED = (
    (re.compile(r"^\s*(?:import|from)\s+(?:matplotlib|piilab\.(?:course\.)?plots\w*)\b",
                re.M), {
        "en": "this offline site does not carry matplotlib for Pyodide",
        "ja": "このオフラインのサイトには Pyodide 用の matplotlib が含まれていません",
    }),
    (re.compile(r"^\s*(?:import|from)\s+piilab\.wide\b", re.M), {
        "en": "the wide corpus needs Faker, which this site does not carry",
        "ja": "ワイドコーパスには Faker が必要ですが、このサイトには含まれていません",
    }),
    (re.compile(r"\bsubprocess\.(?:run|Popen|call|check_call|check_output)\b"), {
        "en": "a browser cannot start another Python process",
        "ja": "ブラウザでは別の Python プロセスを起動できません",
    }),
)
#: The first lines of a cell that does not run, and of the Markdown cell with its book output.
SKIPPED_HEADER = {
    "en": ("# In the browser this cell does not run: {why}.\n"
           "# The next cell shows the book's output.\n"),
    "ja": "# ブラウザではこのセルを実行しません。{why}。\n# 本書での出力を次のセルに示します。\n",
}
BOOK_OUTPUT_HEADER = {
    "en": "*The book's output of the cell above (it does not run in the browser):*",
    "ja": "*上のセルの本書での出力です (ブラウザでは実行しません)。*",
}
#: A solution cell as Markdown: the summary, and how to run it.
SOLUTION_TEXT = {
    "en": ("Solution", "*To run it, copy it into the answer cell above.*"),
    "ja": ("解答", "*実行するには、上の解答欄のセルにコピーしてください。*"),
}
#: A hidden cell that starts with one of these comments is a solution (as in the book:
#: book/_ext/piilab_nav.py).
SOLUTION = re.compile(r"^\s*# (Solution|One possible solution)\b")


#: A MyST colon fence (`:::{tip} Title`, options such as `:class: dropdown`, body, `:::`), which
#: JupyterLab shows as plain text.
MYST_FENCE = re.compile(
    r"^:::\{(?P<kind>[\w-]+)\}[ \t]*(?P<title>[^\n]*)\n(?P<options>(?::[\w-]+:[^\n]*\n)*)"
    r"(?P<body>.*?)^:::[ \t]*$", re.M | re.S)



def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _set_source(cell: dict, text: str) -> None:
    cell["source"] = text


def plain_markdown(text: str) -> str:
    """MyST colon fences as Markdown JupyterLab renders: a dropdown (a solution) becomes a
    closed `<details>`, any other admonition a quote with its title in bold."""
    def replace(match: re.Match) -> str:
        title = match["title"].strip() or match["kind"].capitalize()
        body = match["body"].strip("\n")
        if "dropdown" in match["options"]:
            return f"<details><summary>{title}</summary>\n\n{body}\n\n</details>"
        quoted = "\n".join(f"> {line}" if line else ">" for line in body.splitlines())
        return f"> **{title}**\n>\n{quoted}"

    return MYST_FENCE.sub(replace, text)


def cell_names(code: str) -> tuple[set[str], set[str]]:
    """(names a cell binds, names it reads), over-approximated; empty if it is not Python."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set(), set()
    defined, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else defined).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
    return defined, used


def comment_out(code: str) -> str:
    """`code` commented out, except its standard-library imports: later cells may use them."""
    keep: set[int] = set()
    try:
        tree = ast.parse(code)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    for node in tree.body:
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        else:
            continue
        if all(m.split(".")[0] in sys.stdlib_module_names for m in modules):
            keep.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return "\n".join(
        line if number in keep else (f"# {line}" if line else "#")
        for number, line in enumerate(code.splitlines(), start=1)
    )


def _fence(text: str, info: str = "") -> str:
    """`text` as a fenced code block (a fence longer than any run of backticks in it)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def output_markdown(outputs: list[dict], alt: str) -> tuple[str, dict]:
    """The outputs of a code cell as Markdown, and the attachments it refers to (figures)."""
    parts, attachments = [], {}
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            text = output.get("text", "")
            parts.append(_fence("".join(text) if isinstance(text, list) else text, "text"))
            continue
        if kind not in ("display_data", "execute_result"):
            continue
        data = output.get("data", {})
        image = next((mime for mime in ("image/png", "image/svg+xml", "image/jpeg")
                      if mime in data), None)
        if image:
            name = f"book-output-{len(attachments) + 1}.{image.split('/')[1].split('+')[0]}"
            value = data[image]
            attachments[name] = {image: "".join(value) if isinstance(value, list) else value}
            parts.append(f"![{alt}](attachment:{name})")
        elif "text/html" in data:
            html = data["text/html"]
            parts.append("".join(html) if isinstance(html, list) else html)
        elif "text/markdown" in data:
            text = data["text/markdown"]
            parts.append("".join(text) if isinstance(text, list) else text)
        elif "text/plain" in data:
            text = data["text/plain"]
            parts.append(_fence("".join(text) if isinstance(text, list) else text, "text"))
    return "\n\n".join(parts), attachments


def _alt_text(cell: dict, lang: str) -> str:
    image = (cell.get("metadata", {}).get("mystnb") or {}).get("image") or {}
    return str(image.get("alt") or ("figure" if lang == "en" else "図")).replace("]", ")")


def _solution_markdown(code: str, lang: str) -> dict:
    summary, how = SOLUTION_TEXT[lang]
    text = (f"<details><summary>{summary}</summary>\n\n{how}\n\n{_fence(code, 'python')}\n\n"
            "</details>")
    return {"cell_type": "markdown", "metadata": {"tags": ["piilab-lite-solution"]},
            "source": text}


def lite_notebook(notebook: dict, lang: str) -> dict:
    """The notebook as the browser runs it (see the module docstring); raises if it has no Colab
    set-up cell to replace, or if a cell that runs needs what only a solution defines."""
    notebook = json.loads(json.dumps(notebook))
    cells = notebook["cells"]
    setup = [c for c in cells if c["cell_type"] == "code" and "google.colab" in _source(c)]
    if len(setup) != 1:
        raise BuildError(f"expected one Colab set-up cell, found {len(setup)}")
    cell = setup[0]
    _set_source(cell, BOOTSTRAP[lang] + BOOTSTRAP_CODE)
    cell["outputs"], cell["execution_count"] = [], None
    cell.setdefault("metadata", {})["tags"] = ["piilab-lite-setup"]
    cell["metadata"]["trusted"] = True

    title = next((c for c in cells if c["cell_type"] == "markdown"), None)
    if title is not None:
        _set_source(title, BADGE.sub(BADGE_TEXT[lang], _source(title)))

    converted: list[dict] = []
    unavailable: dict[str, dict[str, str]] = {}  # name -> why the cell defining it is skipped
    defined_by_runs: set[str] = set()     # names the cells that run define
    only_in_solutions: set[str] = set()   # names that only a solution (not run) defines
    for index, cell in enumerate(cells):
        converted.append(cell)
        if cell["cell_type"] == "markdown":
            _set_source(cell, plain_markdown(_source(cell)))
            if REMOTE_IMAGE.search(_source(cell)):
                raise BuildError(f"a markdown cell loads an image from the internet: "
                                 f"{REMOTE_IMAGE.search(_source(cell))[0]!r}")
        if cell["cell_type"] != "code" or cell is setup[0]:
            continue
        tags = cell.setdefault("metadata", {}).get("tags", [])
        code = _source(cell)
        defined, used = cell_names(code)
        if "hide-cell" in tags and SOLUTION.match(code):
            converted[-1] = _solution_markdown(code, lang)
            if "id" in cell:
                converted[-1]["id"] = cell["id"]
            only_in_solutions |= defined - defined_by_runs
            continue
        needs = sorted((used - defined) & only_in_solutions)
        if needs:
            raise BuildError(f"cell {index} uses {needs}, which only a solution defines: "
                             "in the browser solutions do not run")
        # The quiz's code stays collapsed (a click shows it).
        if "remove-input" in tags:
            cell["metadata"].setdefault("jupyter", {})["source_hidden"] = True
        # An answer cell starts with no verdict: nobody has answered yet.
        if "remove-output" in tags:
            cell["outputs"] = []
        cell["metadata"]["trusted"] = True
        # The book's outputs stay, to read before running; the numbers go, so that the prompts
        # show what ran in this browser session.
        cell["execution_count"] = None
        for output in cell.get("outputs", []):
            if "execution_count" in output:
                output["execution_count"] = None
        reason = next((reason for pattern, reason in UNSUPPORTED if pattern.search(code)), None)
        if reason is None:
            # a cell that uses what a skipped cell would have defined cannot run either
            reason = next((unavailable[name] for name in sorted(used - defined)
                           if name in unavailable), None)
        if reason is None:
            for name in defined:
                unavailable.pop(name, None)
            defined_by_runs |= defined
            only_in_solutions -= defined
            continue
        kept = comment_out(code)
        _set_source(cell, SKIPPED_HEADER[lang].format(why=reason[lang]) + kept + "\n")
        cell["metadata"].setdefault("tags", []).append("piilab-lite-skip")
        still_defined, _ = cell_names("\n".join(line for line in kept.splitlines()
                                                if not line.startswith("#")))
        unavailable.update({name: reason for name in defined - still_defined})
        defined_by_runs |= still_defined
        text, attachments = output_markdown(cell.get("outputs", []), _alt_text(cell, lang))
        cell["outputs"] = []
        if text:
            book_output = {"cell_type": "markdown",
                           "metadata": {"tags": ["piilab-lite-book-output"]},
                           "source": f"{BOOK_OUTPUT_HEADER[lang]}\n\n{text}"}
            if attachments:
                book_output["attachments"] = attachments
            if "id" in cell:
                book_output["id"] = f"{cell['id']}-book-output"
            converted.append(book_output)
    notebook["cells"] = converted
    for cell in converted:  # one string per source: JupyterLite hands the file as is to JupyterLab
        cell["source"] = _source(cell)
    notebook["metadata"].setdefault("piilab", {})["lite"] = True
    notebook["metadata"]["kernelspec"] = {
        "display_name": "Python (Pyodide)", "language": "python", "name": "python"}
    return notebook


def stage_contents(checkout: Path, target: Path, chapters: list[str]) -> list[str]:
    """The repository layout the chapters expect, reduced to what they read."""
    for relative in MIRRORED_FILES:
        source = checkout / relative
        if not source.is_file():
            raise BuildError(f"{relative} is missing (it is committed; `make data` for data/)")
        destination = target / relative
        if destination.suffix == ".jsonl":
            destination = destination.with_name(destination.stem + JSONL_COPY)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
    written = []
    for lang, notebooks in chapter_notebooks(checkout, chapters).items():
        quizzes = target / "book" / "quizzes" / lang
        quizzes.mkdir(parents=True, exist_ok=True)
        folder = target / "notebooks" / lang
        folder.mkdir(parents=True, exist_ok=True)
        for path in notebooks:
            quiz = checkout / "book" / "quizzes" / lang / f"{path.stem}.json"
            if quiz.is_file():
                shutil.copy2(quiz, quizzes / quiz.name)
            try:
                converted = lite_notebook(json.loads(path.read_text("utf-8")), lang)
            except BuildError as error:
                raise BuildError(f"{path.relative_to(checkout)}: {error}") from None
            (folder / path.name).write_text(
                json.dumps(converted, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
            written.append(f"notebooks/{lang}/{path.name}")
    return written
