"""The numbers of ``book/nvswitch.md``: a point-to-point mesh against NVSwitch, the boards' port arithmetic, NVLS.

Every value comes from the catalog (:mod:`gpucomm.model.hardware`), the cost model (:mod:`gpucomm.model.cost`),
the TP and serving models (:mod:`gpucomm.model.tp`, :mod:`gpucomm.model.planning`) or the bundled measurements
(:mod:`gpucomm.model.measurements`: NVIDIA's blog table, stas00's NVLS and ring runs on 8x H200).
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model.cost import collective_cost, pair_bw_bytes_per_s, per_gpu_bw_bytes_per_s, wire_bytes_per_link
from gpucomm.model.course import checked_on
from gpucomm.model.fabric import make_fabric
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.hardware import get_gpu, get_link, get_nvswitch, get_system
from gpucomm.model.hardware.nvswitch import switch_board
from gpucomm.model.measurements import NVIDIA_BLOG_TP2_THROUGHPUT, case
from gpucomm.model.planning import request_throughput
from gpucomm.model.tp import get_model, tp_forward_comm
from gpucomm.model.units import GiB
from gpucomm.model.validation import CASES, SWEEPS, validate

__all__ = ["BOARD_NAMES", "MESH_SIZE", "board_table", "numbers"]

MESH_SIZE = 8
"""GPUs of NVIDIA's hypothetical point-to-point H200 board (the blog's full mesh)."""

BOARD_NAMES = {"dgx_a100": "HGX/DGX A100", "dgx_h100": "HGX/DGX H100, H200", "dgx_b200": "HGX/DGX B200",
               "gb200_nvl72": "GB200 NVL72 rack"}
"""The systems of the page's port-arithmetic table, by catalog key, with the names the page prints."""

_BLOG_20GB_S = {"mesh": 150e-3, "switch": 22e-3}
"""The blog's "150 ms at 128 GB/s, 22 ms at 900 GB/s" for one query's 20 GB of TP synchronisation (s)."""


def board_table() -> list[dict]:
    """The port arithmetic of the HGX boards and the NVL72 rack, one row per system of :data:`BOARD_NAMES`.

    Returns
    -------
    list of dict
        Per system: its name, NVSwitch generation, GPUs, links per GPU, GB/s per link and per GPU (per direction),
        switch chips, ports per chip, GPU links / switch ports, and whether the switch reduces (NVLS); all read from
        :func:`gpucomm.model.hardware.nvswitch.switch_board`, whose catalog entries cite their sources.

    Examples
    --------
    >>> [row["GPUs"] for row in board_table()]
    [8, 8, 8, 72]
    """
    rows = []
    for key, name in BOARD_NAMES.items():
        b = switch_board(key)
        rows.append({
            "system": name, "NVSwitch": get_nvswitch(get_system(key).nvswitch_key).name, "GPUs": b.num_gpus,
            "links per GPU": b.links_per_gpu, "per link, per direction (GB/s)": b.link_bw_bytes_per_s / 1e9,
            "per GPU, per direction (GB/s)": b.gpu_bw_bytes_per_s / 1e9, "switch chips": b.switch_chips,
            "ports per chip": b.ports_per_chip, "GPU links / switch ports": f"{b.gpu_links} / {b.switch_ports}",
            "in-switch reduction (NVLS)": "yes" if b.nvls else "no",
        })
    return rows


def _blog_table() -> dict:
    """NVIDIA's mesh-vs-switch table per direction, and the '20 GB takes 150 ms' query."""
    out: dict = {}
    nv4 = get_link("nvlink4")
    mesh = make_fabric("nvlink4", topology="mesh", mesh_size=MESH_SIZE)
    switch = make_fabric("nvlink4")
    pair_dir = pair_bw_bytes_per_s(mesh)
    out.update(nv4_dir=nv4.bw_bytes_per_s / 1e9, nv4_bidir=nv4.bidir_marketing_bytes_per_s / 1e9,
               pair_dir=pair_dir / 1e9, pair_bidir=2 * pair_dir / 1e9, peers=MESH_SIZE - 1)
    for n in (2, 4, 8):
        out[f"mesh_nom_{n}"] = (n - 1) * pair_dir / 1e9  # n-1 private links in use, per direction
        out[f"mesh_eff_{n}"] = per_gpu_bw_bytes_per_s(mesh, n) / 1e9
        out[f"sw_eff_{n}"] = per_gpu_bw_bytes_per_s(switch, n) / 1e9
    out["eff_nv4_pct"] = 100 * cal.RING_EFFICIENCY["nvlink4"].value
    claims.require(per_gpu_bw_bytes_per_s(mesh, 2) < per_gpu_bw_bytes_per_s(switch, 2) / (MESH_SIZE - 2)
                   and abs(per_gpu_bw_bytes_per_s(mesh, 8) / per_gpu_bw_bytes_per_s(switch, 8) - 1) < 0.05,
                   "two GPUs on the mesh get one private link; with eight the mesh catches up in bandwidth")

    # "20 GB takes 150 ms": one Llama 3.1 70B prefill of 8K tokens at TP=2
    model = get_model("llama-3-70b")
    pre_sw = tp_forward_comm(model, tp_size=2, num_tokens=8192, fabric="nvlink4")
    pre_mesh = tp_forward_comm(model, tp_size=2, num_tokens=8192, fabric=mesh)
    query_bytes = pre_sw.msg_bytes * pre_sw.all_reduces_per_pass
    wire = wire_bytes_per_link("all_reduce", query_bytes, num_ranks=2, algorithm="ring")  # per direction, per GPU
    out.update(n_ar=pre_sw.all_reduces_per_pass, msg_mib=pre_sw.msg_bytes / 2**20, query_gib=query_bytes / GiB,
               query_gb=query_bytes / 1e9, wire_gb=wire / 1e9, nom_mesh_ms=wire / pair_dir * 1e3,
               nom_sw_ms=wire / nv4.bw_bytes_per_s * 1e3, model_mesh_ms=pre_mesh.comm_per_pass_s * 1e3,
               model_sw_ms=pre_sw.comm_per_pass_s * 1e3,
               model_ratio=pre_mesh.comm_per_pass_s / pre_sw.comm_per_pass_s,
               model_sw_alpha_pct=100 * pre_sw.per_all_reduce.latency_s / pre_sw.per_all_reduce.time_s)
    claims.require(wire / pair_dir > 2 * _BLOG_20GB_S["mesh"] and wire / nv4.bw_bytes_per_s > 2 * _BLOG_20GB_S["switch"]
                   and pre_mesh.comm_per_pass_s / pre_sw.comm_per_pass_s < 7,
                   "the times are more than twice the blog's, and the model's NVSwitch advantage is below 7x")
    out["q1_mesh_ms"] = GiB / pair_dir * 1e3
    out["q1_sw_ms"] = GiB / nv4.bw_bytes_per_s * 1e3
    return out


def _boards() -> dict:
    """DGX-1, the HGX boards' port arithmetic, NVL72's '130 TB/s' and bisection, NVSwitch generations."""
    v100 = get_gpu("v100_sxm2")
    out: dict = {"v100_links": v100.nvlink_links, "v100_link_dir": v100.nvlink_bw_bytes_per_s / v100.nvlink_links / 1e9,
                 "v100_dir": v100.nvlink_bw_bytes_per_s / 1e9, "dgx1_gpus": get_system("dgx1_v100").num_gpus}
    h100b, b200b, nvl72 = (switch_board(k) for k in ("dgx_h100", "dgx_b200", "gb200_nvl72"))
    claims.require(b200b.switch_chips <= h100b.switch_chips and b200b.gpu_bw_bytes_per_s == 2 * h100b.gpu_bw_bytes_per_s
                   and b200b.link_bw_bytes_per_s == 2 * h100b.link_bw_bytes_per_s,
                   "HGX B200 has no more switch chips than HGX H100, yet twice the per-GPU bandwidth: links twice as fast")
    out.update(h100_chips=h100b.switch_chips, h100_links=h100b.links_per_gpu, b200_chips=b200b.switch_chips,
               port_bidir=2 * get_nvswitch("nvswitch3").port_bw_bytes_per_s / 1e9,
               h100_ports=h100b.switch_ports, h100_gpu_links=h100b.gpu_links,
               chip3_tbps=h100b.chip_bidir_marketing_bytes_per_s / 1e12,
               chip3_tbit=h100b.chip_bidir_marketing_bytes_per_s * 8 / 1e12, chip3_ports=h100b.ports_per_chip,
               h100_bisect_tb=h100b.bisection_bytes_per_s / 1e12, nvl72_chips=nvl72.switch_chips,
               nvl72_links=nvl72.gpu_links, nvl72_ports=nvl72.switch_ports,
               nvl72_agg_tb=nvl72.aggregate_bidir_bytes_per_s / 1e12,
               nvl72_bisect_tb=nvl72.bisection_bytes_per_s / 1e12, nvl72_gpu_dir=nvl72.gpu_bw_bytes_per_s / 1e9,
               nvl72_gpu_bidir=nvl72.gpu_bidir_marketing_bytes_per_s / 1e12)
    sw1, sw2, sw3, sw4 = (get_nvswitch(f"nvswitch{g}") for g in (1, 2, 3, 4))
    out.update(sw1_ports=sw1.ports_per_chip, sw2_ports=sw2.ports_per_chip)
    claims.require(not sw1.nvls and not sw2.nvls and sw3.nvls and sw4.nvls,
                   "in-switch reduction from the third NVSwitch generation on")
    return out


def _nvls() -> dict:
    """The ring and NVLS all_reduce on 8x H100 in the model, and stas00's 8x H200 runs with NVLS on and off."""
    nv4 = get_link("nvlink4")
    ring8 = collective_cost("all_reduce", GiB, num_ranks=8, fabric="nvlink4", algorithm="ring")
    nvls8 = collective_cost("all_reduce", GiB, num_ranks=8, fabric="nvlink4", algorithm="nvls")
    ring8g = collective_cost("all_reduce", 8 * GiB, num_ranks=8, fabric="nvlink4", algorithm="ring")
    nvls8g = collective_cost("all_reduce", 8 * GiB, num_ranks=8, fabric="nvlink4", algorithm="nvls")
    pick1g = collective_cost("all_reduce", GiB, num_ranks=8, fabric="nvlink4")  # NCCL's own tuner's pick
    nvls_gbps = float(case("C14")["busbw_GBps"])
    ring_gbps = float(case("C14r")["busbw_GBps"])  # NCCL_NVLS_ENABLE=0 on the same node
    claims.require(nvls8.time_s < ring8.time_s and nvls_gbps > ring_gbps,
                   "NVLS is faster than the ring, in the model and measured")
    claims.require(pick1g.nccl_algorithm == "nvls", "NCCL's tuner picks NVLS for a 1 GiB all_reduce on 8 H100")
    claims.require(nvls8g.busbw_bytes_per_s > nv4.bw_bytes_per_s > ring8g.busbw_bytes_per_s
                   and nvls_gbps * 1e9 > nv4.bw_bytes_per_s > ring_gbps * 1e9,
                   "NVLS busbw exceeds the link rate, in the model and measured; the ring's does not")
    return {"ring_wire": wire_bytes_per_link("all_reduce", 1, num_ranks=8, algorithm="ring"),
            "nvls_wire": wire_bytes_per_link("all_reduce", 1, num_ranks=8, algorithm="nvls"),
            "ring8_ms": ring8.time_s * 1e3, "nvls8_ms": nvls8.time_s * 1e3,
            "c14_nvls": nvls_gbps, "c14_ring": ring_gbps,
            "ring8g_busbw": ring8g.busbw_bytes_per_s / 1e9, "nvls8g_busbw": nvls8g.busbw_bytes_per_s / 1e9,
            "pick1g_algo": pick1g.nccl_algorithm}


def _tp2_throughput() -> dict:
    """NVIDIA's Table 3 (Llama 3.1 70B, TP=2 on H200, mesh vs NVSwitch) against the serving model."""
    out: dict = {}
    sw_cfg = make_fabric("nvlink4").replace(gpu="h200_sxm", name="NVSwitch")
    mesh = make_fabric("nvlink4", topology="mesh", mesh_size=MESH_SIZE)
    mesh_cfg = mesh.replace(gpu="h200_sxm", name="point-to-point")
    rows = {}
    for b, (p2p_meas, nvs_meas) in NVIDIA_BLOG_TP2_THROUGHPUT.items():
        m = request_throughput("llama-3-70b", mesh_cfg, tp_size=2, batch=b, isl=8192, osl=256)
        s = request_throughput("llama-3-70b", sw_cfg, tp_size=2, batch=b, isl=8192, osl=256)
        rows[b] = (m, s)
        out.update({f"t3_mesh_{b}": m.tokens_per_s_per_gpu, f"t3_sw_{b}": s.tokens_per_s_per_gpu,
                    f"t3_ratio_{b}": s.tokens_per_s_per_gpu / m.tokens_per_s_per_gpu,
                    f"t3_mratio_{b}": nvs_meas / p2p_meas, f"t3_nv_mesh_{b}": p2p_meas, f"t3_nv_sw_{b}": nvs_meas})
    out.update(b32_pre_mesh_pct=100 * rows[32][0].prefill_comm_share, b32_pre_sw_pct=100 * rows[32][1].prefill_comm_share,
               b1_pre_share_pct=100 * rows[1][1].prefill_s / rows[1][1].request_s,
               b32_pre_share_pct=100 * rows[32][1].prefill_s / rows[32][1].request_s)
    dec_msg = tp_forward_comm(get_model("llama-3-70b"), tp_size=2, num_tokens=1, fabric="nvlink4").msg_bytes
    claims.require(dec_msg == 16 * 2**10, "a batch-1 decode all_reduce of Llama 3.1 70B carries 16 KiB")
    dec_sw = collective_cost("all_reduce", dec_msg, num_ranks=2, fabric="nvlink4")
    dec_mesh = collective_cost("all_reduce", dec_msg, num_ranks=2, fabric=mesh)
    out.update(dec_ar_sw_us=dec_sw.time_s * 1e6, dec_ar_mesh_us=dec_mesh.time_s * 1e6)
    ratios_model = [s.tokens_per_s_per_gpu / m.tokens_per_s_per_gpu for m, s in rows.values()]
    ratios_nvidia = [nvs / p2p for p2p, nvs in NVIDIA_BLOG_TP2_THROUGHPUT.values()]
    claims.require(all(a < b for a, b in zip(ratios_model, ratios_model[1:]))
                   and all(a < b for a, b in zip(ratios_nvidia, ratios_nvidia[1:])),
                   "the NVSwitch advantage grows with the batch, in the model as in NVIDIA's table")
    claims.require(abs(dec_mesh.time_s / dec_sw.time_s - 1) < 0.1,
                   "16 KiB decode all_reduces barely care about the wiring")
    claims.require(rows[32][0].prefill_comm_share > rows[32][1].prefill_comm_share
                   and rows[32][1].prefill_s / rows[32][1].request_s > rows[1][1].prefill_s / rows[1][1].request_s,
                   "at batch 32 the prefill takes a larger share of the time than at batch 1, "
                   "and more of it is communication on the mesh")
    out["checked_nvlink"] = checked_on(validate(), (*SWEEPS, *CASES), transport="nvlink").sentence
    return out


def numbers() -> dict[str, object]:
    """Every value ``book/nvswitch.md`` glues, by glue key, after checking every claim of its prose.

    Returns
    -------
    dict
        Glue key -> value. Bandwidths in GB/s per direction unless the key says ``bidir`` (both directions, GB/s) or
        ``tb``/``tbps`` (TB/s) or ``tbit`` (Tb/s); times in ms (``_ms``) or us (``_us``); shares in percent (``_pct``).

        - NVIDIA's table: ``nv4_dir``, ``nv4_bidir``, ``pair_dir``, ``pair_bidir``, ``peers``, ``mesh_nom_{n}``,
          ``mesh_eff_{n}``, ``sw_eff_{n}`` (n = 2, 4, 8), ``eff_nv4_pct``; the '20 GB' query: ``n_ar``, ``msg_mib``,
          ``query_gib``, ``query_gb``, ``wire_gb``, ``nom_mesh_ms``, ``nom_sw_ms``, ``model_mesh_ms``,
          ``model_sw_ms``, ``model_ratio``, ``model_sw_alpha_pct``; quiz 1: ``q1_mesh_ms``, ``q1_sw_ms``.
        - DGX-1 and boards: ``v100_*``, ``dgx1_gpus``, ``h100_*``, ``b200_chips``, ``port_bidir``, ``chip3_*``,
          ``nvl72_*``, ``sw1_ports``, ``sw2_ports``.
        - NVLS: ``ring_wire``, ``nvls_wire`` (bytes per byte of message, per direction), ``ring8_ms``, ``nvls8_ms``,
          ``ring8g_busbw``, ``nvls8g_busbw``, ``pick1g_algo``; measured busbw
          ``c14_nvls``, ``c14_ring`` (GB/s).
        - NVIDIA's Table 3 vs the model: ``t3_{mesh,sw,ratio,mratio,nv_mesh,nv_sw}_{batch}`` (tokens/s per GPU or
          ratios), ``b*_pct`` shares, ``dec_ar_sw_us``, ``dec_ar_mesh_us``, ``checked_nvlink`` (a sentence).

    Raises
    ------
    ClaimError
        If the model or the bundled data no longer support a sentence of the page (the message quotes it).

    Notes
    -----
    Sources: the NVLink and NVSwitch catalog (:mod:`gpucomm.model.hardware`), the cost model with NCCL's tuner,
    NVIDIA's blog Table 3 (:data:`gpucomm.model.measurements.NVIDIA_BLOG_TP2_THROUGHPUT`), stas00's 8x H200
    all_reduce runs with NVLS on and off (bundled cases).

    Examples
    --------
    >>> values = numbers()
    >>> values["pick1g_algo"]
    'nvls'
    """
    return {**_blog_table(), **_boards(), **_nvls(), **_tp2_throughput()}
