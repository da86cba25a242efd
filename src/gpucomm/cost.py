"""Alpha-beta cost of collectives over a catalog link.

The time of one collective is modelled per protocol as

    t = alpha + S_bus / B_eff

where ``S_bus = S * busbw_factor(collective, n)`` are the bytes each rank's link must
carry in a ring (nccl-tests ``doc/PERFORMANCE.md``), ``B_eff`` the effective
per-direction bandwidth of the link, and ``alpha`` the latency. Two protocols are
modelled, as NCCL does (``src/graph/tuning.cc``, ``ncclTopoGetAlgoTime``: ``time = lat +
bytes / bw``), and the cheaper one is taken:

* LL: ``alpha = ll_base + steps * ll_step``, bandwidth ``ll_bw_fraction * B_eff``;
* Simple: ``alpha = simple_latency``, full ``B_eff``.

References: Hockney, "The communication challenge for MPP", Parallel Computing 20 (1994)
(the alpha-beta model, t = alpha + n / B); Thakur, Rabenseifner, Gropp, "Optimization of
collective communication operations in MPICH", IJHPCA 19 (2005), sec. 4 (ring costs
2(p-1) alpha + 2 (p-1)/p n beta for all_reduce).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gpucomm import GpucommError
from gpucomm.collectives import busbw_factor, check_collective, check_num_ranks
from gpucomm.hardware import Link, get_link
from gpucomm.hardware import calibration as cal

ALGORITHMS = ("ring",)
PROTOCOLS = ("LL", "Simple")

MAX_MSG_BYTES = 1 << 50  # 1 PiB: anything larger is a typo, not a collective


def ring_steps(collective: str, num_ranks: int) -> int:
    """Number of sequential communication steps of the ring algorithm.

    ``2(n-1)`` for all_reduce (reduce-scatter then all-gather), ``n-1`` for all_gather,
    reduce_scatter, all_to_all, broadcast and reduce (pipelined chain), 1 for send_recv.

    Examples
    --------
    >>> ring_steps("all_reduce", 4)
    6
    """
    check_collective(collective)
    n = check_num_ranks(num_ranks)
    if collective == "send_recv":
        return 1
    if collective == "all_reduce":
        return 2 * (n - 1)
    return n - 1


def effective_bw_bytes_per_s(link: str | Link, *, p2p: bool = True) -> float:
    """Large-message bus bandwidth per direction that a ring reaches on ``link``, in bytes/s.

    Parameters
    ----------
    link : str or Link
        Catalog key or entry.
    p2p : bool
        False models NCCL with P2P disabled or unsupported (``NCCL_P2P_DISABLE=1``,
        consumer GPUs without P2P): every transfer is staged through host memory.
        Only meaningful for PCIe links (disabling P2P moves NVLink traffic to PCIe,
        whose generation the NVLink entry does not know).

    Returns
    -------
    float
        ``nominal x efficiency``: :data:`~gpucomm.hardware.calibration.RING_EFFICIENCY`
        for NVLink, :data:`~gpucomm.hardware.calibration.PCIE_P2P_EFFICIENCY` or
        :data:`~gpucomm.hardware.calibration.HOST_STAGED_EFFICIENCY` for PCIe.

    Raises
    ------
    GpucommError
        For an unknown link, or ``p2p=False`` on a non-PCIe link.

    Examples
    --------
    >>> effective_bw_bytes_per_s("nvlink3") / 1e9
    234.0
    """
    link = get_link(link)
    if link.kind == "nvlink":
        if not p2p:
            raise GpucommError(
                f"p2p=False (no P2P) with link {link.key!r}: without P2P, traffic leaves NVLink and is staged "
                "through host memory over PCIe; expected a PCIe link (pcie3, pcie4, pcie5, pcie6), the path the traffic takes")
        eff = cal.RING_EFFICIENCY.get(link.key, cal.DEFAULT_NVLINK_RING_EFFICIENCY).value
    elif link.kind == "pcie":
        eff = (cal.PCIE_P2P_EFFICIENCY if p2p else cal.HOST_STAGED_EFFICIENCY).value
    else:  # pragma: no cover - no network links in the catalog yet
        raise GpucommError(f"link kind {link.kind!r} of {link.key!r} is not modelled yet")
    return link.bw_bytes_per_s * eff


@dataclass(frozen=True)
class CollectiveCost:
    """Predicted cost of one collective. Times in s, bandwidths in bytes/s, sizes in bytes."""

    collective: str
    algorithm: str
    protocol: str
    link: str
    p2p: bool
    num_ranks: int
    msg_bytes: int
    time_s: float
    latency_s: float
    """The alpha part of ``time_s``."""
    transfer_s: float
    """The bandwidth (beta) part of ``time_s``."""
    bus_bytes: float
    """Bytes each rank's link carries: ``msg_bytes * busbw_factor``."""
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float

    def as_dict(self) -> dict:
        """A plain dict, with GB/s keys added for people (1 GB/s = 1e9 B/s)."""
        out = asdict(self)
        out["algbw_gb_per_s"] = self.algbw_bytes_per_s / 1e9
        out["busbw_gb_per_s"] = self.busbw_bytes_per_s / 1e9
        return out


def _check_msg_bytes(msg_bytes) -> int:
    if isinstance(msg_bytes, bool) or not isinstance(msg_bytes, (int, float)) or not 1 <= msg_bytes <= MAX_MSG_BYTES:
        raise GpucommError(f"message size {msg_bytes!r} bytes is not valid: expected 1 to {MAX_MSG_BYTES} bytes")
    return int(msg_bytes)


def collective_cost(collective: str, msg_bytes: int, *, num_ranks: int, link: str | Link,
                    p2p: bool = True, algorithm: str = "ring", protocol: str = "auto") -> CollectiveCost:
    """Predict time, algbw and busbw of one collective on ``num_ranks`` GPUs joined by ``link``.

    Parameters
    ----------
    collective : str
        torch.distributed name, e.g. ``"all_reduce"``.
    msg_bytes : int
        Message size ``S`` in bytes, as nccl-tests reports it (per-rank buffer for
        all_reduce; total gathered buffer for all_gather / reduce_scatter).
    num_ranks : int
        GPUs taking part, 1 to 100000.
    link : str or Link
        The link every GPU uses (catalog key or entry). Every pair is assumed to get the
        GPU's full bandwidth (NVSwitch, or a ring over a PCIe tree).
    p2p : bool
        False: P2P disabled, transfers staged through host memory (PCIe links only).
    algorithm : {"ring"}
        Only the ring for now.
    protocol : {"auto", "LL", "Simple"}
        ``auto`` takes the cheaper of the two, as NCCL's tuner does.

    Returns
    -------
    CollectiveCost

    Raises
    ------
    GpucommError
        For an unknown collective, link, algorithm or protocol, a rank count outside
        1..100000, or a message size outside 1 B..1 PiB.

    Notes
    -----
    ``t = alpha + S * busbw_factor / B`` per protocol (module docstring), with
    ``algbw = S / t`` and ``busbw = algbw * busbw_factor`` (nccl-tests).

    Examples
    --------
    The seed's measurement: Llama-3-70B TP=4 activation (64 MiB) on 4x A100 NVLink, 603 us measured.

    >>> cost = collective_cost("all_reduce", 64 * 2**20, num_ranks=4, link="nvlink3")
    >>> round(cost.time_s * 1e6)
    613
    >>> cost.protocol
    'Simple'
    """
    check_collective(collective)
    n = check_num_ranks(num_ranks, maximum=100_000)
    size = _check_msg_bytes(msg_bytes)
    if algorithm not in ALGORITHMS:
        raise GpucommError(f"unknown algorithm {algorithm!r}: expected one of {', '.join(ALGORITHMS)}")
    if protocol != "auto" and protocol not in PROTOCOLS:
        raise GpucommError(f"unknown protocol {protocol!r}: expected auto or one of {', '.join(PROTOCOLS)}")
    link = get_link(link)
    bw = effective_bw_bytes_per_s(link, p2p=p2p)
    bus_bytes = size * busbw_factor(collective, n)
    steps = ring_steps(collective, n) if n > 1 else 0
    candidates = {
        "LL": (cal.LL_BASE_LATENCY_S.value + steps * cal.LL_STEP_LATENCY_S.value, bus_bytes / (bw * cal.LL_BW_FRACTION.value)),
        "Simple": (cal.SIMPLE_LATENCY_S.value, bus_bytes / bw),
    }
    if protocol == "auto":
        protocol = min(candidates, key=lambda p: sum(candidates[p]))
    latency_s, transfer_s = candidates[protocol]
    time_s = latency_s + transfer_s
    algbw = size / time_s
    return CollectiveCost(
        collective=collective, algorithm=algorithm, protocol=protocol, link=link.key, p2p=p2p, num_ranks=n,
        msg_bytes=size, time_s=time_s, latency_s=latency_s, transfer_s=transfer_s, bus_bytes=bus_bytes,
        algbw_bytes_per_s=algbw, busbw_bytes_per_s=algbw * busbw_factor(collective, n),
    )


def all_reduce_time_s(msg_bytes: int, num_ranks: int, *, link: str | Link, p2p: bool = True) -> float:
    """Predicted time in s of one all_reduce of ``msg_bytes`` on ``num_ranks`` GPUs (see :func:`collective_cost`).

    Examples
    --------
    >>> round(all_reduce_time_s(64 * 2**20, 4, link="pcie4", p2p=False) * 1e3, 1)
    9.9
    """
    return collective_cost("all_reduce", msg_bytes, num_ranks=num_ranks, link=link, p2p=p2p).time_s


def alpha_beta_time_s(msg_bytes: float, *, alpha_s: float, bw_bytes_per_s: float,
                      collective: str = "all_reduce", num_ranks: int = 2) -> float:
    """Plain alpha-beta time ``alpha + S * busbw_factor / B`` in s, for fitted parameters.

    Raises
    ------
    GpucommError
        If ``alpha_s`` is negative or ``bw_bytes_per_s`` not positive.

    Examples
    --------
    >>> alpha_beta_time_s(1e6, alpha_s=1e-5, bw_bytes_per_s=1e9, num_ranks=2)
    0.00101
    """
    if alpha_s < 0:
        raise GpucommError(f"alpha {alpha_s!r} s must be >= 0")
    if not bw_bytes_per_s > 0:
        raise GpucommError(f"bandwidth {bw_bytes_per_s!r} bytes/s must be positive")
    return alpha_s + msg_bytes * busbw_factor(collective, num_ranks) / bw_bytes_per_s
