"""Figures, tables and search of the built book on a phone (390 px) and a desktop (1280 px), in headless Chromium.

Each test runs at both widths and checks one thing a reader saw broken (issue 26):

- a dropdown chosen by a tap changes its figure (plotly.js issue #6127: in a dropdown list that scrolls, a tap on
  an item did nothing), and the title the choice sets stays inside the figure;
- no figure is wider than its box, no title, legend, note, axis title, control or slider is cut by the figure's
  edge or lies on another, no two tick labels of an axis print over one another, and every log axis shows at
  least two full numbers (not one, with single digits around it);
- no table row is hundreds of pixels tall (a long note squeezed into a narrow column);
- search ranks the page titled with the query first, with an excerpt from its text.

Server, browser and page fixtures come from ``test_browser.py`` (``GPUCOMM_BOOK_HTML`` names another build).
No console error on any page is checked there (``test_page_works_offline``, ``test_page_fits_a_phone``).
"""

from __future__ import annotations

import pytest
from test_browser import FIGURES_LAID_OUT_JS, HTML, LOCAL_HOSTS, base_url, browser, screenshot, toc_pages  # noqa: F401

pytestmark = pytest.mark.slow

WIDTHS = {"390px": {"width": 390, "height": 844}, "1280px": {"width": 1280, "height": 800}}
DROPDOWN_PAGES = ("book/pcie.html", "labs/topology.html", "book/debugging.html", "book/measuring.html",
                  "book/moe_all_to_all.html")
TALL_ROW_PX = 300
SHOTS = HTML.parent / "screenshots" / "layout"

# What the figure shows: its data (typed arrays as lists), title and notes.
STATE_JS = r"""gd => JSON.stringify(gd.data, (k, v) => ArrayBuffer.isView(v) ? Array.from(v) : v)
  + JSON.stringify(gd.layout.title) + JSON.stringify(gd.layout.annotations)"""

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
    const full = (ax._vals || []).filter(v => v.text && Math.abs(v.x - Math.round(v.x)) < 1e-9).length;
    if (full < 2) problems.push(`log axis ${k} shows ${full} full number(s): ${(ax._vals || []).map(v => v.text).join(' ')}`);
  }
  return problems;
}"""

TALL_ROWS_JS = r"""limit => Array.from(document.querySelectorAll('main tr'))
  .filter(tr => tr.getBoundingClientRect().height > limit)
  .map(tr => `${tr.getBoundingClientRect().height.toFixed(0)} px: ${tr.innerText.replace(/\s+/g, ' ').slice(0, 60)}`)"""

# Items of the open dropdown of figure `gd`: index, whether a tap at its centre lands on it, where.
DROPDOWN_ITEMS_JS = r"""gd => Array.from(gd.querySelectorAll(
    'g.updatemenu-dropdown-button-group g.updatemenu-dropdown-button')).map((el, i) => {
  const r = el.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
  const hit = document.elementFromPoint(x, y);
  return {i, x, y, reachable: !!hit && el.contains(hit) && y > 0 && y < innerHeight};
})"""


def _open(browser, base_url, rel, viewport, *, touch=False):  # noqa: F811 - fixtures
    context = browser.new_context(viewport=viewport, service_workers="block", has_touch=touch,
                                  is_mobile=touch and viewport["width"] < 600)
    context.route("**/*", lambda route, request: route.continue_() if (request.url.split("/")[2].split(":")[0]
                                                                       in LOCAL_HOSTS) else route.abort())
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(base_url + rel, wait_until="load", timeout=60_000)
    try:
        page.wait_for_function(FIGURES_LAID_OUT_JS, timeout=20_000)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError: check the page as it is
        pass
    page.wait_for_timeout(500)
    return context, page, errors


def _pages_with(marker: str) -> list[str]:
    return [rel for rel in toc_pages() if (HTML / rel).is_file() and marker in (HTML / rel).read_text(errors="replace")]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("rel", DROPDOWN_PAGES)
def test_dropdown_chosen_by_tap_changes_the_figure(browser, base_url, rel, width):  # noqa: F811 - fixtures
    """Every dropdown of the page: a tap opens it, a tap on another item (one a finger can reach) picks it, the
    figure changes, and the figure then has nothing cut or overlapping (its new title included)."""
    if not (HTML / rel).is_file():
        pytest.skip(f"no {rel} in {HTML}")
    context, page, errors = _open(browser, base_url, rel, WIDTHS[width], touch=True)
    try:
        figures = page.locator(".js-plotly-plot")
        tried = 0
        for gi in range(figures.count()):
            gd = figures.nth(gi)
            menus = gd.evaluate("gd => (gd._fullLayout.updatemenus || []).map(m => [m.type, m.active, m.visible])")
            for mi, (kind, active, visible) in enumerate(menus):
                if kind != "dropdown" or visible is False:
                    continue
                header = gd.locator("g.updatemenu-container > g.updatemenu-header-group").nth(mi)
                header.scroll_into_view_if_needed()
                page.wait_for_timeout(200)
                before = gd.evaluate(STATE_JS)
                hb = header.bounding_box()
                page.touchscreen.tap(hb["x"] + hb["width"] / 2, hb["y"] + hb["height"] / 2)
                page.wait_for_timeout(400)
                items = [it for it in gd.evaluate(DROPDOWN_ITEMS_JS) if it["i"] != active and it["reachable"]]
                assert items, f"{rel} figure {gi} menu {mi} at {width}: no item of the open dropdown can be tapped"
                target = items[-1]
                page.touchscreen.tap(target["x"], target["y"])
                after = before
                for _ in range(20):
                    page.wait_for_timeout(200)
                    after = gd.evaluate(STATE_JS)
                    if after != before:
                        break
                page.wait_for_timeout(500)  # the layout script wraps a new title after the redraw
                now = gd.evaluate(f"gd => gd._fullLayout.updatemenus[{mi}].active")
                shot = screenshot(page, rel.replace(".html", f"-{width}-menu{gi}-{mi}.html"), SHOTS)
                assert now == target["i"], f"{rel} figure {gi} at {width}: tapped item {target['i']}, active is {now}; see {shot}"
                assert after != before, f"{rel} figure {gi} at {width}: the tapped choice left the figure unchanged; see {shot}"
                problems = gd.evaluate(FIGURE_DEFECTS_JS)
                assert not problems, f"{rel} figure {gi} at {width} after the choice: {problems[:4]}; see {shot}"
                tried += 1
        assert tried, f"{rel}: no dropdown found"
        assert not [e for e in errors], errors
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("rel", _pages_with("Plotly.newPlot(") or ["(no built book)"])
def test_figures_fit_their_box(browser, base_url, rel, width):  # noqa: F811 - fixtures
    """Every figure of the page: no wider than its box, nothing cut or overlapping, tick labels apart, log axes
    with two full numbers or more."""
    if rel == "(no built book)":
        pytest.skip(f"no built book in {HTML}")
    context, page, _ = _open(browser, base_url, rel, WIDTHS[width])
    try:
        figures = page.locator(".js-plotly-plot")
        problems = []
        for gi in range(figures.count()):
            problems += [f"figure {gi}: {p}" for p in figures.nth(gi).evaluate(FIGURE_DEFECTS_JS)]
        if problems:
            shot = screenshot(page, rel.replace(".html", f"-{width}.html"), SHOTS)
            pytest.fail(f"{rel} at {width}: {len(problems)} problems: {problems[:6]}; see {shot}")
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("rel", _pages_with("<table") or ["(no built book)"])
def test_table_rows_are_not_towers(browser, base_url, rel, width):  # noqa: F811 - fixtures
    """No table row is taller than TALL_ROW_PX: a table whose long text would wrap into a tower scrolls sideways."""
    if rel == "(no built book)":
        pytest.skip(f"no built book in {HTML}")
    context, page, _ = _open(browser, base_url, rel, WIDTHS[width])
    try:
        tall = page.evaluate(TALL_ROWS_JS, TALL_ROW_PX)
        assert not tall, f"{rel} at {width}: rows over {TALL_ROW_PX} px: {tall[:4]}"
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_search_ranks_the_titled_page_first(browser, base_url, width):  # noqa: F811 - fixtures
    """Searching "nvlink": the NVLink chapter first, its excerpt from the chapter's text (not the ".pdf" of the
    download menu)."""
    if not (HTML / "search.html").is_file():
        pytest.skip(f"no search.html in {HTML}")
    context, page, errors = _open(browser, base_url, "search.html?q=nvlink", WIDTHS[width])
    try:
        page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 2", timeout=30_000)
        page.wait_for_timeout(2000)  # excerpts are fetched page by page
        first = page.locator("#search-results li").first
        assert first.locator("a").first.get_attribute("href").split("?")[0].endswith("book/nvlink.html"), first.inner_text()
        excerpt = first.locator("p.context").inner_text() if first.locator("p.context").count() else ""
        assert excerpt and ".pdf" not in excerpt and "NVLink" in excerpt, excerpt
        assert not errors, errors
    finally:
        context.close()
