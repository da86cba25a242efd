"""The live collective cost calculator: controls, one observer, a figure updated in place."""

from __future__ import annotations

import ipywidgets as widgets
import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.collectives import COLLECTIVES
from gpucomm.cost import collective_cost
from gpucomm.hardware import LINKS
from gpucomm.plots.calculator import Path, cost_curves, cost_figure, size_grid
from gpucomm.units import format_size, format_time


def build_cost_widget(*, collective: str = "all_reduce", link: str = "nvlink3", num_ranks: int = 4,
                      p2p: bool = True, msg_bytes: int = 64 * 2**20) -> widgets.VBox:
    """A live calculator: time and busbw vs size for the chosen collective, link and GPU count.

    Parameters
    ----------
    collective, link, num_ranks, p2p : initial control values (see :func:`gpucomm.cost.collective_cost`).
    msg_bytes : int
        The size whose time, algbw and busbw are printed above the figure.

    Returns
    -------
    ipywidgets.VBox
        Controls, a status line (shows refused inputs instead of raising) and a
        ``go.FigureWidget``. Not displayed: the caller displays it. The figure is
        ``children[-1]``; the controls are reachable as ``widget.controls`` (a dict).
    """
    sizes = size_grid()
    controls = {
        "collective": widgets.Dropdown(options=COLLECTIVES, value=collective, description="collective"),
        "link": widgets.Dropdown(options=[(l.name, k) for k, l in LINKS.items()], value=link, description="link"),
        "num_ranks": widgets.BoundedIntText(value=num_ranks, min=1, max=100_000, description="GPUs"),
        "no_p2p": widgets.Checkbox(value=not p2p, description="no P2P (staged through host memory)"),
        "msg": widgets.Text(value=format_size(msg_bytes).replace(" ", ""), description="size"),
    }
    status = widgets.HTML()
    fig = go.FigureWidget(cost_figure(collective, (Path(link, p2p),), num_ranks, sizes))

    def update(_change=None) -> None:
        from gpucomm.units import parse_size

        try:
            path = Path(controls["link"].value, not controls["no_p2p"].value)
            n = controls["num_ranks"].value
            coll = controls["collective"].value
            size = parse_size(controls["msg"].value)
            time_us, busbw = cost_curves(coll, path, n, sizes)
            point = collective_cost(coll, size, num_ranks=n, link=path.link, p2p=path.p2p)
        except GpucommError as exc:
            status.value = f"<span style='color:#b00'>Refused: {exc}</span>"
            return
        status.value = (f"<b>{coll}</b> of {format_size(point.msg_bytes)} on {n} GPUs: "
                        f"{format_time(point.time_s)}, algbw {point.algbw_bytes_per_s / 1e9:.1f} GB/s, "
                        f"busbw {point.busbw_bytes_per_s / 1e9:.1f} GB/s ({point.protocol} protocol)")
        with fig.batch_update():
            fig.data[0].y, fig.data[1].y = time_us, busbw
            fig.data[0].name = path.label
            fig.layout.title.text = f"{coll} on {n} GPUs (model)"

    for control in controls.values():
        control.observe(update, names="value")
    update()
    box = widgets.VBox([widgets.HBox([controls["collective"], controls["link"]]),
                        widgets.HBox([controls["num_ranks"], controls["msg"], controls["no_p2p"]]), status, fig])
    box.controls = controls
    box.status = status
    return box
