"""The live calculators in the reader's browser: first live result, per update, and the page's main thread.

Serves a built book (default ``_build/html``) on 127.0.0.1 and opens each calculator page with a
live panel (``CASES``: collective, mesh, generations, training, TP inference) in headless Chromium
through Playwright (Debian's ``chromium``, never ``playwright install``), each run in a fresh
browser context: empty cache, nothing compiled, so every run is cold. Requests to any other host
(the page's and its Python worker's) are aborted and counted (the mode is offline: the count must be 0).
Two profiles: ``desktop`` (1280x800) and ``phone`` (390x844, touch, 3x pixels), the phone's targets twice
the desktop's. Per run:

* bytes before opting in: every response of the page until its network is quiet, Python not among them;
  then what turning it live adds (Pyodide's runtime and standard library, the package zip; the worker's too);
* first live result: the reader's first interaction (focus on a control, which starts Python in its worker)
  to the first figure redrawn from the model, with the new value set at once;
* later updates: from each change event (a value typed, picked or ticked) to the figure redrawn: the
  model in the worker, JSON across, the redraw. Median and 90th percentile. The changes are cycled through, so
  after the first pass the page's Python meets configurations it has seen (the calculators keep curves between
  updates): Python's median over the first pass is printed apart;
* a slider dragged for ``DRAG_FRAMES`` animation frames (one input event each, as a finger or mouse gives):
  how many recomputes that made (coalesced to at most one per frame) and the lag of each;
* the main thread: the longest task after the first contentful paint and after the first interaction
  (Long Tasks API, tasks over 50 ms; the target: none over 200 ms).

Targets (static-book issue 26): first live result <= 3 s, a later update <= 30 ms median and <= 50 ms at the
90th percentile, desktop; at most twice that on the phone; no main-thread task over 200 ms after the first
paint. ``--plotly-alone`` refuses the script that draws the page's figures in slices (``gpucomm_draw_slices.js``),
to compare with plotly drawing each figure in one task on the same machine. The machine's load average is printed
before and after: on a shared machine the figures are slower than on a quiet one. Prints figures; it is not a test.
Run after ``make book``::

    python benchmarks/bench_live_calculator.py [--html DIR] [--runs 3] [--updates 30] [--profile both]
        [--plotly-alone] [CALCULATOR ...]
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

PROFILES = {
    "desktop": dict(viewport={"width": 1280, "height": 800}),
    "phone": dict(viewport={"width": 390, "height": 844}, device_scale_factor=3, is_mobile=True, has_touch=True),
}
PHONE_FACTOR = 2.0  # the phone's targets: this times the desktop's
TARGET_FIRST_S = 3.0
TARGET_UPDATE_MS = 30.0  # median
TARGET_UPDATE_P90_MS = 50.0
TARGET_LONG_TASK_MS = 200.0
QUIET_MS = 500
DRAW_SLICES_JS = "gpucomm_draw_slices.js"  # lets the browser in between the steps of each figure's draw
DRAG_FRAMES = 60

# Long tasks and the first contentful paint, recorded from the page's start (read after each run).
LONG_TASKS_JS = """(() => {
  window.__longTasks = [];
  try {
    new PerformanceObserver(list => { for (const e of list.getEntries()) window.__longTasks.push([e.startTime, e.duration]); })
      .observe({type: "longtask", buffered: true});
  } catch (e) { window.__longTasks = null; }
})();"""

# A slider dragged: one input event per animation frame, back and forth over its range; resolves when the last
# recompute is drawn. Returns the records of the recomputes it caused and the number of input events.
DRAG_JS = """async (panel, frames) => {
  const slider = panel.querySelector('input.gpucomm-live-slider:not([disabled])');
  if (!slider) return null;
  const lo = Number(slider.min), hi = Number(slider.max), step = Number(slider.step) || 1;
  const before = window.gpucommLive.updates.length;
  const steps = Math.max(1, Math.round((hi - lo) / step));
  for (let i = 0; i < frames; i++) {
    await new Promise(r => requestAnimationFrame(r));
    const k = i % (2 * steps), pos = k <= steps ? k : 2 * steps - k;
    slider.value = String(lo + pos * step);
    slider.dispatchEvent(new Event('input', {bubbles: true}));
  }
  let seen = -1, quietSince = performance.now();
  const t0 = performance.now();
  while (performance.now() - t0 < 20000) {  // until no recompute for 400 ms
    await new Promise(r => setTimeout(r, 50));
    const n = window.gpucommLive.updates.length;
    if (n !== seen) { seen = n; quietSince = performance.now(); }
    else if (n > before && performance.now() - quietSince > 400) break;
  }
  return {events: frames, records: window.gpucommLive.updates.slice(before), field: slider.parentElement.dataset.field};
}"""

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


def _longest(tasks: list | None, after_ms: float | None) -> float | None:
    """The longest main-thread task that ends after ``after_ms`` (page time), ms; None when unknown."""
    if tasks is None or after_ms is None:
        return None
    return max((d for start, d in tasks if start + d > after_ms), default=0.0)


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[int(0.9 * (len(ordered) - 1))]


def run_once(browser, base_url: str, name: str, updates: int, profile: str, plotly_alone: bool = False) -> dict:
    """One cold run of calculator ``name`` in ``profile``: bytes, first live result, later updates, a drag, long tasks.
    ``plotly_alone``: the page's figures drawn by plotly in one go (``DRAW_SLICES_JS`` refused), to compare."""
    page_rel, (first_field, first_value), changes = CASES[name]
    context = browser.new_context(service_workers="block", **PROFILES[profile])
    context.add_init_script(LONG_TASKS_JS)
    external: list[str] = []

    def route(route, request):
        if plotly_alone and DRAW_SLICES_JS in request.url:
            route.abort()
        elif urlsplit(request.url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            external.append(request.url)
            route.abort()

    context.route("**/*", route)
    bytes_of: dict[str, int] = {}  # url -> bytes (body and headers), the page's and its worker's requests
    inflight: set = set()

    def done(request):
        inflight.discard(request)
        try:
            sizes = request.sizes()
            bytes_of[request.url] = bytes_of.get(request.url, 0) + sizes["responseBodySize"] + sizes["responseHeadersSize"]
        except Exception:  # noqa: BLE001 - a request whose sizes the browser no longer has: not counted
            pass

    context.on("request", lambda request: inflight.add(request))
    context.on("requestfinished", done)
    context.on("requestfailed", lambda request: inflight.discard(request))
    page = context.new_page()
    page.goto(base_url + page_rel, wait_until="load", timeout=120_000)
    _wait_quiet(page, inflight)
    before = dict(bytes_of)
    assert not [u for u in before if "/pyodide/" in u], "Pyodide was fetched before the panel was touched or seen"
    panel = page.locator(f".gpucomm-live[data-gpucomm-live={name}]")
    if panel.locator("form").count() == 0:
        raise SystemExit(f"bench_live_calculator: no live {name} panel with controls on {page_rel}")

    panel.locator(f"[name={first_field}]").first.focus()  # the first interaction: loading Python starts here
    first = _set(page, name, first_field, first_value, timeout_s=300)
    live = page.evaluate("() => window.gpucommLive")
    if not first["ok"]:
        raise SystemExit(f"bench_live_calculator: {name}: the first update failed: {first}")
    first_s = (live["firstResult"] - live["firstInteraction"]) / 1000
    update_ms, parts, fast, ways = [], [], 0, {}
    for i in range(updates):
        field, value = changes[i % len(changes)]
        record = _set(page, name, field, value, timeout_s=60)
        if not record["ok"]:
            raise SystemExit(f"bench_live_calculator: {name}: update {field}={value!r} refused: {record}")
        update_ms.append(record["ms"])
        parts.append((record["computeMs"], record["pythonMs"], record["drawMs"]))
        fast += bool(record.get("fast"))
        if record.get("way"):
            ways[record["way"]] = ways.get(record["way"], 0) + 1
    drag = panel.evaluate(DRAG_JS, DRAG_FRAMES) if updates else None
    _wait_quiet(page, inflight)
    facts = page.evaluate("() => ({tasks: window.__longTasks, interaction: window.gpucommLive.firstInteraction, "
                          "fcp: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime})")
    context.close()
    by_kind_before: dict[str, int] = {}
    for url, b in before.items():
        by_kind_before[kind_of(url)] = by_kind_before.get(kind_of(url), 0) + b
    return {"bytes_before": sum(before.values()), "by_kind_before": by_kind_before,
            "bytes_opt_in": sum(b for url, b in bytes_of.items() if url not in before),
            "first_s": first_s, "python_ready_s": live["loadMs"] / 1000,
            "phases": ", ".join(f"{k} at {v / 1000:.2f} s" for k, v in live["phases"].items()), "update_ms": update_ms,
            "compute_ms": statistics.median(c for c, _, _ in parts) if parts else None,
            "python_ms": statistics.median(p for _, p, _ in parts) if parts else None,
            # the first pass through the changes: every configuration new to the page's Python (the calculators keep
            # curves that a later change can reuse, and later passes come back to configurations seen before)
            "python_new_ms": statistics.median(p for _, p, _ in parts[:len(changes)]) if parts else None,
            "ways": ways,
            "draw_ms": statistics.median(d for _, _, d in parts) if parts else None, "fast": fast,
            "drag": drag, "long_after_paint_ms": _longest(facts["tasks"], facts["fcp"]),
            "long_after_interaction_ms": _longest(facts["tasks"], facts["interaction"]), "external": external}


def _ways(ways: dict) -> str:
    """How the fast path drew (gpucomm_live.js fastDraw's ``way``), e.g. `` (animate 4, update 2)``."""
    return f" ({', '.join(f'{k} {v}' for k, v in sorted(ways.items()))})" if ways else ""


def _fmt(ms: float | None) -> str:
    return "n/a" if ms is None else f"{ms:.0f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="first live result, per-update time and main-thread tasks of the "
                                                 "live calculators")
    parser.add_argument("calculators", nargs="*", metavar="CALCULATOR",
                        help=f"live calculators to time (default: all of {', '.join(CASES)})")
    parser.add_argument("--html", type=Path, default=DEFAULT_HTML, help="built book (default _build/html)")
    parser.add_argument("--runs", type=int, default=3, help="cold runs per calculator (fresh context each; default 3)")
    parser.add_argument("--updates", type=int, default=30, help="later updates timed per run (default 30)")
    parser.add_argument("--profile", choices=(*PROFILES, "both"), default="both",
                        help="desktop (1280x800), phone (390x844, touch) or both (default)")
    parser.add_argument("--plotly-alone", action="store_true",
                        help=f"refuse {DRAW_SLICES_JS}: figures drawn by plotly in one task each, as before it (to "
                             "compare on the same machine)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.calculators if n not in CASES]
    if unknown:
        parser.error(f"calculator {unknown[0]!r} is not valid: expected one of {', '.join(CASES)}")
    if args.runs < 1 or args.updates < 1:
        parser.error(f"--runs {args.runs} / --updates {args.updates} is not valid: expected at least 1 each")

    html = args.html.resolve()
    names = args.calculators or list(CASES)
    profiles = list(PROFILES) if args.profile == "both" else [args.profile]
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
    print(f"{args.runs} cold runs per calculator and profile (fresh context each), {args.updates} later updates per run, "
          f"a {DRAG_FRAMES}-frame slider drag, offline (requests off 127.0.0.1 aborted)"
          + (f"; {DRAW_SLICES_JS} refused (plotly alone)" if args.plotly_alone else ""))
    server, base_url = serve(html)
    results: dict[tuple[str, str], list[dict]] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            for profile in profiles:
                for name in names:
                    print(f"{name} ({CASES[name][0]}), {profile}:")
                    for i in range(args.runs):
                        r = run_once(browser, base_url, name, args.updates, profile, args.plotly_alone)
                        results.setdefault((profile, name), []).append(r)
                        drag = r["drag"]
                        dragged = (f"; drag of {drag['field']}: {drag['events']} input events -> {len(drag['records'])} "
                                   f"recomputes, lag median {statistics.median(x['ms'] for x in drag['records']):.0f} ms"
                                   if drag and drag["records"] else "")
                        print(f"  run {i + 1}: first live result {r['first_s']:.2f} s (Python ready "
                              f"{r['python_ready_s']:.2f} s: {r['phases']}), update median "
                              f"{statistics.median(r['update_ms']):.1f} ms, p90 {_p90(r['update_ms']):.1f} ms (worker round "
                              f"trip {r['compute_ms']:.1f} ms of which Python {r['python_ms']:.1f} ms ({r['python_new_ms']:.1f} ms "
                              f"over the first {len(CASES[name][2])} changes), redraw {r['draw_ms']:.1f} ms; {r['fast']} of "
                              f"{len(r['update_ms'])} by the fast path{_ways(r['ways'])}){dragged}; "
                              f"longest main-thread task after first paint {_fmt(r['long_after_paint_ms'])}, after the "
                              f"first interaction {_fmt(r['long_after_interaction_ms'])}; {r['bytes_before'] / 1e6:.2f} MB "
                              f"before opting in, +{r['bytes_opt_in'] / 1e6:.2f} MB on opting in, "
                              f"{len(r['external'])} requests off this machine")
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    load_after = os.getloadavg()
    print(f"load average after: {load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f}")
    print(f"{'profile':<8} {'calculator':<12} {'first result':>13} {'median':>8} {'p90':>8} {'long task':>10} "
          f"{'long (live)':>12} {'before':>8} {'opt-in':>8} {'off-machine':>11}")
    verdicts = []
    for (profile, name), runs in results.items():
        factor = PHONE_FACTOR if profile == "phone" else 1.0
        first_s = statistics.median(r["first_s"] for r in runs)
        all_updates = [ms for r in runs for ms in r["update_ms"]]
        median_ms, p90_ms = statistics.median(all_updates), _p90(all_updates)
        longs = [r["long_after_paint_ms"] for r in runs if r["long_after_paint_ms"] is not None]
        live_longs = [r["long_after_interaction_ms"] for r in runs if r["long_after_interaction_ms"] is not None]
        long_ms = max(longs) if longs else None
        live_long_ms = max(live_longs) if live_longs else None
        external = {u for r in runs for u in r["external"]}
        print(f"{profile:<8} {name:<12} {first_s:11.2f} s {median_ms:5.1f} ms {p90_ms:5.1f} ms {_fmt(long_ms):>10} "
              f"{_fmt(live_long_ms):>12} {statistics.median(r['bytes_before'] for r in runs) / 1e6:5.2f} MB "
              f"{statistics.median(r['bytes_opt_in'] for r in runs) / 1e6:5.2f} MB {len(external):>11}")
        verdicts.append((profile, name, first_s <= TARGET_FIRST_S * factor, median_ms <= TARGET_UPDATE_MS * factor,
                         p90_ms <= TARGET_UPDATE_P90_MS * factor, live_long_ms is not None and live_long_ms <= TARGET_LONG_TASK_MS,
                         long_ms is not None and long_ms <= TARGET_LONG_TASK_MS))
    print(f"targets (desktop; phone x{PHONE_FACTOR:g}): first live result <= {TARGET_FIRST_S:g} s (median of the runs), "
          f"update median <= {TARGET_UPDATE_MS:g} ms and p90 <= {TARGET_UPDATE_P90_MS:g} ms; no main-thread task over "
          f"{TARGET_LONG_TASK_MS:g} ms after the first paint (the longest over all runs)")
    word = {True: "within", False: "OVER"}
    for profile, name, first_ok, median_ok, p90_ok, live_ok, paint_ok in verdicts:
        print(f"  {profile} {name}: first result {word[first_ok]}, median {word[median_ok]}, p90 {word[p90_ok]}, "
              f"long tasks once live {word[live_ok]}, after first paint {word[paint_ok]}")
    last = next(iter(results.values()))[-1]
    shown = sorted(last["by_kind_before"].items(), key=lambda kv: -kv[1])
    print(f"{names[0]} page before opting in: " + ", ".join(f"{k} {b / 1e6:.2f} MB" for k, b in shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
