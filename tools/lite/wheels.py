"""The Python side of the browser: pinned wheels for Pyodide, the Pyodide runtime from npm, the
lock that lists exactly them, and the piilab wheel built from the checkout."""

from __future__ import annotations

import base64
import email
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .paths import PYODIDE_NPM, REPO, REQUIREMENTS, WHEEL_CACHE, BuildError

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
#: The kernel's own wheels, shipped inside jupyterlite-pyodide-kernel (its piplite index): listed
#: in the lock too, so that Pyodide loads them with the rest at start-up (`START_PACKAGES`).
KERNEL_WHEELS = ("ipykernel", "piplite", "pyodide-kernel")
KERNEL_PYPI = (Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyterlite"
               / "pyodide-kernel-extension" / "static" / "pypi")
#: What the kernel needs before it is ready: without this list it installs micropip, then
#: piplite, then ipykernel, comm, pyodide-kernel, jedi and IPython one after the other, each a
#: round of resolving and fetching; given as `loadPyodideOptions.packages`, Pyodide fetches them
#: all (with their dependencies) in parallel from the lock while it starts.
START_PACKAGES = ("micropip", "piplite", "ipykernel", "comm", "pyodide-kernel", "jedi",
                  "ipython")
#: Installed by each notebook's first code cell (piilab from the site's piplite index, the
#: others from the lock).
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


def kernel_wheels() -> dict[str, Path]:
    """The kernel's own wheels (`KERNEL_WHEELS`) from the installed jupyterlite-pyodide-kernel."""
    found = {}
    for name in KERNEL_WHEELS:
        matches = sorted(KERNEL_PYPI.glob(f"{name.replace('-', '_')}-*-py3-none-any.whl"))
        if len(matches) != 1:
            raise BuildError(f"expected one {name} wheel in {KERNEL_PYPI}, found {matches}: "
                             "install the lite extra")
        found[name] = matches[0]
    return found


def stage_pyodide(target: Path, wheels: dict[str, Path], piilab_wheel: Path) -> dict:
    """static/pyodide: the npm runtime, the pinned wheels and the kernel's, and a lock that lists
    exactly them."""
    target.mkdir(parents=True)
    for name in PYODIDE_RUNTIME:
        shutil.copy2(PYODIDE_NPM / name, target / name)
    npm_lock = json.loads((PYODIDE_NPM / "pyodide-lock.json").read_text("utf-8"))
    python = npm_lock["info"]["python"]
    wheels = {**wheels, **kernel_wheels()}
    roots = [*LOCK_ROOTS, *START_PACKAGES,
             *wheel_depends(piilab_wheel, pyodide_markers(python))]
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
