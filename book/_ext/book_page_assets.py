"""Sphinx extension of the book: each page downloads only the heavy scripts it uses.

Loaded by Jupyter Book through ``sphinx: local_extensions`` in ``_config.yml``.

plotly.js
    Added only to pages whose HTML draws a plotly figure (a ``Plotly.newPlot`` call, written by
    the ``gpucomm_book`` renderer of :mod:`gpucomm.viz.figures.render`), at priority 400: ahead
    of require.js, which myst-nb adds at priority 500 on pages that saved ipywidgets state.
    Loaded after require.js, plotly.js would see ``define`` and register as an anonymous AMD
    module instead of setting ``window.Plotly``, and every figure of the page would stay blank.
    The file is the one ``book_plotly_js`` names (``_config.yml``), under ``_static``. Right after
    it comes ``gpucomm_draw_slices.js`` (``book/_ext/layout_static/``): plotly draws a figure in one
    task (150-500 ms on a slow machine), and this lets the browser in between the steps of each draw
    and draws the page's figures one after another, so that the page answers while they are drawn.
MathJax
    Nothing to do here: ``sphinx.ext.mathjax`` already adds it only to pages with math (and to a
    page whose toctree includes one).
Font Awesome
    pydata-sphinx-theme loads Font Awesome twice: its stylesheet carries the whole icon font
    (every ``.fa-*`` glyph rule and the ``@font-face`` of the woff2 files, which a browser
    downloads only when a glyph of that face is shown), and ``_static/scripts/fontawesome.js``
    (1.5 MB, every icon as an SVG path) replaces each ``<i class="fa-...">`` with an inline
    SVG. The stylesheet alone draws the same icons, so with ``book_drop_fontawesome_js: true``
    that script is replaced, after the build, by a stub of a few bytes. The ``<script>`` tag
    stays: it is written by the theme's templates, not listed in ``script_files``.
Live calculators
    A page whose HTML holds a live panel (``data-gpucomm-live``, written by
    :class:`gpucomm.viz.calculators.live.LivePanel`) gets the front end ``gpucomm_live.js`` and its
    stylesheet (``book/_ext/live_static/``, added to ``html_static_path`` here). The script draws the
    panel's controls and, on the reader's first change, loads Pyodide from ``_static/pyodide/``
    (``scripts/fetch_assets.sh``) and the part of the package the calculators need: a zip written
    at build time from :func:`gpucomm.viz.calculators.live.browser_zip` into
    ``_static/gpucomm_live/``, named by its content's hash (a browser never runs a stale copy) and passed to the script in its
    ``data-package`` attribute. Other pages load none of it.
One tag each
    A script or stylesheet registered twice (sphinx-thebe's inline configuration, which Jupyter Book
    adds twice and whose second copy throws "Identifier 'THEBE_JS_URL' has already been declared") is
    written once per page.
Search
    ``gpucomm_search_scorer.js`` (``html_search_scorer``): a page whose own title holds the query ranks
    above pages that only have it in a section title, and excerpts come from the article's text, not
    the download menu and table of contents before it.
Narrow screens
    Every page gets ``gpucomm_layout.css`` and ``gpucomm_layout.js`` (``book/_ext/layout_static/``, a few KB):
    inline code and links wrap instead of widening the page, each wide table scrolls sideways in its own
    box, below 600 px every plotly figure is laid out again as one column (title wrapped, controls a row
    each, panels stacked, legend and slider below, measured from what plotly drew) and plotly's modebar is
    hidden, and the search page opened from a file says in one line why it lists titles only. At any width
    a tap on a dropdown item picks it (plotly.js issue #6127), titles wider than their figure are wrapped,
    crowded tick labels thinned, log axes showing one full number given 1-2-5 ticks, and tables whose rows
    would run hundreds of pixels tall widened to scroll sideways.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

# Below myst-nb's require.js (priority 500, nb_ipywidgets_js); see the module docstring.
PLOTLY_JS_PRIORITY = 400
# Right after plotly.js, before the page's figures are drawn: lets the browser in between the steps of a draw.
DRAW_SLICES_JS = "gpucomm_draw_slices.js"
# After plotly.js: the live front end calls Plotly.react (only after a change, but keep the order plain).
LIVE_JS_PRIORITY = 450
LIVE_STATIC = Path(__file__).resolve().parent / "live_static"  # gpucomm_live.js, gpucomm_live.css
LAYOUT_STATIC = Path(__file__).resolve().parent / "layout_static"  # gpucomm_layout.js, gpucomm_layout.css
# Sphinx's html_search_scorer: ranks a page whose own title holds the query first; excerpts from the article only.
SEARCH_SCORER = LAYOUT_STATIC / "gpucomm_search_scorer.js"
# After plotly.js and the live front end: it lays out figures they drew.
LAYOUT_JS_PRIORITY = 460
LIVE_PACKAGE_DIR = "gpucomm_live"  # under _static: the package zip for Pyodide
_LIVE_PANEL_RE = re.compile(r"\bdata-gpucomm-live=")
# What plotly.io.to_html writes for every figure, with or without plotly.js inlined.
_FIGURE_RE = re.compile(r"\bPlotly\.newPlot\(")
# Where pydata-sphinx-theme (0.13 to 0.17 at least) puts its Font Awesome script, under the html root.
FONTAWESOME_JS = Path("_static") / "scripts" / "fontawesome.js"
FONTAWESOME_STUB = (
    "/* Font Awesome's SVG script, emptied by book/_ext/book_page_assets.py: the theme's stylesheet\n"
    "   already draws every icon from its web font. */\n"
)


def page_has_figure(body: str) -> bool:
    """Whether a page's HTML body draws a plotly figure.

    Parameters
    ----------
    body : str
        The rendered body of the page (Sphinx's ``context["body"]``).

    Returns
    -------
    bool
        True when the body calls ``Plotly.newPlot``, as every figure written by
        ``plotly.io.to_html`` does.

    Examples
    --------
    >>> page_has_figure('<div id="fig-1"></div><script>Plotly.newPlot("fig-1", [], {})</script>')
    True
    >>> page_has_figure("<p>No figure; the text may say Plotly.newPlot without parentheses.</p>")
    False
    """
    return bool(_FIGURE_RE.search(body))


def add_plotly_where_used(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                          doctree: Any) -> None:
    """``html-page-context`` handler: add plotly.js (and the script that draws its figures in slices) to this page
    if it draws a figure."""
    path = app.config.book_plotly_js
    if not path or app.builder.format != "html":
        return
    if page_has_figure(context.get("body") or ""):
        # The builder restores its script list after every page: this adds to this page only.
        app.builder.add_js_file(path, priority=PLOTLY_JS_PRIORITY)
        app.builder.add_js_file(DRAW_SLICES_JS, priority=PLOTLY_JS_PRIORITY + 1)


def page_has_live_panel(body: str) -> bool:
    """Whether a page's HTML body holds a live calculator panel.

    Parameters
    ----------
    body : str
        The rendered body of the page.

    Returns
    -------
    bool
        True when the body has an element with a ``data-gpucomm-live`` attribute.

    Examples
    --------
    >>> page_has_live_panel('<div class="gpucomm-live" data-gpucomm-live="collective"></div>')
    True
    >>> page_has_live_panel("<p>The text may name data-gpucomm-live without an attribute.</p>")
    False
    """
    return bool(_LIVE_PANEL_RE.search(body))


def add_live_static_path(app: Sphinx, config: Any) -> None:
    """``config-inited`` handler: serve the live front end and the narrow-screen layout from ``_static``."""
    config.html_static_path = [*config.html_static_path, str(LIVE_STATIC), str(LAYOUT_STATIC)]


def use_search_scorer(app: Sphinx, config: Any) -> None:
    """``config-inited`` handler: the book's search ranking and excerpts (``gpucomm_search_scorer.js``).

    Sphinx reads ``html_search_scorer`` relative to the directory the build runs from, so the path is set
    here, absolute, unless the configuration names another file.
    """
    if not config.html_search_scorer:
        config.html_search_scorer = str(SEARCH_SCORER)


def prepare_live_package(app: Sphinx) -> None:
    """``builder-inited`` handler: zip the package for the browser now, so that pages can name the file."""
    app.gpucomm_live_package = None
    if app.builder.format != "html":
        return
    from gpucomm.viz.calculators.live import browser_zip

    data = browser_zip()
    name = f"{LIVE_PACKAGE_DIR}/gpucomm-{hashlib.sha256(data).hexdigest()[:12]}.zip"
    app.gpucomm_live_package = (name, data)


# The "check your log" reader (gpucomm.viz.calculators.log_check.LogCheckPanel): the live runtime and its own script.
_LOG_CHECK_RE = re.compile(r"\bdata-gpucomm-logcheck=")


def add_live_where_used(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                        doctree: Any) -> None:
    """``html-page-context`` handler: add the live front end to this page if it holds a live panel or the log reader.

    The front end (``gpucomm_live.js``) starts the Python worker (``gpucomm_live_worker.mjs``, fetched by the
    browser only when Python starts); a page with the log reader also gets ``gpucomm_log_check.js``, after it.
    """
    package = getattr(app, "gpucomm_live_package", None)
    body = context.get("body") or ""
    log_check = bool(_LOG_CHECK_RE.search(body))
    if package and (page_has_live_panel(body) or log_check):
        app.builder.add_js_file("gpucomm_live.js", priority=LIVE_JS_PRIORITY, **{"data-package": package[0]})
        app.builder.add_css_file("gpucomm_live.css")
        if log_check:
            app.builder.add_js_file("gpucomm_log_check.js", priority=LIVE_JS_PRIORITY + 1)


def write_live_package(app: Sphinx, exception: Exception | None) -> None:
    """``build-finished`` handler: write the package zip under ``_static``, and remove an older zip that no page names.

    An incremental build rewrites only the pages whose sources changed; the others still name the zip of the build
    that wrote them, so a zip is removed only once no HTML file of the output names it (a full build names one).
    """
    package = getattr(app, "gpucomm_live_package", None)
    if exception or not package:
        return
    name, data = package
    outdir = Path(app.outdir)
    target = outdir / "_static" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    named = {m.group(0) for html in outdir.rglob("*.html")
             for m in re.finditer(r"gpucomm-[0-9a-f]{12}\.zip", html.read_text(encoding="utf-8", errors="replace"))}
    for old in target.parent.glob("gpucomm-*.zip"):
        if old.name != target.name and old.name not in named:
            old.unlink()


def asset_key(asset: Any) -> tuple:
    """What makes two of a page's script (or stylesheet) tags the same tag.

    Parameters
    ----------
    asset : sphinx.builders.html._assets._JavaScript or _CascadingStyleSheet
        One entry of a page's ``script_files`` (or ``css_files``); a plain string in old Sphinx.

    Returns
    -------
    tuple
        The file name (``""`` for an inline script) and the attributes, the inline body among them.

    Examples
    --------
    >>> from types import SimpleNamespace as Asset
    >>> asset_key(Asset(filename=None, attributes={"body": "const A = 1"}))
    ('', (('body', 'const A = 1'),))
    >>> asset_key(Asset(filename=None, attributes={})) == asset_key(Asset(filename="", attributes={}))
    True
    """
    if isinstance(asset, str):
        return (asset, ())
    return (asset.filename or "", tuple(sorted((k, str(v)) for k, v in (asset.attributes or {}).items())))


def drop_duplicate_assets(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                          doctree: Any) -> None:
    """``html-page-context`` handler, run after every other: each script and stylesheet tag once per page.

    sphinx-thebe adds its inline ``const THEBE_JS_URL = ...`` script on every ``env-before-read-docs``,
    which Jupyter Book emits twice; Sphinx keeps both copies (one registered with ``filename=None``, one
    with ``""``, so they compare unequal), and the second throws "Identifier 'THEBE_JS_URL' has already been
    declared" on every page. Identical tags are dropped here, the first of each kept in its place.
    """
    for key in ("script_files", "css_files"):
        assets = context.get(key)
        if not isinstance(assets, list):
            continue
        seen: set[tuple] = set()
        unique = []
        for asset in assets:
            k = asset_key(asset)
            if k not in seen:
                seen.add(k)
                unique.append(asset)
        context[key] = unique


def drop_fontawesome_js(app: Sphinx, exception: Exception | None) -> None:
    """``build-finished`` handler: replace the theme's Font Awesome script by a stub."""
    if exception or not app.config.book_drop_fontawesome_js or app.builder.format != "html":
        return
    target = Path(app.outdir) / FONTAWESOME_JS
    if not target.is_file():
        # Another theme version: nothing saved, nothing broken; say so rather than pass silently.
        logger.info("book_page_assets: no %s in the build, Font Awesome script left as the theme has it",
                    FONTAWESOME_JS)
        return
    target.write_text(FONTAWESOME_STUB, encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the configuration values and the event handlers."""
    # Kernels that myst-nb starts from here on inherit this: figures render as text/html only
    # (gpucomm.viz.figures.render.default_renderer), the one mimetype the page shows.
    os.environ["GPUCOMM_BOOK_BUILD"] = "1"
    # Path under _static of the plotly.js to load on pages with figures; empty: never add it.
    app.add_config_value("book_plotly_js", "", "html", types=[str])
    app.add_config_value("book_drop_fontawesome_js", False, "html", types=[bool])
    app.connect("html-page-context", add_plotly_where_used)
    app.connect("build-finished", drop_fontawesome_js)
    app.connect("config-inited", add_live_static_path)
    app.connect("config-inited", use_search_scorer)
    app.connect("builder-inited", prepare_live_package)
    app.connect("html-page-context", add_live_where_used)
    app.connect("build-finished", write_live_package)
    # Last of all html-page-context handlers: after every script the others add to the page.
    app.connect("html-page-context", drop_duplicate_assets, priority=900)
    app.add_css_file("gpucomm_layout.css")
    app.add_js_file("gpucomm_layout.js", priority=LAYOUT_JS_PRIORITY)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
