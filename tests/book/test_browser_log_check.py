"""The "check your log" page in a real browser: a pasted log gives, in the page, the CLI's records and findings.

Opens the built ``book/check_your_log.html`` in headless Chromium on a local server (fixtures of
``test_browser.py``: anything not on 127.0.0.1 is blocked, and fails the test). Pastes a bundled nccl-tests log
(``C04``) into the page's box: the records and warnings the page computed (in Pyodide, in its worker) equal
``gpucomm parse --json`` on the same file, and the page shows one table row per record and the same warning codes;
the fit it shows is ``gpucomm fit``'s. Then pastes a bundled ``NCCL_DEBUG=INFO`` log: what the page read equals
``gpucomm diagnose --json`` and it lists the same findings, in order. No request leaves the machine, and the
pasted text is in no request at all.
"""

from __future__ import annotations

import json

import pytest
from test_browser import SHOTS, base_url, browser, open_page, toc_pages  # noqa: F401

from gpucomm.cli import main as cli_main
from gpucomm.model.measurements import bundled_data
from gpucomm.viz.calculators.live import finite

pytestmark = pytest.mark.slow

PAGE = "book/check_your_log.html"
PYTHON_READY_S = 120  # cold Pyodide on a busy 2-core machine: seconds, not minutes; generous for CI
NCCL_TESTS_LOG = "C04"
INFO_LOG = "nccl_892"
_RUN_FIELDS = ("parsed_at", "argv", "input")  # when and how the metadata was made, not what the log holds

SHOWN_JS = r"""panel => ({
  rows: Array.from(panel.querySelectorAll('table[data-what=records] tbody tr')).map(r => Number(r.dataset.bytes)),
  warnings: Array.from(panel.querySelectorAll('.gpucomm-logcheck-warnings li')).map(li => li.dataset.code),
  findings: Array.from(panel.querySelectorAll('.gpucomm-logcheck-findings li')).map(li => li.dataset.code),
  fit: (panel.querySelector('.gpucomm-logcheck-fit') || {}).innerText || null,
  traces: panel.querySelector('.js-plotly-plot').data.map(t => t.name),
  result: window.gpucommLogCheck.result,
  checks: Number(panel.dataset.checks), state: panel.dataset.state,
})"""


def _cli(capsys, *argv: str) -> list[dict]:
    capsys.readouterr()
    cli_main(list(argv))
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


def _paste(page, panel, text: str) -> dict:
    """Put ``text`` in the page's box as a paste does (one input event) and wait for the page's answer."""
    before = panel.evaluate("p => Number(p.dataset.checks || 0)")
    box = panel.locator("textarea.gpucomm-logcheck-input")
    box.evaluate("(b, t) => { b.value = t; b.dispatchEvent(new Event('input', {bubbles: true})); }", text)
    page.wait_for_function("([el, n]) => Number(el.dataset.checks) > n", arg=[panel.element_handle(), before],
                           timeout=PYTHON_READY_S * 1000)
    return panel.evaluate(SHOWN_JS)


def test_pasted_logs_give_the_cli_records_and_findings(open_page, capsys, tmp_path):
    if PAGE not in toc_pages():
        pytest.skip(f"{PAGE} is not in _toc.yml")
    page, visit = open_page(PAGE)
    panel = page.locator(".gpucomm-logcheck[data-gpucomm-logcheck]")
    assert panel.count() == 1, f"{PAGE}: no log reader"
    assert panel.locator(".js-plotly-plot svg.main-svg").count() >= 1, "the example's figure is not drawn"

    # 1. nccl-tests output: gpucomm parse --json's records and warnings
    path = bundled_data("nccl_logs", f"{NCCL_TESTS_LOG}.txt")
    shown = _paste(page, panel, path.read_text())
    assert shown["state"] == "done", shown["state"]
    cli = finite(_cli(capsys, "parse", str(path), "--json"))
    meta, records = cli[0], cli[1:]
    (run,) = shown["result"]["nccl_tests"]["runs"]
    assert {k: v for k, v in run["meta"].items() if k not in _RUN_FIELDS} == \
        {k: v for k, v in meta.items() if k not in _RUN_FIELDS}
    assert run["records"] == records
    assert shown["rows"] == [r["msg_bytes"] for r in records]
    assert shown["warnings"] == [w["code"] for w in meta["warnings"]] and shown["warnings"]
    # the fit line is gpucomm fit's
    out = tmp_path / "r.jsonl"
    cli_main(["parse", str(path), "--out", str(out)])
    capsys.readouterr()
    cli_main(["fit", str(out)])
    printed = capsys.readouterr().out
    assert run["fit"]["split_reason"] in printed and run["fit"]["split_reason"] in shown["fit"]
    assert any(name.startswith("model: ") for name in shown["traces"]), shown["traces"]

    # 2. an NCCL_DEBUG=INFO log: gpucomm diagnose --json's facts and findings
    info_path = bundled_data("nccl_info_logs", f"{INFO_LOG}.txt")
    shown = _paste(page, panel, info_path.read_text())
    (diagnosis,) = _cli(capsys, "diagnose", str(info_path), "--json")
    del diagnosis["input"]
    assert shown["result"]["nccl_info"] == finite(diagnosis)
    assert shown["findings"] == [f["code"] for f in diagnosis["findings"]] and shown["findings"]

    assert not visit.unexpected_page_errors, visit.unexpected_page_errors
    assert not visit.external_requests, f"requests left this machine: {visit.external_requests}"
    pasted = info_path.read_text().splitlines()[5][:40]
    assert not [u for u in visit.requests if pasted in u], "the pasted text went into a request"
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SHOTS / "check_your_log_1280.png"))


def test_log_reader_on_a_phone(open_page):
    """At 390x844: a pasted log is read, and neither the box nor the tables widen the page."""
    if PAGE not in toc_pages():
        pytest.skip(f"{PAGE} is not in _toc.yml")
    page, _ = open_page(PAGE, {"width": 390, "height": 844})
    panel = page.locator(".gpucomm-logcheck[data-gpucomm-logcheck]")
    shown = _paste(page, panel, bundled_data("nccl_logs", f"{NCCL_TESTS_LOG}.txt").read_text())
    assert shown["state"] == "done" and shown["rows"], shown
    width = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
    assert width[0] <= width[1] + 1, f"the page is {width[0]} px wide on a {width[1]} px screen"
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SHOTS / "check_your_log_390.png"))
