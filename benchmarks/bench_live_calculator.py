"""The live calculators in the reader's browser: time to the first live result and per later update.

Serves a built book (default ``_build/html``) on 127.0.0.1 and opens each calculator page with a
live panel (``CASES``: collective, mesh, generations, training, TP inference) in headless Chromium
through Playwright (Debian's ``chromium``, never ``playwright install``), each run in a fresh
browser context: empty cache, nothing compiled, so every run is cold. Requests to any other host are aborted and counted (the
mode is offline: the count must be 0). Per run:

* bytes before opting in: every response of the page until its network is quiet (DevTools
  ``encodedDataLength``, uncompressed ``http.server``), Pyodide not among them;
* first live result: the reader's first interaction (focus on a control, which starts loading
  Python) to the first figure redrawn from the model (``Plotly.react`` or ``Plotly.update`` done), with
  the new value set at once: Pyodide's download and start, the package unpacked and imported, one update;
* later updates: from each change event (a value typed, picked or ticked) to the figure redrawn: the
  model in Pyodide, JSON across, the redraw. Median and 90th percentile.

Targets (static-book issue, live mode): first live result <= 4 s cold and offline, a later update
<= 50 ms (median). Prints figures; it is not a test. Run after ``make book``::

    python benchmarks/bench_live_calculator.py [--html DIR] [--runs 3] [--updates 30] [CALCULATOR ...]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from pathlib import Path
from urllib.parse import urlsplit

from _chromium import find_chromium
from bench_page_weight import CHROMIUM_ARGS, DEFAULT_HTML, LOCAL_HOSTS, kind_of, serve

VIEWPORT = {"width": 1280, "height": 800}
TARGET_FIRST_S = 4.0
TARGET_UPDATE_MS = 50.0
QUIET_MS = 500

# calculator: (page, first change, later changes cycled through). Every value is one the panel's model accepts
# from its initial values (the notebook's cell) and from the change before it; a value is what the control
# holds: text for sizes and numbers, the choice's value for a list, True/False for a box.
CASES = {
    "collective": ("notebooks/allreduce_calculator.html", ("msg_bytes", "1MiB"),
                   (("msg_bytes", "4MiB"), ("num_ranks", "8"), ("msg_bytes", "1GiB"), ("num_ranks", "4"),
                    ("msg_bytes", "64KiB"), ("num_ranks", "2"))),
    "mesh": ("notebooks/mesh_vs_nvswitch.html", ("msg_bytes", "16MiB"),
             (("mesh_size", "4"), ("msg_bytes", "1GiB"), ("link", "nvlink3"), ("mesh_size", "8"), ("msg_bytes", "64KiB"),
              ("link", "nvlink4"))),
    "generations": ("notebooks/generations_explorer.html", ("pcie_lanes", 4),
                    (("both_directions", True), ("flops_dtype", "fp8"), ("pcie_lanes", 16), ("both_directions", False),
                     ("flops_dtype", "fp16"), ("pcie_lanes", 8))),
    "training": ("notebooks/training_calculator.html", ("num_gpus", "64"),
                 (("mfu", "0.5"), ("num_gpus", "32"), ("network", "ib_hdr"), ("mfu", "0.4"), ("num_gpus", "16"),
                  ("network", "ib_ndr"))),
    "tp": ("notebooks/tp_inference_calculator.html", ("batch", "16"),
           (("tp_size", "4"), ("batch", "4"), ("interconnect", "nvlink4:switch"), ("tp_size", "2"), ("batch", "32"),
            ("interconnect", "nvlink4:mesh8"))),
}
def _wait_quiet(page, inflight: set) -> None:
    quiet_ms = waited_ms = 0
    while quiet_ms < QUIET_MS and waited_ms < 30_000:
        page.wait_for_timeout(100)
        waited_ms += 100
        quiet_ms = 0 if inflight else quiet_ms + 100


def _set(page, name: str, field: str, value, timeout_s: float) -> dict:
    """Set one control as a reader does (type and Enter, pick, tick), wait for the recompute; return its record."""
    panel = page.locator(f".gpucomm-live[data-gpucomm-live={name}]")
    before = int(panel.get_attribute("data-updates"))
    select = panel.locator(f"select[name={field}]")
    if select.count():
        choices = panel.evaluate("(p, f) => JSON.parse(p.querySelector('script.gpucomm-live-controls').textContent)"
                                 ".fields[f].choices.map(c => c[1])", field)
        select.select_option(index=choices.index(value))
    else:
        box = panel.locator(f"input[name={field}]")
        if isinstance(value, bool):
            box.set_checked(value)
        else:
            box.fill(value)
            box.press("Enter")
            box.evaluate("e => e.blur()")  # a text field commits its value on change (Enter or leaving it)
    page.wait_for_function("([el, n]) => Number(el.dataset.updates) > n", arg=[panel.element_handle(), before],
                           timeout=timeout_s * 1000)
    return page.evaluate("() => window.gpucommLive.updates.at(-1)")


def run_once(browser, base_url: str, name: str, updates: int) -> dict:
    """One cold run of calculator ``name``: bytes before opting in, first live result, later updates."""
    page_rel, (first_field, first_value), changes = CASES[name]
    context = browser.new_context(viewport=VIEWPORT, service_workers="block")
    external: list[str] = []

    def route(route, request):
        if urlsplit(request.url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            external.append(request.url)
            route.abort()

    context.route("**/*", route)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    url_of: dict[str, str] = {}
    bytes_of: dict[str, int] = {}
    inflight: set[str] = set()

    def on_request(e):
        inflight.add(e["requestId"])
        url_of[e["requestId"]] = e["request"]["url"]

    def on_done(e):
        inflight.discard(e["requestId"])
        bytes_of[e["requestId"]] = bytes_of.get(e["requestId"], 0) + int(e.get("encodedDataLength", 0))

    cdp.on("Network.requestWillBeSent", on_request)
    cdp.on("Network.loadingFinished", on_done)
    cdp.on("Network.loadingFailed", lambda e: inflight.discard(e["requestId"]))
    cdp.send("Network.enable")
    page.goto(base_url + page_rel, wait_until="load", timeout=120_000)
    _wait_quiet(page, inflight)
    before = dict(bytes_of)
    assert not [u for u in url_of.values() if "/pyodide/" in u], "Pyodide was fetched before any interaction"
    panel = page.locator(f".gpucomm-live[data-gpucomm-live={name}]")
    if panel.locator("form").count() == 0:
        raise SystemExit(f"bench_live_calculator: no live {name} panel with controls on {page_rel}")

    panel.locator(f"[name={first_field}]").first.focus()  # the first interaction: loading Python starts here
    first = _set(page, name, first_field, first_value, timeout_s=300)
    live = page.evaluate("() => window.gpucommLive")
    if not first["ok"]:
        raise SystemExit(f"bench_live_calculator: {name}: the first update failed: {first}")
    first_s = (live["firstResult"] - live["firstInteraction"]) / 1000
    update_ms, parts = [], []
    for i in range(updates):
        field, value = changes[i % len(changes)]
        record = _set(page, name, field, value, timeout_s=60)
        if not record["ok"]:
            raise SystemExit(f"bench_live_calculator: {name}: update {field}={value!r} refused: {record}")
        update_ms.append(record["ms"])
        parts.append((record["computeMs"], record["drawMs"]))
    _wait_quiet(page, inflight)
    context.close()
    by_kind_before: dict[str, int] = {}
    for rid, b in before.items():
        by_kind_before[kind_of(url_of[rid])] = by_kind_before.get(kind_of(url_of[rid]), 0) + b
    return {"bytes_before": sum(before.values()), "by_kind_before": by_kind_before,
            "bytes_opt_in": sum(b for rid, b in bytes_of.items() if rid not in before),
            "first_s": first_s, "python_ready_s": live["loadMs"] / 1000,
            "phases": ", ".join(f"{k} at {v / 1000:.2f} s" for k, v in live["phases"].items()), "update_ms": update_ms,
            "compute_ms": statistics.median(c for c, _ in parts), "draw_ms": statistics.median(d for _, d in parts),
            "external": external}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="time to the first live result and per update of the live calculators")
    parser.add_argument("calculators", nargs="*", metavar="CALCULATOR",
                        help=f"live calculators to time (default: all of {', '.join(CASES)})")
    parser.add_argument("--html", type=Path, default=DEFAULT_HTML, help="built book (default _build/html)")
    parser.add_argument("--runs", type=int, default=3, help="cold runs per calculator (fresh browser context each; default 3)")
    parser.add_argument("--updates", type=int, default=30, help="later updates timed per run (default 30)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.calculators if n not in CASES]
    if unknown:
        parser.error(f"calculator {unknown[0]!r} is not valid: expected one of {', '.join(CASES)}")

    html = args.html.resolve()
    names = args.calculators or list(CASES)
    missing = [CASES[n][0] for n in names if not (html / CASES[n][0]).is_file()]
    if missing:
        print(f"bench_live_calculator: no {', '.join(missing)} in {html}: run `make book` first", file=sys.stderr)
        return 1
    found = find_chromium("bench_live_calculator")
    if found is None:
        return 1
    chromium, sync_playwright = found

    load = os.getloadavg()
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (1, 5, 15 min); book: {html}")
    print(f"{args.runs} cold runs per calculator (fresh context each), {args.updates} later updates per run, offline "
          "(requests off 127.0.0.1 aborted)")
    server, base_url = serve(html)
    results: dict[str, list[dict]] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            for name in names:
                print(f"{name} ({CASES[name][0]}):")
                for i in range(args.runs):
                    r = run_once(browser, base_url, name, args.updates)
                    results.setdefault(name, []).append(r)
                    print(f"  run {i + 1}: first live result {r['first_s']:.2f} s (Python ready "
                          f"{r['python_ready_s']:.2f} s: {r['phases']}), update median "
                          f"{statistics.median(r['update_ms']):.1f} ms (model in Pyodide {r['compute_ms']:.1f} ms, "
                          f"redraw {r['draw_ms']:.1f} ms), {r['bytes_before'] / 1e6:.2f} MB before opting in, "
                          f"+{r['bytes_opt_in'] / 1e6:.2f} MB on opting in, {len(r['external'])} requests off this machine")
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"{'calculator':<12} {'first live result':>18} {'update median':>14} {'update p90':>11} "
          f"{'before opting in':>17} {'on opting in':>13} {'off-machine':>11}")
    verdicts = []
    for name, runs in results.items():
        first_s = statistics.median(r["first_s"] for r in runs)
        all_updates = sorted(ms for r in runs for ms in r["update_ms"])
        update_ms = statistics.median(all_updates)
        p90_ms = all_updates[int(0.9 * (len(all_updates) - 1))]
        before = statistics.median(r["bytes_before"] for r in runs)
        opt_in = statistics.median(r["bytes_opt_in"] for r in runs)
        external = {u for r in runs for u in r["external"]}
        print(f"{name:<12} {first_s:16.2f} s {update_ms:11.1f} ms {p90_ms:8.1f} ms {before / 1e6:14.2f} MB "
              f"{opt_in / 1e6:10.2f} MB {len(external):>11}")
        verdicts.append((name, first_s <= TARGET_FIRST_S, update_ms <= TARGET_UPDATE_MS))
    print(f"targets: first live result <= {TARGET_FIRST_S:g} s cold and offline (median of the runs), "
          f"later update <= {TARGET_UPDATE_MS:g} ms (median)")
    for name, first_ok, update_ok in verdicts:
        print(f"  {name}: first result {'within' if first_ok else 'OVER'}, updates {'within' if update_ok else 'OVER'}")
    last = next(iter(results.values()))[-1]
    shown = sorted(last["by_kind_before"].items(), key=lambda kv: -kv[1])
    print(f"{names[0]} page before opting in: " + ", ".join(f"{k} {b / 1e6:.2f} MB" for k, b in shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
