"""Figure of collectives across nodes: all_reduce busbw vs message size over several networks.

:func:`scale_out_busbw_figure` (``book/scale_out.md``): one line per network, a slider over the node count,
published sweeps as markers. Static HTML: the slider replays data computed in advance by
:func:`gpucomm.model.cost.collective_cost`.
"""

from __future__ import annotations

import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import Fabric
from gpucomm.model.hardware import get_network
from gpucomm.model.units import format_size
from gpucomm.viz.calculators.collective import size_grid
from gpucomm.viz.figures._layout import check_initial, color

__all__ = ["scale_out_busbw_figure"]


def _network_label(fabric: Fabric) -> str:
    """The fabric's name, or its network and NIC count: ``"NDR InfiniBand ..., 1 NIC per GPU"``."""
    if fabric.name:
        return fabric.name
    nics = "1 NIC per GPU" if fabric.nics_per_node is None else f"{fabric.nics_per_node} NICs per node"
    return f"{get_network(fabric.network).name}, {nics}"


def _size_ticks(sizes: list[int]) -> tuple[list[int], list[str]]:
    ticks = [s for s in sizes if s.bit_length() % 4 == 1 or s == sizes[0]]  # every 16x
    return ticks, [format_size(s) for s in ticks]


def scale_out_busbw_figure(fabrics: tuple[Fabric, ...], *, gpus_per_node: int = 8,
                           node_counts: tuple[int, ...] = (1, 2, 4, 16), initial_nodes: int = 2,
                           measured: list[tuple[str, list[int], list[float]]] = ()) -> go.Figure:
    """all_reduce busbw vs message size across nodes, one line per network, slider over the node count.

    Parameters
    ----------
    fabrics : tuple of Fabric
        Networks to compare, one line each: fabrics of two or more nodes (their ``num_nodes`` is replaced by
        the slider's), with the intra-node link, network and NICs per node; named by ``name``, else by the
        network and NIC count. The title names the first fabric's intra-node link.
    gpus_per_node : int
        GPUs per node.
    node_counts : tuple of int
        Node counts offered by the slider (1 = a single node, no network: every line is the same).
    initial_nodes : int
        The slider's starting position.
    measured : list of (label, msg_bytes list, busbw_bytes_per_s list)
        Published sweeps to mark, one trace each (shown at every slider position; say in the label which node
        count they belong to).

    Returns
    -------
    plotly.graph_objects.Figure
        busbw in GB/s (1e9 B/s, per direction) vs message size; algorithm: NCCL-like auto choice
        (hierarchical across nodes).

    Raises
    ------
    GpucommError
        If ``initial_nodes`` is not in ``node_counts``, or a fabric has no network.
    """
    check_initial("node count", initial_nodes, node_counts)
    for f in fabrics:
        if f.network is None:
            raise GpucommError(f"fabric {f.label!r} has no network: expected fabrics of 2 or more nodes "
                               "(make_fabric(link, num_nodes=2, network=...))")
    sizes = size_grid(1024, 16 * 2**30)

    def data(nodes: int) -> list[list[float]]:
        out = []
        for f in fabrics:
            fabric = f.replace(num_nodes=nodes) if nodes > 1 else f.one_node()
            out.append([collective_cost("all_reduce", s, num_ranks=nodes * gpus_per_node, fabric=fabric)
                        .busbw_bytes_per_s / 1e9 for s in sizes])
        return out

    fig = go.Figure()
    for i, (f, y) in enumerate(zip(fabrics, data(initial_nodes))):
        fig.add_trace(go.Scatter(x=sizes, y=y, name=_network_label(f), mode="lines",
                                 line=dict(color=color(i), width=2.5, dash=("solid", "dash", "dot", "dashdot")[i % 4]),
                                 hovertemplate="%{y:.3g} GB/s<extra>%{fullData.name}</extra>"))
    for label, msg_sizes, busbw in measured:
        fig.add_trace(go.Scatter(x=list(msg_sizes), y=[b / 1e9 for b in busbw], name=label, mode="markers",
                                 marker=dict(symbol="x", size=9, color="black"),
                                 hovertemplate="%{y:.4g} GB/s measured<extra>%{fullData.name}</extra>"))

    def title(n: int) -> str:
        where = f"{n} nodes x {gpus_per_node} GPUs" if n > 1 else f"1 node of {gpus_per_node} GPUs (no network)"
        return f"all_reduce busbw, {where} (model)<br><sup>{fabrics[0].link.name} inside each node</sup>"

    steps = [dict(method="update", label=str(n), args=[{"y": data(n)}, {"title.text": title(n)}, list(range(len(fabrics)))])
             for n in node_counts]
    ticks, text = _size_ticks(sizes)
    fig.update_layout(
        title=title(initial_nodes), template="plotly_white", height=640, margin=dict(t=80, b=240),
        xaxis=dict(type="log", tickvals=ticks, ticktext=text, title="message size (per-rank buffer)"),
        yaxis=dict(title="busbw (GB/s, per direction)", rangemode="tozero"),
        legend=dict(orientation="h", y=-0.2),
        sliders=[dict(active=node_counts.index(initial_nodes), steps=steps, y=-0.62, len=0.9, x=0.05,
                      currentvalue=dict(prefix="nodes: "), pad=dict(t=10))])
    return fig
