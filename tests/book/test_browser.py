"""The built book as an offline reader sees it: headless Chromium on a local server.

Serves ``_build/html`` on 127.0.0.1 (a free port) and opens every page of ``_toc.yml`` with
Playwright, driving Debian's ``chromium`` (``executable_path``; never ``playwright install``).
Requests to any other host are blocked, recorded and fail the test. Screenshots of every page go
to ``_build/screenshots/``: look at them.

Needs a built book (``make book``, or ``test_book.py::test_book_builds`` earlier in the same run)
and ``chromium`` on PATH (``.ci/run`` installs it); skips with the reason otherwise.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("GPUCOMM_BOOK_HTML") or ROOT / "_build" / "html")  # another build: set GPUCOMM_BOOK_HTML
SHOTS = ROOT / "_build" / "screenshots"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 900}
MAX_SHOT_HEIGHT_PX = 6000
# Jupyter Book 1 emits sphinx-thebe's `const THEBE_JS_URL = ...` script twice per page (the
# extension registers it on every env-before-read-docs); the second copy throws this SyntaxError.
# It breaks nothing (thebe is off), so it is the one page error tolerated.
KNOWN_PAGE_ERRORS = ("Identifier 'THEBE_JS_URL' has already been declared",)

CHAPTER = "book/llama70b_tp4.html"
CALCULATOR = "notebooks/allreduce_calculator.html"
LAB = "labs/allreduce_sweep.html"


def toc_pages() -> list[str]:
    """Every page of _toc.yml as a path relative to _build/html (``book/intro.html``, ...)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [re.sub(r"\.(md|ipynb|rst)$", "", f) + ".html" for f in files]


# --- what the tests read from a page, in one evaluate() each ---------------------------------

PAGE_FACTS_JS = r"""() => {
  const q = (sel, root = document) => Array.from(root.querySelectorAll(sel));
  const skip = 'pre, code, script, style, textarea, mjx-container, .highlight';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const rawMath = [];
  for (let n; (n = walker.nextNode());) {
    const el = n.parentElement;
    if (!el || el.closest(skip) || (el.checkVisibility && !el.checkVisibility())) continue;
    const m = n.data.match(/\$\$|\\\(|\\\[/);
    if (m) rawMath.push(n.data.slice(Math.max(0, m.index - 30), m.index + 50).replace(/\s+/g, ' ').trim());
  }
  const main = document.querySelector('main, article, .bd-article') || document.body;
  return {
    figures: q('div.plotly-graph-div').map(gd => ({id: gd.id, rendered: !!gd.querySelector('svg.main-svg')})),
    widget_errors: q('.jupyter-widgets-error-widget').length
      + q('.widget-subarea').filter(e => /Error displaying widget|Error rendering/.test(e.innerText)).length,
    math_nodes: q('span.math, div.math').length,
    mjx: q('mjx-container').length,
    raw_math: rawMath,
    text_len: main.innerText.trim().length,
  };
}"""

FIGURES_JS = r"""() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => {
  const svg = gd.querySelector('svg.main-svg');
  const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  return {id: gd.id, width: box.width, height: box.height, traces: (gd.data || []).length,
          drawn: gd.querySelectorAll('g.trace, g.slice, g.hm, g.contourlevel').length};
})"""

# Signature of what a figure plots: its data (typed arrays as plain arrays) and the SVG paths.
FIGURE_STATE_JS = r"""gd => ({
  data: JSON.stringify(gd.data, (k, v) => ArrayBuffer.isView(v) ? Array.from(v) : v),
  paths: Array.from(gd.querySelectorAll('.plot path, .trace path')).map(p => p.getAttribute('d')).join('|'),
  active: gd._fullLayout.sliders.length ? gd._fullLayout.sliders[0].active : null,
  steps: gd._fullLayout.sliders.length ? gd._fullLayout.sliders[0].steps.length : 0,
})"""

MATHJAX_DONE_JS = """() => Promise.race([
  (window.MathJax && MathJax.startup && MathJax.startup.promise) || Promise.resolve(),
  new Promise(resolve => setTimeout(resolve, 5000))]).then(() => true)"""


# --- server, browser, one visit ----------------------------------------------------------------

class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def base_url():
    if not (HTML / "index.html").is_file():
        pytest.skip("no built book in _build/html: run `make book` first")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(HTML)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium")
    if not chromium:
        pytest.skip("no `chromium` on PATH (Debian: apt-get install chromium; .ci/run does it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass
class Visit:
    rel: str
    status: int | None = None
    requests: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    @property
    def external_requests(self) -> list[str]:
        return sorted({u for u in self.requests
                       if urlsplit(u).scheme in ("http", "https", "ws", "wss")
                       and urlsplit(u).hostname not in LOCAL_HOSTS})

    @property
    def unexpected_page_errors(self) -> list[str]:
        return [e for e in self.page_errors if not any(k in e for k in KNOWN_PAGE_ERRORS)]


@pytest.fixture
def open_page(browser, base_url):
    """open_page(rel) -> (page, Visit): the page loaded, its network quiet, MathJax done."""
    contexts = []

    def _open(rel: str):
        visit = Visit(rel)
        context = browser.new_context(viewport=VIEWPORT, service_workers="block")
        contexts.append(context)

        def route(route, request):  # block (and so never wait for) anything not on this server
            if urlsplit(request.url).hostname in LOCAL_HOSTS:
                route.continue_()
            else:
                route.abort()

        context.route("**/*", route)
        page = context.new_page()
        inflight = set()
        page.on("request", lambda req: (visit.requests.append(req.url), inflight.add(req)))
        page.on("requestfinished", lambda req: inflight.discard(req))
        page.on("requestfailed", lambda req: inflight.discard(req))
        page.on("websocket", lambda ws: visit.requests.append(ws.url))
        page.on("pageerror", lambda err: visit.page_errors.append(str(err)))
        page.on("console", lambda msg: msg.type == "error" and visit.console_errors.append(msg.text))
        response = page.goto(base_url + rel, wait_until="load", timeout=60_000)
        visit.status = response.status if response else None
        quiet_ms = 0
        for _ in range(100):  # network quiet for 500 ms, at most 10 s
            page.wait_for_timeout(100)
            quiet_ms = 0 if inflight else quiet_ms + 100
            if quiet_ms >= 500:
                break
        page.evaluate(MATHJAX_DONE_JS)
        page.wait_for_timeout(300)  # let plotly and the widget manager finish drawing
        return page, visit

    yield _open
    for context in contexts:
        context.close()


def screenshot(page, rel: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    # From the top, nothing focused: otherwise the sticky header and the "skip to content" link
    # land in the middle of a full-page shot.
    page.evaluate("() => { if (document.activeElement) document.activeElement.blur(); window.scrollTo(0, 0); }")
    page.wait_for_timeout(100)
    path = SHOTS / (re.sub(r"[^\w.-]+", "_", rel[:-5]) + ".png")
    height = min(page.evaluate("() => document.documentElement.scrollHeight"), MAX_SHOT_HEIGHT_PX)
    # A long page on a busy 2-core machine can take more than playwright's default 30 s to paint.
    page.screenshot(path=str(path), full_page=True, timeout=180_000,
                    clip={"x": 0, "y": 0, "width": VIEWPORT["width"], "height": height})
    return path


# --- tests -----------------------------------------------------------------------------------

@pytest.mark.parametrize("rel", toc_pages())
def test_page_works_offline(open_page, rel):
    """Every page: HTTP 200, nothing fetched from the internet, no page error, every plotly
    figure drawn, no widget error, math typeset by MathJax; screenshot saved."""
    page, visit = open_page(rel)
    facts = page.evaluate(PAGE_FACTS_JS)
    shot = screenshot(page, rel)
    assert visit.status == 200, f"{rel}: HTTP {visit.status}"
    assert not visit.external_requests, f"{rel} requested other hosts: {visit.external_requests}"
    assert not visit.unexpected_page_errors, f"{rel}: page errors {visit.unexpected_page_errors}"
    blank = [f["id"] for f in facts["figures"] if not f["rendered"]]
    assert not blank, f"{rel}: plotly figures not drawn (is plotly.js loaded?): {blank}; see {shot}"
    assert not facts["widget_errors"], f"{rel}: {facts['widget_errors']} widget(s) failed to render"
    if facts["math_nodes"]:
        assert facts["mjx"], f"{rel}: {facts['math_nodes']} math nodes but MathJax rendered none; see {shot}"
    assert not facts["raw_math"], f"{rel}: raw TeX left in the text: {facts['raw_math'][:5]}"
    assert facts["text_len"] > 100, f"{rel}: the page looks empty ({facts['text_len']} characters); see {shot}"


def test_root_redirects_to_first_page(open_page):
    root = yaml.safe_load((ROOT / "_toc.yml").read_text())["root"]
    page, visit = open_page("index.html")
    page.wait_for_url(f"**/{root}.html", timeout=10_000)
    assert not visit.external_requests, visit.external_requests


def test_chapter_shows_a_rendered_plotly_figure(open_page):
    page, visit = open_page(CHAPTER)
    figures = page.evaluate(FIGURES_JS)
    drawn = [f for f in figures if f["width"] > 0 and f["height"] > 0 and f["traces"] >= 1 and f["drawn"] >= 1]
    assert drawn, (f"{CHAPTER}: no plotly figure with a visible svg and at least one trace: {figures}. "
                   "Show figures with use_book_renderer() active (gpucomm.viz.figures.render).")
    assert not visit.external_requests, visit.external_requests


def test_calculator_slider_changes_the_plotted_data(open_page):
    page, visit = open_page(CALCULATOR)
    with_slider = page.locator("div.js-plotly-plot:has(g.slider-container)")
    assert with_slider.count() >= 1, f"{CALCULATOR}: no plotly figure with a slider (layout.sliders)"
    gd = with_slider.first
    before = gd.evaluate(FIGURE_STATE_JS)
    assert before["steps"] >= 2, f"{CALCULATOR}: the slider has {before['steps']} step(s)"
    target = before["steps"] - 1 if before["active"] != before["steps"] - 1 else 0
    gd.scroll_into_view_if_needed()
    group = gd.locator("g.slider-group").first
    rail = group.locator(".slider-rail-rect").first.bounding_box()
    tick = group.locator(".slider-tick-rect").nth(target).bounding_box()
    page.mouse.click(tick["x"] + tick["width"] / 2, rail["y"] + rail["height"] / 2)
    after = before
    for _ in range(25):  # animate/restyle steps apply asynchronously (transitions): up to 5 s
        page.wait_for_timeout(200)
        after = gd.evaluate(FIGURE_STATE_JS)
        if after["data"] != before["data"] and after["paths"] != before["paths"]:
            break
    shot = screenshot(page, CALCULATOR.replace(".html", "-slider-moved.html"))
    assert after["active"] == target, f"slider did not move to step {target} (active {after['active']})"
    assert after["data"] != before["data"], f"moving the slider left the figure's data unchanged; see {shot}"
    assert after["paths"] != before["paths"], f"the data changed but the drawn traces did not; see {shot}"
    assert not visit.unexpected_page_errors, visit.unexpected_page_errors
    assert not visit.external_requests, visit.external_requests


def test_lab_shows_the_busbw_table(open_page):
    page, _ = open_page(LAB)
    texts = page.evaluate("() => Array.from(document.querySelectorAll("
                          "'table, .cell_output pre, .output pre')).map(e => e.innerText)")
    assert any("busbw" in t and "#wrong" in t for t in texts), (
        f"{LAB}: no table (HTML table or printed text) with both 'busbw' and '#wrong' columns")
