"""The book builds with every page executed, and the HTML it writes needs no network.

``test_book_builds`` (marked ``slow``) runs ``jupyter-book build . --builder html --all -W --keep-going``
with execution forced (``_config.yml``: ``execute_notebooks: force``, ``raise_on_error: true``):
any cell that raises, any Sphinx warning (a broken reference, a page missing from ``_toc.yml``,
an output nobody can render) fails it. ``--all`` matters: without it Sphinx re-reads only pages
whose source changed, so a change in the package would execute nothing. ``make test`` builds the
book just before pytest with the same command and sets ``GPUCOMM_BOOK_BUILT=1``; the test then
skips the second build.

The other tests read the built HTML (``_build/html``) without a browser: where scripts come
from, and that plotly.js is loaded once per page and never inlined. ``test_browser.py`` opens
the same build in Chromium.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
VENDOR = ROOT / "assets" / "vendor"
# What _config.yml points at; scripts/fetch_assets.sh puts them there.
VENDOR_FILES = ("plotly/plotly.min.js", "requirejs/require.js", "jupyter-widgets/embed-amd.js",
                "mathjax/es5/tex-mml-chtml.js")
BUILD_TIMEOUT_S = 1200


def _jupyter_book() -> str:
    """The jupyter-book next to this interpreter (the project's venv), else the one on PATH."""
    here = Path(sys.executable).parent / "jupyter-book"
    found = str(here) if here.exists() else shutil.which("jupyter-book")
    if not found:
        pytest.fail("jupyter-book is not installed: run `make test` (it creates .venv)")
    return found


def _built_pages() -> list[Path]:
    if not (HTML / "index.html").is_file():
        pytest.skip("no built book in _build/html: run `make book` (or the slow test_book_builds)")
    return [p for p in sorted(HTML.rglob("*.html"))
            if not re.match(r"(_static|_sources)/|(genindex|search)\.html$", p.relative_to(HTML).as_posix())]


@pytest.mark.slow
def test_book_builds():
    """Build the whole book, executing every page; any cell error or Sphinx warning fails."""
    if os.environ.get("GPUCOMM_BOOK_BUILT") == "1" and (HTML / "index.html").is_file():
        pytest.skip("GPUCOMM_BOOK_BUILT=1: `make` built the book with the same strict command just before")
    if not all((VENDOR / f).is_file() for f in VENDOR_FILES):
        subprocess.run(["bash", str(ROOT / "scripts" / "fetch_assets.sh")], cwd=ROOT, check=True,
                       env=dict(os.environ, PYTHON=sys.executable))
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    cmd = [_jupyter_book(), "build", str(ROOT), "--builder", "html", "--all", "-W", "--keep-going"]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    took_s = time.monotonic() - start
    log = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout + proc.stderr)
    problems = [line for line in log.splitlines()
                if re.search(r"WARNING|ERROR|CRITICAL|Traceback|CellExecutionError", line)
                and "IPKernelApp" not in line]  # ipykernel's note about TCP transport, not ours
    assert proc.returncode == 0, (
        f"`{' '.join(cmd[1:])}` failed (exit {proc.returncode}, {took_s:.0f} s):\n"
        + "\n".join(problems[:50]) + "\n--- end of log ---\n" + log[-4000:])
    assert (HTML / "index.html").is_file()


def test_vendor_assets_in_build():
    """Every script _config.yml refers to was copied into _static (else pages go blank offline)."""
    _built_pages()
    missing = [f for f in VENDOR_FILES if not (HTML / "_static" / f).is_file()]
    assert not missing, f"missing from _build/html/_static: {missing} (run scripts/fetch_assets.sh, rebuild)"


class _ResourceURLs(HTMLParser):
    """Collect the URLs a page loads by itself (not the links a reader may click)."""

    LOADING_LINK_RELS = {"stylesheet", "preload", "modulepreload", "prefetch", "icon", "manifest"}

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "video", "audio", "embed", "track") and a.get("src"):
            self.urls.append(a["src"])
        elif tag == "link" and a.get("href") and set((a.get("rel") or "").lower().split()) & self.LOADING_LINK_RELS:
            self.urls.append(a["href"])


def test_no_page_loads_anything_from_the_internet():
    """No script, stylesheet, font preload, image or iframe points at another host."""
    offenders = {}
    for page in _built_pages():
        parser = _ResourceURLs()
        parser.feed(page.read_text(errors="replace"))
        external = sorted({u for u in parser.urls if re.match(r"(https?:)?//", u, re.I)})
        if external:
            offenders[page.relative_to(HTML).as_posix()] = external
    assert not offenders, f"pages that would fetch from the internet: {offenders}"


def test_plotly_js_loaded_once_per_page_and_never_inlined():
    """plotly.min.js comes from _static exactly once per page; no figure inlines its own copy."""
    for page in _built_pages():
        text = page.read_text(errors="replace")
        rel = page.relative_to(HTML).as_posix()
        if "http-equiv=\"refresh\"" in text[:2000].lower():
            continue  # the root index.html stub that redirects to the first page
        assert len(re.findall(r"<script[^>]+plotly/plotly\.min\.js", text)) == 1, rel
        # The banner plotly.min.js starts with: present only if a page inlined the library
        # (plotly's "notebook" renderer) instead of calling use_book_renderer().
        assert "plotly.js v" not in text, f"{rel} inlines plotly.js: call use_book_renderer() on that page"
        assert page.stat().st_size < 3_000_000, f"{rel} is {page.stat().st_size / 1e6:.1f} MB"


def test_only_the_entry_scripts_of_vendored_libraries_are_loaded():
    """One MathJax entry script at most, and require.js only right before the widget embedder.

    Guards against a folder named ``_static`` at the book root: Jupyter Book would then add every
    .js under the static paths to every page (hundreds of MathJax components).
    """
    for page in _built_pages():
        text = page.read_text(errors="replace")
        rel = page.relative_to(HTML).as_posix()
        scripts = re.findall(r"<script[^>]*\bsrc=\"([^\"]+)\"", text)
        vendored = [s for s in scripts if re.search(r"_static/(mathjax|requirejs|jupyter-widgets)/", s)]
        mathjax = [s for s in vendored if "/mathjax/" in s]
        assert len(mathjax) <= 1 and all("/mathjax/es5/tex-mml-chtml.js" in s for s in mathjax), (rel, mathjax)
        order = [s.split("?")[0].rsplit("/", 1)[-1] for s in scripts]
        if "embed-amd.js" in order:
            # plotly.min.js must run before require.js defines `define`, or it registers as an
            # AMD module and window.Plotly stays undefined; the embedder needs require.js first.
            assert (order.index("plotly.min.js") < order.index("require.js") < order.index("require-config.js")
                    < order.index("embed-amd.js")), (rel, order)
            assert 'data-jupyter-widgets-cdn="' in text and "cdn.jsdelivr" not in text, rel
        else:
            assert "require.js" not in order, f"{rel} loads require.js without any widget"


def test_plotly_figures_use_deterministic_ids():
    """Figures come from the gpucomm_book renderer: ids "fig-<sha1>", not random UUIDs."""
    for page in _built_pages():
        text = page.read_text(errors="replace")
        ids = re.findall(r"<div id=\"([^\"]+)\" class=\"plotly-graph-div\"", text)
        random_ids = [i for i in ids if not re.fullmatch(r"fig-[0-9a-f]{12}(-\d+)?", i)]
        assert not random_ids, (f"{page.relative_to(HTML)}: figures not drawn by the gpucomm_book renderer "
                                f"(call use_book_renderer()): {random_ids}")


def test_no_page_links_to_a_repository_that_is_not_configured():
    """Repository, Binder and Colab buttons appear only once _config.yml names the repository."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    repository = (config.get("repository") or {}).get("url") or ""
    for page in _built_pages():
        text = page.read_text(errors="replace")
        rel = page.relative_to(HTML).as_posix()
        if not repository:
            for host in ("mybinder.org", "colab.research.google.com", "github.com/gpucomm"):
                assert host not in text, f"{rel} links to {host} but _config.yml names no repository"
