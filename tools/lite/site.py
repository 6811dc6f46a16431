"""The JupyterLite site: its settings, `jupyter lite build`, and the checks of the result."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .notebooks import stage_contents
from .paths import REPO, STAGING, BuildError, lite_config
from .wheels import (
    PYODIDE_RUNTIME,
    START_PACKAGES,
    build_piilab_wheel,
    cached_wheels,
    pinned_wheels,
    pyodide_versions,
    stage_pyodide,
)

#: The Jupyter Notebook plugin that scrolls tall outputs.
SCROLL_OUTPUT = "@jupyter-notebook/notebook-extension:scroll-output"


def lite_settings() -> dict:
    return {
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": "PII Lab",
            "disabledExtensions": [
                # news and update checks would ask jupyterlab.github.io / PyPI
                "@jupyterlab/apputils-extension:announcements",
            ],
            "settingsOverrides": {
                # the notebook app folds any output taller than ~1,800 px into a small
                # scrolling box; a chapter's quiz is taller, so its feedback was cut off. The
                # book shows every output whole: so does the notebook.
                SCROLL_OUTPUT: {"autoScrollOutputs": False},
            },
            "litePluginSettings": {
                "@jupyterlite/pyodide-kernel-extension:kernel": {
                    # never fall back to pypi.org: every wheel is on the site
                    "disablePyPIFallback": True,
                    # the kernel's start-up packages, fetched by Pyodide in parallel
                    "loadPyodideOptions": {"packages": list(START_PACKAGES)},
                },
            },
        },
    }


# The icons the notebook app swaps in as the kernel goes idle and busy: JupyterLab ships them
# in its server's static folder, which a JupyterLite site does not have, so without these
# every kernel state change is a 404 in the console.
FAVICONS = {"favicon-notebook.ico": "favicon.ico", "favicon-busy-1.ico": "favicon-busy.ico"}


def stage_favicons(checkout: Path, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in FAVICONS.items():
        shutil.copyfile(checkout / "book" / "_static" / source, folder / name)


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

    # (after the build: jupyterlite copies only the static files its add-ons know)
    stage_favicons(checkout, out / "static" / "favicons")
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
    overrides = config.get("settingsOverrides", {})
    if overrides.get(SCROLL_OUTPUT, {}).get("autoScrollOutputs") is not False:
        raise BuildError(f"{SCROLL_OUTPUT} autoScrollOutputs is not off")
    for name in FAVICONS:
        if not (out / "static" / "favicons" / name).is_file():
            raise BuildError(f"static/favicons/{name} is missing from the site")
    lock = json.loads((out / "static" / "pyodide" / "pyodide-lock.json").read_text("utf-8"))
    preloaded = (kernel.get("loadPyodideOptions") or {}).get("packages") or []
    missing = sorted(set(preloaded) - set(lock["packages"]))
    if missing:
        raise BuildError(f"loadPyodideOptions.packages not in the lock: {missing}")
    urls = kernel.get("pipliteUrls") or []
    remote = [u for u in urls if not u.startswith("./")]
    if remote or not urls:
        raise BuildError(f"pipliteUrls must all be local: {urls}")
    for name in (*PYODIDE_RUNTIME, "pyodide-lock.json"):
        if not (out / "static" / "pyodide" / name).is_file():
            raise BuildError(f"static/pyodide/{name} is missing from the site")
