"""Shared by the browser tests (`test_browser.py`, `test_lite.py`): find Chromium, launch it
through Playwright, and skip or fail when it is missing.

Without Chromium (or Playwright, from the test extra) a browser test is skipped, unless `CI` is
set or `PIILAB_REQUIRE_BROWSER=1`, in which case it fails (`make browser-deps` installs it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NoReturn

import pytest

#: Headless Chromium as root in a container, with no background traffic.
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking")


def chromium() -> str | None:
    """Chromium's executable: `PIILAB_CHROMIUM`, Debian's, or the first on the PATH."""
    candidates = [
        os.environ.get("PIILAB_CHROMIUM", ""), "/usr/bin/chromium", "/usr/bin/chromium-browser"
    ]
    return next((c for c in candidates if c and Path(c).exists()), None) or shutil.which("chromium")


def missing(message: str) -> NoReturn:
    """Skip, or fail where the browser test is required (CI or PIILAB_REQUIRE_BROWSER=1)."""
    if os.environ.get("CI") or os.environ.get("PIILAB_REQUIRE_BROWSER") == "1":
        pytest.fail(message + "; required because CI or PIILAB_REQUIRE_BROWSER=1 is set")
    pytest.skip(message)


@contextlib.contextmanager
def launched(extra_args: Sequence[str] = ()) -> Iterator[object]:
    """A Playwright Chromium browser, closed on exit (skips or fails when there is none)."""
    executable = chromium()
    if executable is None:
        missing("Chromium not found (install it with `make browser-deps`)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("Playwright not found: needs the test extra: pip install -e '.[test]'")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable,
                                             args=[*CHROMIUM_ARGS, *extra_args])
        try:
            yield browser
        finally:
            browser.close()
