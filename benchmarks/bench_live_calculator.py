"""The live calculator in the reader's browser: time to the first live result and per later update.

Serves a built book (default ``_build/html``) on 127.0.0.1 and opens the collective calculator
page (``notebooks/allreduce_calculator.html``) in headless Chromium through Playwright (Debian's
``chromium``, never ``playwright install``), each run in a fresh browser context: empty cache,
nothing compiled, so every run is cold. Requests to any other host are aborted and counted (the
mode is offline: the count must be 0). Per run:

* bytes before opting in: every response of the page until its network is quiet (DevTools
  ``encodedDataLength``, uncompressed ``http.server``), Pyodide not among them;
* first live result: the reader's first interaction (a click into the size field, which starts
  loading Python) to the first figure redrawn from the model (``Plotly.react`` done), with the new
  size typed at once: Pyodide's download and start, the package unpacked and imported, one update;
* later updates: from each change event (a size or GPU count typed) to the figure redrawn: the model
  in Pyodide, JSON across, ``Plotly.react``. Median and 90th percentile.

Targets (static-book issue, live mode): first live result <= 4 s cold and offline, a later update
<= 50 ms (median). Prints figures; it is not a test. Run after ``make book``::

    python benchmarks/bench_live_calculator.py [--html DIR] [--runs 3] [--updates 30]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
from pathlib import Path
from urllib.parse import urlsplit

from bench_page_weight import CHROMIUM_ARGS, DEFAULT_HTML, LOCAL_HOSTS, kind_of, serve

PAGE = "notebooks/allreduce_calculator.html"
VIEWPORT = {"width": 1280, "height": 800}
TARGET_FIRST_S = 4.0
TARGET_UPDATE_MS = 50.0
QUIET_MS = 500
# Typed into the size and GPU fields in turn; every one a valid configuration of the panel's DGX A100.
UPDATE_VALUES = (("msg_bytes", "4MiB"), ("num_ranks", "8"), ("msg_bytes", "1GiB"), ("num_ranks", "4"),
                 ("msg_bytes", "64KiB"), ("num_ranks", "2"))


def _wait_quiet(page, inflight: set) -> None:
    quiet_ms = waited_ms = 0
    while quiet_ms < QUIET_MS and waited_ms < 30_000:
        page.wait_for_timeout(100)
        waited_ms += 100
        quiet_ms = 0 if inflight else quiet_ms + 100


def _type(page, field: str, text: str, timeout_s: float) -> dict:
    """Type ``text`` into a field, commit it (Enter), wait for the recompute; return its record."""
    panel = page.locator(".gpucomm-live").first
    before = int(panel.get_attribute("data-updates"))
    box = panel.locator(f"input[name={field}]")
    box.fill(text)
    box.press("Enter")
    box.evaluate("e => e.blur()")
    page.wait_for_function("([el, n]) => Number(el.dataset.updates) > n", arg=[panel.element_handle(), before],
                           timeout=timeout_s * 1000)
    return page.evaluate("() => window.gpucommLive.updates.at(-1)")


def run_once(browser, base_url: str, updates: int) -> dict:
    """One cold run: bytes before opting in, first live result, later updates."""
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
    page.goto(base_url + PAGE, wait_until="load", timeout=120_000)
    _wait_quiet(page, inflight)
    before = dict(bytes_of)
    assert not [u for u in url_of.values() if "/pyodide/" in u], "Pyodide was fetched before any interaction"
    if page.locator(".gpucomm-live form").count() == 0:
        raise SystemExit(f"bench_live_calculator: no live panel with controls on {PAGE}")

    page.locator(".gpucomm-live input[name=msg_bytes]").click()  # the first interaction
    first = _type(page, "msg_bytes", "1MiB", timeout_s=300)
    live = page.evaluate("() => window.gpucommLive")
    if not first["ok"]:
        raise SystemExit(f"bench_live_calculator: the first update failed: {first}")
    first_s = (live["firstResult"] - live["firstInteraction"]) / 1000
    update_ms, parts = [], []
    for i in range(updates):
        field, text = UPDATE_VALUES[i % len(UPDATE_VALUES)]
        record = _type(page, field, text, timeout_s=60)
        if not record["ok"]:
            raise SystemExit(f"bench_live_calculator: update {field}={text} refused: {record}")
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
    parser = argparse.ArgumentParser(description="time to the first live result and per update of the live calculator")
    parser.add_argument("--html", type=Path, default=DEFAULT_HTML, help="built book (default _build/html)")
    parser.add_argument("--runs", type=int, default=3, help="cold runs (fresh browser context each; default 3)")
    parser.add_argument("--updates", type=int, default=30, help="later updates timed per run (default 30)")
    args = parser.parse_args(argv)

    html = args.html.resolve()
    if not (html / PAGE).is_file():
        print(f"bench_live_calculator: no {PAGE} in {html}: run `make book` first", file=sys.stderr)
        return 1
    chromium = shutil.which("chromium")
    if not chromium:
        print("bench_live_calculator: no `chromium` on PATH (Debian: apt-get install chromium)", file=sys.stderr)
        return 1
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("bench_live_calculator: playwright (python) is not installed", file=sys.stderr)
        return 1

    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}; book: {html}")
    print(f"{PAGE}: {args.runs} cold runs (fresh context each), {args.updates} later updates per run, offline "
          "(requests off 127.0.0.1 aborted)")
    server, base_url = serve(html)
    runs = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            for i in range(args.runs):
                r = run_once(browser, base_url, args.updates)
                runs.append(r)
                print(f"  run {i + 1}: first live result {r['first_s']:.2f} s (Python ready {r['python_ready_s']:.2f} s: "
                      f"{r['phases']}), "
                      f"update median {statistics.median(r['update_ms']):.1f} ms "
                      f"(model in Pyodide {r['compute_ms']:.1f} ms, Plotly.react {r['draw_ms']:.1f} ms), "
                      f"{r['bytes_before'] / 1e6:.2f} MB before opting in, +{r['bytes_opt_in'] / 1e6:.2f} MB on opting in, "
                      f"{len(r['external'])} requests off this machine")
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    first_s = statistics.median(r["first_s"] for r in runs)
    all_updates = sorted(ms for r in runs for ms in r["update_ms"])
    update_ms = statistics.median(all_updates)
    p90_ms = all_updates[int(0.9 * (len(all_updates) - 1))]
    before = statistics.median(r["bytes_before"] for r in runs)
    shown = sorted(runs[-1]["by_kind_before"].items(), key=lambda kv: -kv[1])
    external = sorted({u for r in runs for u in r["external"]})
    print(f"first interaction to first live result (cold, offline): {first_s:.2f} s median "
          f"({'within' if first_s <= TARGET_FIRST_S else 'OVER'} the {TARGET_FIRST_S:g} s target)")
    print(f"later update, change to figure redrawn: {update_ms:.1f} ms median, {p90_ms:.1f} ms p90 "
          f"({'within' if update_ms <= TARGET_UPDATE_MS else 'OVER'} the {TARGET_UPDATE_MS:g} ms target)")
    print(f"page before opting in: {before / 1e6:.2f} MB (" + ", ".join(f"{k} {b / 1e6:.2f} MB" for k, b in shown) + ")")
    print(f"fetched on opting in: {statistics.median(r['bytes_opt_in'] for r in runs) / 1e6:.2f} MB (Pyodide, the package zip)")
    print(f"requests off this machine: {len(external)}" + (f": {external}" if external else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
