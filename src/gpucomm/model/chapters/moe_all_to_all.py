"""The numbers of ``book/moe_all_to_all.md``: the dispatch and combine all_to_alls of expert parallelism.

Every value comes from the MoE model (:mod:`gpucomm.model.expert_parallel`: model shapes, bytes per GPU, node-limited
routing, DeepEP's published V1 tables), the cost model (:mod:`gpucomm.model.cost`) and the catalog (DGX H100, NDR,
the network efficiency).
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model.cost import collective_cost
from gpucomm.model.expert_parallel import (
    DEEPEP_V1,
    MOE_MODELS,
    all_to_all_bytes_per_gpu,
    moe_layer_all_to_all,
    network_fraction,
    node_limited_network_bytes_per_gpu,
)
from gpucomm.model.fabric import system_fabric
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.hardware import get_network, get_system
from gpucomm.model.units import format_size

__all__ = ["TOKENS", "numbers"]

TOKENS = 4096
"""Tokens per GPU of DeepEP's training / prefill benchmark, the page's setting."""

_NODES = (1, 2, 8)


def _placements() -> dict:
    """EP over 8-GPU DGX H100 nodes: one node (NVLink only), 2 and 8 nodes over NDR, one NDR NIC per GPU."""
    return {1: system_fabric("dgx_h100"), 2: system_fabric("dgx_h100", num_nodes=2, network="ib_ndr"),
            8: system_fabric("dgx_h100", num_nodes=8, network="ib_ndr")}


def _models() -> dict:
    """DeepSeek-V3 and Mixtral 8x7B shapes, and the bytes one GPU sends in a dispatch and a combine."""
    ds, mx = MOE_MODELS["deepseek-v3"], MOE_MODELS["mixtral-8x7b"]
    out: dict = {}
    for key, m in (("ds", ds), ("mx", mx)):
        out.update({f"{key}_hidden": m.hidden_size, f"{key}_experts": m.num_routed_experts,
                    f"{key}_topk": m.experts_per_token, f"{key}_layers": m.num_layers,
                    f"{key}_moe_layers": m.num_moe_layers})
    out.update(ds_max_nodes=ds.max_nodes_per_token, tokens=TOKENS,
               ds_dispatch_size=format_size(all_to_all_bytes_per_gpu(TOKENS, ds.experts_per_token, ds.hidden_size,
                                                                     dtype="fp8")),
               ds_combine_size=format_size(all_to_all_bytes_per_gpu(TOKENS, ds.experts_per_token, ds.hidden_size,
                                                                    dtype="bf16")),
               mx_dispatch_size=format_size(all_to_all_bytes_per_gpu(TOKENS, mx.experts_per_token, mx.hidden_size,
                                                                     dtype="bf16")),
               # quiz 1: Mixtral 8x7B, 2048 tokens per GPU, BF16
               quiz_mx_dispatch_bytes=all_to_all_bytes_per_gpu(2048, mx.experts_per_token, mx.hidden_size, dtype="bf16"))
    return out


def _layers() -> dict:
    """One DeepSeek-V3 MoE layer's dispatch + combine on 1, 2 and 8 DGX H100 and in one NVL72."""
    ds = MOE_MODELS["deepseek-v3"]
    ndr = get_network("ib_ndr")
    out: dict = {"node_name": get_system("dgx_h100").name, "ndr_gbps": ndr.bw_bytes_per_s / 1e9,
                 "net_eff": cal.NET_EFFICIENCY.value}
    layer = {}
    for nodes, fabric in _placements().items():
        t = moe_layer_all_to_all(ds, TOKENS, ep_size=8 * nodes, fabric=fabric)
        layer[nodes] = t
        # what each GPU pushes into the network during the dispatch: its bytes for other nodes over the dispatch time
        net_rate = t.dispatch.msg_bytes * network_fraction(8 * nodes, 8) / t.dispatch.time_s
        out.update({f"l{nodes}_ms": t.time_s * 1e3, f"l{nodes}_fwd_ms": t.forward_time_s * 1e3,
                    f"l{nodes}_net": format_size(round(t.network_bytes_per_gpu)),
                    f"l{nodes}_busbw": t.dispatch.busbw_bytes_per_s / 1e9, f"l{nodes}_net_rate": net_rate / 1e9})
        if nodes > 1:
            claims.require(net_rate < ndr.bw_bytes_per_s, "each GPU's network traffic stays below one NIC's line rate")
    claims.require(layer[8].time_s > layer[2].time_s > layer[1].time_s,
                   "leaving the NVLink domain makes the layer slower, more so on 8 nodes")
    nvl = moe_layer_all_to_all(ds, TOKENS, ep_size=64, fabric=system_fabric("gb200_nvl72"))
    out.update(frac2=network_fraction(16, 8), frac8=network_fraction(64, 8),
               ratio_2_1=layer[2].time_s / layer[1].time_s, ratio_8_1=layer[8].time_s / layer[1].time_s,
               nvl_ms=nvl.time_s * 1e3, nvl_name=get_system("gb200_nvl72").name)
    return out


def _node_limited() -> dict:
    """Network copies of each token on 8 nodes: a balanced all_to_all vs DeepSeek-V3's node-limited routing."""
    ds = MOE_MODELS["deepseek-v3"]
    plain = ds.experts_per_token * network_fraction(64, 8)
    limited = node_limited_network_bytes_per_gpu(TOKENS, ds.hidden_size, num_nodes=8,
                                                 max_nodes_per_token=ds.max_nodes_per_token) / (TOKENS * ds.hidden_size)
    return {"plain_copies": plain, "limited_copies": limited, "limited_ratio": plain / limited,
            "limited_max": ds.max_nodes_per_token}


def _deepep() -> dict:
    """DeepEP V1's published tables, its decode dispatch against one NIC's line rate, and the model's estimate."""
    out: dict = {}
    ndr = get_network("ib_ndr")
    for m in DEEPEP_V1:
        k = f"dep_{m.kernel}_{m.ep_size}"
        out.update({f"{k}_d": m.dispatch_bw_bytes_per_s / 1e9, f"{k}_c": m.combine_bw_bytes_per_s / 1e9})
        if m.dispatch_latency_s is not None:
            out.update({f"{k}_dus": m.dispatch_latency_s * 1e6, f"{k}_cus": m.combine_latency_s * 1e6})
    internode = [m.dispatch_bw_bytes_per_s for m in DEEPEP_V1 if m.kernel == "normal" and m.ep_size > 8]
    claims.require(max(internode) < 1.25 * ndr.bw_bytes_per_s, "DeepEP's internode bandwidths sit around one NIC's rate")
    ll64 = next(m for m in DEEPEP_V1 if m.kernel == "low_latency" and m.ep_size == 64)
    model = moe_layer_all_to_all("deepseek-v3", ll64.tokens_per_gpu, ep_size=64, fabric=_placements()[8]).dispatch
    # the bytes a GPU sends to other nodes, at one NDR NIC's line rate: what DeepEP's decode dispatch is up against
    line_s = model.msg_bytes * network_fraction(64, 8) / ndr.bw_bytes_per_s
    claims.require(line_s < ll64.dispatch_latency_s, "DeepEP's decode dispatch runs below one NIC's line rate")
    claims.require(model.latency_s > model.time_s - ll64.dispatch_latency_s,
                   "most of the gap between the model and DeepEP is the model's fixed (latency) term")
    claims.require(abs(model.transfer_s / ll64.dispatch_latency_s - 1) < 0.3,
                   "the model's transfer term alone is within 30 % of DeepEP's time")
    out.update(dep_inter_min=min(internode) / 1e9, dep_inter_max=max(internode) / 1e9,
               ll_tokens=ll64.tokens_per_gpu, ll_model_dus=model.time_s * 1e6, ll_model_lat_us=model.latency_s * 1e6,
               ll_model_xfer_us=model.transfer_s * 1e6, ll_ratio=model.time_s / ll64.dispatch_latency_s,
               ll_line_us=line_s * 1e6, ll_line_pct=100 * line_s / ll64.dispatch_latency_s,
               ll_all_gbps=model.msg_bytes / ll64.dispatch_latency_s / 1e9,
               ll_xfer_vs_dep=claims.change_phrase(model.transfer_s, ll64.dispatch_latency_s, higher="more",
                                                   lower="less"))
    return out


def _quiz4() -> dict:
    """2 nodes x 8 H100, one NDR NIC per GPU, 1 GiB: a ring all_reduce's busbw against an all_to_all's."""
    ndr = get_network("ib_ndr").bw_bytes_per_s
    fabric = _placements()[2]
    ring = collective_cost("all_reduce", 2**30, num_ranks=16, fabric=fabric, algorithm="ring")
    a2a = collective_cost("all_to_all", 2**30, num_ranks=16, fabric=fabric)
    claims.require(ndr < a2a.busbw_bytes_per_s < 2 * ndr < ring.busbw_bytes_per_s,
                   "on 2 nodes the all_to_all's busbw is about twice one NIC, the ring all_reduce's far above it")
    return {"q4_ar": ring.busbw_bytes_per_s / 1e9, "q4_a2a": a2a.busbw_bytes_per_s / 1e9, "q4_node_nics": 8 * ndr / 1e9}


def numbers() -> dict[str, object]:
    """Every value ``book/moe_all_to_all.md`` glues, by glue key, after checking every claim of its prose.

    Returns
    -------
    dict
        Glue key -> value.

        - Models: ``ds_*``, ``mx_*`` (hidden size, experts, top-k, layers), ``tokens``, ``ds_dispatch_size``,
          ``ds_combine_size``, ``mx_dispatch_size`` (sizes as text), ``quiz_mx_dispatch_bytes`` (bytes).
        - Layers (DeepSeek-V3, :data:`TOKENS` tokens per GPU): ``l{n}_ms``, ``l{n}_fwd_ms`` (ms), ``l{n}_net``
          (text), ``l{n}_busbw``, ``l{n}_net_rate`` (GB/s) for n = 1, 2, 8 nodes; ``frac2``, ``frac8``,
          ``ratio_2_1``, ``ratio_8_1``, ``nvl_ms``, ``nvl_name``, ``node_name``, ``ndr_gbps``, ``net_eff``.
        - Node-limited routing: ``plain_copies``, ``limited_copies``, ``limited_ratio``, ``limited_max``.
        - DeepEP: ``dep_<kernel>_<ep>_{d,c}`` (GB/s), ``dep_low_latency_<ep>_{dus,cus}`` (us), ``dep_inter_min``,
          ``dep_inter_max`` (GB/s); the EP 64 decode dispatch: ``ll_tokens``, ``ll_model_dus``, ``ll_model_lat_us``,
          ``ll_model_xfer_us``, ``ll_line_us`` (us), ``ll_ratio``, ``ll_line_pct`` (%), ``ll_all_gbps`` (GB/s),
          ``ll_xfer_vs_dep`` (phrase).
        - Quiz 4: ``q4_ar``, ``q4_a2a``, ``q4_node_nics`` (GB/s).

    Raises
    ------
    ClaimError
        If the model or DeepEP's tables no longer support a sentence of the page (the message quotes it).

    Notes
    -----
    Sources: the models' Hugging Face configs and the DeepSeek-V3 report (via :data:`MOE_MODELS`), DeepEP's V1
    performance tables (:data:`DEEPEP_V1`), the NDR catalog entry and the fitted network efficiency, and the cost
    model (NCCL's point-to-point rules inside a node, an alpha-beta estimate for all_to_all across nodes).

    Examples
    --------
    >>> numbers()["ds_dispatch_size"]
    '224 MiB'
    """
    return {**_models(), **_layers(), **_node_limited(), **_deepep(), **_quiz4()}
