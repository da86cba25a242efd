"""Every calculator page of the built book is explorable without a kernel: move each static control, the plot changes.

For every plotly figure on a calculator page (``notebooks/*.html`` in ``_build/html``), the test
clicks a different step of each slider and a different item of each dropdown or button row
(plotly's own ``layout.sliders`` / ``layout.updatemenus``, precomputed data, no kernel), and asserts
that the figure's data and its drawn SVG paths changed, with no page error and no request off this
machine. Server, browser and page-opening fixtures come from ``test_browser.py``; a page not yet in
``_toc.yml`` is skipped (the book only builds pages listed there).
"""

from __future__ import annotations

import pytest
from test_browser import FIGURE_STATE_JS, base_url, browser, open_page, screenshot, toc_pages  # noqa: F401

pytestmark = pytest.mark.slow

CALCULATOR_PAGES = (
    "notebooks/allreduce_calculator.html",
    "notebooks/generations_explorer.html",
    "notebooks/mesh_vs_nvswitch.html",
    "notebooks/tp_inference_calculator.html",
    "notebooks/training_calculator.html",
)

CONTROLS_JS = r"""gd => ({
  sliders: (gd._fullLayout.sliders || []).filter(s => s.visible !== false).map(s => ({active: s.active, n: s.steps.length})),
  menus: (gd._fullLayout.updatemenus || []).filter(m => m.visible !== false)
           .map(m => ({type: m.type, active: m.active, n: m.buttons.length})),
})"""


def _wait_for_change(page, gd, before: dict) -> dict:
    after = before
    for _ in range(25):  # restyle/update apply asynchronously: up to 5 s
        page.wait_for_timeout(200)
        after = gd.evaluate(FIGURE_STATE_JS)
        if after["data"] != before["data"] and after["paths"] != before["paths"]:
            break
    return after


def _other(active: int, n: int) -> int:
    return n - 1 if active != n - 1 else 0


def _move_slider(page, gd, index: int, target: int) -> None:
    group = gd.locator("g.slider-group").nth(index)
    group.scroll_into_view_if_needed()
    rail = group.locator(".slider-rail-rect").first.bounding_box()
    tick = group.locator(".slider-tick-rect").nth(target).bounding_box()
    page.mouse.click(tick["x"] + tick["width"] / 2, rail["y"] + rail["height"] / 2)


def _pick_menu_item(page, gd, index: int, menu_type: str, target: int) -> None:
    menu = gd.locator("g.updatemenu-container > g.updatemenu-header-group").nth(index)
    menu.scroll_into_view_if_needed()
    if menu_type == "buttons":
        menu.locator("g.updatemenu-button").nth(target).click()
    else:  # dropdown: open it, then click the item (items are drawn in a shared group)
        menu.locator("g.updatemenu-header").first.click()
        page.wait_for_timeout(300)
        gd.locator("g.updatemenu-dropdown-button").nth(target).click()


@pytest.mark.parametrize("rel", CALCULATOR_PAGES)
def test_calculator_controls_change_the_plotted_data(open_page, rel):
    if rel not in toc_pages():
        pytest.skip(f"{rel} is not in _toc.yml yet, so the book does not build it")
    page, visit = open_page(rel)
    assert visit.status == 200, f"{rel}: HTTP {visit.status}"
    figures = page.locator("div.js-plotly-plot")
    moved = 0
    for f in range(figures.count()):
        gd = figures.nth(f)
        controls = gd.evaluate(CONTROLS_JS)
        actions = [("slider", i, None, s) for i, s in enumerate(controls["sliders"]) if s["n"] >= 2]
        actions += [("menu", i, m["type"], m) for i, m in enumerate(controls["menus"]) if m["n"] >= 2]
        for kind, index, menu_type, info in actions:
            target = _other(info["active"], info["n"])
            before = gd.evaluate(FIGURE_STATE_JS)
            if kind == "slider":
                _move_slider(page, gd, index, target)
            else:
                _pick_menu_item(page, gd, index, menu_type, target)
            after = _wait_for_change(page, gd, before)
            what = f"{rel}, figure {f}, {kind} {index}{f' ({menu_type})' if menu_type else ''} -> item {target}"
            if after["data"] == before["data"] or after["paths"] == before["paths"]:
                shot = screenshot(page, rel.replace(".html", f"-fig{f}-{kind}{index}.html"))
                pytest.fail(f"{what}: the plotted data did not change; see {shot}")
            if kind == "slider":
                assert after["active"] == target, f"{what}: slider at step {after['active']}"
            moved += 1
    assert moved, f"{rel}: no figure with a plotly slider, dropdown or buttons (the static page is not explorable)"
    assert not visit.unexpected_page_errors, f"{rel}: page errors {visit.unexpected_page_errors}"
    assert not visit.external_requests, f"{rel} requested other hosts: {visit.external_requests}"
