"""Figure of expert parallelism: the dispatch + combine all_to_alls of one MoE layer vs tokens per GPU.

:func:`moe_all_to_all_figure` (``book/moe_all_to_all.md``): one line per placement of the expert-parallel group
(one NVLink node, nodes over a network, one large NVLink domain), a slider over the EP size, a dropdown over
the model. Static HTML: the controls replay data computed in advance by
:func:`gpucomm.model.expert_parallel.moe_layer_all_to_all`.
"""

from __future__ import annotations

import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.model.expert_parallel import get_moe_model, moe_layer_all_to_all
from gpucomm.model.fabric import Fabric, system_fabric
from gpucomm.model.hardware import get_network, get_system
from gpucomm.viz.figures._layout import check_initial, color, menu, sig, top_title

__all__ = ["moe_all_to_all_figure"]


def _placements(node_system: str, networks: tuple[str, ...], domain_system: str | None):
    """(label, ep_size -> Fabric or None) for each line: None where the placement cannot hold the EP group."""
    node = get_system(node_system)
    g = node.num_gpus

    def one_node(ep: int) -> Fabric | None:
        return system_fabric(node_system) if ep <= g else None

    def across(network: str):
        return lambda ep: (system_fabric(node_system, num_nodes=ep // g, network=network)
                           if ep > g and ep % g == 0 else None)

    out = [(f"one {node.name} node (NVLink)", one_node)]
    out += [(f"{node.name} nodes, {get_network(net).name}, 1 NIC per GPU", across(net)) for net in networks]
    if domain_system is not None:
        domain = get_system(domain_system)
        out.append((f"one {domain.name} NVLink domain",
                    lambda ep: system_fabric(domain_system) if ep <= domain.nvlink_domain_size else None))
    return out


def moe_all_to_all_figure(models: tuple[str, ...] = ("deepseek-v3", "mixtral-8x7b"), *,
                          ep_sizes: tuple[int, ...] = (8, 16, 32, 64), initial_ep: int = 16,
                          tokens_per_gpu: tuple[int, ...] = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192),
                          node_system: str = "dgx_h100", networks: tuple[str, ...] = ("ib_ndr", "eth_200g"),
                          domain_system: str | None = "gb200_nvl72") -> go.Figure:
    """Dispatch + combine time of one MoE layer vs tokens per GPU, slider over the EP size, dropdown over models.

    Parameters
    ----------
    models : tuple of str
        Keys of :data:`gpucomm.model.expert_parallel.MOE_MODELS`, one dropdown entry each (the first shown).
    ep_sizes : tuple of int
        EP group sizes offered by the slider.
    initial_ep : int
        The slider's starting position.
    tokens_per_gpu : tuple of int
        x values: tokens each GPU routes through the layer.
    node_system : str
        Catalog system of the nodes (:data:`gpucomm.model.hardware.nvswitch.SYSTEMS`); an EP group larger than
        it spans ``ep / num_gpus`` of them.
    networks : tuple of str
        Network keys (:data:`gpucomm.model.hardware.network.NETWORKS`) between the nodes, one line each, with
        one NIC per GPU.
    domain_system : str or None
        A system whose whole NVLink domain holds the group (``gb200_nvl72``), one more line; None for none.

    Returns
    -------
    plotly.graph_objects.Figure
        Time in microseconds (FP8 dispatch + BF16 combine, each an all_to_all priced by
        :func:`gpucomm.model.cost.collective_cost`); a placement that cannot hold the group has no line at
        that slider position.

    Raises
    ------
    GpucommError
        Unknown model, system or network; ``initial_ep`` not in ``ep_sizes``.
    """
    check_initial("EP size", initial_ep, ep_sizes)
    if not models:
        raise GpucommError("no model to draw: expected at least one key of MOE_MODELS")
    cfgs = [get_moe_model(m) for m in models]
    placements = _placements(node_system, networks, domain_system)
    tokens = list(tokens_per_gpu)

    def line(cfg, fabric_for, ep: int) -> list:
        fabric = fabric_for(ep)
        if fabric is None:
            return [None] * len(tokens)
        return sig([moe_layer_all_to_all(cfg, t, ep_size=ep, fabric=fabric).time_s * 1e6 for t in tokens])

    def data(ep: int) -> list[list]:
        return [line(cfg, fabric_for, ep) for cfg in cfgs for _, fabric_for in placements]

    fig = go.Figure()
    for m, _cfg in enumerate(cfgs):
        for i, ((label, _), y) in enumerate(zip(placements, data(initial_ep)[m * len(placements):])):
            fig.add_trace(go.Scatter(
                x=tokens, y=y, name=label, mode="lines+markers", visible=m == 0,
                line=dict(color=color(i), width=2.5, dash=("solid", "dash", "dot", "dashdot")[i % 4]),
                hovertemplate="%{x} tokens/GPU: %{y:.4g} us<extra>%{fullData.name}</extra>"))
    n_traces = len(cfgs) * len(placements)

    def title(cfg, ep: int) -> str:
        return (f"{cfg.name}: dispatch (FP8) + combine (BF16) of one MoE layer, EP = {ep} (model)"
                f"<br><sup>hidden {cfg.hidden_size}, top-{cfg.experts_per_token} of {cfg.num_routed_experts} experts;"
                f" balanced routing, every (token, expert) copy sent</sup>")

    buttons = [dict(label=cfg.name, method="update",
                    args=[{"visible": [k // len(placements) == m for k in range(n_traces)]},
                          {"title.text": title(cfg, initial_ep)}]) for m, cfg in enumerate(cfgs)]
    steps = [dict(method="restyle", label=str(ep), args=[{"y": data(ep)}, list(range(n_traces))])
             for ep in ep_sizes]
    fig.update_layout(
        title=top_title(title(cfgs[0], initial_ep)), template="plotly_white", height=640,
        margin=dict(t=110, b=230),
        xaxis=dict(type="log", title="tokens per GPU in the layer", tickvals=tokens),
        yaxis=dict(type="log", title="dispatch + combine time (us)"),
        legend=dict(orientation="h", y=-0.2), updatemenus=[menu("dropdown", buttons)],
        sliders=[dict(active=ep_sizes.index(initial_ep), steps=steps, y=-0.55, len=0.9, x=0.05,
                      currentvalue=dict(prefix="EP size (GPUs): "), pad=dict(t=10))])
    return fig
