"""PyTorch's lines around NCCL's: ProcessGroupNCCL's watchdog timeouts, how far each rank got, the heartbeat
monitor, the flight recorder dump, and what to do about each.

A training log piped into ``gpucomm diagnose`` holds these next to NCCL's own lines. The formats are those
of ``torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp`` in PyTorch 1.10-2.9 (each pattern says which
releases print it); they are searched anywhere in a line, so glog prefixes (``[rank0]:[E321 02:07:08.408
ProcessGroupNCCL.cpp:607]``) and launcher prefixes do not matter. NCCL has no timeout of its own
(NVIDIA/nccl#1260): a timeout is PyTorch's watchdog giving up on a collective that has not completed.

This module uses the standard library only.
"""

from __future__ import annotations

import re

from gpucomm.measure.logs.nccl_info_records import (
    Finding,
    NcclInfoLog,
    TorchLog,
    WatchdogProgress,
    WatchdogTimeout,
    finding_lines,
)

__all__ = ["TorchLineReader", "torch_findings"]

# "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1,
# Timeout(ms)=600000) ran for 600013 milliseconds before timing out." (NumelIn/NumelOut since PyTorch 2.1; 1.10-2.0
# print "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000)"; 1.8-1.9 "WorkNCCL(OpType=..., TensorShape=...").
WATCHDOG_TIMEOUT_RE = re.compile(
    r"\[Rank (?P<rank>\d{1,7})\] Watchdog caught collective operation timeout: WorkNCCL\((?:SeqNum=(?P<seq>\d{1,12}), )?"
    r"OpType=(?P<op>\w{1,40})(?:, NumelIn=(?P<numel_in>-?\d{1,15}), NumelOut=(?P<numel_out>-?\d{1,15}))?.{0,200}?"
    r"Timeout\(ms\)=(?P<timeout_ms>\d{1,12})\) ran for (?P<ran_ms>\d{1,15}) milliseconds")
# "[PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work:
# 1582, last completed NCCL work: 1579." (2.4+; "[PG ID 0 PG GUID 0(default_pg) Rank 1]" since 2.5) and "[PG 0
# (default_pg) Rank 3] Timeout at NCCL work: 2070, last enqueued NCCL work: 2082, last completed NCCL work: 2069." (2.3).
WATCHDOG_PROGRESS_RE = re.compile(
    r"\[PG (?:ID )?(?P<pg>[^\]\s]{1,40})(?: PG GUID [^\]\s]{1,80}| \([^)\]]{1,40}\))? Rank (?P<rank>\d{1,7})\] "
    r"(?:Exception \(either an error or timeout\) detected by watchdog at work|Timeout at NCCL work): (?P<work>-?\d{1,12}), "
    r"last enqueued NCCL work: (?P<enqueued>-?\d{1,12}), last completed NCCL work: (?P<completed>-?\d{1,12})")
# "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives."
# (the heartbeat monitor, PyTorch 2.2+; TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC, default 480 s).
HEARTBEAT_RE = re.compile(r"ProcessGroupNCCL's watchdog got stuck for (?P<seconds>\d{1,8}) seconds")
# The flight recorder (PyTorch 2.2+): "ProcessGroupNCCL preparing to dump debug info.", "ProcessGroupNCCL dumping nccl
# trace to /tmp/nccl_trace_rank_0", "Received a dump signal ... from this local rank", "Observed flight recorder dump
# signal from another rank via TCPStore.", "Received a timeout signal from this local rank and will start to dump".
DUMP_RE = re.compile(r"ProcessGroupNCCL (?:preparing to dump debug info|dumping nccl trace to (?P<path>\S{1,300}))|"
                     r"[Rr]eceived a (?:global )?(?:dump|timeout) signal|flight recorder dump signal")

_FR_TUTORIAL = "https://docs.pytorch.org/tutorials/prototype/flight_recorder_tutorial.html"
_TORCH_NCCL_ENV = "https://docs.pytorch.org/docs/stable/torch_nccl_environment_variables.html"


class TorchLineReader:
    """Reads PyTorch's ProcessGroupNCCL lines of one text: :meth:`read` each line, then :meth:`facts`."""

    def __init__(self) -> None:
        self.timeouts: list[WatchdogTimeout] = []
        self.progress: list[WatchdogProgress] = []
        self.heartbeat: list[int] = []
        self.dumps: list[int] = []
        self.paths: list[str] = []

    def read(self, number: int, line: str) -> bool:
        """Read one line; True when it is one of PyTorch's ProcessGroupNCCL lines.

        Parameters
        ----------
        number : int
            Its 1-based line number.
        line : str
            The line, as in the log.

        Returns
        -------
        bool
        """
        if "NCCL" not in line and "flight recorder" not in line:  # the substring test first: long foreign lines
            return False
        if (t := WATCHDOG_TIMEOUT_RE.search(line)):
            self.timeouts.append(WatchdogTimeout(
                int(t["rank"]), int(t["seq"]) if t["seq"] else -1, t["op"],
                None if t["numel_in"] is None else int(t["numel_in"]),
                None if t["numel_out"] is None else int(t["numel_out"]), int(t["timeout_ms"]), int(t["ran_ms"]), number))
        elif (p := WATCHDOG_PROGRESS_RE.search(line)):
            self.progress.append(WatchdogProgress(p["pg"], int(p["rank"]), int(p["work"]), int(p["enqueued"]),
                                                  int(p["completed"]), number))
        elif HEARTBEAT_RE.search(line):
            self.heartbeat.append(number)
        elif (d := DUMP_RE.search(line)):
            self.dumps.append(number)
            if d["path"] and d["path"] not in self.paths:
                self.paths.append(d["path"].rstrip("."))
        else:
            return False
        return True

    def facts(self) -> TorchLog:
        """The lines read, as a :class:`~gpucomm.measure.logs.nccl_info_records.TorchLog`.

        Returns
        -------
        TorchLog
        """
        return TorchLog(tuple(self.timeouts), tuple(self.progress), tuple(self.heartbeat), tuple(self.dumps),
                        tuple(self.paths))


def _ranks(ranks) -> str:
    ranks = sorted(set(ranks))
    shown = ", ".join(map(str, ranks[:12]))
    return shown + (f" (+{len(ranks) - 12} more)" if len(ranks) > 12 else "")


def _timeout_evidence(log: NcclInfoLog) -> tuple[str, list[int]]:
    """What the timeout lines say: which collective, which ranks, how far each rank got, which ranks are silent."""
    torch = log.torch
    first = torch.timeouts[0]
    ops = dict.fromkeys(f"{t.op} (SeqNum {t.seq}" + (f", {t.numel_in} elements in" if t.numel_in is not None else "") + ")"
                        for t in torch.timeouts)
    reporting = {t.rank for t in torch.timeouts}
    parts = [f"{len(torch.timeouts)} watchdog timeout line(s) from rank(s) {_ranks(reporting)}: "
             f"{'; '.join(list(ops)[:4])} ran for {first.ran_ms / 1000:g} s against a timeout of {first.timeout_ms / 1000:g} s"]
    lines = [t.line for t in torch.timeouts]
    behind = [p for p in torch.progress if p.last_enqueued < p.work]
    if torch.progress:
        entered = [p for p in torch.progress if p.last_enqueued >= p.work]
        parts.append(f"{len(entered)} of {len(torch.progress)} rank report(s) had enqueued the failing collective "
                     f"(work {torch.progress[0].work}) and none completed it"
                     + (f"; rank(s) {_ranks(p.rank for p in behind)} had not even enqueued it" if behind else ""))
        lines += [p.line for p in torch.progress]
    if log.num_ranks and log.num_ranks_exact:
        silent = sorted(set(range(log.num_ranks)) - reporting - {p.rank for p in torch.progress})
        if silent and len(reporting) > 1:
            parts.append(f"no timeout line from rank(s) {_ranks(silent)} of the {log.num_ranks}: look at their logs first "
                         "(crashed, out of memory, or stuck before the collective)")
    return "; ".join(parts), lines


def _check_timeouts(log: NcclInfoLog) -> list[Finding]:
    if not log.torch.timeouts:
        return []
    evidence, lines = _timeout_evidence(log)
    return [Finding(
        "torch_watchdog_timeout", "error", "a collective did not complete before PyTorch's watchdog timeout",
        evidence, finding_lines(lines),
        "find the rank that did not reach the collective: a rank that crashed, runs other code (a data-dependent branch, "
        "uneven batches, rank-0-only evaluation or checkpointing) or called the collectives in another order. Turn on the "
        "flight recorder (TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1) and read all ranks' dumps with "
        "'torchfrtrace <dump dir>'; 'py-spy dump' on a hung rank shows where it waits. When every rank entered the "
        "collective, suspect the network (the NCCL WARN lines, if any). Raise init_process_group(timeout=...) only "
        "for one known long step on some ranks.",
        _FR_TUTORIAL)]


def _check_mismatch(log: NcclInfoLog) -> list[Finding]:
    """The same SeqNum with different collectives or sizes on different ranks: the ranks are out of step."""
    by_seq: dict[int, dict[tuple, list[WatchdogTimeout]]] = {}
    for t in log.torch.timeouts:
        if t.seq >= 0:
            by_seq.setdefault(t.seq, {}).setdefault((t.op, t.numel_in), []).append(t)
    clashes = {seq: calls for seq, calls in by_seq.items() if len(calls) > 1}
    if not clashes:
        return []
    seq, calls = next(iter(clashes.items()))
    seen = "; ".join(f"rank(s) {_ranks(t.rank for t in ts)}: {op}" + (f" of {numel} elements" if numel is not None else "")
                     for (op, numel), ts in calls.items())
    return [Finding(
        "torch_collective_mismatch", "error", "ranks timed out in different collectives at the same sequence number",
        f"SeqNum {seq}: {seen}", finding_lines(t.line for ts in calls.values() for t in ts),
        "the ranks called different collectives (or different sizes) in the same place: make every rank issue the "
        "same collectives in the same order (look for rank-dependent branches, skipped steps, unused parameters "
        "with DDP); TORCH_DISTRIBUTED_DEBUG=DETAIL checks each collective's shape across ranks",
        "https://docs.pytorch.org/docs/stable/distributed.html#debugging-torch-distributed-applications")]


def _check_heartbeat(log: NcclInfoLog) -> list[Finding]:
    if not log.torch.heartbeat_lines:
        return []
    return [Finding(
        "torch_watchdog_stuck", "error", "PyTorch's NCCL watchdog thread itself hung (heartbeat monitor)",
        f"'ProcessGroupNCCL's watchdog got stuck' on {len(log.torch.heartbeat_lines)} line(s): a CUDA or NCCL call "
        "blocked the watchdog, and the heartbeat monitor ended the process",
        finding_lines(log.torch.heartbeat_lines),
        "look for a GPU fault (dmesg: Xid errors; nvidia-smi) or a hung NCCL kernel on that node and for a thread "
        "holding the GIL inside a CUDA call ('py-spy dump --native'); raise TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC only if "
        "the watchdog is merely slow",
        _TORCH_NCCL_ENV)]


def _check_dump(log: NcclInfoLog) -> list[Finding]:
    torch = log.torch
    if not torch.dump_lines:
        return []
    where = f" to {', '.join(torch.dump_paths[:3])}" if torch.dump_paths else ""
    return [Finding(
        "torch_flight_recorder_dump", "info", "PyTorch's flight recorder dumped its trace",
        f"{len(torch.dump_lines)} flight recorder line(s){where}: each rank's last collectives are on disk",
        finding_lines(torch.dump_lines),
        "collect every rank's dump into one folder and run 'torchfrtrace <folder>' (python -m "
        "torch.distributed.flight_recorder.fr_trace): it names the collective and the ranks that did not join it",
        _FR_TUTORIAL)]


def torch_findings(log: NcclInfoLog) -> list[Finding]:
    """The findings of PyTorch's ProcessGroupNCCL lines in ``log``.

    Parameters
    ----------
    log : NcclInfoLog
        The facts, with :attr:`~gpucomm.measure.logs.nccl_info_records.NcclInfoLog.torch` read.

    Returns
    -------
    list of Finding
        ``torch_watchdog_timeout``, ``torch_collective_mismatch``, ``torch_watchdog_stuck`` (errors) and
        ``torch_flight_recorder_dump`` (info), each where its lines are in the log.
    """
    return [f for check in (_check_timeouts, _check_mismatch, _check_heartbeat, _check_dump) for f in check(log)]
