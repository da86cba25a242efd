"""The collective calculator computed live in the reader's browser (Pyodide), against the Python results.

Opens the built calculator page in headless Chromium on a local server (fixtures of
``test_browser.py``: anything not on 127.0.0.1 is blocked and fails the test). Before the panel is in
view or touched the page fetched nothing of Pyodide; then the test changes controls the way a reader
does (type a size, pick from a list, tick a box), and after each change compares what the page
shows (the plotted y data, the title, the summary line) with :func:`collective_update` run here in
CPython for the same inputs. An invalid size and a configuration the model refuses get the CLI's
one-line message next to the control, and the figure keeps its last valid state. Screenshots at
1280x800 and 390x844 go to ``_build/screenshots/``. Over ``file://`` the panel says in one line
that it needs http and keeps the precomputed figure.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import pytest
from test_browser import HTML, SHOTS, base_url, browser, open_page, toc_pages  # noqa: F401

from gpucomm import GpucommError
from gpucomm.cli import main as cli_main
from gpucomm.viz.calculators.collective import CostInputs, collective_spec, collective_update

pytestmark = pytest.mark.slow

PAGE = "notebooks/allreduce_calculator.html"
# The panel's initial values (the notebook's cell): every comparison starts from these.
INITIAL = dict(system="dgx_a100", num_ranks=4, msg_bytes=64 * 2**20, compare=("dgx_h100", "gb200_nvl72"))
PYTHON_READY_S = 120  # cold Pyodide on a busy 2-core machine: seconds, not minutes; generous for CI
# Pyodide's libm (WebAssembly) and CPython's may round a difference of two equal terms to 1e-20 rather than 0:
# values this close to zero (us, GB/s) count as equal.
ABS_TOL = 1e-10

SHOWN_JS = r"""panel => {
  const gd = panel.querySelector('.js-plotly-plot');
  const plain = v => ArrayBuffer.isView(v) ? Array.from(v) : v;
  return {
    y: gd.data.map(t => plain(t.y)), visible: gd.data.map(t => t.visible),
    title: gd.layout.title && gd.layout.title.text,
    // the title as drawn: its SVG text's words (plotly's zero-width spaces around a <sup> left out); a live update
    // may write them in place (gpucomm_live.js setTitleText)
    drawnTitle: (() => {
      const text = gd.querySelector('.g-gtitle text.gtitle');
      if (!text) return '';
      const lines = text.querySelectorAll('tspan.line');  // one per line of a title of several
      return (lines.length ? Array.from(lines, l => l.textContent).join(' ') : text.textContent).replace(/\u200b/g, '');
    })(),
    summary: panel.querySelector('.gpucomm-live-summary').innerText,
    messages: Object.fromEntries(Array.from(panel.querySelectorAll('[data-field]')).map(
      f => [f.dataset.field, f.querySelector('.gpucomm-live-msg').innerText])),
    state: panel.dataset.state, updates: Number(panel.dataset.updates),
    // traces drawn in the SVG, and traces plotly shows: a redraw of some traces must leave the others drawn
    drawn: gd.querySelectorAll('g.cartesianlayer g.trace').length,
    shownTraces: (gd._fullData || []).filter(t => t.visible === true).length,
  };
}"""


def _cli_message(capsys, *argv: str) -> str:
    assert cli_main(list(argv)) == 2
    line = capsys.readouterr().err.strip()
    message = line.split(": error: ", 1)[1]
    return message.split(": ", 1)[1] if message.startswith("argument ") else message


def _refused(inputs: CostInputs, **changes) -> bool:
    """Whether Python refuses ``inputs`` with ``changes`` (then the page must refuse them too)."""
    try:
        collective_update(replace(inputs, **changes))
    except GpucommError:
        return True
    return False


def _change(page, panel, action) -> dict:
    """Do ``action`` (a callable on the page) and wait until the panel has recomputed once more."""
    before = panel.evaluate(SHOWN_JS)["updates"]
    action()
    page.wait_for_function(
        "([el, n]) => Number(el.dataset.updates) > n", arg=[panel.element_handle(), before],
        timeout=PYTHON_READY_S * 1000)
    return panel.evaluate(SHOWN_JS)


def _type(page, panel, field: str, text: str) -> dict:
    box = panel.locator(f"input[name={field}]")

    def action():
        box.fill(text)
        box.press("Enter")
        box.evaluate("e => e.blur()")  # a text field commits its value on change (Enter or leaving it)
    return _change(page, panel, action)


def _words(title: str) -> str:
    """A plotly title's words, one space apart: line breaks and <sup> tags out (as drawn, or as the layout script
    wraps it on a phone)."""
    return " ".join(re.sub(r"<[^>]*>", " ", title).split())


def _assert_title_drawn(shown: dict, title: str) -> None:
    """The figure's title as drawn (its SVG text) and as plotly holds it (its layout) has the words of ``title``."""
    assert _words(shown["title"]) == _words(title), (shown["title"], title)
    assert " ".join(shown["drawnTitle"].split()) == _words(title), (shown["drawnTitle"], title)


def _assert_matches_python(shown: dict, inputs: CostInputs) -> None:
    """The page's figure is :func:`collective_spec` for ``inputs``, computed here in CPython: the same
    traces (the page, precomputed or live, holds the visible ones only), the same y values, title and summary."""
    update = collective_update(inputs)
    assert shown["summary"] == update.summary
    # On a phone gpucomm_layout.js breaks a long title into lines (<br>): the same words
    assert re.sub(r"\s*<br>\s*", " ", shown["title"]) == update.layout["title.text"]
    expected = [t for t in collective_spec(inputs)["data"] if t["visible"] is not False]
    assert len(shown["y"]) == len(expected), f"{len(shown['y'])} traces on the page, {len(expected)} in Python"
    for index, (got, trace) in enumerate(zip(shown["y"], expected)):
        got, y = got or [], trace["y"]
        assert len(got) == len(y), f"trace {index}: {len(got)} points on the page, {len(y)} in Python"
        for a, b in zip(got, y):
            assert (a is None and (b is None or not math.isfinite(b))) or \
                math.isclose(a, b, rel_tol=1e-12, abs_tol=ABS_TOL), (index, a, b)
    assert shown["visible"] == [t["visible"] for t in expected]


def test_live_calculator_matches_python(open_page, capsys):
    if PAGE not in toc_pages():
        pytest.skip(f"{PAGE} is not in _toc.yml")
    page, visit = open_page(PAGE)
    panel = page.locator(".gpucomm-live[data-gpucomm-live=collective]")
    assert panel.count() == 1, f"{PAGE}: no live panel"
    first = panel.evaluate(SHOWN_JS)
    assert first["state"] == "idle" and first["updates"] == 0
    _assert_matches_python(first, CostInputs(**INITIAL))  # the precomputed first paint
    # Python starts (in its worker) when the panel comes into view or a control is touched, never before
    if not panel.locator("form").evaluate("f => f.getBoundingClientRect().top < innerHeight"):
        assert not [u for u in visit.requests if "/pyodide/" in u or "gpucomm_live/" in u], \
            "Pyodide or the package was fetched before the panel was in view or a control touched"
        assert page.evaluate("() => window.gpucommLive.startedAt") is None

    inputs = CostInputs(**INITIAL)
    # 1. type a size
    shown = _type(page, panel, "msg_bytes", "1MiB")
    assert shown["state"] == "live", shown["state"]
    inputs = CostInputs(**{**INITIAL, "msg_bytes": 2**20})
    _assert_matches_python(shown, inputs)
    # 2. an invalid size: the CLI's message next to the size control, the figure as it was
    shown_bad = _type(page, panel, "msg_bytes", "0")
    cli = _cli_message(capsys, "cost", "all_reduce", "--link", "nvlink3", "--gpus", "4", "--size", "0")
    assert shown_bad["messages"]["msg_bytes"] == cli
    assert [m for f, m in shown_bad["messages"].items() if f != "msg_bytes" and m] == []
    assert shown_bad["y"] == shown["y"] and shown_bad["summary"] == shown["summary"]
    # 3. a valid size again clears the message
    shown = _type(page, panel, "msg_bytes", "256MiB")
    inputs = CostInputs(**{**INITIAL, "msg_bytes": 256 * 2**20})
    assert shown["messages"]["msg_bytes"] == ""
    _assert_matches_python(shown, inputs)
    # 4. more GPUs (two DGX A100 nodes over their own NICs)
    shown = _type(page, panel, "num_ranks", "16")
    shown = _type(page, panel, "num_nodes", "2")
    inputs = CostInputs(**{**INITIAL, "msg_bytes": 256 * 2**20, "num_ranks": 16, "num_nodes": 2})
    _assert_matches_python(shown, inputs)
    # 5. pick from a list: the collective (across nodes the model may refuse it: then next to this control)
    shown = _change(page, panel, lambda: panel.locator("select[name=collective]").select_option(label="all_gather"))
    if _refused(inputs, collective="all_gather"):
        assert shown["messages"]["collective"], shown["messages"]
        shown = _change(page, panel, lambda: panel.locator("select[name=collective]").select_option(label="all_reduce"))
    else:
        _assert_matches_python(shown, replace(inputs, collective="all_gather"))
        shown = _change(page, panel, lambda: panel.locator("select[name=collective]").select_option(label="all_reduce"))
    _assert_matches_python(shown, inputs)
    # 6. tick a box: compare with one more system
    shown = _change(page, panel, lambda: panel.locator("fieldset[data-field=compare] label",
                                                        has_text="DGX B200").locator("input").check())
    inputs = CostInputs(**{**INITIAL, "msg_bytes": 256 * 2**20, "num_ranks": 16, "num_nodes": 2,
                           "compare": ("dgx_h100", "dgx_b200", "gb200_nvl72")})
    _assert_matches_python(shown, inputs)
    # 7. a configuration the model refuses (NVLS on A100): the CLI's message, next to the algorithm
    _type(page, panel, "num_ranks", "4")
    _type(page, panel, "num_nodes", "1")
    shown = _change(page, panel, lambda: panel.locator("select[name=algorithm]").select_option(label="nvls"))
    cli = _cli_message(capsys, "cost", "all_reduce", "--link", "nvlink3", "--gpus", "4", "--size", "256MiB",
                       "--algo", "nvls")
    assert shown["messages"]["algorithm"] == cli

    assert not visit.unexpected_page_errors, visit.unexpected_page_errors
    assert not visit.external_requests, f"requests left this machine: {visit.external_requests}"
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    panel.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "live_calculator_1280x800.png"))


def _phone_page(browser, url):
    """A page at 390x844 (a phone) in a fresh context that lets no request leave 127.0.0.1, loaded."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, service_workers="block")
    context.route("**/*", lambda route, request: route.continue_() if "127.0.0.1" in request.url else route.abort())
    page = context.new_page()
    page.goto(url, wait_until="load")
    return page


def test_live_calculator_on_a_phone(browser, base_url):
    """At 390x844 (a phone), in a page laid out at that size: the controls fit the width, a change works."""
    if PAGE not in toc_pages():
        pytest.skip(f"{PAGE} is not in _toc.yml")
    page = _phone_page(browser, base_url + PAGE)
    panel = page.locator(".gpucomm-live[data-gpucomm-live=collective]")
    shown = _type(page, panel, "msg_bytes", "8MiB")
    assert shown["state"] == "live" and not any(shown["messages"].values()), shown
    _assert_matches_python(shown, CostInputs(**{**INITIAL, "msg_bytes": 8 * 2**20}))
    wide = panel.locator("form").evaluate(
        "f => Array.from(f.querySelectorAll('select, input, .gpucomm-live-msg')).filter("
        "e => e.getBoundingClientRect().right > innerWidth + 1).map(e => e.name || e.className)")
    assert not wide, f"controls wider than the phone's screen: {wide}"
    panel.locator("form").scroll_into_view_if_needed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "live_calculator_390x844.png"))
    page.context.close()


def test_over_file_url_the_panel_says_it_needs_http(browser):
    if not (HTML / PAGE).is_file():
        pytest.skip("no built book in _build/html: run `make book` first")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto((HTML / PAGE).as_uri(), wait_until="load")
    page.wait_for_timeout(500)
    panel = page.locator(".gpucomm-live[data-gpucomm-live=collective]")
    assert panel.get_attribute("data-state") == "static"
    intro = panel.locator(".gpucomm-live-intro").inner_text()
    assert "served over http" in intro and "\n" not in intro.strip()
    assert panel.locator("form").count() == 0
    assert panel.locator(".js-plotly-plot svg.main-svg").count() >= 1, "the precomputed figure is not drawn"
    assert not [u for u in requests if "pyodide" in u]
    context.close()


def test_live_front_end_only_on_pages_with_a_panel():
    """gpucomm_live.js (and the package zip it names) on the pages with a live panel or the log reader, nowhere
    else; no page loads Pyodide by itself."""
    pages = [p for p in HTML.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts]
    if not pages:
        pytest.skip("no built book in _build/html: run `make book` first")
    with_panel = []
    for path in pages:
        text = path.read_text(errors="replace")
        scripts = re.findall(r"<script[^>]*gpucomm_live\.js[^>]*>", text)
        assert "pyodide" not in " ".join(re.findall(r"<script[^>]*>", text)), f"{path}: loads Pyodide with the page"
        if "data-gpucomm-live=" in text or "data-gpucomm-logcheck=" in text:  # a calculator, or the log reader
            with_panel.append(path.relative_to(HTML).as_posix())
            assert len(scripts) == 1, f"{path}: {len(scripts)} gpucomm_live.js scripts"
            package = re.search(r'data-package="([^"]+)"', scripts[0]).group(1)
            assert (HTML / "_static" / package).is_file(), f"{path}: names {package}, not in _static"
        else:
            assert not scripts, f"{path}: gpucomm_live.js without a live panel"
    assert PAGE in with_panel, f"{PAGE} has no live panel"


# --- the other live calculators: the FigureUpdate of their ipywidgets UI, applied in the page --------------------

OTHER_PANELS = (
    # page, calculator, the panel's initial values (the notebook's cell),
    # steps: (field, raw control value, whether the model accepts it)
    ("notebooks/mesh_vs_nvswitch.html", "mesh", dict(link="nvlink4", mesh_size=8, msg_bytes=128 * 2**20),
     [("msg_bytes", "16MiB", True), ("mesh_size", "1", False), ("mesh_size", "4", True), ("link", "nvlink3", True)]),
    ("notebooks/generations_explorer.html", "generations", dict(pcie_lanes=16, flops_dtype="fp16"),
     [("pcie_lanes", 4, True), ("both_directions", True, True), ("flops_dtype", "fp8", True)]),
    ("notebooks/training_calculator.html", "training",
     dict(model="llama-3-70b", num_gpus=16, gpus_per_node=8, network="ib_ndr"),
     [("num_gpus", "64", True), ("mfu", "1.5", False), ("mfu", "0.5", True), ("num_gpus", "12", True)]),
    # A TP degree that does not divide the heads: the model's refusal, gpucomm tp's line (tests/viz/test_live.py).
    ("notebooks/tp_inference_calculator.html", "tp",
     dict(model="llama-3-70b", gpu="h200_sxm", interconnect="nvlink4:mesh8", tp_size=2, batch=8),
     [("batch", "16", True), ("tp_size", "3", False), ("tp_size", "4", True), ("interconnect", "nvlink4:switch", True),
      ("prompt_len", "2048", True)]),
)


def _set(page, panel, field: str, kind: str, choices, value) -> dict:
    """Set one control as a reader does and wait for the recompute."""
    if kind in ("size", "int", "float"):
        return _type(page, panel, field, str(value))
    if kind == "bool":
        return _change(page, panel, lambda: panel.locator(f"input[name={field}]").set_checked(bool(value)))
    index = [v for _, v in choices].index(value)
    return _change(page, panel, lambda: panel.locator(f"select[name={field}]").select_option(index=index))


@pytest.mark.parametrize("rel, name, initial, steps", OTHER_PANELS, ids=[c[1] for c in OTHER_PANELS])
def test_other_live_calculators_match_python(open_page, rel, name, initial, steps):
    from gpucomm.viz.calculators.inputs import input_fields
    from gpucomm.viz.calculators.live import calculators, compute, controls, read_field

    if rel not in toc_pages():
        pytest.skip(f"{rel} is not in _toc.yml")
    calc = calculators()[name]
    fields = controls(name, calc.inputs(**initial))["fields"]
    page, visit = open_page(rel)
    panel = page.locator(f".gpucomm-live[data-gpucomm-live={name}]")
    assert panel.count() == 1, f"{rel}: no live panel {name}"
    raw = {f: meta["value"] for f, meta in fields.items()}
    all_meta = dict(input_fields(calc.inputs))
    for field, value, accepted in steps:
        meta = fields[field]
        shown = _set(page, panel, field, meta["kind"], meta["choices"], value)
        raw[field] = value  # an invalid value stays in its control until a later step replaces it
        expected = compute(name, raw)  # what Python says of the same control values
        assert expected["ok"] == accepted, (field, value, expected)
        if not accepted:  # the page refuses it too, with the same line, next to the control
            assert shown["messages"][expected["field"] or field] == expected["message"], shown["messages"]
            continue
        assert not any(shown["messages"].values()), shown["messages"]
        assert shown["drawn"] == shown["shownTraces"], (field, value, shown["drawn"], shown["shownTraces"])
        update = calc.update(calc.inputs(**{f: read_field(all_meta[f], v) for f, v in raw.items()}))
        assert shown["summary"] == update.summary
        if "title.text" in update.layout:
            _assert_title_drawn(shown, update.layout["title.text"])
        for index, y in zip(update.traces, update.data["y"]):
            got = shown["y"][index] or []
            assert len(got) == len(y), (field, index)
            for a, b in zip(got, y):
                finite_b = isinstance(b, float) and math.isfinite(b)
                assert a == b or (a is None and not finite_b) or \
                    (finite_b and math.isclose(a, b, rel_tol=1e-12, abs_tol=ABS_TOL)), \
                    (field, index, a, b)
    assert not visit.unexpected_page_errors, visit.unexpected_page_errors
    assert not visit.external_requests, visit.external_requests
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SHOTS / f"live_{name}_1280.png"))


def test_tp_live_calculator_on_a_phone(browser, base_url):
    """The TP calculator at 390x844: its eight controls fit the width, a change recomputes."""
    rel, name, initial, _ = OTHER_PANELS[-1]
    if rel not in toc_pages():
        pytest.skip(f"{rel} is not in _toc.yml")
    from gpucomm.viz.calculators.tp_inference import TPInputs, tp_update

    page = _phone_page(browser, base_url + rel)
    panel = page.locator(f".gpucomm-live[data-gpucomm-live={name}]")
    shown = _type(page, panel, "batch", "32")
    assert shown["state"] == "live" and not any(shown["messages"].values()), shown
    update = tp_update(TPInputs(**{**initial, "batch": 32}))
    assert shown["summary"] == update.summary
    _assert_title_drawn(shown, update.layout["title.text"])  # wrapped to the phone's width, the same words
    wide = panel.locator("form").evaluate(
        "f => Array.from(f.querySelectorAll('select, input, .gpucomm-live-msg')).filter("
        "e => e.getBoundingClientRect().right > innerWidth + 1).map(e => e.name || e.className)")
    assert not wide, f"controls wider than the phone's screen: {wide}"
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SHOTS / f"live_{name}_390.png"))
    page.context.close()



DRAG_JS = r"""async (panel, positions) => {
  const slider = panel.querySelector('[data-field=msg_bytes] input.gpucomm-live-slider');
  const before = window.gpucommLive.updates.length;
  for (const k of positions) {  // one input event per animation frame, as a dragged slider gives them
    await new Promise(r => requestAnimationFrame(r));
    slider.value = String(k);
    slider.dispatchEvent(new Event('input', {bubbles: true}));
  }
  return {before, text: panel.querySelector('input[name=msg_bytes]').value};
}"""


def test_python_runs_in_a_worker_and_a_dragged_slider_recomputes_at_most_once_a_frame(open_page):
    """The model runs in a Web Worker (the page never loads Pyodide itself); a slider dragged over 40 frames
    recomputes at most once per frame, and the figure ends on the model's numbers for where the slider stopped."""
    if PAGE not in toc_pages():
        pytest.skip(f"{PAGE} is not in _toc.yml")
    page, visit = open_page(PAGE)
    panel = page.locator(".gpucomm-live[data-gpucomm-live=collective]")
    _type(page, panel, "msg_bytes", "1MiB")  # Python ready
    assert any(w.url.endswith("gpucomm_live_worker.mjs") for w in page.workers), [w.url for w in page.workers]
    assert page.evaluate("() => typeof window.loadPyodide === 'undefined' && !('pyodide' in window)")
    positions = [20 + (i % 12) for i in range(40)]  # 1 MiB .. 2 GiB and back, in powers of two
    drag = panel.evaluate(DRAG_JS, positions)
    assert drag["text"] == f"{2 ** (positions[-1] - 20)}MiB", drag  # the text box follows the slider
    page.wait_for_function("n => window.gpucommLive.updates.length > n", arg=drag["before"],
                           timeout=PYTHON_READY_S * 1000)
    page.wait_for_timeout(1500)  # the last recompute drawn
    records = page.evaluate("n => window.gpucommLive.updates.slice(n)", drag["before"])
    assert 1 <= len(records) <= len(positions), len(records)
    assert all(r["ok"] for r in records), records
    shown = panel.evaluate(SHOWN_JS)
    from gpucomm.model.units import parse_size

    _assert_matches_python(shown, CostInputs(**{**INITIAL, "msg_bytes": parse_size(drag["text"])}))
    assert not visit.unexpected_page_errors, visit.unexpected_page_errors
