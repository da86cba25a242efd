"""The numbers of ``book/scale_out.md``: NIC rates, NCCL's picks across nodes, multi-node busbw, A3 Mega, NVL72.

Every value comes from the catalog (:mod:`gpucomm.model.hardware`: NICs, systems, the network efficiency), the cost
model with NCCL's tuner (:mod:`gpucomm.model.cost`), the bundled cases (:mod:`gpucomm.model.measurements`) and
the validation results (:mod:`gpucomm.model.validation`). The values read from the bundled nccl-tests log of the
A3 Mega run need :mod:`gpucomm.measure`'s parser, so the page passes that log's rows in (:func:`sweep_numbers`).
"""

from __future__ import annotations

from collections.abc import Iterable

from gpucomm.model import claims
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import make_fabric
from gpucomm.model.hardware import NETWORKS, SYSTEMS, get_link, get_network, get_system
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.measurements import case
from gpucomm.model.units import GiB, MiB, format_size
from gpucomm.model.validation import validate

__all__ = ["A3_MEGA", "NDR2", "numbers", "picks_table", "sweep_numbers"]


NDR2 = make_fabric("nvlink4", num_nodes=2, network="ib_ndr")
"""Two DGX H100 over NDR InfiniBand, one 400 Gb/s NIC per GPU."""

A3_MEGA = make_fabric("nvlink4", num_nodes=2, network="tcpxo_200g", nics_per_node=8)
"""Two GCP A3 Mega nodes: 8 H100 each, 8 NICs of 200 Gb/s over GPUDirect-TCPXO."""

_NCCL_NAMES = nt.ALGORITHM_NAMES

_PICK_NODES = (2, 8, 32)
_PICK_SIZES = (64 * 2**10, 16 * MiB, GiB)


def picks_table() -> list[dict]:
    """NCCL's all_reduce pick across nodes of 8 H100 (one NDR NIC per GPU), the model's fastest, and a ring's busbw.

    Returns
    -------
    list of dict
        One row per node count (2, 8, 32) and size (64 KiB, 16 MiB, 1 GiB): ``nodes``, ``msg_bytes``, ``pick``
        (NCCL's tuner, ``"Tree/LL"``), ``best`` (the model's fastest algorithm/protocol pair), ``busbw_gbps`` (of the
        fastest pair, GB/s per rank) and ``ring_gbps`` (Ring/Simple, GB/s per rank), from
        :func:`gpucomm.model.cost.collective_cost`.

    Examples
    --------
    >>> picks_table()[0]["pick"]
    'Tree/LL'
    """
    rows = []
    for nodes in _PICK_NODES:
        for size in _PICK_SIZES:
            fabric = NDR2.replace(num_nodes=nodes)
            c = collective_cost("all_reduce", size, num_ranks=8 * nodes, fabric=fabric)
            r = collective_cost("all_reduce", size, num_ranks=8 * nodes, fabric=fabric, algorithm="ring",
                                protocol="Simple")
            rows.append({"nodes": nodes, "msg_bytes": size,
                         "pick": f"{_NCCL_NAMES[c.nccl_algorithm]}/{c.nccl_protocol}",
                         "best": f"{_NCCL_NAMES[c.algorithm]}/{c.protocol}",
                         "busbw_gbps": c.busbw_bytes_per_s / 1e9, "ring_gbps": r.busbw_bytes_per_s / 1e9})
    return rows


def _catalog() -> dict:
    """NIC rates per port type, NVLink 4 against NDR, and the NICs of each DGX generation."""
    out: dict = {}
    for key, net in NETWORKS.items():
        out.update({f"{key}_gbit": net.port_bits_per_s / 1e9, f"{key}_gbps": net.bw_bytes_per_s / 1e9,
                    f"{key}_nic": net.typical_nic})
    nv4 = get_link("nvlink4")
    out.update(nv4_gbps=nv4.bw_bytes_per_s / 1e9, nv4_over_ndr=nv4.bw_bytes_per_s / get_network("ib_ndr").bw_bytes_per_s,
               net_eff=cal.NET_EFFICIENCY.value)
    for key in ("dgx1_v100", "dgx2", "dgx_a100", "dgx_h100", "dgx_b200", "gb200_nvl72"):
        s = SYSTEMS[key]
        out.update({f"{key}_gpn": s.gpus_per_nic, f"{key}_nics": s.num_nics, f"{key}_nic": get_network(s.nic_key).name,
                    f"{key}_domain": s.nvlink_domain_size, f"{key}_name": s.name})
    ndr = get_network("ib_ndr").bw_bytes_per_s
    out["quiz_node_nic_gbps"] = 4 * ndr / 1e9  # quiz 1: 4 NDR NICs per node of 8 GPUs
    out["quiz_gpu_share_gbps"] = 4 * ndr / 8 / 1e9
    return out


def _picks() -> dict:
    """The claims on NCCL's picks across nodes, and the pipeline-fill term that reorders the two at 16 MiB."""
    picks = {(r["nodes"], r["msg_bytes"]): r for r in picks_table()}
    claims.require(all(picks[(n, 64 * 2**10)]["pick"] == "Tree/LL" for n in _PICK_NODES), "small messages: Tree/LL")
    claims.require(picks[(2, 16 * MiB)]["pick"] == picks[(8, 16 * MiB)]["pick"] == "NVLSTree/Simple"
                   and picks[(32, 16 * MiB)]["pick"] == "Tree/LL128",
                   "16 MiB: NVLSTree on 2 and 8 nodes, Tree/LL128 on 32")
    claims.require(all(picks[(n, GiB)]["pick"] == picks[(n, GiB)]["best"] == "NVLSTree/Simple"
                       and picks[(n, GiB)]["busbw_gbps"] > picks[(n, GiB)]["ring_gbps"] for n in _PICK_NODES),
                   "1 GiB: NVLSTree, above a ring")
    differ = [key for key, row in picks.items() if row["pick"] != row["best"]]
    claims.require(bool(differ) and all(size == 16 * MiB for _, size in differ),
                   "NCCL's pick and the model's fastest differ only at 16 MiB")
    fill = dict(collective_cost("all_reduce", 16 * MiB, num_ranks=16, fabric=NDR2, algorithm="nvls_tree").terms)
    tree_fill = dict(collective_cost("all_reduce", 16 * MiB, num_ranks=16, fabric=NDR2, algorithm="tree",
                                     protocol="LL128").terms)
    claims.require(tree_fill["pipeline_fill"] == 0 and fill["pipeline_fill"] > 0,
                   "pipeline fill: NVLSTree pays it at 16 MiB, Tree/LL128 does not")
    return {"x16_fill_us": fill["pipeline_fill"] * 1e6}


def _busbw_across_nodes() -> dict:
    """8 GiB all_reduce on 2 DGX H100: a ring, NCCL's pick, the hierarchical schedule; A3 Mega against a ring."""
    size = 8 * GiB
    ndr = get_network("ib_ndr").bw_bytes_per_s
    ring2 = collective_cost("all_reduce", size, num_ranks=16, fabric=NDR2, algorithm="ring")
    h2 = collective_cost("all_reduce", size, num_ranks=16, fabric=NDR2, algorithm="hierarchical")
    h2_nccl = collective_cost("all_reduce", size, num_ranks=16, fabric=NDR2)  # what NCCL itself picks
    h4nic = collective_cost("all_reduce", size, num_ranks=16, fabric=NDR2.replace(nics_per_node=4), algorithm="hierarchical")
    hroce = collective_cost("all_reduce", size, num_ranks=16, fabric=NDR2.replace(network="eth_400g"),
                            algorithm="hierarchical")
    one = collective_cost("all_reduce", size, num_ranks=8, fabric="nvlink4")
    one_ring = collective_cost("all_reduce", size, num_ranks=8, fabric="nvlink4", algorithm="ring")
    node_nic = 8 * ndr  # one NDR NIC per GPU
    claims.require(h2_nccl.algorithm == h2_nccl.nccl_algorithm == "nvls_tree",
                   "at 8 GiB on 2 nodes NCCL's pick is the model's fastest: NVLSTree")
    claims.require(abs(h2.time_s / one_ring.time_s - 1) < 0.05 and h4nic.time_s > 1.02 * h2.time_s,
                   "with 8 NICs the hierarchical all_reduce takes a one-node ring's time (NVLink-bound); with 4 it is slower")
    claims.require(abs(hroce.busbw_bytes_per_s / h2.busbw_bytes_per_s - 1) < 0.005, "400 GbE and NDR give the same busbw")
    claims.require(ndr < ring2.busbw_bytes_per_s <= node_nic,
                   "a plain ring's busbw is far above one NIC and at most the node's NIC total")
    claims.require(h2_nccl.busbw_bytes_per_s > node_nic,
                   "NVLSTree's busbw goes beyond the node's NIC total: it sends fewer bytes through each NIC")
    a3_ring = collective_cost("all_reduce", size, num_ranks=16, fabric=A3_MEGA, algorithm="ring")
    a3_node_nic = 8 * get_network("tcpxo_200g").bw_bytes_per_s
    measured = float(case("C08")["busbw_GBps"]) * 1e9
    claims.require(measured > a3_node_nic > a3_ring.busbw_bytes_per_s,
                   "the A3 Mega measurement exceeds its node's NIC total, which a ring could not reach")
    return {"ring2_busbw": ring2.busbw_bytes_per_s / 1e9, "node_nic_gbps": node_nic / 1e9,
            "h2_nccl_algo": _NCCL_NAMES[h2_nccl.nccl_algorithm], "h2_nccl_busbw": h2_nccl.busbw_bytes_per_s / 1e9,
            "h2_busbw": h2.busbw_bytes_per_s / 1e9, "h2_algbw": h2.algbw_bytes_per_s / 1e9,
            "h4nic_busbw": h4nic.busbw_bytes_per_s / 1e9, "hroce_busbw": hroce.busbw_bytes_per_s / 1e9,
            "one_busbw": one.busbw_bytes_per_s / 1e9, "one_ring_algbw": one_ring.algbw_bytes_per_s / 1e9,
            "h2_vs_ring": claims.change_phrase(h2.busbw_bytes_per_s, ring2.busbw_bytes_per_s, higher="above",
                                               lower="below", same="about the same as"),
            "nccl_vs_ring": claims.change_phrase(h2_nccl.busbw_bytes_per_s, ring2.busbw_bytes_per_s, higher="above",
                                                 lower="below"),
            "c08_ring_busbw": a3_ring.busbw_bytes_per_s / 1e9, "c08_node_nic_gbps": a3_node_nic / 1e9}


def _other_collectives() -> dict:
    """all_gather across 2 DGX H100 (a ring, at most the node's NIC total), and the three published all_gathers."""
    out: dict = {}
    size = 8 * GiB
    ag2 = collective_cost("all_gather", size, num_ranks=16, fabric=NDR2)
    claims.require(all(collective_cost(c, size, num_ranks=16, fabric=NDR2).nccl_algorithm == "ring"
                       for c in ("all_gather", "reduce_scatter", "broadcast", "reduce"))
                   and ag2.busbw_bytes_per_s <= 8 * get_network("ib_ndr").bw_bytes_per_s,
                   "across 2 DGX H100 the other collectives run as rings, at most the node's NIC total")
    shared = collective_cost("all_gather", size, num_ranks=16, fabric=NDR2.replace(nics_per_node=4))
    ndr = get_network("ib_ndr").bw_bytes_per_s
    claims.require(4 * ndr / 8 < shared.busbw_bytes_per_s <= 4 * ndr,
                   "quiz 1: with 4 NICs per node a ring's busbw approaches the node's NIC total, far above a GPU's share")
    out.update(ag_size=format_size(size), ag2_busbw=ag2.busbw_bytes_per_s / 1e9,
               ag2_shared_busbw=shared.busbw_bytes_per_s / 1e9)
    checked = {r.case_id: r for r in validate() if r.case_id in ("M01", "M02", "M03")}
    for cid, r in checked.items():
        out.update({f"{cid}_meas": r.measured, f"{cid}_model": r.predicted, f"{cid}_err": 100 * r.error})
    claims.require(max(abs(checked["M01"].error), abs(checked["M02"].error)) < 0.1 and 0.6 < checked["M03"].error < 1.4,
                   "the RDMA and TCPXO all_gathers agree within 10 %; TCPX reaches about half of the model")
    return out


def _a3_mega() -> dict:
    """The A3 Mega 8 GiB all_reduce (published case) against the model, and the model at 8 B, 32 MiB and 1 GiB."""
    c08 = case("C08")
    c08_bytes = int(c08["bytes"])
    model = collective_cost("all_reduce", c08_bytes, num_ranks=int(c08["n_gpus"]), fabric=A3_MEGA)
    m = {size: collective_cost("all_reduce", size, num_ranks=16, fabric=A3_MEGA) for size in (8, 32 * MiB, GiB)}
    return {"c08_size": format_size(c08_bytes), "c08_busbw": float(c08["busbw_GBps"]),
            "c08_algbw": float(c08["algbw_GBps"]), "c08_time_ms": float(c08["time_us"]) / 1e3,
            "c08_model_busbw": model.busbw_bytes_per_s / 1e9, "c08_model_ms": model.time_s * 1e3,
            "c08_err_pct": 100 * (model.time_s / (float(c08["time_us"]) * 1e-6) - 1),
            "c08m_32m_busbw": m[32 * MiB].busbw_bytes_per_s / 1e9, "c08m_1g_busbw": m[GiB].busbw_bytes_per_s / 1e9,
            "c08m_8b_us": m[8].time_s * 1e6}


def sweep_numbers(rows: Iterable) -> dict[str, object]:
    """The A3 Mega sweep's measured busbw at 32 MiB and 1 GiB and its latency floor, against the model.

    Parameters
    ----------
    rows : iterable
        The out-of-place rows of the bundled nccl-tests log of the A3 Mega all_reduce (objects with ``size_bytes``,
        ``busbw_bytes_per_s`` and ``time_us``, as ``gpucomm.measure.logs.nccl_tests.read_bundled_log("C08")
        .out_of_place()`` gives them; the model layer cannot import that parser).

    Returns
    -------
    dict
        ``c08_meas_32m``, ``c08_meas_1g`` (measured busbw, GB/s), ``c08_meas_floor_us`` (smallest time, us),
        ``c08_1g_err_phrase`` (the model's 1 GiB busbw against the log, in words), ``c08_32m_ratio`` (model /
        measured busbw at 32 MiB).

    Raises
    ------
    KeyError
        If the rows have no 32 MiB or no 1 GiB size.
    """
    by_size = {r.size_bytes: r for r in rows}
    floor_us = min(r.time_us for r in by_size.values())
    m32 = collective_cost("all_reduce", 32 * MiB, num_ranks=16, fabric=A3_MEGA)
    m1g = collective_cost("all_reduce", GiB, num_ranks=16, fabric=A3_MEGA)
    err_1g = m1g.busbw_bytes_per_s / by_size[GiB].busbw_bytes_per_s - 1
    return {"c08_meas_32m": by_size[32 * MiB].busbw_bytes_per_s / 1e9,
            "c08_meas_1g": by_size[GiB].busbw_bytes_per_s / 1e9, "c08_meas_floor_us": floor_us,
            "c08_1g_err_phrase": "within 1 % of the measurement" if abs(err_1g) < 0.01 else f"{100 * err_1g:+.0f} % off",
            "c08_32m_ratio": m32.busbw_bytes_per_s / by_size[32 * MiB].busbw_bytes_per_s}


def _nvl72() -> dict:
    """A 1 GiB all_reduce over 72 B200: one NVL72 NVLink domain against 9 DGX B200 over NDR."""
    nvl = collective_cost("all_reduce", GiB, num_ranks=72, fabric="nvlink5")
    nine = collective_cost("all_reduce", GiB, num_ranks=72, fabric=make_fabric("nvlink5", num_nodes=9, network="ib_ndr"),
                           algorithm="hierarchical")
    b200 = get_system("dgx_b200")
    return {"nvl_busbw": nvl.busbw_bytes_per_s / 1e9, "nvl_ms": nvl.time_s * 1e3, "nine_busbw": nine.busbw_bytes_per_s / 1e9,
            "nine_ms": nine.time_s * 1e3, "nvl_ratio": nine.time_s / nvl.time_s,
            "nv5_gbps": get_link("nvlink5").bw_bytes_per_s / 1e9,
            "b200_gbps_per_gpu_net": get_network(b200.nic_key).bw_bytes_per_s * b200.num_nics / b200.num_gpus / 1e9}


def numbers() -> dict[str, object]:
    """Every value ``book/scale_out.md`` glues from the model, by glue key, after checking every claim of its prose.

    Returns
    -------
    dict
        Glue key -> value; bandwidths in GB/s per direction (busbw per rank), times in ms or us as the key says.

        - NICs and systems: ``<network>_gbit`` (Gb/s), ``<network>_gbps``, ``<network>_nic``, ``nv4_gbps``,
          ``nv4_over_ndr``, ``net_eff``, ``<system>_{gpn,nics,nic,domain,name}``; quiz 1: ``quiz_node_nic_gbps``,
          ``quiz_gpu_share_gbps``.
        - NCCL's picks: ``x16_fill_us`` (the table itself: :func:`picks_table`).
        - busbw across nodes (8 GiB, 2 DGX H100 over NDR): ``ring2_busbw``, ``node_nic_gbps``, ``h2_nccl_algo``,
          ``h2_nccl_busbw``, ``h2_busbw``, ``h2_algbw``, ``h4nic_busbw``, ``hroce_busbw``, ``one_busbw``,
          ``one_ring_algbw``, ``h2_vs_ring``, ``nccl_vs_ring`` (phrases), ``c08_ring_busbw``, ``c08_node_nic_gbps``.
        - Other collectives: ``ag_size``, ``ag2_busbw``, ``ag2_shared_busbw``, ``M0{1,2,3}_{meas,model,err}``.
        - A3 Mega: ``c08_size``, ``c08_busbw``, ``c08_algbw``, ``c08_time_ms``, ``c08_model_busbw``, ``c08_model_ms``,
          ``c08_err_pct``, ``c08m_32m_busbw``, ``c08m_1g_busbw``, ``c08m_8b_us`` (the log's own values:
          :func:`sweep_numbers`).
        - NVL72: ``nvl_busbw``, ``nvl_ms``, ``nine_busbw``, ``nine_ms``, ``nvl_ratio``, ``nv5_gbps``,
          ``b200_gbps_per_gpu_net``.

    Raises
    ------
    ClaimError
        If the model or the bundled data no longer support a sentence of the page (the message quotes it).

    Notes
    -----
    Sources: the NIC and system catalog, the network efficiency (a fit, see the validation chapter), NCCL 2.30.7's
    tuner as the cost model reproduces it, the published A3 Mega all_reduce and the three 2-node all_gathers (GCP
    A4, A3 Mega, A3 High) among the validation cases.

    Examples
    --------
    >>> numbers()["h2_nccl_algo"]
    'NVLSTree'
    """
    return {**_catalog(), **_picks(), **_busbw_across_nodes(), **_other_collectives(), **_a3_mega(), **_nvl72()}
