"""What the browser benchmarks need before they start: Debian's ``chromium`` and Playwright's Python package."""

from __future__ import annotations

import shutil
import sys


def find_chromium(prog: str) -> tuple[str, object] | None:
    """``(chromium path, playwright.sync_api.sync_playwright)``, or None after one line on stderr saying what is missing.

    Never ``playwright install``: the benchmarks drive the system's Chromium, as the browser tests do.
    """
    chromium = shutil.which("chromium")
    if not chromium:
        print(f"{prog}: no `chromium` on PATH (Debian: apt-get install chromium)", file=sys.stderr)
        return None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print(f"{prog}: playwright (python) is not installed (pip install -r requirements.txt)", file=sys.stderr)
        return None
    return chromium, sync_playwright
