"""The graded self-checks of the book (``book/_ext/book_self_check.py``).

Fast tests: the questions of every chapter and lab are graded self-checks (no hidden-answer
dropdown left), the extension's helpers and self_check.js's unit conversion. Slow tests (``-m slow``): every page with
questions has its self-checks in the built HTML, and in headless Chromium a unit typed after the number is read.
The grading of every page's self-checks in the browser (right and wrong answers, the explanation, no control covered
at 390 px) runs in test_browser.py's page tests, on the same load of each page as its other checks.

Reads ``_build/html``, or the folder ``GPUCOMM_BOOK_HTML`` names; drives Debian's ``chromium``
(``executable_path``; never ``playwright install``). Skips with the reason when either is missing.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from test_browser import HTML, base_url, browser, press_check  # noqa: F401 (the book's server and browser fixtures)

ROOT = Path(__file__).resolve().parents[2]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# Every page whose questions end in a self-check: the chapters and the labs (their notebooks' markdown).
QUIZ_SOURCES = sorted((ROOT / "book").glob("*.md")) + sorted((ROOT / "labs").glob("*.ipynb"))
QUIZ_HEADINGS = ("## Check yourself", "## Questions")


def _extension():
    spec = importlib.util.spec_from_file_location("book_self_check", ROOT / "book" / "_ext" / "book_self_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- fast: the sources ----------------------------------------------------------------------------

def page_text(path: Path) -> str:
    """A page's text: the file itself, or a notebook's markdown cells joined."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", QUIZ_SOURCES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_question_is_graded(page):
    """A page's questions each end in a self-check, none in a hidden answer."""
    text = page_text(page)
    assert "{admonition} Answer" not in text, f"{page.name}: a hidden-answer dropdown is left"
    for heading in QUIZ_HEADINGS:
        if heading in text:
            quiz = text.split(heading, 1)[1].split("\n## ", 1)[0]
            questions = re.findall(r"^\d+\. ", quiz, flags=re.M)
            checks = quiz.count("```{self-check}")
            assert questions and checks == len(questions), f"{page.name}: {len(questions)} questions, {checks} checks"


def test_helpers():
    ext = _extension()
    assert ext.parse_tolerance("5%") == ("rel", 0.05)
    assert ext.parse_tolerance("1") == ("abs", 1.0)
    with pytest.raises(ValueError):
        ext.parse_tolerance("-1")
    assert ext.choice_html("`a<b`") == "<code>a&lt;b</code>"


# A typed answer and the directive's :unit: -> the number in the answer's unit, or the start of the message.
UNIT_CASES = [
    ("16,4 MB", "bytes", 16.4e6),            # the case: a decimal comma and a unit after the number
    ("16.384e6", "bytes", 16.384e6),
    ("15.6 MiB", "bytes", 15.6 * 2**20),
    ("16,384,000 B", "bytes", 16_384_000),
    ("1 500 KB", "bytes", 1.5e6),
    ("0.5 ms", "us", 500),
    ("500us", "ms", 0.5),
    ("2 s", "ms", 2000),
    ("1200 Gb/s", "GB/s", 150),              # bits per second: an upper-case prefix before a lower-case b
    ("150 gb/s", "GB/s", 150),               # sloppy case: bytes
    ("2.1 TB/s", "GB/s (algbw)", 2100),
    ("150 GB/s (algbw)", "GB/s (algbw)", 150),
    ("32 MiB", "GB", 32 * 2**20 / 1e9),
    ("12 x", "x", 12),
    ("3 nodes", "nodes", 3),
    ("3 ms", "bytes", "“ms” is a time; the answer is a size"),
    ("40 GB", "us", "“GB” is a size; the answer is a time"),
    ("3 foo", "bytes", "“foo” is not a unit"),
    ("12 GB", "x", "The answer is in x, not a size"),
]


@pytest.mark.skipif(not shutil.which("node"), reason="no node to run self_check.js")
def test_units_after_the_number_are_converted():
    """self_check.js reads a unit after the number: converts sizes (decimal and binary), times and rates to the
    answer's unit, and names the mismatch when the unit is of another kind."""
    script = ROOT / "book" / "_ext" / "self_check_static" / "self_check.js"
    program = (f"const s = require({json.dumps(str(script))});"
               f"const cases = {json.dumps([c[:2] for c in UNIT_CASES])};"
               "console.log(JSON.stringify(cases.map(([t, u]) => s.toAnswerUnit(s.readAnswer(t), u))));")
    results = json.loads(subprocess.run(["node", "-e", program], capture_output=True, text=True, check=True).stdout)
    for (typed, unit, want), got in zip(UNIT_CASES, results, strict=True):
        if isinstance(want, str):
            assert got.get("error", "").startswith(want), (typed, unit, got)
        else:
            assert "error" not in got and got["value"] == pytest.approx(want, rel=1e-9), (typed, unit, got)


# --- slow: the built pages in a browser -------------------------------------------------------------
# Every page's self-checks are graded in the browser by test_browser.py's page tests (one load per page and width:
# grade_self_checks at 1280 px, SELF_CHECK_COVERED_JS at 390 px). Here: that every page with questions has them in
# its built HTML, and the unit conversion in a real page.

def built_page(source: Path) -> Path:
    """The built HTML of a chapter or lab source."""
    return HTML / source.parent.name / (source.stem + ".html")


@pytest.mark.slow
def test_every_page_with_questions_has_self_checks_built():
    """Each chapter or lab with a question heading has its self-checks in the built page (so the browser tests of
    test_browser.py grade them); a page the build dropped or rendered without them fails here."""
    if not (HTML / "index.html").is_file():
        pytest.skip(f"no built book in {HTML}")
    with_questions = [p for p in QUIZ_SOURCES if any(h in page_text(p) for h in QUIZ_HEADINGS)]
    assert len(with_questions) >= 20, [p.name for p in with_questions]
    missing = [str(built_page(p).relative_to(HTML)) for p in with_questions
               if not built_page(p).is_file()
               or '<div class="gc-check"' not in built_page(p).read_text(encoding="utf-8", errors="replace")]
    assert not missing, f"built pages without their self-checks: {missing}"


def _open(browser, url, viewport, requests):
    context = browser.new_context(viewport=viewport, service_workers="block")

    def route(route, request):  # record everything; let only this server answer
        requests.append(request.url)
        if urlsplit(request.url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.goto(url, wait_until="load", timeout=60_000)
    page.wait_for_timeout(300)
    return context, page


UNIT_PAGE = "book/moe_all_to_all.html"  # its first number check in bytes asks for a 32 MiB dispatch (33,554,432)


@pytest.mark.slow
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390px", "1280px"])
def test_a_unit_after_the_number_is_read(browser, base_url, viewport):  # noqa: F811 - fixtures
    """In the page, "16,4 MB" against the bytes answer is right (converted, and said so), "16,4 ms" is not graded
    (the reader is told it is a time), and a plain number is still read as bytes."""
    if not (HTML / UNIT_PAGE).is_file():
        pytest.skip(f"no {UNIT_PAGE} in {HTML}")
    requests: list[str] = []
    context, page = _open(browser, base_url + UNIT_PAGE, viewport, requests)
    try:
        check = page.locator('.gc-check[data-kind="number"][data-unit="bytes"]').first
        answer = float(check.get_attribute("data-answer"))
        box = check.locator(".gc-check-number")
        mb = f"{answer / 1e6:.1f}".replace(".", ",") + " MB"
        box.fill(mb)
        press_check(check, "Right")
        assert "MB =" in check.locator(".gc-check-feedback").inner_text()
        box.fill(f"{answer / 1e6:.1f} ms")
        check.locator(".gc-check-button").click()
        feedback = check.locator(".gc-check-feedback").inner_text()
        assert "is a time" in feedback and "size" in feedback, feedback
        box.fill(f"{answer / 1e6 * 3:.1f} MB")
        press_check(check, "Wrong")
    finally:
        context.close()
