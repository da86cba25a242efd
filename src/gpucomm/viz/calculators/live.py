"""The book's calculators computed in the reader's browser, by this package's own model (Pyodide).

A calculator page of the static book shows, under its live section, the controls of the
calculator and its figure precomputed at build time (the first paint, and all a reader without
JavaScript sees). The controls are not written by hand: they come from the inputs dataclass's
field metadata (:func:`gpucomm.viz.calculators.inputs.param`), serialised by :func:`controls` into
the page and drawn by the book's front end (``book/_ext/live_static/gpucomm_live.js``). On the
reader's first change, the front end loads Pyodide (CPython compiled to WebAssembly, served by the
book from ``_static/pyodide/``) and the part of this package that the calculators need (a zip
written at build time from :func:`browser_zip` by the book's extension,
``book/_ext/book_page_assets.py``), then calls :func:`compute_json` on every
change and draws the figure dict it returns with ``Plotly.react``. Nothing leaves the page's
origin.

Everything here runs in both worlds, so it needs the standard library only: no plotly, numpy or
pandas (:func:`LivePanel._repr_html_`, which draws the first paint at build time, imports plotly
when called). The figure is the same dict the notebooks wrap in a ``go.Figure``
(:func:`gpucomm.viz.calculators.collective.collective_spec`), so both draw the same numbers.

A bad value is answered as the ipywidgets UI and the CLI answer it: one line, the
:class:`~gpucomm.GpucommError` message (for a size, the very message of ``gpucomm cost --size``),
shown next to the control it concerns, and the figure keeps its last valid state.
"""

from __future__ import annotations

import dataclasses
import html
import io
import json
import math
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpucomm import GpucommError
from gpucomm.model.units import format_size, parse_size
from gpucomm.viz.calculators.inputs import FigureUpdate, check_field, check_inputs, input_fields, update_spec

__all__ = ["LiveCalculator", "LivePanel", "BROWSER_PACKAGE", "calculators", "get_calculator", "controls",
           "read_field", "finite", "compute", "compute_json", "browser_zip", "panel"]

BROWSER_PACKAGE = ("__init__.py", "model", "viz/__init__.py", "viz/calculators", "measure/*.py", "measure/collectives",
                   "measure/logs")
"""Parts of the ``gpucomm`` package the browser needs (paths or glob patterns under the package folder): the model,
the calculators' inputs and figure specs, and for the "check your log" page
(:mod:`gpucomm.viz.calculators.log_check`) the log readers of ``measure/logs`` with the modules of ``measure``
they import (the results schema, the sweep configuration, the output-path rules), taken as the folder's
top-level modules so that a module split there needs no change here. The modules that drive torch travel as
source and are never imported (a test imports the browser's entry points with torch blocked);
``measure/collectives`` travels whole because its package lists its modules to name the measured collectives.
Not ``measure/doctor``, ``cli``, ``viz/figures`` or ``viz/widgets`` (plotly, ipywidgets)."""

_ZIP_DATE = (2020, 1, 1, 0, 0, 0)
"""Timestamp of every zip entry: the same package gives the same bytes, hence the same file name."""


@dataclass(frozen=True)
class LiveCalculator:
    """What the browser front end needs of one calculator.

    A calculator is drawn in one of two ways. With a ``skeleton`` (the collective calculator), every
    result is the whole figure as a plain dict, drawn with ``Plotly.react``: the spec the notebooks
    wrap in a ``go.Figure``, less the traces it hides (systems not compared), which plotly would not
    draw. Without one, every result is the calculator's
    :class:`~gpucomm.viz.calculators.inputs.FigureUpdate`, applied with ``Plotly.update`` to the
    figure precomputed at build time by ``figure``: what the ipywidgets UI applies to its
    ``FigureWidget`` and the static sliders replay, so all three show the same numbers.

    Attributes
    ----------
    inputs : type
        The inputs dataclass; its :func:`~gpucomm.viz.calculators.inputs.param` fields make the controls.
    update : callable
        ``update(inputs) -> FigureUpdate``: the model's numbers for the figure, and a one-line summary.
    rows : tuple of tuple of str
        Field names per row of controls (fields left out follow in one more row).
    enabled_when : dict
        ``{field: (other field, value)}``: the control of ``field`` is enabled only while ``other
        field`` has ``value`` (the custom-link controls of the collective calculator).
    skeleton : callable, optional
        ``skeleton() -> dict``: the figure dict (traces and layout) without data. Plain Python.
    figure : callable, optional
        ``figure(inputs) -> go.Figure`` (plotly, build time only): the first paint when there is no skeleton.
    """

    inputs: type
    update: Callable[[Any], FigureUpdate]
    rows: tuple[tuple[str, ...], ...] = ()
    enabled_when: dict[str, tuple[str, Any]] = dataclasses.field(default_factory=dict)
    skeleton: Callable[[], dict] | None = None
    figure: Callable[[Any], Any] | None = None

    def result(self, inputs) -> dict:
        """What the browser draws for checked ``inputs``: ``{"spec": figure dict}`` (with a skeleton: its shown traces,
        in the skeleton's order; the page's first paint is drawn from it too) or
        ``{"update": {"data", "traces", "layout"}}`` (without), and ``"summary"`` (one line).

        Raises
        ------
        GpucommError
            When the model refuses the configuration.
        """
        update = self.update(inputs)
        if self.skeleton is not None:
            spec = update_spec(self.skeleton(), update)
            # the traces drawn, in order: a hidden one (a system not compared) would only cross into the browser
            # and be left out there, as plotly draws nothing of it
            spec["data"] = [t for t in spec["data"] if t.get("visible", True) is not False]
            return {"spec": spec, "summary": update.summary}
        return {"update": {"data": update.data, "traces": list(update.traces), "layout": update.layout},
                "summary": update.summary}


def calculators() -> dict[str, LiveCalculator]:
    """The calculators the book computes live, by the name its pages use (``"collective"``, ``"mesh"``...)."""
    from gpucomm.viz.calculators import collective, generations, mesh, tp_inference, training

    return {
        "collective": LiveCalculator(collective.CostInputs, collective.collective_update, collective.CONTROL_ROWS,
                                     {name: ("system", "custom") for name in collective.CUSTOM_ONLY},
                                     skeleton=collective.live_skeleton),
        "mesh": LiveCalculator(mesh.MeshInputs, mesh.mesh_update, mesh.CONTROL_ROWS, figure=mesh.mesh_figure),
        "generations": LiveCalculator(generations.GenerationsInputs, generations.generations_update,
                                      figure=generations.generations_figure),
        "training": LiveCalculator(training.TrainingInputs, training.training_update, training.CONTROL_ROWS,
                                   figure=training.training_figure),
        "tp": LiveCalculator(tp_inference.TPInputs, tp_inference.tp_update, tp_inference.CONTROL_ROWS,
                             figure=tp_inference.tp_figure),
    }


def get_calculator(name: str) -> LiveCalculator:
    """The live calculator called ``name``.

    Raises
    ------
    GpucommError
        For a name that is not one of :func:`calculators`.
    """
    known = calculators()
    if name not in known:
        raise GpucommError(f"live calculator {name!r} is not valid: expected one of {', '.join(known)}")
    return known[name]


def _control_value(meta: dict, value: Any) -> Any:
    """A field's value as its control shows it: a size as text (``64MiB``), a tuple as a list."""
    if meta["kind"] == "size":
        return format_size(value).replace(" ", "")
    if meta["kind"] == "multi":
        return list(value)
    return value


def controls(name: str, inputs=None) -> dict:
    """The controls of a live calculator, from its fields' metadata, as JSON-ready data.

    Parameters
    ----------
    name : str
        A calculator of :func:`calculators`.
    inputs : dataclass instance, optional
        Initial values (checked); default: the dataclass's defaults.

    Returns
    -------
    dict
        ``{"calculator": name, "rows": [[field, ...], ...], "fields": {field: {...}}}``, each field with
        ``label``, ``unit``, ``kind`` (choice, multi, size, int, float, bool), ``help``, ``min``,
        ``max``, ``choices`` (``[[label, value], ...]``, read from the catalog now), ``value`` (as the
        control shows it) and ``enabled_when`` (``[field, value]`` or None).

    Raises
    ------
    GpucommError
        For an unknown calculator or initial values out of range.

    Examples
    --------
    >>> c = controls("collective")
    >>> c["fields"]["msg_bytes"]["kind"], c["fields"]["msg_bytes"]["value"], c["fields"]["link"]["enabled_when"]
    ('size', '64MiB', ['system', 'custom'])
    """
    calc = get_calculator(name)
    inputs = check_inputs(inputs if inputs is not None else calc.inputs())
    fields = {}
    for field, meta in input_fields(calc.inputs):
        when = calc.enabled_when.get(field)
        fields[field] = {
            "label": meta["label"], "unit": meta["unit"], "kind": meta["kind"], "help": meta["help"],
            "min": meta["min"], "max": meta["max"],
            "choices": [[label, value] for label, value in meta["choices"]()] if meta["choices"] else None,
            "value": _control_value(meta, getattr(inputs, field)),
            "enabled_when": list(when) if when else None,
        }
    rows = [[f for f in row if f in fields] for row in calc.rows]
    listed = {f for row in rows for f in row}
    rows += [[f for f in fields if f not in listed]] if listed != set(fields) else []
    return {"calculator": name, "rows": rows, "fields": fields}


def read_field(meta: dict, raw: Any) -> Any:
    """A control's raw value (text for numbers and sizes) as the field's value, checked.

    Parameters
    ----------
    meta : dict
        The field's metadata.
    raw
        What the control holds: text for ``size``, ``int`` and ``float`` fields, a list for
        ``multi``, the choice's value, a bool.

    Returns
    -------
    The value in SI units, accepted by :func:`~gpucomm.viz.calculators.inputs.check_field`.

    Raises
    ------
    GpucommError
        The message the CLI and the ipywidgets UI give: a size goes through
        :func:`gpucomm.model.units.parse_size` (as ``gpucomm cost --size``), a number that does not
        parse or is out of range is refused naming the field.

    Examples
    --------
    >>> read_field({"label": "size", "kind": "size", "unit": "bytes", "min": 1, "max": None}, "64MiB")
    67108864
    >>> read_field({"label": "GPUs", "kind": "int", "unit": "GPUs", "min": 1, "max": 8}, "eight")
    Traceback (most recent call last):
    gpucomm.GpucommError: GPUs 'eight' is not valid: expected an integer from 1 to 8 GPUs
    """
    kind = meta["kind"]
    value = raw
    if kind == "size":
        value = parse_size(str(raw))
    elif kind in ("int", "float") and isinstance(raw, str):
        try:
            value = int(raw.strip()) if kind == "int" else float(raw.strip())
        except ValueError:
            value = raw  # refused below, with the field's label and range
    elif kind == "multi" and isinstance(raw, list):
        value = tuple(raw)
    return check_field(meta, value)


def finite(value: Any) -> Any:
    """``value`` with every non-finite float made None: JSON has no NaN or Infinity (a gap in a plotly line)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list):
        return [finite(v) for v in value]
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    return value


def compute(name: str, values: dict) -> dict:
    """Recompute a live calculator from its controls' raw values: what the browser calls on every change.

    Parameters
    ----------
    name : str
        A calculator of :func:`calculators`.
    values : dict
        ``{field: raw control value}`` (see :func:`read_field`); a field left out keeps its default.

    Returns
    -------
    dict
        ``{"ok": True, "spec" or "update": ..., "summary": one line}`` (:meth:`LiveCalculator.result`), or
        ``{"ok": False, "field": the
        field the message concerns (None when the model refused the whole configuration),
        "message": one line}``. Never raises for a bad value.

    Examples
    --------
    >>> compute("collective", {"msg_bytes": "0"})["message"][:27]
    "size '0' must be positive: "
    >>> r = compute("collective", {"system": "dgx_a100", "num_ranks": "4", "msg_bytes": "64MiB"})
    >>> r["ok"], r["summary"].split(":")[0]
    (True, 'all_reduce of 64 MiB on DGX A100 / HGX A100, 4 GPUs')
    """
    return _finish(_compute(name, values))


def _compute(name: str, values: dict) -> dict:
    """:func:`compute` before its non-finite floats are made None."""
    calc = get_calculator(name)
    meta = dict(input_fields(calc.inputs))
    typed = {}
    for field, raw in values.items():
        if field not in meta:
            return {"ok": False, "field": None,
                    "message": f"field {field!r} is not valid: expected one of {', '.join(meta)}"}
        try:
            typed[field] = read_field(meta[field], raw)
        except GpucommError as exc:
            return {"ok": False, "field": field, "message": str(exc)}
    try:
        result = calc.result(check_inputs(calc.inputs(**typed)))
    except GpucommError as exc:
        return {"ok": False, "field": None, "message": str(exc)}
    return {"ok": True, **result}


def _finish(raw: dict) -> dict:
    return finite(raw) if raw["ok"] else raw


def compute_json(name: str, values_json: str) -> str:
    """:func:`compute` with JSON in and out: one string each way across the Python/JavaScript boundary.

    The answer is written as it is when it holds no NaN or infinity (the usual case: no walk over every value),
    else as :func:`compute` gives it, each of those None.
    """
    raw = _compute(name, json.loads(values_json))
    try:
        return json.dumps(raw, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a NaN or infinity somewhere: JSON has none
        return json.dumps(_finish(raw), separators=(",", ":"), allow_nan=False)


# --- build time: the package for the browser, the panel on the page ----------------------------------------

def browser_zip() -> bytes:
    """The parts of the package the browser needs (:data:`BROWSER_PACKAGE`), as a zip of ``gpucomm/...``.

    Source files and bundled data, no ``__pycache__``; entries sorted and dated :data:`_ZIP_DATE`, so
    the same package always gives the same bytes.

    Returns
    -------
    bytes
        The zip, for ``pyodide.unpackArchive(buffer, "zip")`` into a folder on ``sys.path``.
    """
    root = Path(__file__).resolve().parents[2]  # .../gpucomm
    files = []
    for part in BROWSER_PACKAGE:
        path = root / part
        if "*" in part:
            found = [p for p in root.glob(part) if p.is_file()]
        else:
            found = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        files += [p for p in found if "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(set(files)):
            info = zipfile.ZipInfo("gpucomm/" + path.relative_to(root).as_posix(), date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


@dataclass(frozen=True)
class LivePanel:
    """A live calculator on a page: its controls (as JSON) and its precomputed figure, displayed as HTML.

    Shown by a notebook cell (:func:`panel`); the book's front end finds it by ``data-gpucomm-live``
    and draws the controls over the figure. Without JavaScript the figure alone is what the reader sees.
    """

    name: str
    inputs: Any

    def _repr_html_(self) -> str:
        """The panel's HTML: a container, the controls' JSON, a one-line note, the precomputed figure."""
        import plotly.graph_objects as go
        import plotly.io as pio

        from gpucomm.viz.figures.render import BOOK_RENDERER, use_book_renderer

        use_book_renderer()
        calc = get_calculator(self.name)
        result = calc.result(self.inputs)
        fig = go.Figure(result["spec"]) if "spec" in result else calc.figure(self.inputs)
        summary = result["summary"]
        figure = pio.renderers[BOOK_RENDERER].to_mimebundle(fig.to_dict())["text/html"]
        # "</" cannot end the script element early: JSON allows "<\/" for "</".
        data = json.dumps(controls(self.name, self.inputs), separators=(",", ":")).replace("</", "<\\/")
        return (f'<div class="gpucomm-live" data-gpucomm-live="{html.escape(self.name)}">'
                f'<script type="application/json" class="gpucomm-live-controls">{data}</script>'
                f'<p class="gpucomm-live-summary">{html.escape(summary)}</p>'
                f'<div class="gpucomm-live-figure">{figure}</div></div>')

    def __repr__(self) -> str:
        return f"live {self.name} calculator: {self.inputs!r}"


def panel(name: str, **overrides) -> LivePanel:
    """The live calculator ``name`` with initial values ``overrides``, for a notebook cell to display.

    Raises
    ------
    GpucommError
        For an unknown calculator, initial values out of range, or a configuration the model refuses.
    """
    calc = get_calculator(name)
    inputs = check_inputs(calc.inputs(**overrides))
    calc.result(inputs)  # refused now, at build time, rather than on the page
    return LivePanel(name, inputs)
