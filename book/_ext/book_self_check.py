"""Sphinx extension of the book: graded self-checks that work offline in the static HTML.

Loaded by Jupyter Book through ``sphinx: local_extensions`` in ``_config.yml``.

Each chapter ends with questions. A ``self-check`` directive under a question turns it into a
graded one: the reader picks a choice or types a number, presses *Check*, and is told right or
wrong; the directive's body (the explanation) is shown then. Everything runs in the page: one
small script and one stylesheet from ``_static`` (``book/_ext/self_check_static/``, added only to
pages with a self-check), no request leaves the page, no third-party package. (``jupyterquiz``
would need its questions as JSON in code cells, where the explanations could not use MyST or
``{glue:text}``, and one more dependency.)

Multiple choice::

    ```{self-check}
    :choices: Yes, P2P is the default | No, NCCL stages through host memory
    :correct: 2
    Why the second choice is right (MyST, ``{glue:text}`` works).
    ```

A number, with the expected value computed when the page builds (a ``glue`` key of the page)::

    ```{self-check}
    :answer: g6_x16
    :tolerance: 2%
    :unit: GB/s
    Why.
    ```

``:answer:`` is a glue key of the same page, or a plain number where the answer is a count and
not computed. The reader may type a unit after the number ("16,4 MB" against ``:unit: bytes``):
``self_check.js`` converts sizes (B, KB/MB/GB/TB decimal, KiB/MiB/GiB/TiB binary, bits), times
(s, ms, us, ns) and rates (a size per second) to the answer's unit, the first word of ``:unit:``,
and says so, without grading, when the unit is of another kind.
``:tolerance:`` is relative (``2%``) or absolute (``0.5``, in ``:unit:``); the default is 2 %.
Choices are separated by ``|``; ``:correct:`` counts from 1. Inline code in a choice is written with backticks.

Without JavaScript the explanation stays visible (the script hides it until the first check).
"""

from __future__ import annotations

import html
import itertools
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

STATIC_DIR = Path(__file__).resolve().parent / "self_check_static"
JS_FILE = "self_check.js"
CSS_FILE = "self_check.css"
DEFAULT_TOLERANCE = "2%"
# Every self-check gets an id unique on its page: its radio buttons need a shared name.
_counter = itertools.count(1)
_CODE_RE = re.compile(r"``?([^`]+)``?")


def choice_html(text: str) -> str:
    """Escape one choice for HTML; backticks become ``<code>``.

    Parameters
    ----------
    text : str
        The choice as written in ``:choices:``.

    Returns
    -------
    str
        HTML of the choice.

    Examples
    --------
    >>> choice_html("set `NCCL_P2P_LEVEL=PHB` <always>")
    'set <code>NCCL_P2P_LEVEL=PHB</code> &lt;always&gt;'
    """
    return _CODE_RE.sub(lambda m: f"<code>{m.group(1)}</code>", html.escape(text.strip(), quote=False))


def parse_tolerance(text: str) -> tuple[str, float]:
    """Read ``:tolerance:``: relative when it ends in ``%``, else absolute.

    Parameters
    ----------
    text : str
        ``"2%"`` (relative) or ``"0.5"`` (absolute, in the answer's unit).

    Returns
    -------
    tuple of (str, float)
        ``("rel", 0.02)`` or ``("abs", 0.5)``.

    Raises
    ------
    ValueError
        When the text is not a non-negative number (with or without ``%``).

    Examples
    --------
    >>> parse_tolerance("2%")
    ('rel', 0.02)
    >>> parse_tolerance("0.5")
    ('abs', 0.5)
    """
    text = text.strip()
    kind, number = ("rel", text[:-1]) if text.endswith("%") else ("abs", text)
    value = float(number)
    if value < 0:
        raise ValueError(f"negative tolerance {text!r}")
    return kind, value / 100 if kind == "rel" else value


class SelfCheck(SphinxDirective):
    """The ``self-check`` directive: one graded question (see the module docstring)."""

    has_content = True
    option_spec = {
        "choices": directives.unchanged,
        "correct": directives.positive_int,
        "answer": directives.unchanged,
        "tolerance": directives.unchanged,
        "unit": directives.unchanged,
    }

    def _answer_value(self, answer: str) -> float:
        """The expected number: a literal, or the glue key's value on this page."""
        try:
            return float(answer)
        except ValueError:
            pass
        # Imported here: only pages that glue need myst-nb's glue store.
        from myst_nb.ext.glue.utils import retrieve_glue_data

        data = retrieve_glue_data(self.state.document, answer).data
        return float(data["text/plain"])

    def _controls(self, check_id: str) -> tuple[str, dict[str, str]]:
        """HTML of the inputs, and the data attributes the script grades with."""
        opts = self.options
        if "choices" in opts:
            choices = [c for c in opts["choices"].split("|") if c.strip()]
            correct = opts.get("correct")
            if len(choices) < 2 or correct is None or not 1 <= correct <= len(choices):
                raise self.error("self-check: :choices: needs two or more choices and :correct: one of them (from 1)")
            items = "".join(
                f'<label class="gc-check-choice"><input type="radio" name="{check_id}" value="{i}"> '
                f"<span>{choice_html(c)}</span></label>"
                for i, c in enumerate(choices, start=1))
            return f'<fieldset class="gc-check-choices">{items}</fieldset>', {
                "kind": "choice", "correct": str(correct)}
        if "answer" in opts:
            try:
                value = self._answer_value(opts["answer"])
                tol_kind, tol = parse_tolerance(opts.get("tolerance", DEFAULT_TOLERANCE))
            except Exception as exc:  # a missing glue key or a typo: fail the build, saying where
                raise self.error(f"self-check: {exc}") from exc
            unit = html.escape(opts.get("unit", ""))
            field = (f'<input class="gc-check-number" type="text" inputmode="decimal" autocomplete="off" '
                     f'aria-label="your answer{(" in " + unit) if unit else ""}">'
                     f'<span class="gc-check-unit">{unit}</span>')
            return field, {"kind": "number", "answer": repr(value), "tol-kind": tol_kind, "tol": repr(tol),
                           "unit": unit}
        raise self.error("self-check needs :choices: and :correct:, or :answer:")

    def run(self) -> list[nodes.Node]:
        check_id = f"gc-check-{next(_counter)}"
        controls, data = self._controls(check_id)
        attrs = " ".join(f'data-{k}="{html.escape(v)}"' for k, v in data.items())
        opening = nodes.raw(
            "", f'<div class="gc-check" id="{check_id}" {attrs}><form class="gc-check-form">{controls}'
                f'<button type="submit" class="gc-check-button">Check</button></form>'
                f'<p class="gc-check-feedback" role="status" aria-live="polite"></p>', format="html")
        why = nodes.container(classes=["gc-check-why"])
        self.state.nested_parse(self.content, self.content_offset, why)
        return [opening, why, nodes.raw("", "</div>", format="html")]


def add_assets_where_used(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                          doctree: Any) -> None:
    """``html-page-context`` handler: the script and stylesheet only on pages with a self-check."""
    if app.builder.format == "html" and 'class="gc-check"' in (context.get("body") or ""):
        # The builder restores both lists after every page: this adds to this page only.
        app.builder.add_js_file(JS_FILE)
        app.builder.add_css_file(CSS_FILE)


def add_static_dir(app: Sphinx) -> None:
    """``builder-inited`` handler: copy ``self_check_static/`` into ``_static``."""
    app.config.html_static_path = [*app.config.html_static_path, str(STATIC_DIR)]


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive, its assets and the handler that adds them."""
    app.add_directive("self-check", SelfCheck)
    app.connect("builder-inited", add_static_dir)
    app.connect("html-page-context", add_assets_where_used)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
