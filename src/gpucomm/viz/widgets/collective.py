"""The live collective cost calculator: controls, one observer, a figure updated in place."""

from __future__ import annotations

import ipywidgets as widgets

from gpucomm.viz.calculators.collective import CONTROL_ROWS, CUSTOM_ONLY, CostInputs, collective_figure, collective_update
from gpucomm.viz.calculators.inputs import check_inputs
from gpucomm.viz.widgets.controls import build_calculator

ROWS = [list(row) for row in CONTROL_ROWS]
"""Rows of controls: the same as the book's live mode in the browser (:mod:`gpucomm.viz.calculators.live`)."""


def build_cost_widget(**overrides) -> widgets.VBox:
    """A live calculator: time (alpha and beta parts), busbw and algbw vs size for one configuration.

    Parameters
    ----------
    **overrides
        Initial values of :class:`gpucomm.viz.calculators.collective.CostInputs` fields (``collective``,
        ``algorithm``, ``msg_bytes``, ``num_ranks``, ``num_nodes``, ``system``, ``link``, ``p2p``,
        ``compare``...). Giving a ``link`` without a ``system`` selects ``system="custom"``.

    Returns
    -------
    ipywidgets.VBox
        Controls (``widget.controls``, a dict by field name), a status line (``widget.status``:
        the time at the chosen size, or what was refused) and a ``go.FigureWidget``
        (``widget.figure``, also ``children[-1]``). Not displayed: the caller displays it.

    Raises
    ------
    GpucommError
        If the initial values are out of range or the model refuses them.
    """
    if "link" in overrides and "system" not in overrides:
        overrides["system"] = "custom"
    inputs = check_inputs(CostInputs(**overrides))
    box = build_calculator(inputs, figure=collective_figure, update=collective_update, rows=ROWS)

    def grey_out_custom_controls(_change=None) -> None:
        # a catalog system fixes link, topology and P2P: say so by disabling their controls
        preset = box.controls["system"].value != "custom"
        for name in CUSTOM_ONLY:
            if name in box.controls:
                box.controls[name].disabled = preset

    box.controls["system"].observe(grey_out_custom_controls, names="value")
    grey_out_custom_controls()
    return box
