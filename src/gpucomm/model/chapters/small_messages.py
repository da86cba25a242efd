"""The numbers of ``book/small_messages.md`` (small messages: launch, latency and the tricks that beat them).

Sections: decode-sized all_reduce messages (Llama 3 70B), the terms of a small all_reduce (launch, NCCL's latency per
step, the steps of each algorithm), 8x H100 from 1 KiB to 1 MiB eager and in a CUDA graph against the one-shot and
two-shot kernels, one decode token at TP=8, where the custom kernels stop winning, the channels NCCL runs, and the
nccl-tests rows of the self-check. The page's tables are the row functions here; its figure is drawn by
:mod:`gpucomm.viz` and stays in the page.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.cost import CollectiveCost, collective_cost, steps_and_wire_bytes
from gpucomm.model.course import checked_on, first_slower_size
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.hardware import get_link
from gpucomm.model.tp import get_model, tp_all_reduce_bytes, tp_forward_comm
from gpucomm.model.units import GiB, KiB, MiB, format_size
from gpucomm.model.validation import CASES, SWEEPS, validate

__all__ = ["FABRIC", "NUM_RANKS", "numbers", "quiz_rows", "size_rows"]

NUM_RANKS, FABRIC = 8, "nvlink4"
"""8x H100 behind an NVSwitch: every example of the page."""
MODEL = "llama-3-70b"
NCCL_NAMES = nt.ALGORITHM_NAMES
VLLM_ONE_SHOT_MAX_BYTES_8 = 256 * KiB
"""vLLM runs one-shot below 256 KiB on up to 8 GPUs with full NVLink, two-shot above (``custom_all_reduce.py``)."""
VLLM_MAX_BYTES = 8 * MiB
"""vLLM hands messages over 8 MiB to NCCL (``max_size=8192 * 1024``, ``custom_all_reduce.py``)."""


def _cost(msg_bytes: int, **kwargs) -> CollectiveCost:
    return collective_cost("all_reduce", msg_bytes, num_ranks=NUM_RANKS, fabric=FABRIC, **kwargs)


def _pick(c: CollectiveCost) -> str:
    return f"{NCCL_NAMES[c.nccl_algorithm]}/{c.nccl_protocol}"


def size_rows() -> list[dict]:
    """An all_reduce of 1 KiB to 1 MiB on 8x H100: NCCL's pick, eager and graph time, one-shot and two-shot, in us.

    Returns
    -------
    list of dict
        From :func:`gpucomm.model.cost.collective_cost` (``launch="eager"`` and ``"graph"``; ``algorithm="one_shot"``,
        ``"two_shot"``).
    """
    rows = []
    for size in (KiB, 16 * KiB, 128 * KiB, MiB):
        eager = _cost(size)
        rows.append({"size": format_size(size), "NCCL's pick": _pick(eager), "eager (us)": eager.time_s * 1e6,
                     "graph (us)": _cost(size, launch="graph").time_s * 1e6,
                     "one-shot (us)": _cost(size, algorithm="one_shot").time_s * 1e6,
                     "two-shot (us)": _cost(size, algorithm="two_shot").time_s * 1e6})
    return rows


def _quiz_costs() -> list[CollectiveCost]:
    return [_cost(s) for s in (KiB, 4 * KiB, 16 * KiB, 64 * KiB)]


def quiz_rows() -> list[dict]:
    """The nccl-tests columns (size, time, algbw, busbw) the model gives for 1 to 64 KiB on 8x H100, launched eagerly.

    Returns
    -------
    list of dict
        ``size (B)``, ``time (us)``, ``algbw (GB/s)``, ``busbw (GB/s)`` (GB/s = 1e9 B/s).
    """
    return [{"size (B)": c.msg_bytes, "time (us)": c.time_s * 1e6, "algbw (GB/s)": c.algbw_bytes_per_s / 1e9,
             "busbw (GB/s)": c.busbw_bytes_per_s / 1e9} for c in _quiz_costs()]


def _terms() -> dict[str, object]:
    hidden = get_model(MODEL).hidden_size
    out: dict[str, object] = {"hidden": hidden}
    for b in (1, 8, 64):
        out[f"msg_b{b}"] = format_size(tp_all_reduce_bytes(b, hidden, dtype="bf16"))
    out.update({
        "launch_eager_us": cal.LAUNCH_S["eager"].value * 1e6, "launch_graph_us": cal.LAUNCH_S["graph"].value * 1e6,
        "launch_sync_us": cal.LAUNCH_S["sync"].value * 1e6, "host_per_gpu_us": cal.HOST_LAUNCH_PER_GPU_S.value * 1e6,
        "ll_step_us": nt.HW_LATENCY_US["nvlink"]["ring"][0], "simple_step_us": nt.HW_LATENCY_US["nvlink"]["ring"][2],
        "ll_base_us": nt.BASE_LATENCY_US["ring"][0], "simple_base_us": nt.BASE_LATENCY_US["ring"][2],
        "nvls_lat_us": nt.HW_LATENCY_US["nvlink"]["nvls"][2],
        "checked_nvlink": checked_on(validate(), (*SWEEPS, *CASES), transport="nvlink").sentence,
    })
    for a in ("ring", "tree", "nvls", "one_shot", "two_shot"):
        out[f"steps_{a}"] = steps_and_wire_bytes("all_reduce", 1, num_ranks=NUM_RANKS, algorithm=a)[0]
    for a in ("ring", "one_shot", "two_shot"):
        out[f"wire_{a}"] = steps_and_wire_bytes("all_reduce", 1, num_ranks=NUM_RANKS, algorithm=a)[1]
    for n in (2, 4, 8):
        out[f"lat_n{n}_us"] = collective_cost("all_reduce", 8, num_ranks=n, fabric=FABRIC).nccl_time_s * 1e6
    return out


def _sixteen_kib() -> dict[str, object]:
    e16 = _cost(16 * KiB)
    link_bw = get_link(FABRIC).bw_bytes_per_s
    # the 16 KiB's own time on the channel(s) NCCL runs at this size, before LL overlaps it with the steps' latency
    terms = dict(e16.terms)
    xfer_s = sum(terms[k] for k in ("nccl_bandwidth", "delivered_bandwidth", "channel_ramp", "pipeline_fill"))
    claims.require((e16.algorithm, e16.protocol) == (e16.nccl_algorithm, e16.nccl_protocol) and e16.nccl_protocol == "LL",
                   "at 16 KiB NCCL picks an LL pair, and the model prices that pair (the code cell prints it)")
    claims.require(e16.transfer_s < 0.01 * e16.time_s < xfer_s,
                   "with LL the 16 KiB move while the steps' latency elapses: the model adds no transfer on top")
    claims.require(abs(e16.time_s - e16.latency_s - e16.launch_s - e16.transfer_s) < 1e-12,
                   "a 16 KiB all_reduce is launch + latency + transfer (no host floor with one GPU per process)")
    return {
        "e16_us": e16.time_s * 1e6, "g16_us": _cost(16 * KiB, launch="graph").time_s * 1e6,
        "e16_lat_us": e16.latency_s * 1e6, "e16_lat_pct": 100 * e16.latency_s / e16.time_s,
        "e16_launch_us": e16.launch_s * 1e6, "e16_pick": _pick(e16), "e16_xfer_us": xfer_s * 1e6,
        "e16_channels": e16.num_channels, "e16_channels_word": "channel" if e16.num_channels == 1 else "channels",
        "e16_full_link_us": 16 * KiB / link_bw * 1e6, "link_gbps": link_bw / 1e9,
        "o16_us": _cost(16 * KiB, algorithm="one_shot").time_s * 1e6,
    }


def _decode_token() -> dict[str, object]:
    tp = tp_forward_comm(MODEL, tp_size=NUM_RANKS, num_tokens=1, fabric=FABRIC, dtype="bf16")
    graph_s = tp.all_reduces_per_pass * _cost(tp.msg_bytes, launch="graph").time_s
    one_shot_s = tp.all_reduces_per_pass * _cost(tp.msg_bytes, algorithm="one_shot").time_s
    claims.require(one_shot_s < graph_s < tp.comm_per_pass_s,
                   "a CUDA graph saves the launch, and fewer steps (one-shot) save more")
    return {"n_ar": tp.all_reduces_per_pass, "tp_eager_ms": tp.comm_per_pass_s * 1e3, "tp_graph_ms": graph_s * 1e3,
            "tp_one_shot_ms": one_shot_s * 1e3}


def _crossovers() -> dict[str, object]:
    one_vs_two = first_slower_size("all_reduce", "one_shot", than="two_shot", num_ranks=NUM_RANKS, fabric=FABRIC)
    one_vs_nccl = first_slower_size("all_reduce", "one_shot", num_ranks=NUM_RANKS, fabric=FABRIC)
    two_vs_nccl = first_slower_size("all_reduce", "two_shot", num_ranks=NUM_RANKS, fabric=FABRIC)
    # from half to 4x vLLM's 256 KiB switch on 8 GPUs, from a quarter to 4x its 8 MiB hand-over to NCCL
    claims.require(VLLM_ONE_SHOT_MAX_BYTES_8 // 2 <= one_vs_two <= 4 * VLLM_ONE_SHOT_MAX_BYTES_8
                   and VLLM_MAX_BYTES // 4 <= two_vs_nccl <= 4 * VLLM_MAX_BYTES and one_vs_nccl <= two_vs_nccl,
                   "the model's custom-kernel lines cross about where vLLM switches")
    return {"one_vs_two": format_size(one_vs_two), "one_vs_nccl": format_size(one_vs_nccl),
            "two_vs_nccl": format_size(two_vs_nccl)}


def _channels() -> dict[str, object]:
    small, mid, large = _cost(16 * KiB), _cost(MiB), _cost(GiB)
    claims.require(cal.LAUNCH_S["sync"].value > small.latency_s,
                   "a synchronised call's dispatch costs more than NCCL's latency")
    claims.require(small.num_channels < large.num_channels,
                   "NCCL runs few channels for a small message, many for a large one")
    return {"ch_16k": small.num_channels, "ch_1m": mid.num_channels, "ch_1g": large.num_channels,
            "ch_1g_pick": NCCL_NAMES[large.nccl_algorithm], "ch_ring_1g": _cost(GiB, algorithm="ring").num_channels}


def _quiz() -> dict[str, object]:
    first, last = _quiz_costs()[0], _quiz_costs()[-1]
    claims.require(last.time_s < 1.1 * first.time_s and last.busbw_bytes_per_s < 0.05 * get_link(FABRIC).bw_bytes_per_s,
                   "from 1 to 64 KiB the time barely moves and busbw stays a few % of the link")
    return {"quiz_busbw_64k": last.busbw_bytes_per_s / 1e9, "quiz_time_ratio": last.time_s / first.time_s}


def numbers() -> dict[str, object]:
    """Every value ``book/small_messages.md`` glues, by glue key.

    Returns
    -------
    dict of str to object
        Decode messages (``hidden``; ``msg_b1``, ``msg_b8``, ``msg_b64``: sizes in words); the terms (``launch_*_us``,
        ``host_per_gpu_us``, ``ll_*``/``simple_*``/``nvls_lat_us``: NCCL's latencies, us; ``steps_<algorithm>``;
        ``wire_<algorithm>``: bytes per link per byte of message; ``lat_n<N>_us``: NCCL's estimate for 8 B on N GPUs,
        us; ``checked_nvlink``: where the NVLink numbers were checked, a sentence); 16 KiB on 8x H100 (``e16_*``,
        ``g16_us``, ``o16_us``: us or %, ``e16_pick``, ``e16_channels``, ``link_gbps`` GB/s); one decode token of
        Llama 3 70B at TP=8 (``n_ar``; ``tp_*_ms`` ms); the crossovers (``one_vs_two``, ``one_vs_nccl``,
        ``two_vs_nccl``: sizes); channels (``ch_*``); the self-check (``quiz_busbw_64k`` GB/s, ``quiz_time_ratio``).

    Raises
    ------
    ClaimError
        If the model no longer supports one of the page's sentences, e.g. "the model's custom-kernel lines cross about
        where vLLM switches" (vLLM's thresholds: :data:`VLLM_ONE_SHOT_MAX_BYTES_8`, :data:`VLLM_MAX_BYTES`).

    Notes
    -----
    From :func:`gpucomm.model.cost.collective_cost`, :mod:`gpucomm.model.nccl_tuner`, the calibration
    (:data:`~gpucomm.model.hardware.calibration.LAUNCH_S`), :mod:`gpucomm.model.tp` and
    :func:`gpucomm.model.course.first_slower_size`.
    """
    out: dict[str, object] = {}
    for part in (_terms, _sixteen_kib, _crossovers, _decode_token, _channels, _quiz):
        out.update(part())
    return out
