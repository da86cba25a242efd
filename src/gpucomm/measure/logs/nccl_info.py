"""Read an ``NCCL_DEBUG=INFO`` log: what NCCL set up, and which known problems it shows.

With ``NCCL_DEBUG=INFO`` every NCCL process prints, while it builds a communicator, what it
found and what it chose: its version, the ranks and nodes, the transport of every connection
(``Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read``), the channels, the ring order and the trees;
with ``NCCL_DEBUG_SUBSYS=TUNING`` also the algorithm and protocol of each collective, and with
``GRAPH`` the topology search. ``WARN`` lines say what failed. :func:`parse_nccl_info_log`
reads all of that into a :class:`NcclInfoLog` (the facts) and adds :class:`Finding` objects:
the problems that NCCL's issue trackers see again and again, each with what was seen (line
numbers into the text), the usual fix and a public source for it.

The line formats are those of NCCL 2.4-2.30 (``src/init.cc``, ``src/transport/*.cc``,
``src/graph/*.cc``, ``src/enqueue.cc`` of each release); each regular expression below says
which releases print it. Lines are recognised wherever ``NCCL INFO`` / ``NCCL WARN`` sits in
the line, so launcher prefixes (``[1,0]<stdout>:`` of OpenMPI, ``0:`` of srun, ``[0]``,
``(pid=123)`` of Ray, CloudWatch timestamps) do not matter. Lines pasted without the
``NCCL INFO`` marker are not read, except ``NCCL version ...``, which NCCL prints without a prefix
at some debug levels. The ``TUNING`` table (``Algorithm | Tree ... | Ring ...``, one latency/bandwidth
pair per algorithm and protocol) is not read: it holds NCCL's model, while the ``Bytes -> Algo`` lines
say what it chose.

What is flagged (``Finding.code``):

``version_mismatch`` (error)
    Processes print different ``NCCL version`` numbers; every rank must run the same NCCL.
``mixed_networks`` (error)
    Processes chose different networks (``Using network Socket`` here, ``IB`` there).
``warn_*`` and ``nccl_error_*`` (error, or warning)
    ``NCCL WARN`` lines, grouped by kind (IB completion errors, shared memory, CUDA IPC,
    ``Cuda failure``, socket errors, timeouts...), and NCCL's result strings
    (``unhandled system error``...) printed by the application.
``p2p_not_used`` (warning)
    GPUs of one node connect through host shared memory (``via SHM``), or P2P is disabled by
    ``NCCL_P2P_DISABLE`` / ``NCCL_P2P_LEVEL``.
``no_gdrdma`` (warning)
    InfiniBand/RoCE connections without ``/GDRDMA``: data is staged through host memory.
``socket_network`` (warning)
    Traffic between nodes over TCP sockets (``NET/Socket``), with the reason the log shows
    (``NCCL_IB_DISABLE``, ``NET/IB : No device found``, libibverbs missing).
``nvls_unavailable`` (warning on NVSwitch GPUs, else info)
    NVLink SHARP (NVLS) not available or disabled.
``cross_socket`` (warning)
    The topology search found only ``SYS`` paths between GPUs (through the CPU-socket link).
``few_channels`` (warning)
    The number of channels is capped by the environment (``NCCL_MAX_NCHANNELS``/``NCCL_MAX_CTAS``).
``forced_algorithm`` / ``forced_protocol`` (warning)
    ``NCCL_ALGO`` / ``NCCL_PROTO`` set in the environment.

This module uses the standard library only (no torch).

Examples
--------
>>> log = read_bundled_info_log("nccl_1412")
>>> log.num_ranks, log.transports
(16, {'NET/IB': 4, 'P2P/direct': 10})
>>> [f.code for f in log.findings]
['no_gdrdma']
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from importlib import resources

from gpucomm import GpucommError

__all__ = ["Connection", "ChannelCounts", "GraphPattern", "TuningChoice", "WarnLine", "Finding", "NcclInfoLog",
           "parse_nccl_info_log", "bundled_info_log_names", "bundled_info_log_text", "read_bundled_info_log",
           "ALGORITHMS", "PROTOCOLS", "SEVERITIES"]

SEVERITIES = ("error", "warning", "info")
"""Finding severities, most serious first (findings are sorted in this order)."""

ALGORITHMS = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT")
"""NCCL's algorithm numbers 0-6 (``NCCL_ALGO_TREE`` ... ``NCCL_ALGO_PAT`` in ``src/include/device.h``,
2.19-2.30; number 2 was plain ``CollNet`` before 2.14), the names of ``ncclAlgoStr`` in ``src/init.cc``."""

PROTOCOLS = ("LL", "LL128", "Simple")
"""NCCL's protocol numbers 0-2 (``NCCL_PROTO_LL``, ``NCCL_PROTO_LL128``, ``NCCL_PROTO_SIMPLE``)."""

_ALGORITHM_NAMES = {name.upper(): name for name in ALGORITHMS} | {"COLLNET_DIRECT": "CollNetDirect",
                                                                   "COLLNET_CHAIN": "CollNetChain",
                                                                   "NVLS_TREE": "NVLSTree"}
"""The upper-case names NCCL 2.24+ prints (``ncclAlgoToString`` in ``src/collectives.cc``) -> ``ALGORITHMS``."""

# ------------------------------------------------------------------------------------------ line formats

# Every NCCL debug line: "host:pid:tid [cudaDev] NCCL INFO message" (src/debug.cc, 2.4-2.30). WARN lines
# also carry the source location: "host:pid:tid [dev] transport/net_ib.cc:1295 NCCL WARN message". The
# host part is missing where the user stripped it ("[0] NCCL INFO ..."); anything before it is a launcher prefix.
_NCCL_LINE_RE = re.compile(
    r"(?:(?P<host>[^\s:]*):(?P<pid>\d{1,10}):(?P<tid>\d{1,10}) \[(?P<dev>\d{1,4})\] )?"
    r"(?:(?P<where>[\w./-]{1,200}:\d{1,6}) )?NCCL (?P<level>INFO|WARN) ?(?P<msg>.*)$")
# "NCCL version 2.18.3+cuda12.2": an INFO message since 2.12, a bare printf line before (src/init.cc).
# Also found in applications' error messages ("..., NCCL version 2.18.1"), which name the same library.
_VERSION_RE = re.compile(r"\bNCCL version (?P<version>\d{1,3}\.\d{1,3}\.\d{1,3})[\w-]*(?:\+cuda(?P<cuda>\d{1,3}\.\d{1,3}))?")
# "comm 0x55.. rank 11 nranks 16 cudaDev 3 nvmlDev 3 busId 4e000 commId 0x.. - Init START|Init COMPLETE"
# (2.7-2.30, some fields only in later releases; 2.21+ prefix "ncclCommInitRank "), "- Destroy COMPLETE".
_COMM_RE = re.compile(r"\bcomm (?P<comm>0x[0-9a-fA-F]{1,16}|\(nil\)) rank (?P<rank>\d{1,7}) nranks (?P<nranks>\d{1,7}) "
                      r"cudaDev (?P<dev>\d{1,4}).*? - (?P<event>Init START|Init COMPLETE|Destroy COMPLETE|Abort COMPLETE)")
# "comm 0x.. rank 7 nRanks 8 nNodes 2 localRanks 4 localRank 3 MNNVL 0" (2.19-2.30; MNNVL since 2.20).
_COMM_NODES_RE = re.compile(r"\bcomm \S{1,20} rank (?P<rank>\d{1,7}) nRanks (?P<nranks>\d{1,7}) nNodes (?P<nnodes>\d{1,6}) "
                            r"localRanks (?P<local_ranks>\d{1,4}) localRank (?P<local_rank>\d{1,4})")
# One connection of one channel (src/transport/{p2p,shm,net,coll_net}.cc):
#   2.4-2.6   "Ring 00 : 3[1b000] -> 5[3e000] via P2P/IPC", "Ring 00 : 34 -> 33 [send] via NET/Socket/0"
#   2.7-2.11  "Channel 00 : 0[2d000] -> 1[2e000] via P2P/IPC", "... via direct shared memory"
#   2.12-2.30 "Channel 03/0 : 15[7] -> 6[6] [send] via NET/Socket/3", "... via NET/IBext_v8/0(7)/GDRDMA",
#             "Channel 00/0 : 8[0] -> 15[7] via P2P/IPC/read", "Channel 00 : 3[3] -> 7[7] via SHM/direct/direct"
#   CollNet   "CollNet 00/0 : 3 [send] via COLLNET/SHARP/0/GDRDMA" (no peer: the switch reduces)
_CONNECTION_RE = re.compile(
    r"^(?:Channel|Ring|CollNet) (?P<channel>\d{1,3})(?:/(?P<conn>\d{1,2}))? : (?P<src>\d{1,7})(?:\[[0-9a-fA-F]{1,16}\])?"
    r"(?: -> (?P<dst>\d{1,7})(?:\[[0-9a-fA-F]{1,16}\])?)? (?:\[(?P<direction>send|receive)\] )?via (?P<via>.+?)\s*$")
# Ring order, printed by rank 0: "Channel 00/24 :    0   1   2   3" (src/graph/rings.cc, 2.7-2.30).
_RING_ORDER_RE = re.compile(r"^Channel (?P<channel>\d{1,3})/(?P<count>\d{1,3}) :(?P<ranks>(?:\s+\d{1,7})+)\s*$")
# Trees of one rank, one entry per channel: "Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1" (2.9-2.30: down
# ranks -> rank -> up), "[0] 1/-1/-1->0->-1|-1->0->1/-1/-1" (2.7-2.8, split trees), "[0] 26->25->-1/-1/-1" (2.4).
_TREES_RE = re.compile(r"^Trees(?P<trees>(?: \[\d{1,3}\] \S{1,200})+)\s*$")
_TREE_ENTRY_RE = re.compile(r"\[(\d{1,3})\] (\S+)")
_TREE_RANK_RE = re.compile(r"->(\d{1,7})->")
# "16 coll channels, 0 collnet channels, 16 nvls channels, 16 p2p channels, 1 p2p channels per peer" (2.19-2.30);
# 2.17-2.18 without collnet, 2.7-2.16 "%d coll channels, %d p2p channels, %d p2p channels per peer".
_CHANNEL_COUNTS_RE = re.compile(r"^(?P<coll>\d{1,3}) coll channels, (?:(?P<collnet>\d{1,3}) collnet channels, )?"
                                r"(?:(?P<nvls>\d{1,3}) nvls channels, )?(?P<p2p>\d{1,3}) p2p channels, "
                                r"(?P<per_peer>\d{1,3}) p2p channels per peer")
# Topology search result (NCCL_DEBUG_SUBSYS=GRAPH; src/graph/search.cc): "Pattern 4, crossNic 0, nChannels 1,
# bw 10.000000/10.000000, type SYS/PIX, sameChannels 1" ("speed" instead of "bw" before 2.13).
_PATTERN_RE = re.compile(r"^Pattern (?P<pattern>\d{1,2}), crossNic (?P<cross_nic>\d), nChannels (?P<nchannels>\d{1,3}), "
                         r"(?:bw|speed) (?P<bw_intra>[\d.]{1,20})/(?P<bw_inter>[\d.]{1,20}), "
                         r"type (?P<type_intra>\w{1,8})/(?P<type_inter>\w{1,8})")
# Paths found by the topology search (GRAPH): "GPU/2A000 :GPU/2A000 (0/5000.000000/LOC) GPU/AB000 (3/10.000000/SYS) ..."
_GPU_PATHS_RE = re.compile(r"^GPU/(?P<gpu>\w{1,20}) :(?P<paths>.*)$")
_GPU_PATH_RE = re.compile(r"GPU/(?P<gpu>\w{1,20}) \(\d{1,3}/[\d.]{1,20}/(?P<type>\w{1,8})\)")
# "NVLS multicast support is not available on dev 4" (src/transport/nvls.cc, 2.17-2.30; 2.2x may add "(NVLS_NCHANNELS 0)").
_NVLS_SUPPORT_RE = re.compile(r"^NVLS multicast support is (?P<negation>not )?available on dev (?P<dev>\d{1,4})")
# "NCCL_IB_GID_INDEX set by environment to 3." (src/misc/param.cc adds the final dot to numbers), "NCCL_ALGO set by
# environment to Ring", "NCCL_IB_HCA set to mlx5_2:1" (2.4-2.30).
_ENV_RE = re.compile(r"^(?P<name>NCCL_[A-Z0-9_]{1,60}) set (?:by environment )?to (?P<value>.*?)\.?\s*$")
# "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/RoCE [RO]; OOB ib0:10.0.0.1<0>" (src/transport/net_ib.cc, 2.4-2.30).
_IB_USING_RE = re.compile(r"^NET/IB ?: Using(?P<devices>.*?);? ?OOB ")
_IB_DEVICE_RE = re.compile(r"\[\d{1,3}\](\S+?:\d{1,3}/(?:IB|RoCE)(?:/SHARP)?)")
_IB_NONE_RE = re.compile(r"^NET/IB ?: No device found")
# "NET/Socket : Using [0]ens3:172.31.5.237<0> [1]ib0:..." (src/transport/net_socket.cc).
_SOCKET_USING_RE = re.compile(r"^NET/Socket ?: Using(?P<ifaces>.*)$")
_SOCKET_IFACE_RE = re.compile(r"\[\d{1,3}\](\S+?):\S+?<\d+>")
# "Using network IB" / "Using network Socket" / "Using network IBext_v8" / "Using network AWS Libfabric" (2.9-2.30).
_USING_NETWORK_RE = re.compile(r"^Using network (?P<name>.+?)\s*$")
# Network plugins: "NET/Plugin: Loaded net plugin NCCL RDMA Plugin v8 (v8)", "P2P plugin IBext_v8".
_PLUGIN_RE = re.compile(r"^(?:NET/Plugin ?: Loaded net plugin (?P<loaded>.+?) \(v\d{1,3}\)|P2P plugin (?P<p2p>\S+))\s*$")
# "Failed to open libibverbs.so[.1]" (WARN in 2.4-2.12, INFO later): no RDMA user library.
_IBVERBS_MISSING_RE = re.compile(r"Failed to open libibverbs\.so")
# "P2P is disabled between connected GPUs 0 and 1" (INFO, 2.19-2.30; a WARN when the GPUs share NVLink).
_P2P_PAIR_DISABLED_RE = re.compile(r"P2P is disabled between (?:NVLINK )?connected GPUs (\d{1,4}) and (\d{1,4})")
# Algorithm choice per collective (NCCL_DEBUG_SUBSYS=TUNING, printed by rank 0; src/enqueue.cc):
#   2.21-2.22 "1048576 Bytes -> Algo 1 proto 2 time 20.500000"            (numbers: ALGORITHMS, PROTOCOLS)
#   2.23      "AllReduce: 1048576 Bytes -> Algo 1 proto 2 time 20.500000"
#   2.24-2.30 "AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..31}"
#   2.27-2.30 "AllReduce [Symmetric]: 1048576 Bytes -> Kernel AllReduce_AGxLL_R nchannels 16 nthreads 512"
_TUNING_NUMERIC_RE = re.compile(r"^(?:(?P<func>[A-Za-z]{1,20}): )?(?P<bytes>\d{1,20}) Bytes -> Algo (?P<algo>\d) "
                                r"proto (?P<proto>\d) time (?P<time>[\d.]{1,30})")
_TUNING_NAMED_RE = re.compile(r"^(?P<func>[A-Za-z]{1,20}): (?P<bytes>\d{1,20}) Bytes -> Algo (?P<algo>[A-Z_]{1,20}) "
                              r"proto (?P<proto>[A-Z0-9]{1,10})(?: channel\{Lo\.\.Hi\}=\{(?P<lo>\d{1,3})\.\.(?P<hi>\d{1,3})\})?")
_TUNING_SYMMETRIC_RE = re.compile(r"^(?P<func>[A-Za-z]{1,20}) \[Symmetric\]: (?P<bytes>\d{1,20}) Bytes -> Kernel "
                                  r"(?P<kernel>\S{1,80}) nchannels (?P<nchannels>\d{1,3})")
# nccl-tests' device list ("#  Rank  0 Group  0 Pid 33347 on host device  0 [0x0f] NVIDIA H800"): the GPU names.
_TEST_DEVICE_RE = re.compile(r"^#?\s*Rank\s+(?P<rank>\d{1,7})\s+(?:Group\s+\d{1,7}\s+)?Pid\s+\d{1,10}\s+on\s+(?P<host>\S+)"
                             r"\s+device\s+\d{1,4}\s+\[[^\]]{0,40}\]\s*(?P<name>.*?)\s*$")
# NCCL's result strings (ncclGetErrorString, src/init.cc) as applications print them: "NCCL error: unhandled
# system error", "Test NCCL failure common.cu:958 'internal error - please report ...'".
_RESULT_RE = re.compile(r"\b(?P<result>unhandled system error|unhandled cuda error|internal error|invalid usage|"
                        r"remote process exited or there was a network error)\b")

# GPUs whose nodes have third-generation NVSwitches, which NVLS needs (H100/H800/H200/H20 SXM, Blackwell HGX).
# nccl-tests prints the CUDA device name; the PCIe and NVL (bridged) cards have "PCIe"/"NVL" in it.
_NVSWITCH_GPU_RE = re.compile(r"\b(?:H100 80GB HBM3|H100 SXM\S*|H800|H200|H20|B100|B200|B300|GB200|GB300)\b(?! ?(?:PCIe|NVL))")

# -------------------------------------------------------------------------------------------- sources

_DOCS = "https://docs.nvidia.com/deeplearning/nccl/archives/nccl_2262/user-guide/docs"
_ENV_DOCS = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
_SRC_ACS = f"{_DOCS}/troubleshooting.html#pci-access-control-services-acs"
_SRC_ERRORS = f"{_DOCS}/troubleshooting.html#errors"
_SRC_NETWORK = f"{_DOCS}/troubleshooting.html#networking-issues"


# ------------------------------------------------------------------------------------------ records

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
        The 1-based line numbers of that evidence (at most :data:`_MAX_LINES` of them).
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
        Ranks of the largest communicator (``nranks``/``nRanks`` of NCCL's ``comm`` lines; else the
        length of the longest printed ring, which visits every rank once).
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
        """Collective channels (the largest ``coll channels`` printed), else the ring count, else None."""
        if self.channel_counts:
            return max(c.coll for c in self.channel_counts)
        return len(self.rings) or None

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


# ----------------------------------------------------------------------------------------- the parser

def _transport(via: str) -> tuple[str, bool]:
    """``(transport, gdr)`` of the text after ``via`` (see :attr:`Connection.transport`)."""
    gdr = "/GDRDMA" in via
    if via.startswith("P2P/"):
        kind = via[4:].split("/")[0]
        if kind.startswith("direct pointer") or kind.startswith("common device"):
            return "P2P/direct", gdr
        return f"P2P/{kind}", gdr
    if via.startswith("SHM") or via == "direct shared memory":
        return "SHM", gdr
    if via.startswith("NET/"):
        m = re.match(r"NET/(.+?)/\d", via)
        name = m.group(1) if m else via[4:].split("/")[0]
        if name.startswith("IB"):  # IB (built-in), IBext / IBext_v8 (HPC-X plugin): InfiniBand or RoCE verbs
            return "NET/IB", gdr
        return f"NET/{name}", gdr
    if via.startswith("COLLNET/"):
        return "CollNet", gdr
    return via.split("/")[0], gdr


class _Reader:
    """Accumulates the facts line by line (one instance per text)."""

    def __init__(self) -> None:
        self.versions: dict[str, list[int]] = {}
        self.cuda: list[str] = []
        self.comm_sizes: dict[int, int] = {}  # nranks -> first line
        self.nodes: list[tuple[int, int, int]] = []  # (nranks, nnodes, local ranks)
        self.hosts: list[str] = []
        self.gpus: list[str] = []
        self.connections: list[Connection] = []
        self.rings: dict[int, tuple[int, ...]] = {}
        self.trees: dict[int, tuple[str, ...]] = {}
        self.channel_counts: list[ChannelCounts] = []
        self.graphs: list[GraphPattern] = []
        self.sys_gpu_paths: list[int] = []
        self.nvls: list[tuple[int, bool, int]] = []
        self.env: dict[str, str] = {}
        self.env_lines: dict[str, int] = {}
        self.networks: dict[str, list[int]] = {}
        self.ib_devices: list[str] = []
        self.ib_missing: list[int] = []
        self.ibverbs_missing: list[int] = []
        self.socket_ifaces: list[str] = []
        self.plugins: list[str] = []
        self.p2p_pairs: list[int] = []
        self.tuning: list[TuningChoice] = []
        self.warnings: list[WarnLine] = []
        self.results: list[tuple[str, int]] = []
        self.nccl_lines = 0

    @staticmethod
    def _add(items: list, value) -> None:
        if value not in items:
            items.append(value)

    def read(self, number: int, line: str) -> None:
        if line.lstrip().startswith("#"):  # nccl-tests' own lines and comments: only its device list is read
            device = _TEST_DEVICE_RE.match(line)
            if device:
                self.gpus.append(device["name"])
            return
        # the substring test first: the regular expression would scan long foreign lines (base64, JSON) slowly
        m = _NCCL_LINE_RE.search(line) if "NCCL " in line else None
        version = _VERSION_RE.search(line) if "NCCL version" in line else None
        if version:
            self.versions.setdefault(version["version"], []).append(number)
            if version["cuda"]:
                self._add(self.cuda, version["cuda"])
        if "NCCL" in line or "nccl" in line:
            result = _RESULT_RE.search(line)
            if result and not m:  # the application's message, not NCCL's own lines
                self.results.append((result["result"], number))
        if not m:
            if version:
                self.nccl_lines += 1
            return
        self.nccl_lines += 1
        if m["host"]:
            self._add(self.hosts, m["host"])
        msg = m["msg"].strip()
        if _IBVERBS_MISSING_RE.search(msg):
            self.ibverbs_missing.append(number)
        if m["level"] == "WARN":
            self.warnings.append(WarnLine(msg, m["where"], m["host"] or None, number))
            if _P2P_PAIR_DISABLED_RE.search(msg):  # a WARN when the GPUs share NVLink
                self.p2p_pairs.append(number)
            return
        self._read_info(number, msg)

    def _read_info(self, number: int, msg: str) -> None:
        if (c := _CONNECTION_RE.match(msg)):
            transport, gdr = _transport(c["via"])
            self.connections.append(Connection(int(c["channel"]), int(c["src"]), None if c["dst"] is None else int(c["dst"]),
                                               c["direction"], transport, gdr, c["via"], number))
        elif (r := _RING_ORDER_RE.match(msg)):
            self.rings.setdefault(int(r["channel"]), tuple(int(x) for x in r["ranks"].split()))
        elif (t := _TREES_RE.match(msg)):
            entries = _TREE_ENTRY_RE.findall(t["trees"])
            rank = _TREE_RANK_RE.search(entries[0][1]) if entries else None
            if rank:
                self.trees.setdefault(int(rank.group(1)), tuple(tree for _, tree in entries))
        elif (cm := _COMM_NODES_RE.search(msg)):
            self.nodes.append((int(cm["nranks"]), int(cm["nnodes"]), int(cm["local_ranks"])))
            self.comm_sizes.setdefault(int(cm["nranks"]), number)
        elif (cm := _COMM_RE.search(msg)):
            self.comm_sizes.setdefault(int(cm["nranks"]), number)
        elif (cc := _CHANNEL_COUNTS_RE.match(msg)):
            self.channel_counts.append(ChannelCounts(
                int(cc["coll"]), None if cc["collnet"] is None else int(cc["collnet"]),
                None if cc["nvls"] is None else int(cc["nvls"]), int(cc["p2p"]), int(cc["per_peer"]), number))
        elif (p := _PATTERN_RE.match(msg)):
            self.graphs.append(GraphPattern(int(p["pattern"]), int(p["nchannels"]), float(p["bw_intra"]),
                                            float(p["bw_inter"]), p["type_intra"], p["type_inter"], number))
        elif (g := _GPU_PATHS_RE.match(msg)):
            if any(path["type"] == "SYS" for path in _GPU_PATH_RE.finditer(g["paths"])):
                self.sys_gpu_paths.append(number)
        elif (n := _NVLS_SUPPORT_RE.match(msg)):
            self.nvls.append((int(n["dev"]), not n["negation"], number))
        elif (e := _ENV_RE.match(msg)):
            self.env.setdefault(e["name"], e["value"])
            self.env_lines.setdefault(e["name"], number)
        elif (ib := _IB_USING_RE.match(msg)):
            for device in _IB_DEVICE_RE.findall(ib["devices"]):
                self._add(self.ib_devices, device)
        elif _IB_NONE_RE.match(msg):
            self.ib_missing.append(number)
        elif (s := _SOCKET_USING_RE.match(msg)):
            for iface in _SOCKET_IFACE_RE.findall(s["ifaces"]):
                self._add(self.socket_ifaces, iface)
        elif (u := _USING_NETWORK_RE.match(msg)):
            self.networks.setdefault(u["name"], []).append(number)
        elif (pl := _PLUGIN_RE.match(msg)):
            self._add(self.plugins, pl["loaded"] or pl["p2p"])
        elif _P2P_PAIR_DISABLED_RE.search(msg):
            self.p2p_pairs.append(number)
        else:
            self._read_tuning(number, msg)

    def _read_tuning(self, number: int, msg: str) -> None:
        if (t := _TUNING_NUMERIC_RE.match(msg)):
            algo, proto = int(t["algo"]), int(t["proto"])
            self.tuning.append(TuningChoice(
                t["func"], int(t["bytes"]), ALGORITHMS[algo] if algo < len(ALGORITHMS) else f"algo {algo}",
                PROTOCOLS[proto] if proto < len(PROTOCOLS) else f"proto {proto}", float(t["time"]), None, number))
        elif (t := _TUNING_NAMED_RE.match(msg)):
            proto = {"SIMPLE": "Simple"}.get(t["proto"], t["proto"])
            channels = (int(t["lo"]), int(t["hi"])) if t["lo"] is not None else None
            self.tuning.append(TuningChoice(t["func"], int(t["bytes"]), _ALGORITHM_NAMES.get(t["algo"], t["algo"]), proto,
                                            None, channels, number))
        elif (t := _TUNING_SYMMETRIC_RE.match(msg)):
            self.tuning.append(TuningChoice(t["func"], int(t["bytes"]), f"symmetric kernel {t['kernel']}", "-", None,
                                            (0, int(t["nchannels"]) - 1), number))

    def facts(self, total_lines: int) -> NcclInfoLog:
        largest = max(self.nodes, default=None)
        return NcclInfoLog(
            nccl_versions={v: tuple(lines) for v, lines in self.versions.items()},
            cuda_versions=tuple(self.cuda),
            # a ring visits every rank of its communicator once: its length is the size where no comm line says it
            num_ranks=max(self.comm_sizes, default=None) or max((len(r) for r in self.rings.values()), default=None),
            num_nodes=largest[1] if largest else None,
            local_ranks=largest[2] if largest else None,
            communicator_sizes=tuple(sorted(self.comm_sizes)),
            hosts=tuple(self.hosts),
            gpus=tuple(self.gpus),
            connections=tuple(self.connections),
            rings=dict(sorted(self.rings.items())),
            trees=dict(sorted(self.trees.items())),
            channel_counts=tuple(self.channel_counts),
            graphs=tuple(self.graphs),
            sys_gpu_paths=tuple(self.sys_gpu_paths),
            nvls_support=tuple(self.nvls),
            env=dict(self.env),
            env_lines=dict(self.env_lines),
            networks={k: tuple(v) for k, v in self.networks.items()},
            ib_devices=tuple(self.ib_devices),
            ib_missing_lines=tuple(self.ib_missing),
            ibverbs_missing_lines=tuple(self.ibverbs_missing),
            socket_interfaces=tuple(self.socket_ifaces),
            plugins=tuple(self.plugins),
            p2p_disabled_pairs=tuple(self.p2p_pairs),
            tuning=tuple(self.tuning),
            warnings=tuple(self.warnings),
            results=tuple(self.results),
            nccl_lines=self.nccl_lines,
            total_lines=total_lines,
        )


def parse_nccl_info_log(text: str) -> NcclInfoLog:
    """Read the NCCL lines of ``text`` (an ``NCCL_DEBUG=INFO`` log, any other lines ignored) and flag problems.

    Parameters
    ----------
    text : str
        The log: NCCL's output, possibly mixed with the application's (nccl-tests, PyTorch) and with
        launcher prefixes, possibly from many processes and nodes.

    Returns
    -------
    NcclInfoLog
        The facts and :attr:`NcclInfoLog.findings`.

    Raises
    ------
    GpucommError
        When no line is NCCL's (no ``NCCL INFO``/``NCCL WARN`` line, no ``NCCL version`` line).

    Examples
    --------
    >>> log = parse_nccl_info_log("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read")
    >>> log.transports, log.findings
    ({'P2P/IPC': 1}, ())
    """
    reader = _Reader()
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        reader.read(number, line.rstrip())
    if reader.nccl_lines == 0:
        raise GpucommError("no NCCL debug line in the text: expected lines like 'host:pid:tid [0] NCCL INFO ...' "
                           "(run with NCCL_DEBUG=INFO)")
    facts = reader.facts(len(lines))
    findings = sorted(_findings(facts), key=lambda f: SEVERITIES.index(f.severity))
    return replace(facts, findings=tuple(findings))


# ----------------------------------------------------------------------------------------- the checks

_MAX_LINES = 20
"""At most this many line numbers per finding (the evidence says how many there were)."""


def _lines(numbers) -> tuple[int, ...]:
    return tuple(sorted(set(numbers)))[:_MAX_LINES]


def _int_env(log: NcclInfoLog, name: str) -> int | None:
    try:
        return int(log.env[name])
    except (KeyError, ValueError):
        return None


def _findings(log: NcclInfoLog) -> list[Finding]:
    out: list[Finding] = []
    for check in (_check_versions, _check_networks_agree, _check_warns, _check_results, _check_p2p, _check_gdr,
                  _check_socket, _check_nvls, _check_cross_socket, _check_channels, _check_forced):
        out.extend(check(log))
    return out


def _check_versions(log: NcclInfoLog) -> list[Finding]:
    if len(log.nccl_versions) < 2:
        return []
    seen = "; ".join(f"{v} on lines {', '.join(map(str, lines[:5]))}" for v, lines in log.nccl_versions.items())
    return [Finding(
        "version_mismatch", "error", "processes run different NCCL versions",
        f"NCCL version lines disagree: {seen}",
        _lines(n for lines in log.nccl_versions.values() for n in lines),
        "run the same NCCL on every node: check what each process loads (torch.cuda.nccl.version(), pip's "
        "nvidia-nccl-cu12 against a system libnccl.so, LD_LIBRARY_PATH, the container image)",
        "https://github.com/NVIDIA/nccl/issues/1267")]


def _check_networks_agree(log: NcclInfoLog) -> list[Finding]:
    if len(log.networks) < 2:
        return []
    seen = ", ".join(f"{name} ({len(lines)} lines)" for name, lines in log.networks.items())
    return [Finding(
        "mixed_networks", "error", "processes chose different networks",
        f"'Using network' differs between processes: {seen}; a connection between a Socket rank and an IB rank "
        "cannot work (e.g. 'socketFinalizeAccept: wrong type')",
        _lines(n for lines in log.networks.values() for n in lines),
        "give every node the same NICs, drivers and network plugin: rdma-core/libibverbs and /dev/infiniband in "
        "every container, the same libnccl-net.so (or none) everywhere, the same NCCL_IB_DISABLE/NCCL_NET settings",
        "https://github.com/NVIDIA/nccl-tests/issues/188")]


@dataclass(frozen=True)
class _WarnRule:
    code: str
    pattern: re.Pattern
    severity: str
    title: str
    fix: str
    source: str


_IB_STATUS = {"4": "local protection error: the NIC could not access the buffer (memory registration; "
                   "GPUDirect RDMA modules or ACS)",
              "5": "work request flushed: an earlier error broke the connection",
              "12": "transport retry counter exceeded: the peer did not answer (link down, wrong GID/route, "
                    "peer process gone)",
              "13": "RNR retry counter exceeded: the peer was not ready to receive"}
"""``ibv_wc_status`` numbers (``enum ibv_wc_status`` in rdma-core's ``verbs.h``) NCCL prints in completion errors."""

_WARN_RULES = (
    _WarnRule("warn_ib_completion", re.compile(r"NET/IB\w* ?: ?Got completion"), "error",
              "an InfiniBand/RoCE transfer failed (completion with error)",
              "test the fabric between the nodes named in the lines (ibstat, ibv_devinfo, ib_write_bw); on RoCE set "
              "NCCL_IB_GID_INDEX to the RoCE v2 GID (show_gids); check cables/ports and NCCL_IB_TIMEOUT; a peer "
              "that died first also shows up here, so look at the earliest error across ranks",
              "https://github.com/NVIDIA/nccl/issues/1664"),
    _WarnRule("warn_shared_memory", re.compile(r"shared memory segment|/dev/shm|shm_open|posix_fallocate|ShmOpen"),
              "error", "NCCL cannot create its shared-memory buffers in /dev/shm",
              "give the container more /dev/shm (docker run --shm-size=1g, or --ipc=host; Kubernetes: an emptyDir with "
              "medium Memory on /dev/shm) and make it writable; NCCL_SHM_DISABLE=1 avoids it at a cost in speed",
              "https://github.com/NVIDIA/nccl/issues/342"),
    _WarnRule("warn_cuda_ipc", re.compile(r"CUDA IPC|cudaIpc|peer access is not supported|P2P is disabled between NVLINK"),
              "error", "GPUs of one node cannot map each other's memory (P2P/IPC failed)",
              "check P2P with 'nvidia-smi topo -p2p r': disable PCIe ACS (or set iommu=pt) on bare metal, give a VM or "
              "container all GPUs with P2P allowed; on GPUs without P2P support set NCCL_P2P_DISABLE=1 so NCCL "
              "uses shared memory",
              _SRC_ACS),
    _WarnRule("warn_cuda_failure", re.compile(r"Cuda failure|CUDA failure|cuda failure"), "error",
              "a CUDA call inside NCCL failed",
              "read the CUDA error in the line: 'out of memory' (free GPU memory, smaller NCCL_BUFFSIZE), 'CUDA driver "
              "is a stub library' or version errors (driver older than the CUDA NCCL was built for), other errors "
              "(GPU fault: dmesg for Xid errors, nvidia-smi)",
              _SRC_ERRORS),
    _WarnRule("warn_address_family", re.compile(r"connecting to address with family \d+ is neither"), "error",
              "a peer's connection address cannot be read (corrupt or incompatible handle)",
              "make sure every node runs the same NCCL version (this error was traced to one node with a different "
              "NCCL wheel) and the same network plugin",
              "https://github.com/NVIDIA/nccl/issues/1267"),
    _WarnRule("warn_socket", re.compile(r"socket|Socket|Connection (?:refused|reset|closed)|Call to connect|"
                                        r"Net : |wrong type|remote peer"), "error",
              "a TCP connection between ranks failed",
              "look for the rank that failed first (a crash closes its sockets); pick a routable interface with "
              "NCCL_SOCKET_IFNAME (the same on every node), open the ports in firewalls; 'wrong type' means the two "
              "sides use different networks or NCCL versions",
              f"{_DOCS}/troubleshooting.html#ip-network-interfaces"),
    _WarnRule("warn_ib_setup", re.compile(r"ibv_\w+ failed|Unable to open device|ibv_reg_mr|ibv_modify_qp"), "error",
              "an InfiniBand/RoCE setup call failed",
              "ibv_reg_mr: raise the locked-memory limit (ulimit -l unlimited) and load nvidia-peermem for GPU buffers; "
              "ibv_modify_qp: on RoCE check NCCL_IB_GID_INDEX and that the nodes can reach each other; 'Unable to open "
              "device': pass the device into the container or exclude it with NCCL_IB_HCA",
              _SRC_NETWORK),
    _WarnRule("warn_timeout", re.compile(r"[Tt]ime ?out|timed out"), "error", "NCCL gave up waiting (timeout)",
              "a peer is stuck or gone: find the first rank that failed or hung; for a slow network raise "
              "NCCL_IB_TIMEOUT",
              _SRC_NETWORK),
    _WarnRule("warn_libibverbs", _IBVERBS_MISSING_RE, "warning", "libibverbs is missing: NCCL cannot use InfiniBand/RoCE",
              "install rdma-core (libibverbs) in the image and expose /dev/infiniband, or ignore this where the nodes "
              "have no RDMA NIC",
              _SRC_NETWORK),
    _WarnRule("warn_mismatch", re.compile(r"[Mm]ismatch"), "error", "ranks disagree about a collective",
              "every rank must call the same collectives in the same order with the same sizes; a different NCCL "
              "version on one node gives the same message",
              "https://github.com/NVIDIA/nccl/issues/296"),
)
_GENERIC_WARN = _WarnRule("warn_other", re.compile(""), "warning", "NCCL printed a warning",
                          "read the first WARN in time: NCCL prints the failing call and its error there",
                          _SRC_ERRORS)


def _check_warns(log: NcclInfoLog) -> list[Finding]:
    groups: dict[str, list[WarnLine]] = {}
    for w in log.warnings:
        rule = next((r for r in _WARN_RULES if r.pattern.search(w.message)), _GENERIC_WARN)
        groups.setdefault(rule.code, []).append(w)
    rules = {r.code: r for r in (*_WARN_RULES, _GENERIC_WARN)}
    out = []
    for code, warns in groups.items():
        rule = rules[code]
        first = warns[0]
        evidence = f"{len(warns)} WARN line{'s' if len(warns) > 1 else ''}, first: {first.message!r}"
        if code == "warn_ib_completion":
            status = re.search(r"(?:status=|error )(\d+)", first.message)
            if status and status.group(1) in _IB_STATUS:
                evidence += f" (status {status.group(1)}: {_IB_STATUS[status.group(1)]})"
        hosts = sorted({w.host for w in warns if w.host})
        if len(hosts) > 1:
            evidence += f"; on {len(hosts)} hosts ({', '.join(hosts[:6])}{'...' if len(hosts) > 6 else ''})"
        out.append(Finding(code, rule.severity, rule.title, evidence, _lines(w.line for w in warns), rule.fix,
                           rule.source))
    return out


_RESULTS = {
    "unhandled system error": ("nccl_error_system", "a system or library call failed (sockets, shared memory, "
                               "InfiniBand verbs)"),
    "unhandled cuda error": ("nccl_error_cuda", "a CUDA call failed"),
    "internal error": ("nccl_error_internal", "NCCL hit an inconsistent state (often after an earlier failure, or "
                       "with peers that do not match)"),
    "invalid usage": ("nccl_error_usage", "the application used NCCL wrongly (e.g. two ranks on one GPU)"),
    "remote process exited or there was a network error": ("nccl_error_remote", "a peer died or the network failed"),
}
"""NCCL result strings (``ncclGetErrorString``) -> (finding code, meaning per NCCL's troubleshooting guide)."""


def _check_results(log: NcclInfoLog) -> list[Finding]:
    out = []
    for result in dict.fromkeys(r for r, _ in log.results):
        code, meaning = _RESULTS[result]
        lines = [n for r, n in log.results if r == result]
        hint = (" The WARN lines say which call failed." if log.warnings else
                " The log has no WARN line: rerun with NCCL_DEBUG=WARN (or INFO) on every rank to see which call failed.")
        out.append(Finding(
            code, "error", f"NCCL returned '{result}'", f"'{result}' on {len(lines)} line(s): {meaning}.{hint}",
            _lines(lines), "fix the call NCCL names in its WARN line (see the other findings); NCCL's troubleshooting "
            "guide lists the error classes", _SRC_ERRORS))
    return out


def _check_p2p(log: NcclInfoLog) -> list[Finding]:
    shm = [c for c in log.connections if c.transport == "SHM"]
    disabled_env = {k: v for k, v in log.env.items() if (k == "NCCL_P2P_DISABLE" and v == "1")
                    or (k == "NCCL_P2P_LEVEL" and v in ("0", "LOC"))}
    if not shm and not disabled_env and not log.p2p_disabled_pairs:
        return []
    parts = []
    if shm:
        parts.append(f"{len(shm)} connection line(s) go through host shared memory (via {shm[0].via}) instead of "
                     "GPU peer-to-peer")
    if disabled_env:
        parts.append("P2P disabled by the environment: " + ", ".join(f"{k}={v}" for k, v in disabled_env.items()))
    if log.p2p_disabled_pairs:
        parts.append(f"NCCL found P2P disabled between {len(log.p2p_disabled_pairs)} GPU pair(s)")
    geforce = sorted({g for g in log.gpus if "GeForce" in g})
    if geforce:
        parts.append(f"GPUs: {', '.join(geforce)} (GeForce cards usually have no PCIe P2P)")
    fix = ("unset NCCL_P2P_DISABLE / NCCL_P2P_LEVEL unless P2P is broken on this machine; " if disabled_env else "") + \
        ("check 'nvidia-smi topo -p2p r': PCIe ACS enabled on bare metal (disable it, or boot with iommu=pt), a VM "
         "without P2P, GPUs under different CPU sockets (NCCL_P2P_LEVEL=SYS lets NCCL try P2P there) or consumer "
         "GPUs without P2P; where P2P really is unavailable, SHM is the right choice")
    return [Finding("p2p_not_used", "warning", "GPUs of one node do not use peer-to-peer (P2P)", "; ".join(parts),
                    _lines([c.line for c in shm] + [log.env_lines[k] for k in disabled_env] + list(log.p2p_disabled_pairs)),
                    fix, _SRC_ACS)]


def _check_gdr(log: NcclInfoLog) -> list[Finding]:
    ib = [c for c in log.connections if c.transport == "NET/IB"]
    without = [c for c in ib if not c.gdr]
    if not without:
        return []
    env = {k: v for k, v in log.env.items() if k in ("NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ", "NCCL_DMABUF_ENABLE")}
    evidence = (f"{len(without)} of {len(ib)} InfiniBand/RoCE connection lines have no /GDRDMA (e.g. 'via "
                f"{without[0].via}'): the NIC copies through host memory")
    if env:
        evidence += "; set in the environment: " + ", ".join(f"{k}={v}" for k, v in env.items())
    return [Finding(
        "no_gdrdma", "warning", "no GPUDirect RDMA between GPU and NIC", evidence,
        _lines([c.line for c in without] + [log.env_lines[k] for k in env]),
        "load the nvidia-peermem kernel module (or use DMA-BUF: open GPU kernel modules, Linux >= 5.12), keep PCIe ACS "
        "off on bare metal, and check NCCL_NET_GDR_LEVEL when the NIC sits under another CPU socket than the GPU",
        "https://github.com/NVIDIA/nccl/issues/1412")]


def _check_socket(log: NcclInfoLog) -> list[Finding]:
    sockets = [c for c in log.connections if c.transport == "NET/Socket"]
    multi_node = (log.num_nodes or 0) > 1
    if not sockets and not ("Socket" in log.networks and multi_node):
        return []
    reasons = []
    if log.env.get("NCCL_IB_DISABLE") == "1":
        reasons.append("NCCL_IB_DISABLE=1 in the environment")
    if log.ib_missing_lines:
        reasons.append("'NET/IB : No device found'")
    if log.ibverbs_missing_lines:
        reasons.append("libibverbs could not be loaded")
    if log.plugins and not log.ib_devices:
        reasons.append(f"the network plugin ({', '.join(log.plugins)}) was loaded but found no RDMA device")
    evidence = (f"{len(sockets)} connection line(s) via NET/Socket" if sockets else
                f"'Using network Socket' with {log.num_nodes} nodes")
    if log.socket_interfaces:
        evidence += f" on {', '.join(log.socket_interfaces[:4])}"
    evidence += "; " + ("why: " + ", ".join(reasons) if reasons else "the log does not say why IB/RoCE was not used")
    return [Finding(
        "socket_network", "warning", "traffic between nodes goes over TCP sockets, not RDMA", evidence,
        _lines([c.line for c in sockets] + list(log.ib_missing_lines) + list(log.ibverbs_missing_lines)
               + ([log.env_lines["NCCL_IB_DISABLE"]] if "NCCL_IB_DISABLE" in log.env_lines else [])),
        "if the nodes have InfiniBand/RoCE NICs: unset NCCL_IB_DISABLE, install rdma-core (libibverbs) and expose "
        "/dev/infiniband to the container, check 'ibv_devinfo'; on TCP-only clusters set NCCL_SOCKET_IFNAME to the "
        "fastest interface and raise NCCL_SOCKET_NTHREADS / NCCL_NSOCKS_PERTHREAD",
        f"{_ENV_DOCS}#nccl-ib-disable")]


def _check_nvls(log: NcclInfoLog) -> list[Finding]:
    unavailable = [n for dev, ok, n in log.nvls_support if not ok]
    nvswitch_gpus = sorted({g for g in log.gpus if _NVSWITCH_GPU_RE.search(g)})
    zero_channels = [c.line for c in log.channel_counts if c.nvls == 0]
    env_off = log.env.get("NCCL_NVLS_ENABLE") == "0"
    if env_off:
        return [Finding("nvls_unavailable", "info", "NVLS (NVLink SHARP) disabled by NCCL_NVLS_ENABLE=0",
                        "NCCL_NVLS_ENABLE=0 in the environment", _lines([log.env_lines["NCCL_NVLS_ENABLE"]]),
                        "remove NCCL_NVLS_ENABLE=0 on NVSwitch systems (H100/H200/B200 HGX) unless NVLS was disabled on "
                        "purpose (it uses more GPU memory)", f"{_ENV_DOCS}#nccl-nvls-enable")]
    if not unavailable and not (zero_channels and nvswitch_gpus):
        return []
    evidence = []
    if unavailable:
        evidence.append(f"'NVLS multicast support is not available' on {len(unavailable)} line(s)")
    if zero_channels:
        evidence.append(f"0 nvls channels on {len(zero_channels)} line(s)")
    if nvswitch_gpus:
        evidence.append(f"GPUs: {', '.join(nvswitch_gpus)} (nodes with NVSwitch)")
    fix = ("on an NVSwitch system (HGX/DGX H100, H200, B200): start nvidia-fabricmanager with the driver's version, "
           "use a driver with multicast support (CUDA 12.1+), let the container see the NVSwitch/IMEX devices, and "
           "for multi-node NVLink configure IMEX; on PCIe or NVLink-bridged GPUs there is no NVLS and nothing to fix")
    return [Finding("nvls_unavailable", "warning" if nvswitch_gpus else "info",
                    "NVLS (NVLink SHARP) is not available", "; ".join(evidence), _lines(unavailable + zero_channels),
                    fix, "https://github.com/NVIDIA/nccl/issues/892")]


def _check_cross_socket(log: NcclInfoLog) -> list[Finding]:
    sys_graphs = [g for g in log.graphs if g.type_intra == "SYS"]
    if not sys_graphs and not log.sys_gpu_paths:
        return []
    evidence = []
    if sys_graphs:
        g = sys_graphs[0]
        evidence.append(f"the topology search found only SYS paths between GPUs (type {g.type_intra}/{g.type_inter}, "
                        f"{g.nchannels} channel(s) at {g.bw_intra_gbps:g} GB/s)")
    if log.sys_gpu_paths:
        evidence.append(f"{len(log.sys_gpu_paths)} GPU path line(s) of type SYS")
    return [Finding(
        "cross_socket", "warning", "GPUs talk through the CPU-socket link (SYS paths)", "; ".join(evidence),
        _lines([g.line for g in sys_graphs] + list(log.sys_gpu_paths)),
        "place the job's GPUs under one CPU socket (pick them from 'nvidia-smi topo -m' with CUDA_VISIBLE_DEVICES) "
        "or accept the socket link's bandwidth; NCCL_P2P_LEVEL=SYS allows P2P across sockets where the CPU "
        "supports it",
        f"{_ENV_DOCS}#nccl-p2p-level")]


_CHANNEL_CAPS = ("NCCL_MAX_NCHANNELS", "NCCL_MAX_CTAS", "NCCL_MAX_NRINGS")
_FEW_CHANNELS = 4
"""A channel cap at or below this many channels is flagged: NVLink and multi-NIC systems use 8-32."""


def _check_channels(log: NcclInfoLog) -> list[Finding]:
    caps = {k: v for k in _CHANNEL_CAPS if (v := _int_env(log, k)) is not None and v <= _FEW_CHANNELS}
    if not caps:
        return []
    channels = log.coll_channels
    return [Finding(
        "few_channels", "warning", "the number of channels is capped by the environment",
        ", ".join(f"{k}={v}" for k, v in caps.items())
        + (f"; {channels} collective channel(s) built" if channels is not None else ""),
        _lines(log.env_lines[k] for k in caps),
        "remove the cap unless it is there to leave SMs to computation: one channel drives one ring over one link, "
        "so few channels cannot fill NVLink or several NICs",
        f"{_ENV_DOCS}#nccl-max-ctas")]


def _check_forced(log: NcclInfoLog) -> list[Finding]:
    out = []
    if "NCCL_ALGO" in log.env:
        out.append(Finding(
            "forced_algorithm", "warning", "the algorithm is forced by NCCL_ALGO",
            f"NCCL_ALGO={log.env['NCCL_ALGO']}", _lines([log.env_lines["NCCL_ALGO"]]),
            "unset NCCL_ALGO outside experiments: NCCL's tuner picks the fastest algorithm per size and topology, "
            "and a forced one is usually slower at other sizes (an algorithm that cannot run is silently replaced)",
            f"{_ENV_DOCS}#nccl-algo"))
    if "NCCL_PROTO" in log.env:
        out.append(Finding(
            "forced_protocol", "warning", "the protocol is forced by NCCL_PROTO",
            f"NCCL_PROTO={log.env['NCCL_PROTO']}", _lines([log.env_lines["NCCL_PROTO"]]),
            "unset NCCL_PROTO unless a plugin requires it (AWS EFA needs Simple): it is meant for debugging and "
            "workarounds; NCCL enables LL128 only where it is safe",
            "https://github.com/NVIDIA/nccl/issues/281"))
    return out


# ----------------------------------------------------------------------------------------- bundled logs

def bundled_info_log_names() -> list[str]:
    """Names (``"nccl_1412"``...) of the NCCL_DEBUG=INFO logs bundled in ``gpucomm/model/data/nccl_info_logs``."""
    folder = resources.files("gpucomm.model").joinpath("data", "nccl_info_logs")
    return sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".txt"))


def bundled_info_log_text(name: str) -> str:
    """The text of one bundled log (line 1 ``# source: <URL>``, line 2 ``# situation: ...``).

    Raises
    ------
    GpucommError
        If there is no such log.
    """
    names = bundled_info_log_names()
    if name not in names:
        raise GpucommError(f"unknown bundled NCCL INFO log {name!r}: expected one of {', '.join(names)}")
    return resources.files("gpucomm.model").joinpath("data", "nccl_info_logs", f"{name}.txt").read_text()


def read_bundled_info_log(name: str) -> NcclInfoLog:
    """:func:`parse_nccl_info_log` of a bundled log."""
    return parse_nccl_info_log(bundled_info_log_text(name))
