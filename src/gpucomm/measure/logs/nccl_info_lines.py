"""The line formats of an ``NCCL_DEBUG=INFO`` log: one regular expression per kind of line NCCL prints.

Each pattern says which NCCL releases (2.4-2.30) print it and in which source file (``src/init.cc``,
``src/transport/*.cc``, ``src/graph/*.cc``, ``src/enqueue.cc`` of each release). Patterns that match
the message of a debug line (the text after ``NCCL INFO``) are anchored at its start; the others are
searched anywhere in a line. :mod:`gpucomm.measure.logs.nccl_info_reader` applies them.

This module uses the standard library only (no torch).
"""

from __future__ import annotations

import re

from gpucomm.model import nccl_tuner as nt

__all__ = ["ALGORITHMS", "PROTOCOLS", "ALGORITHM_NAMES", "transport_of"]

ALGORITHMS = tuple(nt.ALGORITHM_NAMES.values())
"""NCCL's algorithm numbers 0-6 (``NCCL_ALGO_TREE`` ... ``NCCL_ALGO_PAT`` in ``src/include/device.h``,
2.19-2.30; number 2 was plain ``CollNet`` before 2.14), the names of ``ncclAlgoStr`` in ``src/init.cc``."""

PROTOCOLS = ("LL", "LL128", "Simple")
"""NCCL's protocol numbers 0-2 (``NCCL_PROTO_LL``, ``NCCL_PROTO_LL128``, ``NCCL_PROTO_SIMPLE``)."""

ALGORITHM_NAMES = {name.upper(): name for name in ALGORITHMS} | {"COLLNET_DIRECT": "CollNetDirect",
                                                                   "COLLNET_CHAIN": "CollNetChain",
                                                                   "NVLS_TREE": "NVLSTree"}
"""The upper-case names NCCL 2.24+ prints (``ncclAlgoToString`` in ``src/collectives.cc``) -> ``ALGORITHMS``."""

# ------------------------------------------------------------------------------------------ line formats

# Every NCCL debug line: "host:pid:tid [cudaDev] NCCL INFO message" (src/debug.cc, 2.4-2.30). WARN lines
# also carry the source location: "host:pid:tid [dev] transport/net_ib.cc:1295 NCCL WARN message". The
# host part is missing where the user stripped it ("[0] NCCL INFO ..."); anything before it is a launcher prefix.
NCCL_LINE_RE = re.compile(
    r"(?:(?P<host>[^\s:]*):(?P<pid>\d{1,10}):(?P<tid>\d{1,10}) \[(?P<dev>\d{1,4})\] )?"
    r"(?:(?P<where>[\w./-]{1,200}:\d{1,6}) )?NCCL (?P<level>INFO|WARN) ?(?P<msg>.*)$")
# "NCCL version 2.18.3+cuda12.2": an INFO message since 2.12, a bare printf line before (src/init.cc).
# Also found in applications' error messages ("..., NCCL version 2.18.1"), which name the same library.
VERSION_RE = re.compile(r"\bNCCL version (?P<version>\d{1,3}\.\d{1,3}\.\d{1,3})[\w-]*(?:\+cuda(?P<cuda>\d{1,3}\.\d{1,3}))?")
# "comm 0x55.. rank 11 nranks 16 cudaDev 3 nvmlDev 3 busId 4e000 commId 0x.. - Init START|Init COMPLETE"
# (2.7-2.30, some fields only in later releases; 2.21+ prefix "ncclCommInitRank "), "- Destroy COMPLETE".
COMM_RE = re.compile(r"\bcomm (?P<comm>0x[0-9a-fA-F]{1,16}|\(nil\)) rank (?P<rank>\d{1,7}) nranks (?P<nranks>\d{1,7}) "
                      r"cudaDev (?P<dev>\d{1,4}).*? - (?P<event>Init START|Init COMPLETE|Destroy COMPLETE|Abort COMPLETE)")
# "comm 0x.. rank 7 nRanks 8 nNodes 2 localRanks 4 localRank 3 MNNVL 0" (2.19-2.30; MNNVL since 2.20).
COMM_NODES_RE = re.compile(r"\bcomm \S{1,20} rank (?P<rank>\d{1,7}) nRanks (?P<nranks>\d{1,7}) nNodes (?P<nnodes>\d{1,6}) "
                            r"localRanks (?P<local_ranks>\d{1,4}) localRank (?P<local_rank>\d{1,4})")
# One connection of one channel (src/transport/{p2p,shm,net,coll_net}.cc):
#   2.4-2.6   "Ring 00 : 3[1b000] -> 5[3e000] via P2P/IPC", "Ring 00 : 34 -> 33 [send] via NET/Socket/0"
#   2.7-2.11  "Channel 00 : 0[2d000] -> 1[2e000] via P2P/IPC", "... via direct shared memory"
#   2.12-2.30 "Channel 03/0 : 15[7] -> 6[6] [send] via NET/Socket/3", "... via NET/IBext_v8/0(7)/GDRDMA",
#             "Channel 00/0 : 8[0] -> 15[7] via P2P/IPC/read", "Channel 00 : 3[3] -> 7[7] via SHM/direct/direct"
#   CollNet   "CollNet 00/0 : 3 [send] via COLLNET/SHARP/0/GDRDMA" (no peer: the switch reduces)
CONNECTION_RE = re.compile(
    r"^(?:Channel|Ring|CollNet) (?P<channel>\d{1,3})(?:/(?P<conn>\d{1,2}))? : (?P<src>\d{1,7})(?:\[[0-9a-fA-F]{1,16}\])?"
    r"(?: -> (?P<dst>\d{1,7})(?:\[[0-9a-fA-F]{1,16}\])?)? (?:\[(?P<direction>send|receive)\] )?via (?P<via>.+?)\s*$")
# Ring order, printed by rank 0: "Channel 00/24 :    0   1   2   3" (src/graph/rings.cc, 2.7-2.30).
RING_ORDER_RE = re.compile(r"^Channel (?P<channel>\d{1,3})/(?P<count>\d{1,3}) :(?P<ranks>(?:\s+\d{1,7})+)\s*$")
# Trees of one rank, one entry per channel: "Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1" (2.9-2.30: down
# ranks -> rank -> up), "[0] 1/-1/-1->0->-1|-1->0->1/-1/-1" (2.7-2.8, split trees), "[0] 26->25->-1/-1/-1" (2.4).
TREES_RE = re.compile(r"^Trees(?P<trees>(?: \[\d{1,3}\] \S{1,200})+)\s*$")
TREE_ENTRY_RE = re.compile(r"\[(\d{1,3})\] (\S+)")
TREE_RANK_RE = re.compile(r"->(\d{1,7})->")
# "16 coll channels, 0 collnet channels, 16 nvls channels, 16 p2p channels, 1 p2p channels per peer" (2.19-2.30);
# 2.17-2.18 without collnet, 2.7-2.16 "%d coll channels, %d p2p channels, %d p2p channels per peer".
CHANNEL_COUNTS_RE = re.compile(r"^(?P<coll>\d{1,3}) coll channels, (?:(?P<collnet>\d{1,3}) collnet channels, )?"
                                r"(?:(?P<nvls>\d{1,3}) nvls channels, )?(?P<p2p>\d{1,3}) p2p channels, "
                                r"(?P<per_peer>\d{1,3}) p2p channels per peer")
# Topology search result (NCCL_DEBUG_SUBSYS=GRAPH; src/graph/search.cc): "Pattern 4, crossNic 0, nChannels 1,
# bw 10.000000/10.000000, type SYS/PIX, sameChannels 1" ("speed" instead of "bw" before 2.13).
PATTERN_RE = re.compile(r"^Pattern (?P<pattern>\d{1,2}), crossNic (?P<cross_nic>\d), nChannels (?P<nchannels>\d{1,3}), "
                         r"(?:bw|speed) (?P<bw_intra>[\d.]{1,20})/(?P<bw_inter>[\d.]{1,20}), "
                         r"type (?P<type_intra>\w{1,8})/(?P<type_inter>\w{1,8})")
# Paths found by the topology search (GRAPH): "GPU/2A000 :GPU/2A000 (0/5000.000000/LOC) GPU/AB000 (3/10.000000/SYS) ..."
GPU_PATHS_RE = re.compile(r"^GPU/(?P<gpu>\w{1,20}) :(?P<paths>.*)$")
GPU_PATH_RE = re.compile(r"GPU/(?P<gpu>\w{1,20}) \(\d{1,3}/[\d.]{1,20}/(?P<type>\w{1,8})\)")
# "NVLS multicast support is not available on dev 4" (src/transport/nvls.cc, 2.17-2.30; 2.2x may add "(NVLS_NCHANNELS 0)").
NVLS_SUPPORT_RE = re.compile(r"^NVLS multicast support is (?P<negation>not )?available on dev (?P<dev>\d{1,4})")
# "NCCL_IB_GID_INDEX set by environment to 3." (src/misc/param.cc adds the final dot to numbers), "NCCL_ALGO set by
# environment to Ring", "NCCL_IB_HCA set to mlx5_2:1" (2.4-2.30).
ENV_RE = re.compile(r"^(?P<name>NCCL_[A-Z0-9_]{1,60}) set (?:by environment )?to (?P<value>.*?)\.?\s*$")
# "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/RoCE [RO]; OOB ib0:10.0.0.1<0>" (src/transport/net_ib.cc, 2.4-2.30).
IB_USING_RE = re.compile(r"^NET/IB ?: Using(?P<devices>.*?);? ?OOB ")
IB_DEVICE_RE = re.compile(r"\[\d{1,3}\](\S+?:\d{1,3}/(?:IB|RoCE)(?:/SHARP)?)")
IB_NONE_RE = re.compile(r"^NET/IB ?: No device found")
# "NET/Socket : Using [0]ens3:172.31.5.237<0> [1]ib0:..." (src/transport/net_socket.cc).
SOCKET_USING_RE = re.compile(r"^NET/Socket ?: Using(?P<ifaces>.*)$")
SOCKET_IFACE_RE = re.compile(r"\[\d{1,3}\](\S+?):\S+?<\d+>")
# "Using network IB" / "Using network Socket" / "Using network IBext_v8" / "Using network AWS Libfabric" (2.9-2.30).
USING_NETWORK_RE = re.compile(r"^Using network (?P<name>.+?)\s*$")
# Network plugins: "NET/Plugin: Loaded net plugin NCCL RDMA Plugin v8 (v8)", "P2P plugin IBext_v8".
PLUGIN_RE = re.compile(r"^(?:NET/Plugin ?: Loaded net plugin (?P<loaded>.+?) \(v\d{1,3}\)|P2P plugin (?P<p2p>\S+))\s*$")
# "Failed to open libibverbs.so[.1]" (WARN in 2.4-2.12, INFO later): no RDMA user library.
IBVERBS_MISSING_RE = re.compile(r"Failed to open libibverbs\.so")
# "P2P is disabled between connected GPUs 0 and 1" (INFO, 2.19-2.30; a WARN when the GPUs share NVLink).
P2P_PAIR_DISABLED_RE = re.compile(r"P2P is disabled between (?:NVLINK )?connected GPUs (\d{1,4}) and (\d{1,4})")
# Algorithm choice per collective (NCCL_DEBUG_SUBSYS=TUNING, printed by rank 0; src/enqueue.cc):
#   2.21-2.22 "1048576 Bytes -> Algo 1 proto 2 time 20.500000"            (numbers: ALGORITHMS, PROTOCOLS)
#   2.23      "AllReduce: 1048576 Bytes -> Algo 1 proto 2 time 20.500000"
#   2.24-2.30 "AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..31}"
#   2.27-2.30 "AllReduce [Symmetric]: 1048576 Bytes -> Kernel AllReduce_AGxLL_R nchannels 16 nthreads 512"
TUNING_NUMERIC_RE = re.compile(r"^(?:(?P<func>[A-Za-z]{1,20}): )?(?P<bytes>\d{1,20}) Bytes -> Algo (?P<algo>\d) "
                                r"proto (?P<proto>\d) time (?P<time>[\d.]{1,30})")
TUNING_NAMED_RE = re.compile(r"^(?P<func>[A-Za-z]{1,20}): (?P<bytes>\d{1,20}) Bytes -> Algo (?P<algo>[A-Z_]{1,20}) "
                              r"proto (?P<proto>[A-Z0-9]{1,10})(?: channel\{Lo\.\.Hi\}=\{(?P<lo>\d{1,3})\.\.(?P<hi>\d{1,3})\})?")
TUNING_SYMMETRIC_RE = re.compile(r"^(?P<func>[A-Za-z]{1,20}) \[Symmetric\]: (?P<bytes>\d{1,20}) Bytes -> Kernel "
                                  r"(?P<kernel>\S{1,80}) nchannels (?P<nchannels>\d{1,3})")
# nccl-tests' device list ("#  Rank  0 Group  0 Pid 33347 on host device  0 [0x0f] NVIDIA H800"): the GPU names.
TEST_DEVICE_RE = re.compile(r"^#?\s*Rank\s+(?P<rank>\d{1,7})\s+(?:Group\s+\d{1,7}\s+)?Pid\s+(?P<pid>\d{1,10})\s+on\s+(?P<host>\S+)"
                             r"\s+device\s+\d{1,4}\s+\[[^\]]{0,40}\]\s*(?P<name>.*?)\s*$")
# NCCL's result strings (ncclGetErrorString, src/init.cc) as applications print them: "NCCL error: unhandled
# system error", "Test NCCL failure common.cu:958 'internal error - please report ...'".
RESULT_RE = re.compile(r"\b(?P<result>unhandled system error|unhandled cuda error|internal error|invalid usage|"
                        r"remote process exited or there was a network error|ncclSystemError|ncclUnhandledCudaError|"
                        r"ncclInternalError|ncclInvalidUsage|ncclInvalidArgument|ncclRemoteError)\b")
# PyTorch 2.x names the result (torch/csrc/distributed/c10d/NCCLUtils.cpp, getNcclErrorDetailStr): "ncclSystemError:
# System call (e.g. socket, malloc) or external library call failed or device error." -> NCCL's own result string.
RESULT_NAMES = {"ncclSystemError": "unhandled system error", "ncclUnhandledCudaError": "unhandled cuda error",
                "ncclInternalError": "internal error", "ncclInvalidUsage": "invalid usage",
                "ncclInvalidArgument": "invalid usage",
                "ncclRemoteError": "remote process exited or there was a network error"}

# The communicator's hash, the same on every rank of one communicator: "... busId 4f000 commId 0xb9b42cb8fce289f2 -
# Init COMPLETE" (src/init.cc, 2.12-2.30). Two processes printing different commIds built different communicators.
COMM_ID_RE = re.compile(r"\bcommId (?P<comm_id>0x[0-9a-fA-F]{1,16})\b")
# The process's communicator pointer and the host of a comm line: the key that ties a process's "nNodes" line to its
# "Init COMPLETE" line (both print "comm 0x..").
COMM_POINTER_RE = re.compile(r"\bcomm (?P<comm>0x[0-9a-fA-F]{1,16}|\(nil\))\b")
# Ring neighbours (NCCL_DEBUG_SUBSYS=GRAPH, src/graph/connect.cc 2.7-2.30): "Ring 00 : 23 -> 0 -> 1" (prev -> rank -> next).
RING_NEIGHBOURS_RE = re.compile(r"^Ring (?P<channel>\d{1,3}) : (?P<prev>\d{1,7}) -> (?P<rank>\d{1,7}) -> (?P<next>\d{1,7})\s*$")
# "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'" (src/transport/net_ib.cc, 2.12-2.30): no peer-memory module
# and no DMA-BUF, so the NIC cannot reach GPU memory.
GDR_DISABLED_RE = re.compile(r"^NET/IB\w* ?: GPU Direct RDMA Disabled for HCA (?P<hca>\d{1,3}) '(?P<name>[^']{1,40})'")
# nccl-tests' header ("# nThread 1 nGpus 8 minBytes ..."), printed once by the process of rank 0 (src/common.cu), and
# the end of a run ("# Avg bus bandwidth    : 33.3227"): two headers before an end are two runs at once.
TEST_HEADER_RE = re.compile(r"^#\s*nThread\s+\d{1,4}\s+nGpus\s+(?P<ngpus>\d{1,4})\b")
TEST_END_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:")

# GPUs whose nodes have third-generation NVSwitches, which NVLS needs (H100/H800/H200/H20 SXM, Blackwell HGX).
# nccl-tests prints the CUDA device name; the PCIe and NVL (bridged) cards have "PCIe"/"NVL" in it.
NVSWITCH_GPU_RE = re.compile(r"\b(?:H100 80GB HBM3|H100 SXM\S*|H800|H200|H20|B100|B200|B300|GB200|GB300)\b(?! ?(?:PCIe|NVL))")


def transport_of(via: str) -> tuple[str, bool]:
    """The transport and GPUDirect RDMA use of one connection line.

    Parameters
    ----------
    via : str
        The text after ``via`` (``"NET/IBext_v8/0(7)/GDRDMA"``).

    Returns
    -------
    (str, bool)
        The transport label (see :attr:`gpucomm.measure.logs.nccl_info_records.Connection.transport`) and
        whether ``/GDRDMA`` is in the text.

    Examples
    --------
    >>> transport_of("NET/IBext_v8/0(7)/GDRDMA"), transport_of("SHM/direct/direct")
    (('NET/IB', True), ('SHM', False))
    """
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

