"""Figures, tables and search of the built book on a phone (390 px) and a desktop (1280 px), in headless Chromium.

Each test runs at both widths and checks one thing a reader saw broken (issue 26):

- a dropdown chosen by a tap changes its figure (plotly.js issue #6127: in a dropdown list that scrolls, a tap on
  an item did nothing), and the title the choice sets stays inside the figure;
- no figure is wider than its box, no title, legend, note, axis title, control or slider is cut by the figure's
  edge or lies on another, no two tick labels of an axis print over one another, and every log axis shows at
  least two full numbers (not one, with single digits around it);
- no table row is hundreds of pixels tall (a long note squeezed into a narrow column);
- search ranks the page titled with the query first, with an excerpt from its text.

Server, browser and page fixtures come from ``test_browser.py`` (``GPUCOMM_BOOK_HTML`` names another build). The
checks of every page's figures and tables run there, on the one load of each page per width that also checks it
works offline (1280 px) and fits a phone (390 px): ``layout_problems``, ``FIGURE_DEFECTS_JS``, ``TALL_ROWS_JS``.
No console error on any page is checked there too.
"""

from __future__ import annotations

import pytest
from test_browser import (  # noqa: F401
    FIGURE_DEFECTS_JS,
    FIGURES_LAID_OUT_JS,
    HTML,
    LOCAL_HOSTS,
    base_url,
    browser,
    screenshot,
    toc_pages,
)

pytestmark = pytest.mark.slow

WIDTHS = {"390px": {"width": 390, "height": 844}, "1280px": {"width": 1280, "height": 800}}
DROPDOWN_PAGES = ("book/pcie.html", "labs/topology.html", "book/debugging.html", "book/measuring.html",
                  "book/moe_all_to_all.html")
SHOTS = HTML.parent / "screenshots" / "layout"

# What the figure shows: its data (typed arrays as lists), title and notes.
STATE_JS = r"""gd => JSON.stringify(gd.data, (k, v) => ArrayBuffer.isView(v) ? Array.from(v) : v)
  + JSON.stringify(gd.layout.title) + JSON.stringify(gd.layout.annotations)"""

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
                # the layout script re-fits the figure (width, wrapped title) after the redraw, later on a busy
                # machine: wait for it to settle (no defect left), at most 10 s, rather than a fixed time
                problems = gd.evaluate(FIGURE_DEFECTS_JS)
                for _ in range(50):
                    if not problems:
                        break
                    page.wait_for_timeout(200)
                    problems = gd.evaluate(FIGURE_DEFECTS_JS)
                now = gd.evaluate(f"gd => gd._fullLayout.updatemenus[{mi}].active")
                shot = screenshot(page, rel.replace(".html", f"-{width}-menu{gi}-{mi}.html"), SHOTS)
                assert now == target["i"], f"{rel} figure {gi} at {width}: tapped item {target['i']}, active is {now}; see {shot}"
                assert after != before, f"{rel} figure {gi} at {width}: the tapped choice left the figure unchanged; see {shot}"
                assert not problems, f"{rel} figure {gi} at {width} after the choice: {problems[:4]}; see {shot}"
                tried += 1
        assert tried, f"{rel}: no dropdown found"
        assert not [e for e in errors], errors
    finally:
        context.close()


# Every Plotly.relayout, restyle or update the layout script makes (its file on the call's stack), from the page's start:
# [figure id, call, keys]. Plotly is wrapped as its script sets window.Plotly.
LAYOUT_CALLS_JS = r"""(() => {
  window.__gcLayoutCalls = [];
  let plotly;
  Object.defineProperty(window, "Plotly", {configurable: true, get() { return plotly; }, set(v) {
    plotly = v;
    for (const fn of ["relayout", "restyle", "update"]) {
      const orig = v[fn];
      if (typeof orig !== "function") continue;
      v[fn] = function (...args) {
        if (/gpucomm_layout/.test(new Error().stack || ""))
          window.__gcLayoutCalls.push([args[0] && args[0].id, fn, Object.keys(args[1] || {}).join(",")]);
        return orig.apply(this, args);
      };
    }
  }});
})();"""

# The calculator pages (the live calculators' benchmark, benchmarks/bench_live_calculator.py): on a desktop each of
# their figures is built as the layout script would lay it out (legend under the axis labels, slider under the
# legend), so that the script redraws none of them as the page opens (each redraw: a main-thread task of 50 to 150 ms).
CALCULATOR_PAGES = ("notebooks/allreduce_calculator.html", "notebooks/mesh_vs_nvswitch.html",
                    "notebooks/generations_explorer.html", "notebooks/training_calculator.html",
                    "notebooks/tp_inference_calculator.html")


@pytest.mark.parametrize("rel", CALCULATOR_PAGES)
def test_calculator_figures_are_built_as_laid_out_on_a_desktop(browser, base_url, rel):  # noqa: F811 - fixtures
    """At 1280 px the layout script finds nothing to move in a calculator page's figures: no relayout, restyle or
    update of its own (static-book issue 26: no main-thread task over 200 ms after the first paint)."""
    if not (HTML / rel).is_file():
        pytest.skip(f"no {rel} in {HTML}")
    context = browser.new_context(viewport=WIDTHS["1280px"], service_workers="block")
    context.add_init_script(LAYOUT_CALLS_JS)
    context.route("**/*", lambda route, request: route.continue_() if (request.url.split("/")[2].split(":")[0]
                                                                       in LOCAL_HOSTS) else route.abort())
    try:
        page = context.new_page()
        page.goto(base_url + rel, wait_until="load", timeout=60_000)
        page.wait_for_function(FIGURES_LAID_OUT_JS, timeout=20_000)
        page.wait_for_timeout(500)
        calls = page.evaluate("() => window.__gcLayoutCalls")
        assert calls == [], f"{rel}: the layout script redrew figures as the page opened: {calls}"
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
