"""A plotly renderer for the book: small, deterministic HTML that works offline.

Why this exists
---------------
Under a Jupyter kernel plotly's default renderer is ``plotly_mimetype``, which
myst-nb (Jupyter Book 1) does not render: figures vanish from the book. plotly's
``notebook`` renderer does show up, but it inlines about 4.8 MB of plotly.js into
every page and gives every figure a random ``div`` id, so rebuilt pages and
committed notebook outputs differ on every run.

The ``gpucomm_book`` renderer registered here emits only the figure's ``div`` and
the ``Plotly.newPlot`` call. plotly.js itself is loaded once, by each page that
draws a figure, by the book (``book/_ext/book_page_assets.py``, configured in
``_config.yml``: a local copy of plotly.js's partial "cartesian" bundle, at the
version the installed plotly package bundles).

Each figure is stored once, in one mimetype chosen by where the kernel runs: in a book
build (the book's extension sets ``GPUCOMM_BOOK_BUILD=1`` before myst-nb starts any
kernel) the default renderer is ``gpucomm_book`` (``text/html``, which myst-nb shows);
everywhere else (JupyterLab, nbval, ``scripts/execute_notebooks.py``) it is plotly's
``plotly_mimetype``, which JupyterLab draws natively. So a committed notebook holds each
figure as plotly's JSON only, not twice.

Pages call::

    from gpucomm.viz.figures.render import use_book_renderer
    use_book_renderer()

This module is not imported by :mod:`gpucomm.viz.figures`: importing it costs nothing
until a page asks for it.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import plotly.io as pio
from plotly.io.base_renderers import MimetypeRenderer

__all__ = ["BOOK_BUILD_ENV", "BOOK_RENDERER", "BookHtmlRenderer", "book_div_id", "default_renderer", "use_book_renderer"]

#: Name under which the renderer is registered in ``plotly.io.renderers``.
BOOK_RENDERER = "gpucomm_book"
#: Environment variable the book's Sphinx extension sets (to ``"1"``) in a book build.
BOOK_BUILD_ENV = "GPUCOMM_BOOK_BUILD"


def default_renderer() -> str:
    """The value :func:`use_book_renderer` gives ``plotly.io.renderers.default``: one mimetype per figure.

    Returns
    -------
    str
        :data:`BOOK_RENDERER` in a book build (``GPUCOMM_BOOK_BUILD=1``), else ``"plotly_mimetype"``.
    """
    return BOOK_RENDERER if os.environ.get(BOOK_BUILD_ENV) == "1" else "plotly_mimetype"


# Height of a figure whose layout does not set one. The same 525 px plotly's own
# notebook renderer uses: a "100%" height collapses to nothing inside a page
# whose container has no fixed height.
_DEFAULT_HEIGHT_PX = 525
# 12 hex digits of sha1: collisions between different figures of one page are
# astronomically unlikely, and the ids stay short enough to read in the HTML.
_ID_HEX_DIGITS = 12


def book_div_id(fig_json: str, taken: set[str] | None = None) -> str:
    """Return a deterministic HTML id for a figure: ``"fig-"`` + a short sha1 of its JSON.

    Parameters
    ----------
    fig_json : str
        The figure serialised as JSON (plotly's own serialisation).
    taken : set of str, optional
        Ids already used in this kernel session. When the id is taken (the same
        figure shown twice on one page) a suffix ``-2``, ``-3``, ... is added so
        that each ``div`` stays unique. The chosen id is added to the set.

    Returns
    -------
    str
        An id such as ``"fig-3f2a9c0d1b7e"`` or ``"fig-3f2a9c0d1b7e-2"``.

    Notes
    -----
    Same figure, same id: rebuilding the book or re-running a notebook does not
    change its HTML, so diffs of committed outputs only show real changes.

    Examples
    --------
    >>> book_div_id('{"data": []}')
    'fig-17105f6867c0'
    >>> seen = set()
    >>> book_div_id('{"data": []}', seen), book_div_id('{"data": []}', seen)
    ('fig-17105f6867c0', 'fig-17105f6867c0-2')
    """
    base = "fig-" + hashlib.sha1(fig_json.encode("utf-8")).hexdigest()[:_ID_HEX_DIGITS]
    if taken is None:
        return base
    div_id, n = base, 1
    while div_id in taken:
        n += 1
        div_id = f"{base}-{n}"
    taken.add(div_id)
    return div_id


class BookHtmlRenderer(MimetypeRenderer):
    """plotly renderer that emits a figure ``div`` without plotly.js, with a stable id.

    Parameters
    ----------
    config : dict, optional
        plotly.js config options (``displaylogo``, ``responsive``, ...) applied to
        every figure this renderer draws.

    Notes
    -----
    The HTML is ``plotly.io.to_html(fig, include_plotlyjs=False,
    include_mathjax=False, full_html=False, div_id=book_div_id(...),
    auto_play=False)``. ``auto_play=False`` matters for figures with frames
    (sliders over precomputed frames): with auto play the page would open on the
    last frame instead of the one the slider shows as active.
    """

    def __init__(self, config: dict[str, Any] | None = None):
        self.config = dict(config) if config else {}
        # Ids handed out in this kernel session (one page = one kernel in the book).
        self._taken: set[str] = set()

    def to_mimebundle(self, fig_dict: dict[str, Any]) -> dict[str, str]:
        """Return ``{"text/html": <figure div and script>}`` for a figure dict."""
        from plotly.io.json import to_json_plotly

        div_id = book_div_id(to_json_plotly(fig_dict), self._taken)
        html = pio.to_html(
            fig_dict,
            config=self.config,
            auto_play=False,
            include_plotlyjs=False,
            include_mathjax=False,
            full_html=False,
            div_id=div_id,
            default_width="100%",
            default_height=_DEFAULT_HEIGHT_PX,
            validate=False,
        )
        return {"text/html": html}


def use_book_renderer(config: dict[str, Any] | None = None) -> None:
    """Register the ``gpucomm_book`` plotly renderer and make it part of the default.

    After this call, displaying a figure produces one output: in a book build a small
    ``text/html`` block (rendered by Jupyter Book's myst-nb, which ignores plotly's
    mimetype), elsewhere plotly's mimetype (rendered natively by JupyterLab); see
    :func:`default_renderer`. Calling it again is harmless: the renderer is registered
    once and the default is set to the same value.

    Parameters
    ----------
    config : dict, optional
        plotly.js config options for the figures. ``None`` keeps the config of an
        already registered renderer (or plotly's defaults on the first call).

    Returns
    -------
    None
        Nothing, so that a notebook cell ending with this call shows no output.

    Notes
    -----
    The page must load plotly.js for the HTML to draw anything; the book's
    extension (``book/_ext/book_page_assets.py``) adds a local copy
    (``scripts/fetch_assets.sh``) to every page that calls ``Plotly.newPlot``, so
    pages work with no network.

    Examples
    --------
    >>> import plotly.io as pio
    >>> use_book_renderer()
    >>> use_book_renderer()  # idempotent
    >>> pio.renderers.default == default_renderer() in ("gpucomm_book", "plotly_mimetype")
    True
    >>> import plotly.graph_objects as go
    >>> html = pio.renderers[BOOK_RENDERER].to_mimebundle(go.Figure(go.Bar(y=[1, 2])).to_dict())["text/html"]
    >>> '<div id="fig-' in html and "plotly.js v" not in html
    True
    """
    existing = pio.renderers[BOOK_RENDERER] if BOOK_RENDERER in pio.renderers else None
    if not isinstance(existing, BookHtmlRenderer):
        pio.renderers[BOOK_RENDERER] = BookHtmlRenderer(config)
    elif config is not None:
        existing.config = dict(config)
    if pio.renderers.default != default_renderer():
        pio.renderers.default = default_renderer()
