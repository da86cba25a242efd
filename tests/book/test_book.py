"""The book builds with every page executed, and the HTML it writes needs no network.

``test_book_builds`` (marked ``slow``) runs ``jupyter-book build . --builder html --all -W --keep-going``
with execution forced (``_config.yml``: ``execute_notebooks: force``, ``raise_on_error: true``):
any cell that raises, any Sphinx warning (a broken reference, a page missing from ``_toc.yml``,
an output nobody can render) fails it. ``--all`` matters: without it Sphinx re-reads only pages
whose source changed, so a change in the package would execute nothing. ``make test`` builds the
book just before pytest with the same command and sets ``GPUCOMM_BOOK_BUILT=1``; the test then
skips the second build.

The other tests read the built HTML (``_build/html``, or the folder ``GPUCOMM_BOOK_HTML`` names)
without a browser: where scripts come from, and that each page loads only what it uses (plotly.js
once on pages with figures, never inlined; MathJax on pages with math; no 1.5 MB Font Awesome
script). ``test_browser.py`` opens the same build in Chromium; ``benchmarks/bench_page_weight.py``
measures what a reader downloads.
"""

from __future__ import annotations

import json
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
# Another build can be checked without touching _build: GPUCOMM_BOOK_HTML=/tmp/jb/_build/html.
HTML = Path(os.environ.get("GPUCOMM_BOOK_HTML") or ROOT / "_build" / "html")
VENDOR = ROOT / "assets" / "vendor"
# What _config.yml points at; scripts/fetch_assets.sh puts them there.
PLOTLY_JS = "plotly/plotly-cartesian.min.js"
VENDOR_FILES = (PLOTLY_JS, "requirejs/require.js", "jupyter-widgets/embed-amd.js", "mathjax/es5/tex-mml-chtml.js",
                "pyodide/pyodide.mjs")
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
    if os.environ.get("GPUCOMM_BOOK_HTML"):
        pytest.skip("GPUCOMM_BOOK_HTML names a book built elsewhere: the tests read that one")
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


def _is_redirect_stub(text: str) -> bool:
    """The root index.html: a meta refresh to the first page, no content of its own."""
    return 'http-equiv="refresh"' in text[:2000].lower()


def _script_srcs(text: str) -> list[str]:
    return re.findall(r"<script[^>]*\bsrc=\"([^\"]+)\"", text)


def test_plotly_js_only_on_pages_with_figures_once_and_never_inlined():
    """plotly.js comes from _static exactly once on a page that draws a figure, never elsewhere.

    No figure inlines its own copy, and no other plotly.js file (the 4.8 MB full bundle) loads.
    """
    with_figures = 0
    for page in _built_pages():
        text = page.read_text(errors="replace")
        rel = page.relative_to(HTML).as_posix()
        if _is_redirect_stub(text):
            continue
        plotly_scripts = [s for s in _script_srcs(text) if re.search(r"plotly[^/]*\.js", s.split("?")[0])]
        figures = len(re.findall(r"\bPlotly\.newPlot\(", text))
        if figures:
            with_figures += 1
            assert len(plotly_scripts) == 1 and f"_static/{PLOTLY_JS}" in plotly_scripts[0], (
                f"{rel} draws {figures} figure(s) but loads {plotly_scripts} (expected _static/{PLOTLY_JS} "
                "once: book/_ext/book_page_assets.py adds it)")
        else:
            assert not plotly_scripts, f"{rel} draws no figure but loads {plotly_scripts}"
        # The banner plotly.min.js starts with: present only if a page inlined the library
        # (plotly's "notebook" renderer) instead of calling use_book_renderer().
        assert "plotly.js v" not in text, f"{rel} inlines plotly.js: call use_book_renderer() on that page"
        assert page.stat().st_size < 3_000_000, f"{rel} is {page.stat().st_size / 1e6:.1f} MB"
    assert with_figures, "no page draws a plotly figure: is the gpucomm_book renderer still used?"


def _bundle_trace_types() -> set[str]:
    """Trace types of the served partial plotly.js bundle, from the README its package ships."""
    readme = HTML / "_static" / "plotly" / "README.md"
    assert readme.is_file(), f"{readme} missing: run scripts/fetch_assets.sh, rebuild"
    listed = re.search(r"^Contains trace modules (.+)$", readme.read_text(), re.M)
    assert listed, f"{readme}: no 'Contains trace modules ...' line"
    return set(re.findall(r"`(\w+)`", listed.group(1)))


def _figure_traces(text: str) -> list[dict]:
    """Every trace of every figure of a page: the data of each Plotly.newPlot and its frames."""
    decoder = json.JSONDecoder()
    traces = []
    for call in re.finditer(r"\bPlotly\.(newPlot|addFrames)\(\s*", text):
        pos = call.end()
        _, pos = decoder.raw_decode(text, pos)  # the div id
        pos = re.compile(r"\s*,\s*").match(text, pos).end()
        data, _ = decoder.raw_decode(text, pos)
        if call.group(1) == "newPlot":
            traces.extend(data)
        else:
            traces.extend(trace for frame in data for trace in frame.get("data", []))
    return traces


def test_every_figure_uses_trace_types_of_the_plotly_bundle():
    """The partial plotly.js bundle draws every trace of the book.

    plotly.js does not fail on a trace type it lacks: it hides the trace, and the figure shows
    empty axes. Scatter is plotly's default type when a trace names none.
    """
    pages = _built_pages()  # skips without a built book, before the bundle's README is asked for
    available = _bundle_trace_types()
    missing = {}
    for page in pages:
        types = {trace.get("type", "scatter") for trace in _figure_traces(page.read_text(errors="replace"))}
        if types - available:
            missing[page.relative_to(HTML).as_posix()] = sorted(types - available)
    assert not missing, (f"trace types the served plotly.js bundle ({PLOTLY_JS}) lacks: {missing}; "
                         "serve a bundle that has them (scripts/fetch_assets.sh, _config.yml: book_plotly_js)")


def test_mathjax_only_on_pages_with_math():
    """sphinx.ext.mathjax loads MathJax on pages with math (and on a page whose toctree includes
    one: only the root page has a toctree) and nowhere else."""
    pages = _built_pages()
    stub = re.search(r'http-equiv="refresh" content="\d+;\s*url=([^"]+)"', (HTML / "index.html").read_text(), re.I)
    root_page = stub.group(1) if stub else None
    for page in pages:
        text = page.read_text(errors="replace")
        rel = page.relative_to(HTML).as_posix()
        if _is_redirect_stub(text):
            continue
        has_math = bool(re.search(r'class="math[ "]', text))
        loads = any("/mathjax/" in s for s in _script_srcs(text))
        if has_math:
            assert loads, f"{rel} has math but does not load MathJax"
        elif rel != root_page:
            assert not loads, f"{rel} has no math but loads MathJax"


def test_fontawesome_icons_drawn_by_the_stylesheet_not_a_script():
    """The theme's 1.5 MB Font Awesome SVG script is a stub; its stylesheet draws every icon used.

    book/_ext/book_page_assets.py empties ``_static/scripts/fontawesome.js`` (``_config.yml``:
    book_drop_fontawesome_js). The icons then come from the web font: each ``fa-*`` icon class
    used on a page needs a glyph rule in the theme's stylesheet.
    """
    pages = _built_pages()  # skips without a built book
    script = HTML / "_static" / "scripts" / "fontawesome.js"
    assert not script.exists() or script.stat().st_size < 1000, (
        f"{script} is {script.stat().st_size / 1e6:.1f} MB: the Font Awesome script was not replaced")
    css = "\n".join(p.read_text(errors="replace") for p in (HTML / "_static" / "styles").glob("*.css"))
    assert "fa-solid-900.woff2" in css, "the theme's stylesheet has no Font Awesome web font"
    # Modifiers, not icons: they have no glyph of their own.
    modifiers = {"fa-solid", "fa-regular", "fa-brands", "fa-lg", "fa-sm", "fa-xs", "fa-2x", "fa-fw", "fa-spin"}
    missing = {}
    for page in pages:
        classes = re.findall(r'class="([^"]*\bfa-[^"]*)"', page.read_text(errors="replace"))
        icons = {c for cls in classes for c in cls.split() if c.startswith("fa-") and c not in modifiers}
        lacking = sorted(i for i in icons if not re.search(rf"\.{re.escape(i)}:before", css))
        if lacking:
            missing[page.relative_to(HTML).as_posix()] = lacking
    assert not missing, f"icons the theme's stylesheet cannot draw without the Font Awesome script: {missing}"


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
            # plotly.js must run before require.js defines `define`, or it registers as an AMD
            # module and window.Plotly stays undefined; the embedder needs require.js first.
            plotly_js = PLOTLY_JS.rsplit("/", 1)[-1]
            if plotly_js in order:
                assert order.index(plotly_js) < order.index("require.js"), (rel, order)
            assert order.index("require.js") < order.index("require-config.js") < order.index("embed-amd.js"), (
                rel, order)
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


def _page_assets():
    import importlib.util

    spec = importlib.util.spec_from_file_location("book_page_assets", ROOT / "book" / "_ext" / "book_page_assets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_older_live_package_stays_while_a_page_names_it(tmp_path):
    """After an incremental build, a page that was not rewritten still names the zip of the build that wrote it: that
    zip stays (its live panel would fail with 404 otherwise); a zip no page names goes."""
    from types import SimpleNamespace

    static = tmp_path / "_static" / "gpucomm_live"
    static.mkdir(parents=True)
    (static / "gpucomm-aaaaaaaaaaaa.zip").write_bytes(b"old, named")
    (static / "gpucomm-bbbbbbbbbbbb.zip").write_bytes(b"old, unnamed")
    (tmp_path / "old.html").write_text('<script data-package="_static/gpucomm_live/gpucomm-aaaaaaaaaaaa.zip"></script>')
    (tmp_path / "new.html").write_text('<script data-package="_static/gpucomm_live/gpucomm-cccccccccccc.zip"></script>')
    app = SimpleNamespace(outdir=str(tmp_path), gpucomm_live_package=("gpucomm_live/gpucomm-cccccccccccc.zip", b"new"))
    _page_assets().write_live_package(app, None)
    assert sorted(p.name for p in static.iterdir()) == ["gpucomm-aaaaaaaaaaaa.zip", "gpucomm-cccccccccccc.zip"]
    assert (static / "gpucomm-cccccccccccc.zip").read_bytes() == b"new"
