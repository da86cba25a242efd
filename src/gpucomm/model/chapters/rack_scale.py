"""The numbers of ``book/rack_scale.md``: the GB200 NVL72 rack, and a TP/EP group inside it or across 8-GPU nodes.

Every value comes from the catalog (:mod:`gpucomm.model.hardware`: the NVL72 system, its NVLink switch board, the
HGX H100 and B200 systems and their NICs), the cost model with NCCL's tuner (:mod:`gpucomm.model.cost`) and the
validation results (:mod:`gpucomm.model.course`).
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model.cost import collective_cost
from gpucomm.model.course import checked_on, scale_out_bw_per_gpu_bytes_per_s
from gpucomm.model.fabric import system_fabric
from gpucomm.model.hardware import get_gpu, get_network, get_nvswitch, get_system
from gpucomm.model.hardware.nvswitch import switch_board
from gpucomm.model.units import GiB, MiB
from gpucomm.model.validation import CASES, SWEEPS, validate

__all__ = ["GROUP_SIZES", "SYSTEMS_COMPARED", "numbers"]

GROUP_SIZES = (16, 64)
"""GPUs of the TP/EP groups the page places inside one NVL72 or over 8-GPU HGX B200 nodes."""

SYSTEMS_COMPARED = ("dgx_h100", "dgx_b200", "gb200_nvl72")
"""The systems of the page's NVLink-vs-network table and figure."""

_SIZES = (("1m", MiB), ("4g", 4 * GiB))


def _rack() -> dict:
    """The NVL72 rack's hosts, switch trays and ports, and its bandwidths per link, per GPU and over the rack."""
    nvl72 = get_system("gb200_nvl72")
    board = switch_board("gb200_nvl72")
    sw = get_nvswitch(nvl72.nvswitch_key)
    claims.require(board.switch_ports >= board.gpu_links
                   and board.gpu_bw_bytes_per_s == get_gpu(nvl72.gpu_key).nvlink_bw_bytes_per_s,
                   "the rack's switch ports take every GPU link: non-blocking at the GPU's full NVLink rate")
    return {"nvl_gpus": nvl72.num_gpus, "nvl_hosts": nvl72.hosts, "nvl_gpus_per_host": nvl72.num_gpus // nvl72.hosts,
            "nvl_trays": nvl72.switch_trays, "nvl_chips": nvl72.nvswitch_chips,
            "nvl_chips_per_tray": nvl72.nvswitch_chips // nvl72.switch_trays, "nvl_ports_per_chip": sw.ports_per_chip,
            "nvl_ports_per_tray": sw.ports_per_chip * nvl72.nvswitch_chips // nvl72.switch_trays,
            "nvl_links_per_gpu": board.links_per_gpu, "nvl_link_dir": board.link_bw_bytes_per_s / 1e9,
            "nvl_gpu_dir": board.gpu_bw_bytes_per_s / 1e9, "nvl_gpu_bidir_tb": board.gpu_bidir_marketing_bytes_per_s / 1e12,
            "nvl_agg_tb": board.aggregate_bidir_bytes_per_s / 1e12, "nvl_bisect_tb": board.bisection_bytes_per_s / 1e12,
            "nvl_gpu_links": board.gpu_links, "nvl_switch_ports": board.switch_ports,
            "nvl_nic": get_network(nvl72.nic_key).name, "quiz_hosts": nvl72.hosts}


def _domains() -> dict:
    """NVLink against scale-out network per GPU, for HGX H100, HGX B200 and NVL72."""
    out: dict = {}
    for key in SYSTEMS_COMPARED:
        s = get_system(key)
        nv = get_gpu(s.gpu_key).nvlink_bw_bytes_per_s
        net = scale_out_bw_per_gpu_bytes_per_s(key)
        out.update({f"{key}_name": s.name, f"{key}_nv": nv / 1e9, f"{key}_net": net / 1e9, f"{key}_ratio": nv / net,
                    f"{key}_domain": s.nvlink_domain_size})
    claims.require(len({scale_out_bw_per_gpu_bytes_per_s(key) for key in SYSTEMS_COMPARED}) == 1,
                   "the NVL72 rack does not give a GPU more network: the same per-GPU NIC rate as HGX H100 and B200")
    out["quiz_ratio"] = out["gb200_nvl72_ratio"]
    return out


def _placement() -> dict:
    """An all_reduce of 1 MiB and 4 GiB over 16 and 64 GPUs: inside one NVL72 vs over 8-GPU HGX B200 nodes."""
    out: dict = {}
    rack = system_fabric("gb200_nvl72")
    ratios, picks = {}, {}
    for g in GROUP_SIZES:
        over = system_fabric("dgx_b200", num_nodes=g // 8)
        for tag, size in _SIZES:
            a = collective_cost("all_reduce", size, num_ranks=g, fabric=rack)
            b = collective_cost("all_reduce", size, num_ranks=g, fabric=over)
            out.update({f"in{g}_{tag}_us": a.time_s * 1e6, f"out{g}_{tag}_us": b.time_s * 1e6,
                        f"in{g}_{tag}_ms": a.time_s * 1e3, f"out{g}_{tag}_ms": b.time_s * 1e3,
                        f"ratio{g}_{tag}": b.time_s / a.time_s})
            ratios[g, tag], picks[g, tag] = b.time_s / a.time_s, b
            # the time is the model's fastest pair; where NCCL's own tuner picks another algorithm, say both
            for side, c in (("in", a), ("out", b)):
                out[f"{side}{g}_{tag}_algo"] = (c.algorithm if c.algorithm == c.nccl_algorithm
                                                else f"{c.algorithm}; NCCL's tuner: {c.nccl_algorithm}")
    two_ring = collective_cost("all_reduce", 4 * GiB, num_ranks=16, fabric=system_fabric("dgx_b200", num_nodes=2),
                               algorithm="ring")
    ring_ratio = two_ring.time_s / collective_cost("all_reduce", 4 * GiB, num_ranks=16, fabric=rack).time_s
    nvl72 = get_system("gb200_nvl72")
    nic_ratio = get_gpu(nvl72.gpu_key).nvlink_bw_bytes_per_s / scale_out_bw_per_gpu_bytes_per_s("gb200_nvl72")
    claims.require(picks[16, "4g"].algorithm == picks[16, "4g"].nccl_algorithm,
                   "at 4 GiB on 2 nodes the time shown is that of NCCL's own pick")
    claims.require(ring_ratio < nic_ratio / 2 and ratios[16, "4g"] < ring_ratio and "tree" in picks[16, "4g"].nccl_algorithm,
                   "two nodes lose less than the NIC ratio suggests: a ring already uses every NIC of a node, "
                   "and NCCL's tree algorithm sends fewer bytes through each")
    claims.require(all(ratios[64, tag] > ratios[16, tag] for tag, _ in _SIZES),
                   "the gap grows with the node count, for small messages as for large ones")
    out["ring16_4g_ratio"] = ring_ratio
    results = validate()
    out["checked_nvlink"] = checked_on(results, (*SWEEPS, *CASES), transport="nvlink").sentence
    out["checked_network"] = checked_on(results, (*SWEEPS, *CASES), transport="network").sentence
    return out


def numbers() -> dict[str, object]:
    """Every value ``book/rack_scale.md`` glues, by glue key, after checking every claim of its prose.

    Returns
    -------
    dict
        Glue key -> value.

        - The rack: ``nvl_gpus``, ``nvl_hosts``, ``nvl_gpus_per_host``, ``nvl_trays``, ``nvl_chips``,
          ``nvl_chips_per_tray``, ``nvl_ports_per_chip``, ``nvl_ports_per_tray``, ``nvl_links_per_gpu``,
          ``nvl_gpu_links``, ``nvl_switch_ports`` (counts); ``nvl_link_dir``, ``nvl_gpu_dir`` (GB/s per direction),
          ``nvl_gpu_bidir_tb``, ``nvl_agg_tb`` (TB/s, both directions), ``nvl_bisect_tb`` (TB/s per direction);
          ``nvl_nic`` (name); quiz 2's ``quiz_hosts``.
        - NVLink vs network, per system of :data:`SYSTEMS_COMPARED`: ``<system>_{name,nv,net,ratio,domain}`` (GB/s
          per direction per GPU; ratio NVLink/network); quiz 1's ``quiz_ratio``.
        - Placement, per group of :data:`GROUP_SIZES` and size tag (``1m``, ``4g``): ``in{g}_{tag}_{us,ms,algo}``,
          ``out{g}_{tag}_{us,ms,algo}``, ``ratio{g}_{tag}`` (time over nodes / inside the rack);
          ``ring16_4g_ratio`` (the same for a plain ring over 2 nodes); ``checked_nvlink``, ``checked_network``.

    Raises
    ------
    ClaimError
        If the model or the catalog no longer support a sentence of the page (the message quotes it).

    Notes
    -----
    Sources: the GB200 NVL72, HGX H100 and HGX B200 catalog entries (each cites NVIDIA's pages), NCCL 2.30.7's tuner
    as the cost model reproduces it (the rack priced as one 72-GPU NVSwitch domain), and the validation results.

    Examples
    --------
    >>> values = numbers()
    >>> values["nvl_hosts"], values["nvl_trays"]
    (18, 9)
    """
    return {**_rack(), **_domains(), **_placement()}
