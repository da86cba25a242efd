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
SHOTS = HTML.parent / "screenshots"  # beside the build the tests read
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
PHONE_SHOTS = SHOTS / "phone"
MIN_COLUMN_PX = 40  # narrowest table column (th/td) a phone reader can still read
MAX_SHOT_HEIGHT_PX = 6000
# No page error is tolerated. (Jupyter Book 1 registers sphinx-thebe's `const THEBE_JS_URL = ...` script twice;
# book/_ext/book_page_assets.py writes each script tag once, so the second copy no longer throws.)
KNOWN_PAGE_ERRORS: tuple[str, ...] = ()

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

# At phone width: what sticks out of the screen, which control a finger cannot reach, which table
# column is too narrow to read. Elements inside a horizontally scrollable container (a wide table in
# its own scroll box) do not widen the page, so they are not counted.
PHONE_LAYOUT_JS = r"""minColumnPx => {
  const visible = el => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && (!el.checkVisibility || el.checkVisibility({visibilityProperty: true}));
  };
  const scrolls = el => {
    for (let p = el.parentElement; p && p !== document.body && p !== document.documentElement; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden' || o === 'clip') return true;
    }
    return false;
  };
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
    + (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '')
    + (el.textContent ? ' "' + el.textContent.trim().slice(0, 30) + '"' : '');
  const sticking = [];
  for (const el of document.querySelectorAll('main *')) {
    if (el.getBoundingClientRect().right > innerWidth + 1 && visible(el) && !scrolls(el)
        && !(el.parentElement && el.parentElement.getBoundingClientRect().right > innerWidth + 1)) sticking.push(name(el));
  }
  const narrow = [];
  for (const cell of document.querySelectorAll('main th, main td')) {
    const w = cell.getBoundingClientRect().width;
    // a column squeezed to 0 px has no box of its own: ask whether its table is shown
    if (w < minColumnPx && visible(cell.closest('table')) && cell.checkVisibility({visibilityProperty: true}))
      narrow.push(`${name(cell)}: ${w.toFixed(0)} px`);
  }
  // A control's centre, scrolled to the middle of the screen: the element there must be the control
  // (or inside it, or the label around it). Plotly's controls are SVG groups: each updatemenu
  // button, and each step of a slider where a finger lands (the tick's x on the rail).
  const targets = [];
  const controls = 'input:not([type=hidden]), select, textarea, button, .updatemenu-button, .updatemenu-header-group';
  for (const el of document.querySelectorAll(controls))
    if (visible(el)) targets.push({el, own: el, at: r => [r.left + r.width / 2, r.top + r.height / 2]});
  for (const group of document.querySelectorAll('g.slider-group')) {
    const rail = group.querySelector('.slider-rail-rect');
    if (!rail || !visible(rail)) continue;
    for (const tick of group.querySelectorAll('.slider-tick-rect'))
      targets.push({el: tick, own: group, at: r => {
        const rr = rail.getBoundingClientRect();
        return [r.left + r.width / 2, rr.top + rr.height / 2];
      }});
  }
  const covered = [];
  for (const t of targets) {
    t.el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
    const [x, y] = t.at(t.el.getBoundingClientRect());
    const hit = document.elementFromPoint(x, y);
    const label = hit && hit.closest && hit.closest('label');
    const own = hit && (t.own.contains(hit) || (label && label.contains(t.own)));
    if (!own) covered.push(`${name(t.own)} at (${x.toFixed(0)}, ${y.toFixed(0)}) under ${hit ? name(hit) : 'nothing (off screen)'}`);
  }
  window.scrollTo({top: 0, behavior: 'instant'});
  return {scroll_width: document.documentElement.scrollWidth, inner_width: innerWidth,
          sticking, narrow, covered};
}"""

# Every figure of the page drawn (gpucomm_draw_slices.js draws them one after another, past the load event) and laid out.
FIGURES_LAID_OUT_JS = "() => Array.from(document.querySelectorAll('.plotly-graph-div')).every(g => g.dataset.gcLayout)"

# The phone layout (gpucomm_layout.js) plans each panel of a figure it lays out at least this tall: 220 px for a figure
# of one panel, 250 px (its PANEL_PX) for each of stacked panels. A control or legend placed, even provisionally,
# beyond the margin the layout gave it pushes plotly's margin and shrinks the plot under the plan (the panels' gaps
# shrink with it, and a panel's title met the x axis title of the one above: pcie's second figure).
MIN_PANEL_PX = 220

# Every figure laid out for the phone with a panel (a y axis' domain, in pixels) shorter than MIN_PANEL_PX.
SHORT_PANELS_JS = r"""minPx => {
  const out = [];
  document.querySelectorAll('.js-plotly-plot').forEach((gd, i) => {
    const fl = gd._fullLayout;
    if (gd.dataset.gcLayout !== 'phone' || !fl || !fl._size) return;
    for (const k of Object.keys(fl).filter(k => /^yaxis\d*$/.test(k) && fl[k].domain && !fl[k].overlaying)) {
      const px = (fl[k].domain[1] - fl[k].domain[0]) * fl._size.h;
      if (px < minPx - 1) out.push(`figure ${i}: ${k} ${Math.round(px)} px tall`);
    }
  });
  return out;
}"""

# Every plotly figure whose slider's box meets its legend's box (in the figure's SVG).
SLIDER_ON_LEGEND_JS = r"""() => {
  const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const out = [];
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    const legend = gd.querySelector('g.legend');
    if (!legend) continue;
    const lb = legend.getBoundingClientRect();
    for (const slider of gd.querySelectorAll('g.slider-group')) {
      const sb = slider.getBoundingClientRect();
      if (lb.width && sb.width && meet(lb, sb))
        out.push(`${gd.id}: slider [${sb.top.toFixed(0)}, ${sb.bottom.toFixed(0)}] px, `
                 + `legend [${lb.top.toFixed(0)}, ${lb.bottom.toFixed(0)}] px`);
    }
  }
  return out;
}"""

MATHJAX_DONE_JS = """() => Promise.race([
  (window.MathJax && MathJax.startup && MathJax.startup.promise) || Promise.resolve(),
  new Promise(resolve => setTimeout(resolve, 5000))]).then(() => true)"""


# --- server, browser, one visit ----------------------------------------------------------------

# Everything of one figure that a reader could find cut or overlapping. Boxes are the browser's, in CSS px.
FIGURE_DEFECTS_JS = r"""gd => {
  const R = el => el.getBoundingClientRect();
  const meet = (a, b, m) => a.left + m < b.right && b.left + m < a.right && a.top + m < b.bottom && b.top + m < a.bottom;
  const name = el => (el.textContent || '').trim().slice(0, 40);
  const svg = gd.querySelector('svg.main-svg');
  if (!svg) return ['not drawn'];
  const f = R(svg);
  const problems = [];
  const article = gd.closest('.bd-article, article, main') || document.body;
  const room = Math.min(R(article).right, document.documentElement.clientWidth);
  if (f.right > room + 1) problems.push(`figure ${f.width.toFixed(0)} px wide sticks out of its box by ${(f.right - room).toFixed(0)} px`);
  const items = [];
  const add = (kind, el, boxEl) => { const b = R(boxEl || el); if (b.width > 0 && b.height > 0) items.push({kind, el, b}); };
  gd.querySelectorAll('.gtitle').forEach(e => add('title', e));
  gd.querySelectorAll('g.annotation').forEach(e => add('note', e, e.querySelector('.annotation-text-g') || e));
  gd.querySelectorAll('g.legend').forEach(e => add('legend', e, e.querySelector('rect.bg') || e));
  gd.querySelectorAll('[class^="g-x"][class$="title"] text, [class^="g-y"][class$="title"] text').forEach(e => add('axis title', e));
  gd.querySelectorAll('g.updatemenu-header-group, g.updatemenu-container > g.updatemenu-button').forEach(e => add('control', e));
  gd.querySelectorAll('g.slider-group').forEach(e => add('slider', e));
  for (const it of items) {
    const b = it.b;
    if (b.left < Math.max(f.left, 0) - 1 || b.right > Math.min(f.right, innerWidth) + 1 || b.top < f.top - 1 || b.bottom > f.bottom + 1)
      problems.push(`${it.kind} "${name(it.el)}" cut by the figure's edge`);
  }
  for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
    const a = items[i], c = items[j];
    if (a.el.contains(c.el) || c.el.contains(a.el) || (a.kind === 'control' && c.kind === 'control')) continue;
    if (meet(a.b, c.b, 2)) problems.push(`${a.kind} "${name(a.el)}" lies on ${c.kind} "${name(c.el)}"`);
  }
  for (const layer of gd.querySelectorAll('g.xaxislayer-above, g.yaxislayer-above')) {
    const labels = Array.from(layer.querySelectorAll('text'))
      .filter(t => getComputedStyle(t).visibility !== 'hidden' && !/rotate\((?!0)/.test(t.getAttribute('transform') || ''))
      .map(t => ({t, b: R(t)})).filter(x => x.b.width);
    for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++)
      if (meet(labels[i].b, labels[j].b, 1)) problems.push(`tick labels "${name(labels[i].t)}" and "${name(labels[j].t)}" overlap`);
  }
  const fl = gd._fullLayout;
  for (const k of Object.keys(fl)) {
    const ax = fl[k];
    if (!/^[xy]axis\d*$/.test(k) || ax.type !== 'log' || ax.visible === false || ax.tickmode === 'array') continue;
    // as drawn: a label the layout script hid (crowded) does not count
    const shown = Array.from(gd.querySelectorAll(`g.${k.replace('axis', '')}tick > text`))
      .filter(t => t.textContent && t.style.visibility !== 'hidden' && getComputedStyle(t).visibility !== 'hidden');
    const full = shown.filter(t => t.__data__ && Math.abs(t.__data__.x - Math.round(t.__data__.x)) < 1e-9).length;
    if (full < 2) problems.push(`log axis ${k} shows ${full} full number(s): ${shown.map(t => t.textContent).join(' ')}`);
  }
  // plotly's placeholder for a title never given, meant for an editor (a script that re-sets it shows it)
  for (const t of gd.querySelectorAll('text')) if (/^Click to enter/.test(t.textContent)) problems.push(`placeholder "${t.textContent}"`);
  return problems;
}"""

TALL_ROWS_JS = r"""limit => Array.from(document.querySelectorAll('main tr'))
  .filter(tr => tr.getBoundingClientRect().height > limit)
  .map(tr => `${tr.getBoundingClientRect().height.toFixed(0)} px: ${tr.innerText.replace(/\s+/g, ' ').slice(0, 60)}`)"""

TALL_ROW_PX = 300
"""No table row taller than this: a table whose long text would wrap into a tower scrolls sideways (issue 26)."""


# Every self-check control's centre, scrolled into the middle of the screen, and what the page has there.
SELF_CHECK_COVERED_JS = r"""() => {
  const out = [];
  for (const el of document.querySelectorAll('.gc-check input, .gc-check button')) {
    el.scrollIntoView({block: 'center', inline: 'center'});
    const r = el.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const hit = document.elementFromPoint(x, y);
    const own = hit && (hit === el || el.contains(hit) || (hit.closest('label') && hit.closest('label').contains(el)));
    const inside = x >= 0 && y >= 0 && x <= innerWidth && y <= innerHeight && r.width > 0;
    if (!own || !inside) out.push({control: el.outerHTML.slice(0, 80), at: hit ? hit.outerHTML.slice(0, 80) : null});
  }
  window.scrollTo({top: 0, behavior: 'instant'});
  return out;
}"""


def press_check(check, verdict: str) -> None:
    """Press a self-check's Check button: the feedback starts with ``verdict`` and the explanation shows."""
    check.locator(".gc-check-button").click()
    feedback = check.locator(".gc-check-feedback").inner_text()
    assert feedback.startswith(verdict), feedback
    assert check.locator(".gc-check-why").is_visible()


def grade_self_checks(page) -> int:
    """On a page with graded self-checks (book/_ext/book_self_check.py): self_check.js ran on every one, no
    explanation shows before an answer, and the first choice and the first number question each say Wrong to a
    wrong answer and Right to the right one, with the explanation shown. Returns how many self-checks the page has."""
    checks = page.locator(".gc-check")
    if not checks.count():
        return 0
    assert page.locator(".gc-check.gc-ready").count() == checks.count(), "self_check.js did not run"
    assert not checks.nth(0).locator(".gc-check-why").is_visible(), "explanation shown before any answer"
    choice = page.locator('.gc-check[data-kind="choice"]')
    if choice.count():
        c = choice.nth(0)
        correct = int(c.get_attribute("data-correct"))
        c.locator(f'input[value="{1 if correct != 1 else 2}"]').check()
        press_check(c, "Wrong")
        c.locator(f'input[value="{correct}"]').check()
        press_check(c, "Right")
    number = page.locator('.gc-check[data-kind="number"]')
    if number.count():
        n = number.nth(0)
        answer = float(n.get_attribute("data-answer"))
        n.locator(".gc-check-number").fill(repr(answer))
        press_check(n, "Right")
        n.locator(".gc-check-number").fill(repr(answer * 3 + 7))
        press_check(n, "Wrong")
    return checks.count()


def layout_problems(page) -> list[str]:
    """What a reader would find broken in the page's figures and tables at this width: :data:`FIGURE_DEFECTS_JS` for
    every plotly figure (no figure wider than its box, nothing cut or overlapping, tick labels apart, log axes with
    two full numbers) and :data:`TALL_ROWS_JS` (no table row over :data:`TALL_ROW_PX`)."""
    figures = page.locator(".js-plotly-plot")
    problems = [f"figure {i}: {p}" for i in range(figures.count()) for p in figures.nth(i).evaluate(FIGURE_DEFECTS_JS)]
    return problems + [f"table row {row}" for row in page.evaluate(TALL_ROWS_JS, TALL_ROW_PX)]


def wait_laid_out(page) -> None:
    """Wait until gpucomm_layout.js has laid out every figure for the screen (an old build never marks them)."""
    try:
        page.wait_for_function(FIGURES_LAID_OUT_JS, timeout=15_000)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError: check the page as it is
        pass


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

    @property
    def unexpected_console_errors(self) -> list[str]:
        return [e for e in self.console_errors if not any(k in e for k in KNOWN_PAGE_ERRORS)]


@pytest.fixture
def open_page(browser, base_url):
    """open_page(rel) -> (page, Visit): the page loaded, its network quiet, MathJax done."""
    contexts = []

    def _open(rel: str, viewport: dict | None = None):
        visit = Visit(rel)
        context = browser.new_context(viewport=viewport or VIEWPORT, service_workers="block")
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


def screenshot(page, rel: str, folder: Path = SHOTS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    # From the top, nothing focused: otherwise the sticky header and the "skip to content" link
    # land in the middle of a full-page shot.
    page.evaluate("() => { if (document.activeElement) document.activeElement.blur(); window.scrollTo(0, 0); }")
    page.wait_for_timeout(100)
    path = folder / (re.sub(r"[^\w.-]+", "_", rel[:-5]) + ".png")
    width = page.viewport_size["width"]
    height = min(page.evaluate("() => document.documentElement.scrollHeight"), MAX_SHOT_HEIGHT_PX)
    # A long page on a busy 2-core machine can take more than playwright's default 30 s to paint.
    page.screenshot(path=str(path), full_page=True, timeout=180_000,
                    clip={"x": 0, "y": 0, "width": width, "height": height})
    return path


# --- tests -----------------------------------------------------------------------------------

@pytest.mark.parametrize("rel", toc_pages())
def test_page_works_offline(open_page, rel):
    """Every page at 1280x800: HTTP 200, nothing fetched from the internet, no page error, every plotly
    figure drawn, no widget error, math typeset by MathJax; no slider on its legend and no layout problem
    (:func:`layout_problems`); screenshot saved; its self-checks grade (:func:`grade_self_checks`). One load of the
    page serves every desktop check."""
    page, visit = open_page(rel, DESKTOP)
    wait_laid_out(page)
    facts = page.evaluate(PAGE_FACTS_JS)
    overlaps = page.evaluate(SLIDER_ON_LEGEND_JS)
    problems = layout_problems(page)
    shot = screenshot(page, rel)
    assert not overlaps, f"{rel}: a slider overlaps the legend: {overlaps}; see {shot}"
    assert not problems, f"{rel} at 1280 px: {len(problems)} problems: {problems[:6]}; see {shot}"
    assert visit.status == 200, f"{rel}: HTTP {visit.status}"
    assert not visit.external_requests, f"{rel} requested other hosts: {visit.external_requests}"
    assert not visit.unexpected_page_errors, f"{rel}: page errors {visit.unexpected_page_errors}"
    assert not visit.unexpected_console_errors, f"{rel}: console errors {visit.unexpected_console_errors}"
    blank = [f["id"] for f in facts["figures"] if not f["rendered"]]
    assert not blank, f"{rel}: plotly figures not drawn (is plotly.js loaded?): {blank}; see {shot}"
    assert not facts["widget_errors"], f"{rel}: {facts['widget_errors']} widget(s) failed to render"
    if facts["math_nodes"]:
        assert facts["mjx"], f"{rel}: {facts['math_nodes']} math nodes but MathJax rendered none; see {shot}"
    assert not facts["raw_math"], f"{rel}: raw TeX left in the text: {facts['raw_math'][:5]}"
    assert facts["text_len"] > 100, f"{rel}: the page looks empty ({facts['text_len']} characters); see {shot}"
    if grade_self_checks(page):  # after the checks above: answering changes the page
        page.locator(".gc-check").nth(0).screenshot(path=str(shot.with_name(shot.stem + "-self-check.png")))


@pytest.mark.parametrize("rel", toc_pages())
def test_page_fits_a_phone(open_page, rel):
    """At 390x844: the page is no wider than the screen (wide tables scroll in their own box), no
    table column is narrower than MIN_COLUMN_PX, and every control (input, select, button, plotly
    updatemenu button, each step of a plotly slider) is the element found at its own centre, so a tap
    reaches it, self-check controls included (:data:`SELF_CHECK_COVERED_JS`); no plotly slider meets its figure's legend;
    no panel of a figure laid out for the phone shorter than :data:`MIN_PANEL_PX`; no layout problem in its figures
    and tables (:func:`layout_problems`). Screenshot in _build/screenshots/phone/."""
    page, visit = open_page(rel, PHONE)
    wait_laid_out(page)  # gpucomm_layout.js marks each figure once laid out for the screen
    shot = screenshot(page, rel, PHONE_SHOTS)
    facts = page.evaluate(PHONE_LAYOUT_JS, MIN_COLUMN_PX)
    problems = []
    if facts["scroll_width"] > facts["inner_width"] + 1 or facts["sticking"]:
        problems.append(f"{facts['scroll_width']} px wide on a {facts['inner_width']} px screen; "
                        f"sticking out: {facts['sticking'][:5]}")
    if facts["narrow"]:
        problems.append(f"{len(facts['narrow'])} table cells under {MIN_COLUMN_PX} px: {facts['narrow'][:5]}")
    if facts["covered"]:
        problems.append(f"{len(facts['covered'])} controls covered: {facts['covered'][:5]}")
    overlaps = page.evaluate(SLIDER_ON_LEGEND_JS)
    if overlaps:
        problems.append(f"a slider overlaps the legend: {overlaps}")
    short = page.evaluate(SHORT_PANELS_JS, MIN_PANEL_PX)
    if short:
        problems.append(f"panels shorter than the layout's {MIN_PANEL_PX} px: {short[:5]}")
    covered = page.evaluate(SELF_CHECK_COVERED_JS)
    if covered:
        problems.append(f"{len(covered)} self-check controls covered or off screen: {covered[:3]}")
    problems += layout_problems(page)
    # the phone layout script runs only below 600 px: it must add no error and no request of its own
    errors = visit.unexpected_page_errors + visit.unexpected_console_errors
    if errors or visit.external_requests:
        problems.append(f"errors {errors[:3]}, requests to other hosts {visit.external_requests[:3]}")
    assert not problems, f"{rel} at 390 px: " + "; ".join(problems) + f"; see {shot}"


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


def test_search_over_file_url_says_titles_only(browser):
    """Opened from a file, the search page lists matching titles and says in one line why excerpts are missing
    (the browser refuses to read the pages over file://)."""
    if not (HTML / "search.html").is_file():
        pytest.skip(f"no search.html in {HTML}")
    context = browser.new_context(viewport=DESKTOP)
    try:
        page = context.new_page()
        page.goto((HTML / "search.html").as_uri() + "?q=nvlink", wait_until="load")
        page.wait_for_function("() => document.querySelectorAll('#search-results li a').length > 0", timeout=20_000)
        note = page.locator(".gc-search-file-note")
        assert note.count() == 1, "no note about file:// on the search page"
        text = note.inner_text().strip()
        assert "titles only" in text and "http" in text and "\n" not in text, text
        assert note.bounding_box()["height"] < 40, "the note takes more than one line at 1280 px"
    finally:
        context.close()
