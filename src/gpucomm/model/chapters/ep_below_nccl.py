"""The numbers of ``book/ep_below_nccl.md`` (Expert parallelism below NCCL).

Sections: DeepSeek-V3 and the EP 64 example (8 DGX H100 nodes on NDR InfiniBand); the bytes of one token in DeepEP V1's
low-latency format and DeepEP's "RDMA bandwidth" formula against its published table; one dispatch of a decode batch
and of a prefill chunk (line rate, the model's NCCL all_to_all, its latency share); DeepEP's measured kernels against
line rate; network copies per token and the worst-case receive slots; where the network model was checked; and the
self-check answers.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model.course import checked_on
from gpucomm.model.ep_kernels import (
    dispatch_balance,
    latency_bound_tokens,
    ll_bytes_per_token,
    ll_combine_copy_bytes,
    ll_dispatch_copy_bytes,
    ll_logical_bw_bytes_per_s,
    ll_receive_slots,
    network_copies_per_token,
)
from gpucomm.model.expert_parallel import DEEPEP_V1, MOE_MODELS, network_fraction
from gpucomm.model.fabric import system_fabric
from gpucomm.model.hardware import get_network, get_system
from gpucomm.model.units import format_size
from gpucomm.model.validation import CASES, SWEEPS, validate

__all__ = ["EP", "MODEL", "NODES", "numbers"]

MODEL = "deepseek-v3"
EP, NODES = 64, 8
"""The chapter's example: EP 64 over 8 nodes, as DeepEP V1's published rows."""
SYSTEM, NETWORK = "dgx_h100", "ib_ndr"
Q1_TOKENS, Q1_EP = 256, 32
"""Self-check 1: ``num_max_dispatch_tokens_per_rank`` and the EP size."""
Q5_EP, Q5_NODES = 16, 2
"""Self-check 5: a prefill chunk over two nodes."""


def _deepep_row(kernel: str, ep_size: int):
    return next(m for m in DEEPEP_V1 if m.kernel == kernel and m.ep_size == ep_size)


def _setup() -> dict[str, object]:
    ds, nic = MOE_MODELS[MODEL], get_network(NETWORK)
    return {"hidden": ds.hidden_size, "topk": ds.experts_per_token, "experts": ds.num_routed_experts,
            "max_nodes": ds.max_nodes_per_token, "ep": EP, "nodes": NODES, "node_name": get_system(SYSTEM).name,
            "nic_name": nic.name, "nic_gbps": nic.bw_bytes_per_s / 1e9}


def _token_bytes() -> dict[str, object]:
    ds, nic_bw = MOE_MODELS[MODEL], get_network(NETWORK).bw_bytes_per_s
    # DeepEP's "RDMA bandwidth" is every message over the time: the formula against every low-latency row
    dev = max(abs(ll_logical_bw_bytes_per_s(m.tokens_per_gpu, ds.experts_per_token, ds.hidden_size, t, direction=d)
                  / bw - 1)
              for m in DEEPEP_V1 if m.kernel == "low_latency"
              for d, t, bw in (("dispatch", m.dispatch_latency_s, m.dispatch_bw_bytes_per_s),
                               ("combine", m.combine_latency_s, m.combine_bw_bytes_per_s)))
    ll8 = _deepep_row("low_latency", 8)
    claims.require(ll8.dispatch_bw_bytes_per_s > nic_bw, "DeepEP's EP 8 low-latency figure is more than one NIC carries")
    return {"copy_d": ll_dispatch_copy_bytes(ds.hidden_size), "copy_c": ll_combine_copy_bytes(ds.hidden_size),
            "n_scales": ds.hidden_size // 128,  # one float32 scale per 128 FP8 values (DeepEP's internode_ll.cu)
            "tok_d": format_size(ll_bytes_per_token(ds, direction="dispatch")),
            "tok_c": format_size(ll_bytes_per_token(ds, direction="combine")),
            "bw_dev_pct": 100 * dev, "dep_ll8_bw": ll8.dispatch_bw_bytes_per_s / 1e9}


def _decode_and_prefill() -> dict[str, object]:
    ds, nic_bw = MOE_MODELS[MODEL], get_network(NETWORK).bw_bytes_per_s
    ll64, n64 = _deepep_row("low_latency", EP), _deepep_row("normal", EP)
    decode, prefill = ll64.tokens_per_gpu, n64.tokens_per_gpu  # DeepEP's batches at EP 64: 128 and 4096 per GPU
    fab = system_fabric(SYSTEM, num_nodes=NODES, network=NETWORK)
    out: dict[str, object] = {}
    bal = {}
    for tag, tokens in (("dec", decode), ("pre", prefill)):
        b = bal[tag] = dispatch_balance(ds, tokens, ep_size=EP, fabric=fab)
        out.update({f"{tag}_tokens": tokens, f"{tag}_bytes": format_size(b.dispatch_bytes_per_gpu),
                    f"{tag}_net": format_size(round(b.network_bytes_per_gpu)), f"{tag}_line_us": b.line_rate_s * 1e6,
                    f"{tag}_nccl_us": b.nccl.time_s * 1e6, f"{tag}_lat_pct": 100 * b.latency_share,
                    f"{tag}_bound": claims.compare_word(b.latency_share, 0.5, higher="mostly latency",
                                                       lower="mostly transfer")})
    claims.require(bal["dec"].latency_share > 0.5 > bal["pre"].latency_share,
                   "the decode dispatch is mostly latency in the model, the prefill dispatch mostly transfer")
    cross = latency_bound_tokens(ds, ep_size=EP, fabric=fab)
    claims.require(decode < cross < prefill, "the balance tips between the decode batch and the prefill chunk")
    line_share = bal["dec"].line_rate_s / ll64.dispatch_latency_s
    claims.require(0.5 < line_share < 1, "DeepEP's decode dispatch takes longer than line rate, and mostly moves bytes")
    # the normal kernels' "bottleneck bandwidth" counts a token once per target node, its own node included
    n_net_bw = n64.dispatch_bw_bytes_per_s * network_fraction(EP, EP // NODES)
    claims.require(0.75 < n_net_bw / nic_bw < 1, "the normal kernels' network share is close to, and below, one NIC's rate")
    out.update({
        "bytes_ratio": bal["pre"].dispatch_bytes_per_gpu / bal["dec"].dispatch_bytes_per_gpu, "cross_tokens": cross,
        "dep_ll_us": ll64.dispatch_latency_s * 1e6, "dep_ll_bw": ll64.dispatch_bw_bytes_per_s / 1e9,
        "dep_ll_bw_ours": ll_logical_bw_bytes_per_s(decode, ds.experts_per_token, ds.hidden_size,
                                                    ll64.dispatch_latency_s, direction="dispatch") / 1e9,
        "dep_ll_line_pct": 100 * line_share,
        "dep_vs_model": claims.compare_word(bal["dec"].nccl.time_s, ll64.dispatch_latency_s, higher="longer",
                                            lower="shorter"),
        "dep_n_bw": n64.dispatch_bw_bytes_per_s / 1e9, "dep_n_net_bw": n_net_bw / 1e9,
        "dep_n_net_pct": 100 * n_net_bw / nic_bw,
    })
    return out


def _copies_and_slots() -> dict[str, object]:
    ds = MOE_MODELS[MODEL]
    copies = network_copies_per_token(ds, ep_size=EP, gpus_per_node=EP // NODES)
    slots, filled = ll_receive_slots(ds, _deepep_row("low_latency", EP).tokens_per_gpu, ep_size=EP)
    claims.require(copies.low_latency > copies.node_limited, "the low-latency kernels send more network copies per token")
    claims.require(slots / filled == ds.num_routed_experts / ds.experts_per_token, "the slots over the fill are E / k")
    members = (*SWEEPS, *CASES)
    claims.require(not any(m.collective == "all_to_all" and m.fabric.num_nodes > 1 for m in members),
                   "no all_to_all across nodes is among the bundled measurements")
    return {"ll_copies": copies.low_latency, "nl_copies": copies.node_limited,
            "copies_ratio": copies.low_latency / copies.node_limited,
            "slots": slots, "filled": filled, "slots_ratio": slots / filled,
            "checked_network": checked_on(validate(), members, transport="network").sentence}


def _self_check() -> dict[str, object]:
    ds = MOE_MODELS[MODEL]
    q1_slots, q1_filled = ll_receive_slots(ds, Q1_TOKENS, ep_size=Q1_EP)
    two = system_fabric(SYSTEM, num_nodes=Q5_NODES, network=NETWORK)
    q5 = dispatch_balance(ds, _deepep_row("normal", EP).tokens_per_gpu, ep_size=Q5_EP, fabric=two)
    return {"q1_tokens": Q1_TOKENS, "q1_ep": Q1_EP, "q1_local": ds.num_routed_experts // Q1_EP,
            "q1_slots": q1_slots, "q1_filled": round(q1_filled), "quiz_slots_ratio": q1_slots / q1_filled,
            "q5_ep": Q5_EP, "q5_bytes": format_size(q5.dispatch_bytes_per_gpu),
            "q5_remote_pct": 100 * network_fraction(Q5_EP, Q5_EP // Q5_NODES),
            "quiz_line_us": q5.line_rate_s * 1e6, "quiz_net": format_size(round(q5.network_bytes_per_gpu))}


def numbers() -> dict[str, object]:
    """Every number ``book/ep_below_nccl.md`` glues, by glue key.

    Returns
    -------
    dict of str to object
        Setup: ``hidden``, ``topk``, ``experts``, ``max_nodes``, ``ep``, ``nodes``, ``node_name``, ``nic_name``,
        ``nic_gbps`` (GB/s per direction). One token: ``copy_d``/``copy_c`` (bytes per message), ``n_scales``,
        ``tok_d``/``tok_c`` (sizes), ``bw_dev_pct`` (%), ``dep_ll8_bw`` (GB/s). Decode and prefill (``dec_*``,
        ``pre_*``): ``_tokens`` per GPU, ``_bytes``/``_net`` (sizes), ``_line_us``/``_nccl_us`` (us), ``_lat_pct`` (%),
        ``_bound`` (words); ``bytes_ratio``, ``cross_tokens``, ``dep_ll_us`` (us), ``dep_ll_bw``, ``dep_ll_bw_ours``,
        ``dep_n_bw``, ``dep_n_net_bw`` (GB/s), ``dep_ll_line_pct``, ``dep_n_net_pct`` (%), ``dep_vs_model`` (word).
        Copies and slots: ``ll_copies``, ``nl_copies``, ``copies_ratio``, ``slots``, ``filled``, ``slots_ratio``,
        ``checked_network`` (sentence). Self-check: ``q1_*``, ``quiz_slots_ratio``, ``q5_*``, ``quiz_line_us`` (us),
        ``quiz_net``.

    Raises
    ------
    ClaimError
        If the numbers contradict a sentence of the page (each :func:`gpucomm.model.claims.require` names it).

    Notes
    -----
    Sources: DeepEP V1's message format and published table (:mod:`gpucomm.model.ep_kernels`,
    :data:`gpucomm.model.expert_parallel.DEEPEP_V1`, DeepEP at commit 567632dd), DeepSeek-V3's configuration
    (:data:`gpucomm.model.expert_parallel.MOE_MODELS`), the system and network catalog, the all_to_all cost model, and
    :func:`gpucomm.model.validation.validate`.
    """
    return {**_setup(), **_token_bytes(), **_decode_and_prefill(), **_copies_and_slots(), **_self_check()}
