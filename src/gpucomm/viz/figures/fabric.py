"""Figures of rack-scale NVLink domains and of the scale-out fabric (``book/rack_scale.md``, ``book/scale_out_fabric.md``).

:func:`domain_bandwidth_figure`: each GPU's bandwidth inside its NVLink domain and out of it, from the catalog.
:func:`placement_figure`: all_reduce time of a TP/EP group inside one NVL72 rack vs across 8-GPU nodes.
:func:`oversubscription_figure`: all_reduce busbw across nodes as the leaf switches are oversubscribed.
Every value comes from :mod:`gpucomm.model`; cartesian traces only (the book ships plotly's cartesian bundle).
"""

from __future__ import annotations

import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import Fabric, system_fabric
from gpucomm.model.fat_tree import oversubscribed_fabric
from gpucomm.model.hardware import get_gpu, get_network, get_system
from gpucomm.model.units import format_size
from gpucomm.viz.calculators.collective import size_grid
from gpucomm.viz.figures._layout import color, sig

__all__ = ["domain_bandwidth_figure", "placement_figure", "oversubscription_figure"]


def _domain_rates(key: str) -> tuple[float, float]:
    """(NVLink, network) bandwidth of one GPU of system ``key``, per direction, nominal, bytes/s."""
    system = get_system(key)
    if system.nic_key is None or not system.num_nics:
        raise GpucommError(f"system {key!r} has no scale-out NICs in the catalog: expected a system with NICs")
    nvlink = get_gpu(system.gpu_key).nvlink_bw_bytes_per_s or 0.0
    network = get_network(system.nic_key).bw_bytes_per_s * system.num_nics / system.num_gpus
    return nvlink, network


def domain_bandwidth_figure(systems: tuple[str, ...] = ("dgx_h100", "dgx_b200", "gb200_nvl72")) -> go.Figure:
    """Each GPU's bandwidth inside its NVLink domain and out of it (scale-out NICs), per direction, nominal.

    Parameters
    ----------
    systems : tuple of str
        Keys of :data:`gpucomm.model.hardware.nvswitch.SYSTEMS` with NICs in the catalog.

    Returns
    -------
    plotly.graph_objects.Figure
        Grouped bars in GB/s (1e9 B/s): the GPU's NVLink (:attr:`~gpucomm.model.hardware.gpus.GPU.nvlink_bw_bytes_per_s`)
        and its share of the system's NICs (port rate x NICs / GPUs), with the NVLink domain size and the ratio in
        the hover text. Catalog rates, no efficiency applied.

    Raises
    ------
    GpucommError
        An unknown system, or one without NICs in the catalog.
    """
    names, nvlink, network, hover = [], [], [], []
    for key in systems:
        system = get_system(key)
        nv, net = _domain_rates(system.key)
        names.append(system.name.split(" / ")[0])  # short enough for a phone's axis
        nvlink.append(nv / 1e9)
        network.append(net / 1e9)
        hover.append(f"NVLink domain: {system.nvlink_domain_size} GPUs; NVLink / network = {nv / net:.0f}x")
    fig = go.Figure()
    fig.add_trace(go.Bar(x=names, y=nvlink, name="inside the NVLink domain (NVLink)", marker_color=color(2),
                         customdata=hover, hovertemplate="%{y:.0f} GB/s<br>%{customdata}<extra>NVLink</extra>"))
    fig.add_trace(go.Bar(x=names, y=network, name="leaving it (its share of the scale-out NICs)", marker_color=color(0),
                         customdata=hover, hovertemplate="%{y:.0f} GB/s<br>%{customdata}<extra>network</extra>"))
    fig.update_layout(
        barmode="group", template="plotly_white", height=480, margin=dict(t=100, b=110),
        title="Per-GPU bandwidth, one direction:<br>inside the NVLink domain vs out of it<br>"
              "<sup>catalog rates, no efficiency applied</sup>",
        yaxis=dict(title="GB/s per GPU, per direction", type="log"),
        legend=dict(orientation="h", y=-0.15))
    return fig


def placement_figure(group_sizes: tuple[int, ...] = (16, 64), *, inside: str = "gb200_nvl72",
                     across: str = "dgx_b200") -> go.Figure:
    """all_reduce time of a group (TP or EP) placed inside one NVLink domain vs spread over 8-GPU nodes.

    Parameters
    ----------
    group_sizes : tuple of int
        GPUs in the group: at most the domain of ``inside`` and a multiple of the ``across`` node's GPUs.
    inside : str
        System whose NVLink domain holds the whole group (default: GB200 NVL72).
    across : str
        System of the nodes the group is spread over, joined by their own NICs (default: DGX/HGX B200).

    Returns
    -------
    plotly.graph_objects.Figure
        Time in microseconds vs message size (per-rank buffer, 1 KiB to 4 GiB), log-log, one solid line per
        group inside the domain and one dashed line across nodes, from
        :func:`gpucomm.model.cost.collective_cost` (NCCL's choice of algorithm; hover shows it).

    Raises
    ------
    GpucommError
        A group larger than the domain, or not a multiple of the nodes' GPUs, or fewer than 2 GPUs.
    """
    in_sys, out_sys = get_system(inside), get_system(across)
    for g in group_sizes:
        if not isinstance(g, int) or g < 2 or g > in_sys.nvlink_domain_size or g % out_sys.num_gpus:
            raise GpucommError(f"group size {g!r} is not valid: expected an integer from 2 to "
                               f"{in_sys.nvlink_domain_size} that is a multiple of {out_sys.num_gpus}")
    sizes = size_grid(1024, 4 * 2**30)
    fig = go.Figure()
    for i, g in enumerate(group_sizes):
        nodes = g // out_sys.num_gpus
        placements = ((f"{g} GPUs inside one {in_sys.name}", system_fabric(in_sys.key), "solid"),
                      (f"{g} GPUs over {nodes} x {out_sys.name}" if nodes > 1 else f"{g} GPUs in one {out_sys.name}",
                       system_fabric(out_sys.key, num_nodes=nodes), "dash"))
        for label, fabric, dash in placements:
            costs = [collective_cost("all_reduce", s, num_ranks=g, fabric=fabric) for s in sizes]
            fig.add_trace(go.Scatter(
                x=sizes, y=sig([c.time_s * 1e6 for c in costs]), name=label, mode="lines",
                line=dict(color=color(i), dash=dash, width=2.5),
                customdata=[f"{c.algorithm}/{c.protocol}, busbw {c.busbw_bytes_per_s / 1e9:.0f} GB/s" for c in costs],
                hovertemplate="%{y:.4g} us<br>%{customdata}<extra>%{fullData.name}</extra>"))
    ticks = [s for s in sizes if s.bit_length() % 4 == 1 or s == sizes[0]]
    fig.update_layout(
        template="plotly_white", height=540, margin=dict(t=100, b=150),
        title="all_reduce of a TP/EP group (model):<br>inside one NVLink domain vs across nodes<br>"
              "<sup>across nodes: the nodes' own NICs</sup>",
        xaxis=dict(type="log", tickvals=ticks, ticktext=[format_size(s) for s in ticks],
                   title="message size (per-rank buffer)"),
        yaxis=dict(type="log", title="time (us)"), legend=dict(orientation="h", y=-0.22))
    return fig


def oversubscription_figure(fabric: Fabric, *, ratios: tuple[int, ...] = (1, 2, 4),
                            node_counts: tuple[int, ...] = (2, 4, 8, 16), msg_bytes: int = 2**30) -> go.Figure:
    """all_reduce busbw across nodes vs node count, one line per leaf oversubscription (worst case: every byte crosses).

    Parameters
    ----------
    fabric : Fabric
        A fabric of 2 or more nodes with its NICs per node (:func:`gpucomm.model.fabric.system_fabric`); its node
        count is replaced by each of ``node_counts``.
    ratios : tuple of int
        Leaf oversubscriptions ``k`` of ``k:1`` whose share is a whole number of the node's NICs.
    node_counts : tuple of int
        Node counts on the x axis, each >= 2.
    msg_bytes : int
        all_reduce size, bytes (per-rank buffer).

    Returns
    -------
    plotly.graph_objects.Figure
        busbw in GB/s (per direction) vs nodes, from :func:`gpucomm.model.cost.collective_cost` on
        :func:`gpucomm.model.fat_tree.oversubscribed_fabric` with every byte crossing the spine; hover shows NCCL's
        algorithm. The 1:1 line is also what a job whose nodes share one rail leaf per rail gets at any ratio.

    Raises
    ------
    GpucommError
        A single-node fabric, a node count below 2, or a ratio the node's NICs cannot express.
    """
    if fabric.num_nodes < 2:
        raise GpucommError(f"fabric {fabric.label!r} has one node: expected a fabric of 2 or more nodes")
    if any(not isinstance(n, int) or n < 2 for n in node_counts):
        raise GpucommError(f"node counts {node_counts!r} are not valid: expected integers of 2 or more")
    gpus = fabric.gpus_per_node or fabric.nics_per_node
    fig = go.Figure()
    for i, k in enumerate(ratios):
        costs = [collective_cost("all_reduce", msg_bytes, num_ranks=n * gpus,
                                 fabric=oversubscribed_fabric(fabric.replace(num_nodes=n), k)) for n in node_counts]
        fig.add_trace(go.Scatter(
            x=list(node_counts), y=sig([c.busbw_bytes_per_s / 1e9 for c in costs]), mode="lines+markers",
            name=f"{k}:1 leaf" + (" (non-blocking)" if k == 1 else ""), line=dict(color=color(i), width=2.5),
            customdata=[f"{c.algorithm}/{c.protocol}" for c in costs],
            hovertemplate="%{y:.0f} GB/s, %{customdata}<extra>%{fullData.name}</extra>"))
    fig.update_layout(
        template="plotly_white", height=480, margin=dict(t=100, b=110),
        title=f"all_reduce of {format_size(msg_bytes)} across nodes<br>vs leaf oversubscription (model)<br>"
              f"<sup>{fabric.label.split(' / ')[0]}; every byte crosses the spine</sup>",
        xaxis=dict(type="log", tickvals=list(node_counts), title=f"nodes ({gpus} GPUs each)"),
        yaxis=dict(title="busbw (GB/s, per direction)", rangemode="tozero"), legend=dict(orientation="h", y=-0.2))
    return fig
