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
``src/graph/*.cc``, ``src/enqueue.cc`` of each release); each regular expression of
:mod:`~gpucomm.measure.logs.nccl_info_lines` says which releases print it. Lines are recognised wherever
``NCCL INFO`` / ``NCCL WARN`` sits in the line, so launcher prefixes (``[1,0]<stdout>:`` of OpenMPI, ``0:`` of srun, ``[0]``,
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
``per_node_communicators`` (error)
    Each node or process built its own communicator: nccl-tests printing its header or device list once per
    process (built without MPI), or rank 0 of same-size communicators on several hosts with none spanning them.
``torch_watchdog_timeout``, ``torch_collective_mismatch``, ``torch_watchdog_stuck`` (error), ``torch_flight_recorder_dump`` (info)
    PyTorch's ProcessGroupNCCL lines: a collective that timed out (which ranks, how far each got, which
    ranks are silent), ranks in different collectives at one sequence number, the heartbeat monitor, the
    flight recorder's dump (:mod:`~gpucomm.measure.logs.nccl_info_torch`).
``warn_*`` and ``nccl_error_*`` (error, or warning)
    ``NCCL WARN`` lines, grouped by kind (IB completion errors, shared memory, CUDA IPC,
    ``Cuda failure``, socket errors, timeouts...), and NCCL's result strings
    (``unhandled system error``...) printed by the application.
``p2p_not_used`` (warning)
    GPUs of one node connect through host shared memory (``via SHM``), or P2P is disabled by
    ``NCCL_P2P_DISABLE`` / ``NCCL_P2P_LEVEL``.
``no_gdrdma`` (warning)
    InfiniBand/RoCE connections without ``/GDRDMA``, or ``GPU Direct RDMA Disabled for HCA``: data is staged
    through host memory.
``socket_network`` (warning)
    Traffic between nodes over TCP sockets (``NET/Socket``), with the reason the log shows
    (``NCCL_IB_DISABLE``, ``NET/IB : No device found``, libibverbs missing).
``nvls_unavailable`` (warning on NVSwitch GPUs, else info)
    NVLink SHARP (NVLS) not available or disabled; never with one GPU per node, where NVLS cannot apply
    (nor ``p2p_not_used`` for a P2P setting there).
``cross_socket`` (warning)
    The topology search found only ``SYS`` paths between GPUs (through the CPU-socket link).
``few_channels`` (warning)
    The number of channels is capped by the environment (``NCCL_MAX_NCHANNELS``/``NCCL_MAX_CTAS``).
``forced_algorithm`` / ``forced_protocol`` (warning)
    ``NCCL_ALGO`` / ``NCCL_PROTO`` set in the environment.

Counts are NCCL's own where it prints them (``nranks``, the ``N`` of ``Channel 05/N``, ``nNodes``,
``localRanks``); where it does not, :attr:`NcclInfoLog.num_ranks_exact` says the rank count is a lower bound.
The reader is split along its seams: :mod:`~gpucomm.measure.logs.nccl_info_lines` (the line formats),
:mod:`~gpucomm.measure.logs.nccl_info_records` (the records), :mod:`~gpucomm.measure.logs.nccl_info_reader`
(lines -> facts), :mod:`~gpucomm.measure.logs.nccl_info_checks` and
:mod:`~gpucomm.measure.logs.nccl_info_warns`, :mod:`~gpucomm.measure.logs.nccl_info_communicators`,
:mod:`~gpucomm.measure.logs.nccl_info_torch` (facts -> findings). This module is the public entry point:
every public name is importable from here. It uses the standard library only (no torch).

Examples
--------
>>> log = read_bundled_info_log("nccl_1412")
>>> log.num_ranks, log.transports
(16, {'NET/IB': 4, 'P2P/direct': 10})
>>> [f.code for f in log.findings]
['no_gdrdma']
"""

from __future__ import annotations

from dataclasses import replace
from importlib import resources

from gpucomm import GpucommError
from gpucomm.measure.logs.nccl_info_checks import all_findings
from gpucomm.measure.logs.nccl_info_lines import ALGORITHMS, PROTOCOLS
from gpucomm.measure.logs.nccl_info_reader import InfoLineReader
from gpucomm.measure.logs.nccl_info_records import (
    SEVERITIES,
    ChannelCounts,
    Communicator,
    Connection,
    Finding,
    GraphPattern,
    NcclInfoLog,
    TestDevice,
    TorchLog,
    TuningChoice,
    WarnLine,
    WatchdogProgress,
    WatchdogTimeout,
)

__all__ = ["Connection", "ChannelCounts", "GraphPattern", "TuningChoice", "WarnLine", "Finding", "NcclInfoLog",
           "Communicator", "TestDevice", "TorchLog", "WatchdogTimeout", "WatchdogProgress",
           "parse_nccl_info_log", "bundled_info_log_names", "bundled_info_log_text", "read_bundled_info_log",
           "ALGORITHMS", "PROTOCOLS", "SEVERITIES"]


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
        When no line is NCCL's (no ``NCCL INFO``/``NCCL WARN`` line, no ``NCCL version`` line), nccl-tests'
        device list or PyTorch's ProcessGroupNCCL watchdog and flight recorder lines.

    Examples
    --------
    >>> log = parse_nccl_info_log("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read")
    >>> log.transports, log.findings
    ({'P2P/IPC': 1}, ())
    """
    reader = InfoLineReader()
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        reader.read(number, line.rstrip())
    if reader.nccl_lines == 0 and not reader.test_devices and not reader.torch.facts().lines:
        raise GpucommError("no NCCL debug line in the text: expected lines like 'host:pid:tid [0] NCCL INFO ...' "
                           "(run with NCCL_DEBUG=INFO), an nccl-tests device list or PyTorch's ProcessGroupNCCL errors")
    facts = reader.facts(len(lines))
    findings = sorted(all_findings(facts), key=lambda f: SEVERITIES.index(f.severity))
    return replace(facts, findings=tuple(findings))


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
