"""Build the in-browser exercises: a JupyterLite site whose Pyodide kernel runs chapters 00-05.

    .venv/bin/python tools/build_lite.py                 # into _build/html/lite (make lite)
    .venv/bin/python tools/build_lite.py --out DIR
    .venv/bin/python tools/build_lite.py --offline       # no download: fail if a wheel is missing

The site is static and self-contained: a learner's browser loads the JupyterLite app, the
Pyodide runtime and every Python wheel from the site itself, never from a CDN or PyPI
(tests/test_lite.py checks it in Chromium). Everything in it comes from pinned, local packages:

- the JupyterLite app and the Pyodide kernel: the Python packages `jupyterlite-core` and
  `jupyterlite-pyodide-kernel` (the `lite` extra, pinned in pyproject.toml); the kernel's own
  wheels (`pyodide-kernel`, `piplite`, an `ipykernel` shim) ship inside the latter;
- the Pyodide runtime (`pyodide.mjs`, `pyodide.asm.wasm`, `python_stdlib.zip`, ...): the npm
  package `pyodide`, pinned in package.json / package-lock.json and installed into
  node_modules/ by `npm ci`; its version must be the one the kernel was built for;
- the pure-Python wheels the kernel and the chapters load (micropip, IPython and its
  dependencies, jupyterquiz, jsonschema, ...): pinned with their PyPI hashes in
  `tools/lite-requirements.txt`, downloaded once into `.cache/lite/wheels/` (the only step that
  needs the network) and listed in a rebuilt `pyodide-lock.json` (the npm package's lock names
  Pyodide's own builds of them, which are not on PyPI);
- `piilab` itself: a wheel built from the checkout (`pip wheel --no-deps`), served from the
  site's piplite index; each notebook's first code cell installs it (`%pip install`).

The notebooks are the executed twins `notebooks/<lang>/NN_*.ipynb` of the chapters listed in
`_config.yml` (`sphinx.config.piilab_lite_chapters`; the book's extension adds the
"open in the browser" button to the same chapters). They are copied with what must differ in
Pyodide changed at copy time (see `lite_notebook`): the Colab set-up cell becomes the Pyodide
one; a cell that needs matplotlib (no offline build of it exists) or starts a process, or uses
what such a cell defines, keeps its stored output, its code commented out; MyST admonitions
become Markdown (solutions a closed `<details>`) and hidden solution cells start collapsed.
The contents mirror the repository's layout
(`_toc.yml`, `book/quizzes/`, `data/manifest.json`, `data/holdout/`, `notebooks/<lang>/`) so
that `piilab.course.lang.repo_root()` and `page_language()` work unchanged in the browser, where
the kernel runs in the notebook's folder (a `.jsonl` file is served as `NAME-jsonl.txt` and
renamed back by the set-up cell: JupyterLite 0.8.6 parses any "*json*" file as JSON).

Two pins are adapted at build time, and the lock lists the result's hash: PyYAML (a dependency
of piilab; PyPI has no pure-Python wheel) is its sdist repacked without the C extension, and
jupyterquiz is patched not to load MathJax from a CDN (`WHEEL_PATCHES`).

The built site's `piilab-lite.json` records the versions and the chapters.
"""

from __future__ import annotations

import argparse
import email
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "_config.yml"
REQUIREMENTS = REPO / "tools" / "lite-requirements.txt"
WHEEL_CACHE = REPO / ".cache" / "lite" / "wheels"
PYODIDE_NPM = REPO / "node_modules" / "pyodide"
#: The JupyterLite source folder (config, static/pyodide, pypi, contents); rebuilt every time.
STAGING = REPO / "_build" / "lite-src"
LANGUAGES = ("en", "ja")

#: Files of the npm package the browser needs (the rest is documentation, types, source maps).
PYODIDE_RUNTIME = ("pyodide.mjs", "pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm",
                   "python_stdlib.zip")
#: What the kernel loads at start-up and the chapters import: the roots of the locked set
#: (with the dependencies of the piilab wheel).
LOCK_ROOTS = ("micropip", "ipython", "jedi", "comm", "jupyterquiz", "jsonschema")
#: Pins that are source distributions with no wheel for Pyodide on PyPI but pure-Python code
#: (name -> folder of the package in the sdist): repacked here as `py3-none-any` wheels.
#: PyYAML's C extension is optional; without it `yaml` is plain Python.
REPACKED_SDISTS = {"pyyaml": "lib"}
#: Installed by each notebook's first code cell (piilab from the site's piplite index, the
#: others from the lock).
NOTEBOOK_PACKAGES = ("piilab", "jupyterquiz", "jsonschema")
#: Edits to pinned wheels, applied at build time (the lock lists the edited wheel's hash):
#: {name: [(file in the wheel, regular expression, replacement, expected number of matches)]}.
#: jupyterquiz loads MathJax 3 from cdn.jsdelivr.net when the page's MathJax cannot typeset,
#: which is the case in JupyterLab, and reads `MathJax.version[0]` where JupyterLab's MathJax
#: object has no version (a TypeError on the page). The quizzes have no math (piilab's
#: validator forbids `$`): no CDN, and no version is no MathJax.
WHEEL_PATCHES = {
    "jupyterquiz": [
        ("jupyterquiz/js/show_questions.js",
         r"\(function \(\) \{\s*var script = document\.createElement\('script'\);\s*"
         r"script\.src = 'https://cdn\.jsdelivr\.net/npm/mathjax@3/es5/tex-svg\.js';"
         r"[^}]*\}\)\(\);",
         "/* piilab (tools/build_lite.py): no MathJax from a CDN; the quizzes have no math */",
         2),
        ("jupyterquiz/js/show_questions.js",
         r"var version = MathJax\.version;",
         'var version = MathJax.version || "";',
         2),
    ],
}
#: How Pyodide's Python looks to dependency markers.
PYODIDE_MARKERS = {
    "implementation_name": "cpython", "implementation_version": "", "os_name": "posix",
    "platform_machine": "wasm32", "platform_python_implementation": "CPython",
    "platform_release": "", "platform_system": "Emscripten", "platform_version": "",
    "python_full_version": "", "python_version": "", "sys_platform": "emscripten", "extra": "",
}
#: Repository files the chapters read (through `repo_root()`), mirrored into the contents.
MIRRORED_FILES = ("_toc.yml", "data/manifest.json", "data/holdout/holdout.jsonl")

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
    f'for copy in Path("../../data").rglob("*{JSONL_COPY}"):\n'
    f'    copy.with_name(copy.name.removesuffix("{JSONL_COPY}") + ".jsonl").write_bytes(\n'
    "        copy.read_bytes())\n"
    'print("piilab", piilab.__version__, "ready")'
)
BADGE = re.compile(r"\[!\[[^\]]*\]\([^)]*colab-badge[^)]*\)\]\([^)]*\)")
#: An image the notebook would load from another host (markdown or HTML).
REMOTE_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*(?:https?:)?//|<img[^>]+src=[\"'](?:https?:)?//", re.I)
BADGE_TEXT = {
    "en": "*In your browser (JupyterLite): run the set-up cell below first.*",
    "ja": "*ブラウザ (JupyterLite) で実行中: まず下のセットアップのセルを実行してください。*",
}
#: Cells that cannot run in Pyodide: (pattern over the code, reason per language).
UNSUPPORTED = (
    (re.compile(r"^\s*(?:import|from)\s+(?:matplotlib|piilab\.(?:course\.)?plots\w*)\b",
                re.M), {
        "en": "matplotlib has no offline build for the browser: the output is the book's.",
        "ja": ("matplotlib はブラウザ用のオフライン版がないため、実行しません。\n"
               "# 出力は本書のものです。"),
    }),
    (re.compile(r"^\s*(?:import|from)\s+piilab\.wide\b", re.M), {
        "en": "the wide corpus needs Faker, which the browser build does not carry: the output "
              "is the book's.",
        "ja": ("ワイドコーパスには Faker が必要ですが、ブラウザ版には含まれていないため、"
               "実行しません。\n# 出力は本書のものです。"),
    }),
    (re.compile(r"\bsubprocess\.(?:run|Popen|call|check_call|check_output)\b"), {
        "en": "a browser cannot start another Python process: the output is the book's.",
        "ja": ("ブラウザでは別の Python プロセスを起動できないため、実行しません。\n"
               "# 出力は本書のものです。"),
    }),
)


#: A MyST colon fence (`:::{tip} Title`, options such as `:class: dropdown`, body, `:::`), which
#: JupyterLab shows as plain text.
MYST_FENCE = re.compile(
    r"^:::\{(?P<kind>[\w-]+)\}[ \t]*(?P<title>[^\n]*)\n(?P<options>(?::[\w-]+:[^\n]*\n)*)"
    r"(?P<body>.*?)^:::[ \t]*$", re.M | re.S)


class BuildError(RuntimeError):
    pass


# --------------------------------------------------------------------------------------------
# configuration


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


# --------------------------------------------------------------------------------------------
# pinned wheels for Pyodide


def pinned_wheels() -> dict[str, tuple[str, str]]:
    """`tools/lite-requirements.txt` as {name: (version, sha256)}."""
    pins: dict[str, tuple[str, str]] = {}
    for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        spec, _, digest = line.partition(" --hash=sha256:")
        name, _, version = spec.partition("==")
        if not (version and re.fullmatch(r"[0-9a-f]{64}", digest.strip())):
            raise BuildError(f"{REQUIREMENTS.name}: need NAME==VERSION --hash=sha256:HEX: {line}")
        pins[canonicalize_name(name)] = (version.strip(), digest.strip())
    return pins


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cached_wheels(pins: dict[str, tuple[str, str]], offline: bool) -> dict[str, Path]:
    """The pinned wheels in `.cache/lite/wheels/`, downloaded (hash-checked by pip) if missing;
    the pinned sdists of `REPACKED_SDISTS` repacked as wheels."""
    def scan() -> dict[str, Path]:
        by_hash = {sha256(p): p for p in (*WHEEL_CACHE.glob("*.whl"),
                                          *WHEEL_CACHE.glob("*.tar.gz"))}
        return {name: by_hash[digest] for name, (_, digest) in pins.items() if digest in by_hash}

    WHEEL_CACHE.mkdir(parents=True, exist_ok=True)
    found = scan()
    missing = sorted(set(pins) - set(found))
    if missing:
        if offline:
            raise BuildError(f"--offline and not in {WHEEL_CACHE}: {', '.join(missing)}")
        print(f"build_lite: downloading {len(missing)} pinned file(s) into {WHEEL_CACHE}")
        wheels = [name for name in missing if name not in REPACKED_SDISTS]
        sdists = [name for name in missing if name in REPACKED_SDISTS]
        # wheels as Pyodide's Python sees them; sdists as they are
        pip_download(pins, wheels, ["--only-binary=:all:", "--platform", "any",
                                    "--python-version", "3.14", "--implementation", "py",
                                    "--abi", "none"])
        pip_download(pins, sdists, ["--no-binary=:all:"])
        found = scan()
        still = sorted(set(pins) - set(found))
        if still:
            raise BuildError(f"pip download did not produce the pinned files: {still}")
    for name, path in list(found.items()):
        if path.name.endswith(".tar.gz"):
            if name not in REPACKED_SDISTS:
                raise BuildError(f"{name} is pinned as an sdist but not in REPACKED_SDISTS")
            found[name] = repack_sdist(path, REPACKED_SDISTS[name])
        elif name in REPACKED_SDISTS:
            raise BuildError(f"{name} must be pinned as its sdist (REPACKED_SDISTS)")
        if name in WHEEL_PATCHES:
            found[name] = patch_wheel(found[name], WHEEL_PATCHES[name])
    return found


def patch_wheel(wheel: Path, patches: list[tuple[str, str, str, int]]) -> Path:
    """A copy of `wheel` (same file name, in a `patched/` folder) with `patches` applied."""
    import base64

    target = WHEEL_CACHE / "patched" / wheel.name
    target.parent.mkdir(exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        files = {info.filename: archive.read(info) for info in archive.infolist()}
    changed = {}
    for member, pattern, replacement, count in patches:
        text, found = re.subn(pattern, replacement, files[member].decode("utf-8"))
        if found != count:
            raise BuildError(f"{wheel.name}: {member}: the patch matched {found} times, "
                             f"expected {count}")
        files[member] = text.encode("utf-8")
        digest = base64.urlsafe_b64encode(hashlib.sha256(files[member]).digest()).rstrip(b"=")
        changed[member] = f"{member},sha256={digest.decode()},{len(files[member])}"
    record = next(name for name in files if name.endswith(".dist-info/RECORD"))
    files[record] = "".join(
        changed.get(line.split(",", 1)[0], line) + "\n"
        for line in files[record].decode("utf-8").splitlines()
    ).encode("utf-8")
    write_wheel(target, files)
    return target


def write_wheel(path: Path, files: dict[str, bytes]) -> None:
    """A zip with fixed timestamps and modes: the same files give the same bytes."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            out.writestr(entry, data)


def pip_download(pins: dict[str, tuple[str, str]], names: list[str], options: list[str]) -> None:
    if not names:
        return
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
        for name in names:
            version, digest = pins[name]
            handle.write(f"{name}=={version} --hash=sha256:{digest}\n")
    try:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--require-hashes", *options, "--dest", str(WHEEL_CACHE),
                        "-r", handle.name], check=True)
    finally:
        os.unlink(handle.name)


def repack_sdist(sdist: Path, package_folder: str) -> Path:
    """A `py3-none-any` wheel of the pure-Python package(s) in `sdist` (byte-reproducible)."""
    import base64
    import tarfile

    with tarfile.open(sdist) as archive:
        members = {m.name: m for m in archive.getmembers() if m.isfile()}
        root = sdist.name[: -len(".tar.gz")]
        info = email.message_from_bytes(archive.extractfile(members[f"{root}/PKG-INFO"]).read())
        name, version = info["Name"], info["Version"]
        prefix = f"{root}/{package_folder}/"
        files = {
            member[len(prefix):]: archive.extractfile(members[member]).read()
            for member in sorted(members)
            if member.startswith(prefix) and member.endswith(".py")
        }
        license_text = archive.extractfile(members[f"{root}/LICENSE"]).read()
    dist = f"{canonicalize_name(name).replace('-', '_')}-{version}"
    wheel = WHEEL_CACHE / f"{dist}-py3-none-any.whl"
    files[f"{dist}.dist-info/METADATA"] = str(info).encode("utf-8")
    files[f"{dist}.dist-info/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: piilab tools/build_lite.py\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n")
    files[f"{dist}.dist-info/licenses/LICENSE"] = license_text
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}.dist-info/RECORD,,")
    files[f"{dist}.dist-info/RECORD"] = ("\n".join(record) + "\n").encode("utf-8")
    write_wheel(wheel, files)
    return wheel


def wheel_metadata(path: Path) -> email.message.Message:
    with zipfile.ZipFile(path) as archive:
        name = next(n for n in archive.namelist()
                    if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(archive.read(name))


def wheel_imports(path: Path) -> list[str]:
    """Top-level importable names of a wheel (folders with an __init__.py, modules)."""
    names = set()
    with zipfile.ZipFile(path) as archive:
        for entry in archive.namelist():
            top, _, rest = entry.partition("/")
            if top.endswith((".dist-info", ".data")):
                continue
            if rest == "__init__.py":
                names.add(top)
            elif not rest and top.endswith(".py"):
                names.add(top[:-3])
    return sorted(names)


def pyodide_markers(python_version: str) -> dict[str, str]:
    return {**PYODIDE_MARKERS, "python_full_version": python_version,
            "implementation_version": python_version,
            "python_version": ".".join(python_version.split(".")[:2])}


def wheel_depends(path: Path, markers: dict[str, str]) -> list[str]:
    """The wheel's dependencies in Pyodide (markers evaluated, extras left out)."""
    depends = set()
    for line in wheel_metadata(path).get_all("Requires-Dist") or []:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate(markers):
            depends.add(canonicalize_name(req.name))
    return sorted(depends)


def lock_packages(wheels: dict[str, Path], roots: list[str], python_version: str
                  ) -> dict[str, dict]:
    """pyodide-lock.json entries for the pinned wheels; every dependency of `roots` must be
    pinned, and every pin needed."""
    markers = pyodide_markers(python_version)
    packages: dict[str, dict] = {}
    for name, path in sorted(wheels.items()):
        meta = wheel_metadata(path)
        depends = wheel_depends(path, markers)
        packages[name] = {
            "name": name, "version": meta["Version"], "file_name": path.name,
            "install_dir": "site", "package_type": "package", "sha256": sha256(path),
            "imports": wheel_imports(path), "depends": depends,
            "unvendored_tests": False,
        }
    needed, stack = set(), list(roots)
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        if name not in packages:
            raise BuildError(f"{name} is needed in Pyodide but not pinned in {REQUIREMENTS.name}")
        needed.add(name)
        stack.extend(packages[name]["depends"])
    unused = sorted(set(packages) - needed)
    if unused:
        print(f"build_lite: warning: {REQUIREMENTS.name} pins what nothing needs (left out): "
              f"{', '.join(unused)}", file=sys.stderr)
    return {name: entry for name, entry in packages.items() if name in needed}


# --------------------------------------------------------------------------------------------
# Pyodide runtime


def pyodide_versions() -> tuple[str, str]:
    """(version of node_modules/pyodide, version the kernel expects); they must agree."""
    from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION

    pinned = json.loads((REPO / "package.json").read_text("utf-8"))["dependencies"]["pyodide"]
    package = PYODIDE_NPM / "package.json"
    if not package.is_file():
        raise BuildError(f"{PYODIDE_NPM} is missing: run `make node_modules/.package-lock.json` "
                         "(npm ci installs the pinned pyodide)")
    installed = json.loads(package.read_text("utf-8"))["version"]
    if not installed == pinned == PYODIDE_VERSION:
        raise BuildError(f"pyodide versions disagree: node_modules {installed}, package.json "
                         f"{pinned}, jupyterlite-pyodide-kernel expects {PYODIDE_VERSION}")
    return installed, PYODIDE_VERSION


def stage_pyodide(target: Path, wheels: dict[str, Path], piilab_wheel: Path) -> dict:
    """static/pyodide: the npm runtime, the pinned wheels and a lock that lists exactly them."""
    target.mkdir(parents=True)
    for name in PYODIDE_RUNTIME:
        shutil.copy2(PYODIDE_NPM / name, target / name)
    npm_lock = json.loads((PYODIDE_NPM / "pyodide-lock.json").read_text("utf-8"))
    python = npm_lock["info"]["python"]
    roots = [*LOCK_ROOTS, *wheel_depends(piilab_wheel, pyodide_markers(python))]
    packages = lock_packages(wheels, roots, python)
    for name in packages:
        shutil.copy2(wheels[name], target / wheels[name].name)
    lock = {"info": npm_lock["info"], "packages": packages}
    (target / "pyodide-lock.json").write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n",
                                              encoding="utf-8")
    return lock


# --------------------------------------------------------------------------------------------
# piilab


def build_piilab_wheel(checkout: Path, dest: Path) -> Path:
    """`pip wheel --no-deps` of the checkout, built in a temporary copy (the tree stays clean)."""
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "src"
        source.mkdir()
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            shutil.copy2(checkout / name, source / name)
        shutil.copytree(checkout / "piilab", source / "piilab", ignore=ignore)
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
             "--wheel-dir", str(dest), str(source)],
            check=True,
        )
    (wheel,) = dest.glob("piilab-*.whl")
    check_package_data(checkout, wheel)
    return wheel


def check_package_data(checkout: Path, wheel: Path) -> None:
    """Every data file of the package (JSON, YAML) must be in the wheel: in the browser there is
    no checkout to fall back on."""
    with zipfile.ZipFile(wheel) as archive:
        packed = set(archive.namelist())
    data = sorted(p.relative_to(checkout).as_posix() for p in (checkout / "piilab").rglob("*")
                  if p.suffix in {".json", ".yaml", ".yml"} and "__pycache__" not in p.parts)
    missing = [path for path in data if path not in packed]
    if missing:
        raise BuildError(f"{wheel.name} lacks package data (pyproject.toml "
                         f"[tool.setuptools.package-data]): {missing}")


# --------------------------------------------------------------------------------------------
# notebooks and contents


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
    import ast

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
    import ast

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


def lite_notebook(notebook: dict, lang: str) -> dict:
    """The notebook as the browser runs it (see the module docstring); raises if it has no Colab
    set-up cell to replace."""
    notebook = json.loads(json.dumps(notebook))
    cells = notebook["cells"]
    setup = [c for c in cells if c["cell_type"] == "code" and "google.colab" in _source(c)]
    if len(setup) != 1:
        raise BuildError(f"expected one Colab set-up cell, found {len(setup)}")
    cell = setup[0]
    _set_source(cell, BOOTSTRAP[lang] + BOOTSTRAP_CODE)
    cell["outputs"], cell["execution_count"] = [], None
    cell.setdefault("metadata", {})["tags"] = ["piilab-lite-setup"]

    title = next((c for c in cells if c["cell_type"] == "markdown"), None)
    if title is not None:
        _set_source(title, BADGE.sub(BADGE_TEXT[lang], _source(title)))

    unavailable: dict[str, dict[str, str]] = {}  # name -> why the cell defining it is skipped
    for cell in cells:
        if cell["cell_type"] == "markdown":
            _set_source(cell, plain_markdown(_source(cell)))
            if REMOTE_IMAGE.search(_source(cell)):
                raise BuildError(f"a markdown cell loads an image from the internet: "
                                 f"{REMOTE_IMAGE.search(_source(cell))[0]!r}")
        if cell["cell_type"] != "code" or cell is setup[0]:
            continue
        # What the book hides stays collapsed (a click shows it): solutions, the quiz's code.
        tags = cell.get("metadata", {}).get("tags", [])
        if "hide-cell" in tags or "remove-input" in tags:
            cell["metadata"].setdefault("jupyter", {})["source_hidden"] = True
        if "hide-cell" in tags:
            cell["metadata"]["jupyter"]["outputs_hidden"] = True
        # The book's outputs stay, to read before running; the numbers go, so that the prompts
        # show what ran in this browser session.
        cell["execution_count"] = None
        for output in cell.get("outputs", []):
            if "execution_count" in output:
                output["execution_count"] = None
        code = _source(cell)
        defined, used = cell_names(code)
        reason = next((reason for pattern, reason in UNSUPPORTED if pattern.search(code)), None)
        if reason is None:
            # a cell that uses what a skipped cell would have defined cannot run either
            reason = next((unavailable[name] for name in sorted(used - defined)
                           if name in unavailable), None)
        if reason is None:
            for name in defined:
                unavailable.pop(name, None)
            continue
        kept = comment_out(code)
        _set_source(cell, f"# {reason[lang]}\n{kept}\n")
        cell.setdefault("metadata", {}).setdefault("tags", []).append("piilab-lite-skip")
        still_defined, _ = cell_names("\n".join(line for line in kept.splitlines()
                                                if not line.startswith("#")))
        unavailable.update({name: reason for name in defined - still_defined})
    for cell in cells:  # one string per source: JupyterLite hands the file as is to JupyterLab
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


# --------------------------------------------------------------------------------------------
# JupyterLite


def lite_settings() -> dict:
    return {
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": "PII Lab",
            "disabledExtensions": [
                # news and update checks would ask jupyterlab.github.io / PyPI
                "@jupyterlab/apputils-extension:announcements",
            ],
            "litePluginSettings": {
                "@jupyterlite/pyodide-kernel-extension:kernel": {
                    # never fall back to pypi.org: every wheel is on the site
                    "disablePyPIFallback": True,
                },
            },
        },
    }


def build(out: Path, offline: bool, checkout: Path = REPO) -> dict:
    import jupyterlite_core
    import jupyterlite_pyodide_kernel

    chapters, _ = lite_config()
    pyodide_version, _ = pyodide_versions()
    wheels = cached_wheels(pinned_wheels(), offline)

    if STAGING.exists():
        shutil.rmtree(STAGING)
    STAGING.mkdir(parents=True)
    piilab_wheel = build_piilab_wheel(checkout, STAGING / "pypi")
    lock = stage_pyodide(STAGING / "static" / "pyodide", wheels, piilab_wheel)
    notebooks = stage_contents(checkout, STAGING / "contents", chapters)
    (STAGING / "jupyter-lite.json").write_text(json.dumps(lite_settings(), indent=2) + "\n",
                                               encoding="utf-8")
    kernel_extension = (Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyterlite"
                        / "pyodide-kernel-extension")
    if not (kernel_extension / "package.json").is_file():
        raise BuildError(f"{kernel_extension} is missing: install the lite extra")
    (STAGING / "jupyter_lite_config.json").write_text(json.dumps({
        "LiteBuildConfig": {
            # only the Pyodide kernel, not whatever other lab extensions the venv holds
            "ignore_sys_prefix": True,
            "federated_extensions": [str(kernel_extension)],
            "apps": ["lab", "notebooks", "tree"],
            # the kernel's file system reads only files of a known type (chapter 05 reads
            # data/holdout/holdout.jsonl)
            "extra_file_types": {
                "jsonl": {"name": "jsonl", "extensions": [".jsonl"],
                          "mimeTypes": ["application/jsonl"], "fileFormat": "text"},
            },
            "no_sourcemaps": True,
            "no_unused_shared_packages": True,
            "contents": ["contents"],
            "output_dir": str(out),
        },
    }, indent=2) + "\n", encoding="utf-8")

    if out.exists():
        shutil.rmtree(out)
    # the Pyodide of static/pyodide, never one named by the environment
    env = {k: v for k, v in os.environ.items() if k != "JUPYTERLITE_PYODIDE_URL"}
    subprocess.run([sys.executable, "-m", "jupyterlite_core", "build",
                    "--lite-dir", str(STAGING)], cwd=STAGING, check=True, env=env)

    check_site(out)
    info = {
        "chapters": chapters,
        "notebooks": notebooks,
        "piilab_wheel": piilab_wheel.name,
        "versions": {
            "jupyterlite-core": jupyterlite_core.__version__,
            "jupyterlite-pyodide-kernel": jupyterlite_pyodide_kernel.__version__,
            "pyodide": pyodide_version,
            "python": lock["info"]["python"],
            "wheels": {name: entry["version"] for name, entry in lock["packages"].items()},
        },
    }
    (out / "piilab-lite.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


def check_site(out: Path) -> None:
    """The kernel must load Pyodide from the site and never fall back to PyPI."""
    config = json.loads((out / "jupyter-lite.json").read_text("utf-8"))["jupyter-config-data"]
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    if not str(kernel.get("pyodideUrl", "")).startswith("./static/pyodide/"):
        raise BuildError(f"pyodideUrl is not local: {kernel.get('pyodideUrl')!r}")
    if kernel.get("disablePyPIFallback") is not True:
        raise BuildError("disablePyPIFallback is not set")
    urls = kernel.get("pipliteUrls") or []
    remote = [u for u in urls if not u.startswith("./")]
    if remote or not urls:
        raise BuildError(f"pipliteUrls must all be local: {urls}")
    for name in (*PYODIDE_RUNTIME, "pyodide-lock.json"):
        if not (out / "static" / "pyodide" / name).is_file():
            raise BuildError(f"static/pyodide/{name} is missing from the site")


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
