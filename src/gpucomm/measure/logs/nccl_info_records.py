"""What an ``NCCL_DEBUG=INFO`` log says, as records: connections, channels, tuning choices, WARN lines, the
whole log (:class:`NcclInfoLog`) and the problems found in it (:class:`Finding`).

:mod:`gpucomm.measure.logs.nccl_info_reader` fills them; the checks of
:mod:`gpucomm.measure.logs.nccl_info_checks` read them. This module uses the standard library only.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

__all__ = ["Connection", "ChannelCounts", "GraphPattern", "TuningChoice", "WarnLine", "Finding", "NcclInfoLog",
           "Communicator", "TestDevice", "WatchdogTimeout", "WatchdogProgress", "TorchLog", "SEVERITIES",
           "MAX_FINDING_LINES", "finding_lines"]

SEVERITIES = ("error", "warning", "info")
"""Finding severities, most serious first (findings are sorted in this order)."""

MAX_FINDING_LINES = 20
"""At most this many line numbers per finding (the evidence says how many there were)."""


def finding_lines(numbers) -> tuple[int, ...]:
    """The line numbers a :class:`Finding` keeps: sorted, without repeats, the first :data:`MAX_FINDING_LINES`.

    Parameters
    ----------
    numbers : iterable of int
        1-based line numbers, in any order, possibly repeated.

    Returns
    -------
    tuple of int

    Examples
    --------
    >>> finding_lines([9, 3, 9])
    (3, 9)
    """
    return tuple(sorted(set(numbers)))[:MAX_FINDING_LINES]


@dataclass(frozen=True)
class Connection:
    """One connection of one channel, as NCCL printed it.

    Attributes
    ----------
    channel : int
        The channel (``Channel 03/0`` -> 3).
    src_rank, dst_rank : int, int or None
        The ranks the data flows from and to (``dst_rank`` is None for CollNet, whose peer is the switch).
    direction : str or None
        ``"send"`` or ``"receive"`` for network connections (each side prints its own), else None.
    transport : str
        ``P2P/IPC``, ``P2P/CUMEM``, ``P2P/MNNVL``, ``P2P/direct`` (same process), ``P2P/indirect``,
        ``SHM`` (host shared memory), ``NET/IB`` (InfiniBand or RoCE, any IB plugin),
        ``NET/Socket``, ``NET/<plugin>`` (e.g. ``NET/AWS Libfabric``), or ``CollNet``.
    gdr : bool
        The connection uses GPUDirect RDMA (``/GDRDMA``): the NIC reads and writes GPU memory.
    via : str
        The text after ``via``, as printed.
    line : int
        1-based line number.
    """

    channel: int
    src_rank: int
    dst_rank: int | None
    direction: str | None
    transport: str
    gdr: bool
    via: str
    line: int

    @property
    def label(self) -> str:
        """``transport``, with ``/GDRDMA`` appended where used (the key of :attr:`NcclInfoLog.transports`)."""
        return self.transport + ("/GDRDMA" if self.gdr else "")


@dataclass(frozen=True)
class ChannelCounts:
    """One ``N coll channels, ... p2p channels per peer`` line (``collnet``/``nvls`` are None where not printed)."""

    coll: int
    collnet: int | None
    nvls: int | None
    p2p: int
    p2p_per_peer: int
    line: int


@dataclass(frozen=True)
class GraphPattern:
    """One topology search result (``Pattern 4, crossNic 0, nChannels 1, bw 10/10, type SYS/PIX``).

    ``bw_intra_gbps``/``bw_inter_gbps`` are NCCL's per-channel estimates in GB/s; ``type_intra`` is the
    worst path between GPUs of the node (``NVL``, ``PIX``, ``PXB``, ``PHB``, ``SYS``...), ``type_inter``
    the worst path between a GPU and its NIC.
    """

    pattern: int
    nchannels: int
    bw_intra_gbps: float
    bw_inter_gbps: float
    type_intra: str
    type_inter: str
    line: int


@dataclass(frozen=True)
class TuningChoice:
    """The algorithm and protocol NCCL chose for one collective call (``NCCL_DEBUG_SUBSYS=TUNING``).

    ``function`` is None in 2.21-2.22, which did not print it; ``time_us`` is the model's estimate
    (2.21-2.23 only); ``channels`` the ``(lo, hi)`` channel range (2.24+ only).
    """

    function: str | None
    msg_bytes: int
    algorithm: str
    protocol: str
    time_us: float | None
    channels: tuple[int, int] | None
    line: int


@dataclass(frozen=True)
class WarnLine:
    """One ``NCCL WARN`` line: the message, where in NCCL's source it was printed, the line number."""

    message: str
    location: str | None
    host: str | None
    line: int


@dataclass(frozen=True)
class Communicator:
    """One NCCL communicator, as its ``comm ... nranks`` lines describe it.

    Attributes
    ----------
    comm_id : str or None
        NCCL's ``commId`` (2.12+), the same on every rank of the communicator; None where not printed
        (then one record stands for every communicator of that size).
    nranks : int
        Its size, as NCCL printed it.
    nnodes, local_ranks : int or None
        ``nNodes`` and ``localRanks`` (2.19+), None where not printed.
    hosts : tuple of str
        The hosts whose processes printed its lines.
    ranks : tuple of int
        The ranks whose lines are in the log (sorted).
    rank0_hosts : tuple of str
        The hosts that printed a rank-0 line of it: more than one means several communicators of this
        size (each has one rank 0), e.g. one per node.
    line : int
        Its first line.
    """

    comm_id: str | None
    nranks: int
    nnodes: int | None
    local_ranks: int | None
    hosts: tuple[str, ...]
    ranks: tuple[int, ...]
    rank0_hosts: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class TestDevice:
    """One line of nccl-tests' device list (``#  Rank  0 Group  0 Pid 33347 on host device  0 [0x0f] NVIDIA H800``)."""

    rank: int
    pid: int
    host: str
    name: str
    line: int


@dataclass(frozen=True)
class WatchdogTimeout:
    """PyTorch's ``[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=..,
    NumelOut=.., Timeout(ms)=600000) ran for 600040 milliseconds before timing out.`` (``NumelIn``/``NumelOut`` since
    PyTorch 2.1, else None)."""

    rank: int
    seq: int
    op: str
    numel_in: int | None
    numel_out: int | None
    timeout_ms: int
    ran_ms: int
    line: int


@dataclass(frozen=True)
class WatchdogProgress:
    """PyTorch's ``[PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued
    NCCL work: 1582, last completed NCCL work: 1579.`` (or ``Timeout at NCCL work: ...``; PyTorch 2.2+): how far the rank
    got. ``pg`` is the process group's name as printed (None before PyTorch 2.3)."""

    pg: str | None
    rank: int
    work: int
    last_enqueued: int
    last_completed: int
    line: int


@dataclass(frozen=True)
class TorchLog:
    """What PyTorch's ProcessGroupNCCL printed around NCCL's lines.

    Attributes
    ----------
    timeouts : tuple of WatchdogTimeout
        Watchdog timeouts, one per line.
    progress : tuple of WatchdogProgress
        Each rank's last enqueued and completed collective at the failure.
    heartbeat_lines : tuple of int
        ``ProcessGroupNCCL's watchdog got stuck for N seconds`` lines (the heartbeat monitor killed the process).
    dump_lines : tuple of int
        Flight recorder lines (``ProcessGroupNCCL preparing to dump debug info``, ``dumping nccl trace to ...``, a dump
        signal from another rank).
    dump_paths : tuple of str
        Where the flight recorder wrote (``/tmp/nccl_trace_rank_0``), where printed.
    """

    timeouts: tuple[WatchdogTimeout, ...] = ()
    progress: tuple[WatchdogProgress, ...] = ()
    heartbeat_lines: tuple[int, ...] = ()
    dump_lines: tuple[int, ...] = ()
    dump_paths: tuple[str, ...] = ()

    @property
    def lines(self) -> int:
        """How many lines PyTorch's ProcessGroupNCCL printed that were read."""
        return len(self.timeouts) + len(self.progress) + len(self.heartbeat_lines) + len(self.dump_lines)


@dataclass(frozen=True)
class Finding:
    """A known problem the log shows.

    Attributes
    ----------
    code : str
        Stable identifier (see the module docstring).
    severity : str
        ``"error"`` (the run failed or cannot work right), ``"warning"`` (it runs, likely slower than it
        should) or ``"info"``.
    title : str
        One line.
    evidence : str
        What was seen in the log.
    lines : tuple of int
        The 1-based line numbers of that evidence (at most :data:`MAX_FINDING_LINES` of them).
    fix : str
        What usually fixes it.
    source : str
        A public page for the fix (NCCL's documentation or an issue thread where it was confirmed).
    """

    code: str
    severity: str
    title: str
    evidence: str
    lines: tuple[int, ...]
    fix: str
    source: str


@dataclass(frozen=True)
class NcclInfoLog:
    """What :func:`parse_nccl_info_log` read (see the attributes) and :attr:`findings`.

    Attributes
    ----------
    nccl_versions : dict of str to tuple of int
        NCCL version (``"2.18.3"``) -> the lines printing it; more than one key is a mismatch.
    cuda_versions : tuple of str
        CUDA versions NCCL was built for (``"12.2"`` of ``+cuda12.2``).
    num_ranks : int or None
        Ranks of the largest communicator: ``nranks``/``nRanks`` of NCCL's ``comm`` lines; else the length of
        the longest ring order line (a ring visits every rank once) when NCCL printed it whole, or the highest
        rank number seen + 1, whichever is larger (then :attr:`num_ranks_exact` is False).
    num_nodes : int or None
        Nodes of the largest communicator (``nNodes``, printed since 2.19); None when not printed.
    local_ranks : int or None
        Ranks per node (``localRanks``, 2.19+).
    communicator_sizes : tuple of int
        The distinct ``nranks`` of all communicators in the log (PyTorch creates several).
    hosts : tuple of str
        Host names in NCCL's line prefixes, in order of appearance (containers may share one name).
    gpus : tuple of str
        GPU names from an nccl-tests device list in the log, one per rank listed.
    connections : tuple of Connection
        Every connection line.
    rings : dict of int to tuple of int
        Channel -> rank order of its ring (``Channel 00/02 :    0   1``), as first printed.
    trees : dict of int to tuple of str
        Rank -> its tree in each channel, as printed (``1/-1/-1->0->-1``: down ranks -> rank -> up).
    channel_counts : tuple of ChannelCounts
        Every ``coll channels`` line (one per rank and communicator).
    graphs : tuple of GraphPattern
        Topology search results (``NCCL_DEBUG_SUBSYS=GRAPH``).
    sys_gpu_paths : tuple of int
        Lines where the topology search lists a GPU-to-GPU path of type ``SYS``.
    nvls_support : tuple of (int, bool, int)
        ``(device, available, line)`` of each ``NVLS multicast support`` line.
    env : dict of str to str
        ``NCCL_*`` variables NCCL reports as set (``... set by environment to ...``), first value.
    env_lines : dict of str to int
        The line of each of them.
    networks : dict of str to tuple of int
        ``Using network X`` -> its lines.
    ib_devices : tuple of str
        RDMA devices NCCL found (``mlx5_0:1/IB``, ``mlx5_4:1/RoCE``).
    ib_missing_lines, ibverbs_missing_lines : tuple of int
        ``NET/IB : No device found`` and ``Failed to open libibverbs.so`` lines.
    socket_interfaces : tuple of str
        Interfaces of ``NET/Socket : Using`` (``ens3``).
    plugins : tuple of str
        Network plugins NCCL loaded.
    p2p_disabled_pairs : tuple of int
        ``P2P is disabled between connected GPUs`` lines.
    tuning : tuple of TuningChoice
        Algorithm/protocol choices.
    warnings : tuple of WarnLine
        ``NCCL WARN`` lines.
    results : tuple of (str, int)
        NCCL result strings printed by the application (``("unhandled system error", line)``).
    nccl_lines, total_lines : int
        Lines recognised as NCCL's, and lines in the text.
    num_ranks_exact : bool
        Whether :attr:`num_ranks` is NCCL's own ``nranks``/``nRanks`` or a complete ring; False when it is
        a lower bound (the highest rank number seen + 1, or a ring order line NCCL cut short).
    max_rank_seen : int or None
        The highest rank number in any line (connections, rings, trees, comm lines, device list).
    ring_channel_total : int or None
        ``N`` of the ring order lines ``Channel 05/N :`` (NCCL's channel count; 2.7+), largest printed.
    communicators : tuple of Communicator
        Every communicator the comm lines describe, in order of first line.
    test_devices : tuple of TestDevice
        nccl-tests' device list lines.
    test_headers, test_ends : tuple of int
        nccl-tests' header lines (``# nThread ...``) and run ends (``# Avg bus bandwidth``).
    gdr_disabled_lines : tuple of int
        ``NET/IB : GPU Direct RDMA Disabled for HCA`` lines.
    torch : TorchLog
        PyTorch's ProcessGroupNCCL lines (watchdog timeouts, progress, flight recorder).
    findings : tuple of Finding
        The problems found, most serious first.
    """

    nccl_versions: dict[str, tuple[int, ...]]
    cuda_versions: tuple[str, ...]
    num_ranks: int | None
    num_nodes: int | None
    local_ranks: int | None
    communicator_sizes: tuple[int, ...]
    hosts: tuple[str, ...]
    gpus: tuple[str, ...]
    connections: tuple[Connection, ...]
    rings: dict[int, tuple[int, ...]]
    trees: dict[int, tuple[str, ...]]
    channel_counts: tuple[ChannelCounts, ...]
    graphs: tuple[GraphPattern, ...]
    sys_gpu_paths: tuple[int, ...]
    nvls_support: tuple[tuple[int, bool, int], ...]
    env: dict[str, str]
    env_lines: dict[str, int]
    networks: dict[str, tuple[int, ...]]
    ib_devices: tuple[str, ...]
    ib_missing_lines: tuple[int, ...]
    ibverbs_missing_lines: tuple[int, ...]
    socket_interfaces: tuple[str, ...]
    plugins: tuple[str, ...]
    p2p_disabled_pairs: tuple[int, ...]
    tuning: tuple[TuningChoice, ...]
    warnings: tuple[WarnLine, ...]
    results: tuple[tuple[str, int], ...]
    nccl_lines: int
    total_lines: int
    num_ranks_exact: bool = True
    max_rank_seen: int | None = None
    ring_channel_total: int | None = None
    communicators: tuple[Communicator, ...] = ()
    test_devices: tuple[TestDevice, ...] = ()
    test_headers: tuple[int, ...] = ()
    test_ends: tuple[int, ...] = ()
    gdr_disabled_lines: tuple[int, ...] = ()
    torch: TorchLog = field(default_factory=TorchLog)
    findings: tuple[Finding, ...] = field(default=())

    @property
    def nccl_version(self) -> str | None:
        """The NCCL version, when every process printed the same one (else None: see ``nccl_versions``)."""
        return next(iter(self.nccl_versions)) if len(self.nccl_versions) == 1 else None

    @property
    def transports(self) -> dict[str, int]:
        """Connection label (``P2P/IPC``, ``NET/IB/GDRDMA``...) -> how many connection lines use it, sorted by label."""
        return dict(sorted(Counter(c.label for c in self.connections).items()))

    @property
    def coll_channels(self) -> int | None:
        """Collective channels: NCCL's own count (the largest ``coll channels`` printed, else the ``N`` of
        ``Channel 05/N :`` ring order lines), else the number of ring order lines seen, else None."""
        if self.channel_counts:
            return max(c.coll for c in self.channel_counts)
        return self.ring_channel_total or len(self.rings) or None

    @property
    def nvls_channels(self) -> int | None:
        """NVLS channels (the largest printed; None before 2.17, which did not print them)."""
        values = [c.nvls for c in self.channel_counts if c.nvls is not None]
        return max(values) if values else None

    def tuning_summary(self) -> list[dict]:
        """The tuning choices grouped by (function, algorithm, protocol), with their size range.

        Returns
        -------
        list of dict
            ``function``, ``algorithm``, ``protocol``, ``min_bytes``, ``max_bytes``, ``calls`` (lines)
            and ``first_line``, in order of first appearance.
        """
        groups: dict[tuple, dict] = {}
        for t in self.tuning:
            key = (t.function, t.algorithm, t.protocol)
            g = groups.setdefault(key, dict(function=t.function, algorithm=t.algorithm, protocol=t.protocol,
                                            min_bytes=t.msg_bytes, max_bytes=t.msg_bytes, calls=0, first_line=t.line))
            g["min_bytes"] = min(g["min_bytes"], t.msg_bytes)
            g["max_bytes"] = max(g["max_bytes"], t.msg_bytes)
            g["calls"] += 1
        return list(groups.values())

    def as_dict(self) -> dict:
        """Everything as plain JSON-ready data (dataclasses to dicts, tuples to lists), with the derived
        ``nccl_version``, ``transports``, ``coll_channels``, ``nvls_channels`` and ``tuning_summary``."""
        out = asdict(self)
        out.update(nccl_version=self.nccl_version, transports=self.transports, coll_channels=self.coll_channels,
                   nvls_channels=self.nvls_channels, tuning_summary=self.tuning_summary())
        return out

