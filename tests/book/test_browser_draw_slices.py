"""The book's figures drawn in slices (``gpucomm_draw_slices.js``) look exactly as plotly draws them in one go.

The script lets the browser in between the steps of each plotly draw and draws a page's figures one after another
(static-book issue 26: no main-thread task over 200 ms after the first paint; the figures are in
``benchmarks/bench_live_calculator.py``). Each page with figures is opened twice at 1280 px, once as built and once
with the script's request refused (plotly alone, as before it), the layout script refused both times, and every
figure's drawing (its SVG layers, attributes in name order, plotly's random ids taken out) must be the same. On a
phone the same comparison runs with the layout script (its relayouts draw each figure again, in slices too) on the
calculators' pages and pages with dropdowns. Where a draw yields depends on how fast the machine is, so the phone
pages are also drawn with the script yielding at seeded pseudo-random wait points, whatever the time spent: a yield
at any point plotly waits at must leave the drawing as plotly alone draws it (a yield in the task of a redraw nobody
waits for once made a calculator's figure 11 px shorter, one CI run in a few). A last test checks the slices happen:
a figure's draw is split into several tasks.

Server and browser fixtures come from ``test_browser.py`` (``GPUCOMM_BOOK_HTML`` names another build).
"""

from __future__ import annotations

import pytest
from test_browser import (  # noqa: F401
    FIGURES_LAID_OUT_JS,
    HTML,
    LOCAL_HOSTS,
    base_url,
    browser,
    toc_pages,
)

pytestmark = pytest.mark.slow

SCRIPT = "gpucomm_draw_slices.js"
LAYOUT_SCRIPT = "gpucomm_layout.js"
# Every figure of the page drawn: plotly's own sign (its class) on each of myst-nb's figure boxes.
DRAWN_JS = "() => Array.from(document.querySelectorAll('.plotly-graph-div')).every(g => g.classList.contains('js-plotly-plot'))"
VIEWPORT = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# The live calculators' pages and those with dropdowns: the layout script's heaviest relayouts on a phone.
PHONE_PAGES = ("notebooks/allreduce_calculator.html", "notebooks/mesh_vs_nvswitch.html",
               "notebooks/generations_explorer.html", "notebooks/training_calculator.html",
               "notebooks/tp_inference_calculator.html", "book/pcie.html", "book/debugging.html", "book/measuring.html")

# Each figure's drawing: its SVG layers (main plot, hover and info layers), every element with its attributes in
# name order (a step run later may set them in another order) and plotly's random ids (the figure's
# fullLayout._uid, in clip-path ids and references, and each trace's uid, in its group's class) replaced by fixed words.
DRAWINGS_JS = r"""() => {
  const write = node => node.nodeType === 3 ? node.textContent : node.nodeType !== 1 ? '' :
    `<${node.localName}${Array.from(node.attributes).map(a => ` ${a.name}="${a.value}"`).sort().join('')}>` +
    Array.from(node.childNodes).map(write).join('') + `</${node.localName}>`;
  return Object.fromEntries(Array.from(document.querySelectorAll('.plotly-graph-div')).map(gd => {
    let svg = Array.from(gd.querySelectorAll('svg.main-svg')).map(write).join('\n');
    const ids = [[gd._fullLayout && gd._fullLayout._uid, 'UID'], ...(gd._fullData || []).map((t, i) => [t.uid, `TRACE${i}`])];
    for (const [id, word] of ids) if (id) svg = svg.split(id).join(word);
    return [gd.id, svg];
  }));
}"""


def _figure_pages() -> list[str]:
    return [rel for rel in toc_pages()
            if (HTML / rel).is_file() and "Plotly.newPlot(" in (HTML / rel).read_text(errors="replace")]


# The script's test of the time spent in the current task, and what replaces it to yield at wait points picked by a
# seeded generator (mulberry32) instead: the same points every run, whatever the machine's speed.
BUDGET_TEST = "performance.now() - current.start <= budget"
SEEDED_YIELDS_JS = """((seed) => {
  let a = seed >>> 0;
  window.gpucommNoYieldHere = () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 >= 0.5;
  };
})(%d);"""
YIELD_SEEDS = (1, 2, 3)


def _seeded_script(seed: int, init_scripts: list[str]) -> str:
    """The slices script as built, yielding at the wait points seed ``seed`` picks (one in two) instead of after its
    time budget; its generator goes into ``init_scripts``."""
    text = (HTML / "_static" / SCRIPT).read_text()
    assert text.count(BUDGET_TEST) == 1, f"{SCRIPT}: its budget test ({BUDGET_TEST}) moved; update this test"
    init_scripts.append(SEEDED_YIELDS_JS % seed)
    return text.replace(BUDGET_TEST, "window.gpucommNoYieldHere()")


def _drawings(browser, base_url, rel, *, sliced: bool, phone: bool = False,  # noqa: F811 - fixtures
              yield_seed: int | None = None) -> dict[str, str]:
    """Each figure of page ``rel`` as drawn, with or without the slices script (with ``yield_seed``: yielding at the
    wait points that seed picks). At 1280 px the layout script is left out both ways (it lays figures out again once
    drawn; its own tests check its result); on a phone (390 px) it runs both ways, and its relayouts (a figure laid
    out as one column, drawn again) are drawn in slices or not."""
    context = browser.new_context(viewport=PHONE if phone else VIEWPORT, service_workers="block")
    refused = () if phone else (LAYOUT_SCRIPT,)
    if not sliced:
        refused += (SCRIPT,)
    init_scripts: list[str] = []
    seeded = _seeded_script(yield_seed, init_scripts) if yield_seed is not None else None
    for script in init_scripts:
        context.add_init_script(script)

    def route(route, request):
        host = request.url.split("/")[2].split(":")[0]
        if host not in LOCAL_HOSTS or any(name in request.url for name in refused):
            route.abort()
        elif seeded is not None and SCRIPT in request.url:
            route.fulfill(body=seeded, content_type="application/javascript")
        else:
            route.continue_()

    context.route("**/*", route)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(base_url + rel, wait_until="load", timeout=60_000)
    if sliced:
        page.evaluate("() => window.gpucommFiguresDrawn()")
    page.wait_for_function(FIGURES_LAID_OUT_JS if phone else DRAWN_JS, timeout=30_000)
    page.wait_for_timeout(500)  # a redraw plotly scheduled for itself (a margin pushed by a legend, a slider)
    drawings = page.evaluate(DRAWINGS_JS)
    context.close()
    assert not errors, f"{rel} ({'sliced' if sliced else 'plotly alone'}): {errors}"
    return drawings


def _same(rel: str, whole: dict[str, str], sliced: dict[str, str]) -> None:
    assert sliced.keys() == whole.keys()
    assert sliced, f"{rel}: no figure drawn"
    for fig_id, svg in whole.items():
        if sliced[fig_id] != svg:
            at = next(i for i, (a, b) in enumerate(zip(svg, sliced[fig_id] + "\0")) if a != b)
            pytest.fail(f"{rel} {fig_id}: drawn in slices differs from plotly's one-go drawing at character {at}:\n"
                        f"  one go: ...{svg[max(0, at - 150):at + 150]}\n"
                        f"  sliced: ...{sliced[fig_id][max(0, at - 150):at + 150]}")


@pytest.mark.parametrize("rel", _figure_pages() or ["(no built book)"])
def test_figures_drawn_in_slices_look_as_drawn_in_one_go(browser, base_url, rel):  # noqa: F811 - fixtures
    if not (HTML / rel).is_file():
        pytest.skip(f"no {rel} in {HTML}")
    _same(rel, _drawings(browser, base_url, rel, sliced=False), _drawings(browser, base_url, rel, sliced=True))


@pytest.mark.parametrize("rel", PHONE_PAGES)
def test_phone_relayouts_drawn_in_slices_look_as_drawn_in_one_go(browser, base_url, rel):  # noqa: F811 - fixtures
    """On a phone the layout script lays each figure out again (a relayout, the whole figure drawn again): the
    calculators' pages and those with dropdowns come out the same with those redraws sliced."""
    if not (HTML / rel).is_file():
        pytest.skip(f"no {rel} in {HTML}")
    _same(rel, _drawings(browser, base_url, rel, sliced=False, phone=True),
          _drawings(browser, base_url, rel, sliced=True, phone=True))


@pytest.mark.parametrize("rel", PHONE_PAGES)
def test_phone_relayouts_with_yields_anywhere_plotly_waits_look_as_drawn_in_one_go(browser, base_url, rel):  # noqa: F811
    """Whichever wait points a draw yields at (on a slow machine, more of them): the phone pages drawn with yields at
    wait points picked by a seeded generator, several seeds, come out as plotly alone draws them."""
    if not (HTML / rel).is_file():
        pytest.skip(f"no {rel} in {HTML}")
    whole = _drawings(browser, base_url, rel, sliced=False, phone=True)
    for seed in YIELD_SEEDS:
        _same(f"{rel} (yields picked by seed {seed})", whole,
              _drawings(browser, base_url, rel, sliced=True, phone=True, yield_seed=seed))


def test_a_figure_draw_runs_in_several_tasks(browser, base_url):  # noqa: F811 - fixtures
    """On the mesh calculator's page (two figures of six axes each), plotly's draws are split: the page's
    figures take more tasks than figures, and the script's queue empties."""
    rel = "notebooks/mesh_vs_nvswitch.html"
    if not (HTML / rel).is_file():
        pytest.skip(f"no {rel} in {HTML}")
    context = browser.new_context(viewport=VIEWPORT, service_workers="block")
    # Count the tasks plotly's figure draws resume in: each slice ends with a yield, each yield resumes in a task.
    context.add_init_script("""(() => {
      window.__resumes = 0;
      if (window.scheduler && scheduler.yield) {
        const y = scheduler.yield.bind(scheduler);
        scheduler.yield = () => { window.__resumes++; return y(); };
      }
    })();""")
    page = context.new_page()
    page.goto(base_url + rel, wait_until="load", timeout=60_000)
    page.wait_for_function("() => window.gpucommFiguresDrawn && true", timeout=30_000)
    page.evaluate("() => window.gpucommFiguresDrawn()")
    page.wait_for_function(FIGURES_LAID_OUT_JS, timeout=30_000)
    figures = page.locator(".plotly-graph-div").count()
    resumes = page.evaluate("() => window.__resumes")
    context.close()
    assert figures == 2
    assert resumes > figures, f"the page's {figures} figures were drawn in {resumes} slices after the first"
