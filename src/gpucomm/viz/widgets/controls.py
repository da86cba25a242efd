"""Controls made from an inputs dataclass's field metadata, and the one-observer calculator box.

Every live calculator is ``build_calculator(inputs, figure=..., update=...)``: one control per
field (:func:`gpucomm.viz.calculators.inputs.param` metadata: label, unit, range, choices,
help), a status line and a ``go.FigureWidget``. One observer, registered on every control,
reads the values, checks them, calls the model (``update(inputs)``, which returns a
:class:`~gpucomm.viz.calculators.inputs.FigureUpdate`) and applies the result inside
``batch_update()``. A bad value never raises: the status line says what was refused and why,
and the figure keeps its last valid state. Needs a Jupyter kernel (ipywidgets, anywidget).
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.model.units import format_size, parse_size
from gpucomm.viz.calculators.inputs import FigureUpdate, apply_update, check_inputs, input_fields

__all__ = ["make_control", "read_inputs", "build_calculator", "REFUSED_STYLE"]

REFUSED_STYLE = "color:#b00"
_DESCRIPTION_STYLE = {"description_width": "initial"}


def _size_text(num_bytes: int) -> str:
    return format_size(num_bytes).replace(" ", "")


def make_control(name: str, meta: dict, value: Any) -> widgets.Widget:
    """One ipywidgets control for a field: Dropdown (choices), SelectMultiple (multi), Text (sizes),
    IntText/FloatText (numbers, unbounded so that out-of-range values reach the check and are
    refused visibly instead of being clamped silently), Checkbox (bool). ``tooltip`` = help."""
    label = meta["label"] + (f" ({meta['unit']})" if meta["unit"] and meta["kind"] not in ("size",) else "")
    common = dict(description=label, style=_DESCRIPTION_STYLE, tooltip=meta["help"])
    kind = meta["kind"]
    if kind == "choice":
        control = widgets.Dropdown(options=meta["choices"](), value=value, **common)
    elif kind == "multi":
        options = meta["choices"]()
        control = widgets.SelectMultiple(options=options, value=tuple(value), rows=min(len(options), 4), **common)
    elif kind == "size":
        control = widgets.Text(value=_size_text(value), continuous_update=False, **common)
    elif kind == "int":
        control = widgets.IntText(value=value, **common)
    elif kind == "float":
        control = widgets.FloatText(value=value, **common)
    elif kind == "bool":
        control = widgets.Checkbox(value=value, indent=False, **common)
    else:  # pragma: no cover - param() only makes the kinds above
        raise GpucommError(f"field {name!r} has unknown kind {kind!r}")
    return control


def read_inputs(cls, controls: dict[str, widgets.Widget], base=None):
    """Build and check an inputs dataclass from the controls' values.

    Raises
    ------
    GpucommError
        A size that does not parse, or any value :func:`check_inputs` refuses.
    """
    values = {}
    for name, meta in input_fields(cls):
        if name not in controls:
            continue
        value = controls[name].value
        if meta["kind"] == "size":
            value = parse_size(value)
        elif meta["kind"] == "multi":
            value = tuple(value)
        values[name] = value
    inputs = dataclasses.replace(base, **values) if base is not None else cls(**values)
    return check_inputs(inputs)


def build_calculator(inputs, *, figure: Callable[[Any], go.Figure], update: Callable[[Any], FigureUpdate],
                     rows: list[list[str]] | None = None, hidden: tuple[str, ...] = ()) -> widgets.VBox:
    """A live calculator box: controls from ``inputs``' fields, a status line, a FigureWidget.

    Parameters
    ----------
    inputs : dataclass instance
        Initial values (checked); its class's field metadata makes the controls.
    figure : callable
        ``figure(inputs) -> go.Figure``: the figure, built once.
    update : callable
        ``update(inputs) -> FigureUpdate``: the model's new trace data, layout and summary.
    rows : list of list of str, optional
        Field names per row of controls (default: three per row, in field order).
    hidden : tuple of str
        Fields without a control (they keep their value from ``inputs``).

    Returns
    -------
    ipywidgets.VBox
        Not displayed. Attributes: ``controls`` (dict by field name), ``status`` (HTML),
        ``figure`` (the FigureWidget, also ``children[-1]``), ``inputs`` (last valid inputs),
        ``refresh()`` (run the observer once, as a control change does).
    """
    inputs = check_inputs(inputs)
    cls = type(inputs)
    names = [n for n, _ in input_fields(cls) if n not in hidden]
    meta = dict(input_fields(cls))
    controls = {n: make_control(n, meta[n], getattr(inputs, n)) for n in names}
    status = widgets.HTML()
    fig = go.FigureWidget(figure(inputs))
    state = {"inputs": inputs}

    def observe(_change=None) -> None:
        try:
            new = read_inputs(cls, controls, base=state["inputs"])
            result = update(new)
        except GpucommError as exc:
            status.value = f"<span style='{REFUSED_STYLE}'>Refused: {html.escape(str(exc))}</span>"
            return
        with fig.batch_update():
            apply_update(fig, result)
        state["inputs"] = new
        box.inputs = new
        status.value = html.escape(result.summary)

    layout_rows = rows or [names[i:i + 3] for i in range(0, len(names), 3)]
    box = widgets.VBox([widgets.HBox([controls[n] for n in row if n in controls]) for row in layout_rows]
                       + [status, fig])
    box.controls = controls
    box.status = status
    box.figure = fig
    box.inputs = inputs
    box.refresh = observe
    for control in controls.values():
        control.observe(observe, names="value")
    observe()
    return box
