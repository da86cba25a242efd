"""Page weight of the built book: bytes a reader downloads and time to the load event, cold cache.

Serves a built book (default ``_build/html``) on 127.0.0.1 with ``http.server`` in a thread and
opens pages in headless Chromium through Playwright (Debian's ``chromium``, never ``playwright
install``), each visit in a fresh browser context, so nothing is cached. Counted per visit, from
Chromium's DevTools network events (``encodedDataLength``: body plus headers, as sent on the wire):

* ``to load``: bytes of the responses that finished before the load event of the page, and the
  time from the first request to that event. For the first page this is the whole chain a reader
  goes through: ``index.html`` (a redirect stub) and then the page it redirects to.
* ``total``: every byte once the network has been quiet for 500 ms (fonts and MathJax
  components requested after the load event included).

The server sends files uncompressed, as ``python -m http.server`` and a local ``file://`` read do;
a host that gzips (GitHub Pages, nginx with ``gzip on``) sends fewer bytes of text (JavaScript, CSS,
HTML, JSON): ``--gzip`` measures that too, the server then compressing text responses (gzip level 6)
for a browser that accepts it. Fonts (woff2), WebAssembly and zips are sent as they are either way.
Targets: the cold first page under 3 MB to the load event (static-book issue, item 6); a calculator
page under 1 MB until the reader opts in to the live mode (live-calculator issue), printed for the
pages under ``notebooks/``.
Prints figures; it is not a test. Run after ``make book``::

    python benchmarks/bench_page_weight.py [--html DIR] [--repeat 3] [--all] [PAGE ...]
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import io
import os
import platform
import re
import statistics
import sys
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from _chromium import find_chromium

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HTML = ROOT / "_build" / "html"
# The same switches as tests/book/test_browser.py: no background traffic of Chromium's own.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 900}
TARGET_FIRST_PAGE_BYTES = 3_000_000
TARGET_CALCULATOR_BYTES = 1_000_000  # before opting in to the live mode: Pyodide is never fetched before that
# What a compressing host gzips (by file name); everything else (woff2, png, wasm, zip) is sent as is.
GZIP_SUFFIXES = (".html", ".js", ".mjs", ".css", ".json", ".svg", ".txt", ".map")
GZIP_LEVEL = 6
QUIET_MS = 500        # network quiet this long = the page is done loading
MAX_WAIT_MS = 20_000  # give up waiting for quiet after this long
LOCAL_HOSTS = {"127.0.0.1", "localhost"}

# (label, page relative to the html root): the first page a reader opens (``index.html``
# redirects to the first page of _toc.yml), a chapter with figures, a calculator notebook. The
# calculators' controls are plotly sliders and menus: no page saves ipywidgets state today, so
# none loads require.js or the widget embedder; pass a page that does to measure them.
DEFAULT_PAGES = (
    ("first page (index -> intro)", "index.html"),
    ("figure page (chapter)", "book/llama70b_tp4.html"),
    ("calculator page (notebook)", "notebooks/allreduce_calculator.html"),
)

# What a URL is, for the breakdown: first matching pattern wins.
KINDS = (
    ("plotly.js", r"/_static/plotly/"),
    ("MathJax", r"/_static/mathjax/"),
    ("widgets (require.js, embedder)", r"/_static/(requirejs|jupyter-widgets)/"),
    ("Pyodide", r"/_static/pyodide/"),
    ("live calculators (front end, package zip)", r"/_static/gpucomm_live"),
    ("Font Awesome", r"fontawesome|/webfonts/fa-"),
    ("theme and extensions", r"/_static/"),
    ("HTML", r"\.html?(\?|#|$)|/$"),
)


@dataclass
class Visit:
    """One cold visit of one page: bytes per URL, load-event time, failures."""

    rel: str
    finished_at: dict[str, float] = field(default_factory=dict)  # request id -> DevTools timestamp (s)
    url_of: dict[str, str] = field(default_factory=dict)         # request id -> URL
    bytes_of: dict[str, int] = field(default_factory=dict)       # request id -> bytes
    first_request_s: float | None = None
    load_events_s: list[float] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    final_url: str = ""

    @property
    def load_s(self) -> float:
        """Time from the first request to the last page's load event, in seconds."""
        return self.load_events_s[-1] - self.first_request_s

    @property
    def total_bytes(self) -> int:
        return sum(self.bytes_of.values())

    @property
    def bytes_to_load(self) -> int:
        end = self.load_events_s[-1]
        return sum(b for rid, b in self.bytes_of.items() if self.finished_at[rid] <= end)

    def largest(self, n: int) -> list[tuple[str, int]]:
        """The ``n`` largest responses: ``[(URL, bytes), ...]``, largest first."""
        return sorted(((self.url_of.get(rid, "?"), b) for rid, b in self.bytes_of.items()), key=lambda ub: -ub[1])[:n]

    def bytes_by_kind(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for rid, b in self.bytes_of.items():
            out[kind_of(self.url_of.get(rid, ""))] += b
        return out


def kind_of(url: str) -> str:
    """Category of a URL for the breakdown (see ``KINDS``)."""
    path = urlsplit(url).path
    for name, pattern in KINDS:
        if re.search(pattern, path):
            return name
    return "other"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _GzipHandler(_QuietHandler):
    """Text files gzipped (``Content-Encoding: gzip``) for a browser that accepts it, as a compressing host sends them."""

    def send_head(self):
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            path = os.path.join(path, "index.html")
        if (not path.endswith(GZIP_SUFFIXES) or not os.path.isfile(path)
                or "gzip" not in self.headers.get("Accept-Encoding", "")):
            return super().send_head()
        with open(path, "rb") as f:
            body = gzip.compress(f.read(), compresslevel=GZIP_LEVEL, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


def serve(html: Path, compress: bool = False) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve ``html`` on a free port of 127.0.0.1 (text gzipped with ``compress``); return the server and its base URL."""
    handler = _GzipHandler if compress else _QuietHandler
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def visit(browser, base_url: str, rel: str) -> Visit:
    """Open ``rel`` in a fresh context (empty cache) and record its network traffic."""
    v = Visit(rel)
    context = browser.new_context(viewport=VIEWPORT, service_workers="block")
    # Nothing leaves this machine: a request to another host is aborted and listed as failed.
    context.route("**/*", lambda route, req: route.continue_() if urlsplit(req.url).hostname in LOCAL_HOSTS
                  else route.abort())
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    inflight: set[str] = set()

    def on_request(e):
        inflight.add(e["requestId"])
        v.url_of[e["requestId"]] = e["request"]["url"]
        if v.first_request_s is None:
            v.first_request_s = e["timestamp"]

    def on_finished(e):
        inflight.discard(e["requestId"])
        # A redirect chain reuses one id: later responses add to the same request.
        v.bytes_of[e["requestId"]] = v.bytes_of.get(e["requestId"], 0) + int(e["encodedDataLength"])
        v.finished_at[e["requestId"]] = e["timestamp"]

    def on_failed(e):
        inflight.discard(e["requestId"])
        v.failed.append(f"{v.url_of.get(e['requestId'], '?')}: {e.get('errorText', '')}")

    def on_response(e):
        if e["response"]["status"] >= 400:
            v.failed.append(f"{e['response']['url']}: HTTP {e['response']['status']}")

    cdp.on("Network.requestWillBeSent", on_request)
    cdp.on("Network.loadingFinished", on_finished)
    cdp.on("Network.loadingFailed", on_failed)
    cdp.on("Network.responseReceived", on_response)
    cdp.on("Page.loadEventFired", lambda e: v.load_events_s.append(e["timestamp"]))
    cdp.send("Network.enable")
    cdp.send("Page.enable")
    page.goto(base_url + rel, wait_until="load", timeout=120_000)
    if rel == "index.html":  # the root is a meta-refresh stub: follow it to the first page
        page.wait_for_url(re.compile(r".*/(?!index\.html$)[^/]+\.html$"), timeout=30_000)
        page.wait_for_load_state("load", timeout=120_000)
    quiet_ms = waited_ms = 0
    while quiet_ms < QUIET_MS and waited_ms < MAX_WAIT_MS:
        page.wait_for_timeout(100)
        waited_ms += 100
        quiet_ms = 0 if inflight else quiet_ms + 100
    v.final_url = page.url
    context.close()
    return v


def toc_pages() -> list[str]:
    """Every page of _toc.yml, as a path relative to the html root."""
    import yaml

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


def mb(n: float) -> str:
    return f"{n / 1e6:6.2f} MB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="bytes and time to the load event of built book pages, cold cache")
    parser.add_argument("pages", nargs="*", help="pages relative to the html root (default: first page, "
                                                 "a figure page, a widget page)")
    parser.add_argument("--html", type=Path, default=DEFAULT_HTML, help="built book (default _build/html)")
    parser.add_argument("--repeat", type=int, default=3, help="cold visits per page; medians are printed (default 3)")
    parser.add_argument("--all", action="store_true", help="every page of _toc.yml (one line each)")
    parser.add_argument("--gzip", action="store_true",
                        help="the server gzips text responses, as GitHub Pages or nginx with gzip on do")
    parser.add_argument("--files", type=int, default=0, metavar="N",
                        help="also list the N largest responses of each page (what its weight is made of)")
    args = parser.parse_args(argv)

    html = args.html.resolve()
    if not (html / "index.html").is_file():
        print(f"bench_page_weight: no built book in {html}: run `make book` first", file=sys.stderr)
        return 1
    found = find_chromium("bench_page_weight")
    if found is None:
        return 1
    chromium, sync_playwright = found

    if args.pages:
        cases = [(rel, rel) for rel in args.pages]
    elif args.all:
        cases = [(rel, rel) for rel in toc_pages()]
    else:
        cases = list(DEFAULT_PAGES)

    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs; book: {html}")
    how = f"text gzipped (level {GZIP_LEVEL}) as a compressing host sends it" if args.gzip else "uncompressed http.server"
    print(f"cold cache (fresh context per visit), {how}; median of {args.repeat} visits")
    server, base_url = serve(html, compress=args.gzip)
    calculators: list[tuple[str, float]] = []
    first_page_bytes = None
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            print(f"{'page':<40} {'to load':>10} {'total':>10} {'load event':>11} {'requests':>8}")
            for label, rel in cases:
                visits = [visit(browser, base_url, rel) for _ in range(args.repeat)]
                last = visits[-1]
                to_load = statistics.median(v.bytes_to_load for v in visits)
                total = statistics.median(v.total_bytes for v in visits)
                load_s = statistics.median(v.load_s for v in visits)
                print(f"{label:<40} {mb(to_load):>10} {mb(total):>10} {load_s:9.2f} s {len(last.bytes_of):>8}")
                if rel == "index.html":
                    first_page_bytes = to_load
                if rel.startswith("notebooks/"):
                    calculators.append((rel, total))
                if not args.all:
                    shown = sorted(last.bytes_by_kind().items(), key=lambda kv: -kv[1])
                    print("    " + ", ".join(f"{k} {b / 1e6:.2f} MB" for k, b in shown if b >= 10_000))
                for url, b in last.largest(args.files):
                    print(f"      {b / 1e3:8.1f} kB  {urlsplit(url).path}")
                # The browser asks for /favicon.ico by itself; the book has none.
                for failure in sorted({f for f in last.failed if "/favicon.ico" not in f}):
                    print(f"    failed: {failure}")
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    if first_page_bytes is not None:
        verdict = "under" if first_page_bytes < TARGET_FIRST_PAGE_BYTES else "OVER"
        print(f"first page to the load event: {mb(first_page_bytes).strip()}, {verdict} the "
              f"{TARGET_FIRST_PAGE_BYTES / 1e6:.0f} MB target")
    for rel, total in calculators:  # total: every byte until the network is quiet, and no Pyodide (not opted in)
        verdict = "under" if total < TARGET_CALCULATOR_BYTES else "OVER"
        print(f"{rel} before opting in: {mb(total).strip()}, {verdict} the {TARGET_CALCULATOR_BYTES / 1e6:.0f} MB target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
