"""The ``diagnose`` verb: read an ``NCCL_DEBUG=INFO`` log and say what it shows.

``gpucomm diagnose LOG`` (``-`` for standard input) reads the log with
:func:`gpucomm.measure.logs.nccl_info.parse_nccl_info_log` and prints what NCCL set up (version,
ranks and nodes, network, channels, ring order, the transport of each connection, the algorithm
and protocol choices when ``NCCL_DEBUG_SUBSYS=TUNING`` was on) and the known problems it shows,
each with the lines that show it, the usual fix and a public source. ``--json`` prints all of
it as one JSON object instead.

Exit status: 0 when the log was read, whatever it shows; 2 when it cannot be read (a missing
file, a directory, binary data, an empty file, or text without any NCCL line), with one line
on stderr: ``gpucomm diagnose: error: ...``.

This module imports neither torch nor plotly.

Examples::

    NCCL_DEBUG=INFO torchrun --nproc-per-node 8 train.py 2>&1 | tee run.log
    gpucomm diagnose run.log
    mpirun -np 16 -x NCCL_DEBUG=INFO ./build/all_reduce_perf -b 8 -e 8G 2>&1 | gpucomm diagnose -
    gpucomm diagnose run.log --json
"""

from __future__ import annotations

import argparse
import shutil
import textwrap

from gpucomm import GpucommError
from gpucomm.cli.common import one_line, print_json, print_table
from gpucomm.measure.logs.files import read_log_text
from gpucomm.measure.logs.nccl_info import NcclInfoLog, parse_nccl_info_log
from gpucomm.model.units import format_size

__all__ = ["register", "run", "setup_rows", "transport_rows", "tuning_rows", "finding_rows", "finding_details"]

EXPECTED = "an NCCL_DEBUG=INFO log (text with 'NCCL INFO' lines)"
"""How the errors name what the verb reads."""

DESCRIPTION = """Read an NCCL_DEBUG=INFO log (a file, or - for standard input): NCCL version, ranks and nodes,
network, channels, ring order, the transport of every connection, the algorithm and protocol
choices (with NCCL_DEBUG_SUBSYS=TUNING), WARN lines, and the known problems the log shows with
their usual fix and a source."""
EPILOG = """examples:
  gpucomm diagnose run.log
  mpirun -np 16 -x NCCL_DEBUG=INFO ./build/all_reduce_perf -b 8 -e 8G 2>&1 | gpucomm diagnose -
  gpucomm diagnose run.log --json"""

_MAX_RING_RANKS = 16
"""A ring longer than this is shown by its first ranks (the JSON output has all of them)."""
_MAX_SHOWN = 6
"""At most this many items (devices, variables, line numbers...) per table cell."""


def _first(items, n: int = _MAX_SHOWN) -> str:
    items = [str(i) for i in items]
    return ", ".join(items[:n]) + (f" (+{len(items) - n} more)" if len(items) > n else "")


def _communicator(c) -> str:
    """One communicator in a few words: size, commId, nodes, and the hosts of its rank 0 where more than one."""
    notes = [f"commId {c.comm_id}"] if c.comm_id else []
    notes += [f"{c.nnodes} node(s)"] if c.nnodes else []
    notes += [f"rank 0 on {len(c.rank0_hosts)} hosts"] if len(c.rank0_hosts) > 1 else []
    return f"{c.nranks} ranks" + (f" ({', '.join(notes)})" if notes else "")


def setup_rows(log: NcclInfoLog) -> list[tuple[str, str]]:
    """The rows of the "what NCCL set up" table: (quantity, value) for what the log says.

    Parameters
    ----------
    log : NcclInfoLog
        From :func:`~gpucomm.measure.logs.nccl_info.parse_nccl_info_log`.

    Returns
    -------
    list of (str, str)
        Only the quantities the log shows.
    """
    rows = []
    if log.nccl_versions:
        cuda = f" (built for CUDA {', '.join(log.cuda_versions)})" if log.cuda_versions else ""
        versions = ", ".join(log.nccl_versions) + (" - DIFFERENT VERSIONS" if len(log.nccl_versions) > 1 else "")
        rows.append(("NCCL version", versions + cuda))
    if log.num_ranks is not None:
        others = [n for n in log.communicator_sizes if n != log.num_ranks]
        total = (f"{log.num_ranks}" if log.num_ranks_exact else
                 f"at least {log.num_ranks} (the highest rank number seen + 1; NCCL's nranks line is not in the log)")
        rows.append(("ranks", total + (f" (other communicators: {_first(others)} ranks)" if others else "")))
    if len(log.communicators) > 1 or any(len(c.rank0_hosts) > 1 for c in log.communicators):
        rows.append(("communicators", _first(_communicator(c) for c in log.communicators)))
    if log.num_nodes is not None:
        rows.append(("nodes", f"{log.num_nodes}" + (f", {log.local_ranks} ranks per node" if log.local_ranks else "")))
    if log.hosts:
        rows.append(("hosts in the log", f"{len(log.hosts)}: {_first(log.hosts, 4)}"))
    if log.gpus:
        names = {g: log.gpus.count(g) for g in dict.fromkeys(log.gpus)}
        rows.append(("GPUs (nccl-tests list)", ", ".join(f"{n} x {g}" for g, n in names.items())))
    if log.networks:
        rows.append(("network", ", ".join(f"{name} ({len(lines)} lines)" for name, lines in log.networks.items())))
    if log.ib_devices:
        rows.append(("RDMA devices", _first(log.ib_devices)))
    if log.socket_interfaces:
        rows.append(("socket interfaces", _first(log.socket_interfaces)))
    if log.plugins:
        rows.append(("network plugin", ", ".join(log.plugins)))
    if log.channel_counts or log.rings:
        counts = []
        if log.coll_channels is not None:
            counts.append(f"{log.coll_channels} collective" + ("" if log.channel_counts or log.ring_channel_total else
                                                               " (ring lines seen; NCCL's count is not in the log)"))
        if log.nvls_channels is not None:
            counts.append(f"{log.nvls_channels} NVLS")
        collnet = [c.collnet for c in log.channel_counts if c.collnet]
        if collnet:
            counts.append(f"{max(collnet)} CollNet")
        if log.channel_counts:
            counts.append(f"{max(c.p2p for c in log.channel_counts)} p2p")
        rows.append(("channels", ", ".join(counts)))
    for channel, ranks in list(log.rings.items())[:2]:
        shown = " ".join(map(str, ranks[:_MAX_RING_RANKS])) + (" ..." if len(ranks) > _MAX_RING_RANKS else "")
        rows.append((f"ring order, channel {channel}", shown))
    if log.trees:
        rank, trees = next(iter(log.trees.items()))
        rows.append(("trees", f"{len(log.trees)} rank(s) printed theirs; rank {rank}, channel 0: {trees[0]} "
                              "(children -> rank -> parent)"))
    for g in log.graphs[:2]:
        rows.append((f"topology search (pattern {g.pattern})",
                     f"{g.nchannels} channel(s), {g.bw_intra_gbps:g}/{g.bw_inter_gbps:g} GB/s, paths {g.type_intra}/"
                     f"{g.type_inter}"))
    if log.nvls_support:
        ok = sum(1 for _, available, _ in log.nvls_support if available)
        rows.append(("NVLS multicast", f"available on {ok} of {len(log.nvls_support)} device line(s)"))
    if log.env:
        rows.append(("NCCL_* set", _first(f"{k}={v}" for k, v in log.env.items())))
    if log.warnings:
        rows.append(("WARN lines", f"{len(log.warnings)}, first on line {log.warnings[0].line}"))
    if log.torch.lines:
        torch = log.torch
        rows.append(("PyTorch ProcessGroupNCCL", f"{len(torch.timeouts)} watchdog timeout(s), {len(torch.progress)} progress "
                                                 f"report(s), {len(torch.heartbeat_lines)} heartbeat abort(s), "
                                                 f"{len(torch.dump_lines)} flight recorder line(s)"))
    rows.append(("lines read", f"{log.nccl_lines} NCCL lines of {log.total_lines}"))
    return rows


def transport_rows(log: NcclInfoLog) -> list[tuple[str, str, str]]:
    """(transport, connection lines, first line as printed) for each transport label in the log.

    Parameters
    ----------
    log : NcclInfoLog
        From :func:`~gpucomm.measure.logs.nccl_info.parse_nccl_info_log`.

    Returns
    -------
    list of (str, str, str)
        One row per :attr:`~gpucomm.measure.logs.nccl_info.NcclInfoLog.transports` label.
    """
    rows = []
    for label, count in log.transports.items():
        first = next(c for c in log.connections if c.label == label)
        peer = f" -> {first.dst_rank}" if first.dst_rank is not None else ""
        rows.append((label, str(count), f"line {first.line}: channel {first.channel}, {first.src_rank}{peer} via {first.via}"))
    return rows


def tuning_rows(log: NcclInfoLog) -> list[tuple[str, str, str, str, str]]:
    """(function, sizes, algorithm, protocol, calls) of the tuning choices, grouped.

    Parameters
    ----------
    log : NcclInfoLog
        From :func:`~gpucomm.measure.logs.nccl_info.parse_nccl_info_log`.

    Returns
    -------
    list of tuple of str
        One row per (function, algorithm, protocol), sizes as a range.
    """
    rows = []
    for g in log.tuning_summary():
        sizes = format_size(g["min_bytes"]) if g["min_bytes"] == g["max_bytes"] else \
            f"{format_size(g['min_bytes'])} - {format_size(g['max_bytes'])}"
        rows.append((g["function"] or "(not printed)", sizes, g["algorithm"], g["protocol"], str(g["calls"])))
    return rows


def finding_rows(log: NcclInfoLog) -> list[tuple[str, str, str, str]]:
    """(number, severity, title [code], lines) of each finding: the findings table.

    Parameters
    ----------
    log : NcclInfoLog
        From :func:`~gpucomm.measure.logs.nccl_info.parse_nccl_info_log`.

    Returns
    -------
    list of (str, str, str, str)
        One row per finding, most serious first.
    """
    return [(str(i), f.severity, f"{f.title} [{f.code}]", _first(f.lines)) for i, f in enumerate(log.findings, 1)]


def finding_details(log: NcclInfoLog, width: int) -> str:
    """What was seen, the fix and the source of each finding, as text wrapped to ``width`` (URLs kept whole).

    Parameters
    ----------
    log : NcclInfoLog
        From :func:`~gpucomm.measure.logs.nccl_info.parse_nccl_info_log`.
    width : int
        Characters per line.

    Returns
    -------
    str
        One block per finding, numbered as in :func:`finding_rows`.
    """
    blocks = []
    for i, f in enumerate(log.findings, 1):
        lines = [f"[{i}] {f.title}"]
        for label, text in (("seen", f.evidence), ("fix", f.fix)):
            lines += textwrap.wrap(text, width=max(width, 40), initial_indent=f"    {label}: ",
                                   subsequent_indent=" " * (6 + len(label)), break_on_hyphens=False)
        lines.append(f"    source: {f.source}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def run(args: argparse.Namespace) -> int:
    """Read ``args.log``, print the tables (or ``--json``) and return 0.

    Raises
    ------
    GpucommError
        One line naming the input: it cannot be read, is binary, empty, or holds no NCCL line.
    """
    text = read_log_text(args.log, expected=EXPECTED)
    name = "standard input" if args.log == "-" else args.log
    if not text.strip():
        raise GpucommError(f"log {name!r} is empty: expected {EXPECTED}")
    try:
        log = parse_nccl_info_log(text)
    except GpucommError as exc:
        raise GpucommError(f"log {name!r}: {one_line(exc)}") from None
    if args.json:
        print_json({"input": name, **log.as_dict()})
        return 0
    from rich.markup import escape  # log text such as "[warn_socket]" or "[send]" is not rich markup

    def literal(rows):
        return [[escape(cell) for cell in row] for row in rows]

    width = shutil.get_terminal_size((120, 24)).columns  # the terminal's width, or $COLUMNS; 120 when piped
    print_table(escape(f"NCCL log {name}"), ("quantity", "value"), literal(setup_rows(log)), width=width)
    if log.connections:
        print_table("transports (connection lines)", ("transport", "lines", "first one"), literal(transport_rows(log)),
                    right_aligned=("lines",), width=width)
    if log.tuning:
        print_table("algorithm and protocol chosen (NCCL_DEBUG_SUBSYS=TUNING)",
                    ("function", "sizes", "algorithm", "protocol", "calls"), literal(tuning_rows(log)),
                    right_aligned=("calls",), width=width)
    if log.findings:
        print_table(f"findings ({len(log.findings)})", ("#", "severity", "finding", "lines"), literal(finding_rows(log)),
                    right_aligned=("#",), width=width)
        print(finding_details(log, width))
    else:
        print("no known problem found in the NCCL and PyTorch lines of this log")
    return 0


def register(subparsers) -> None:
    """Add the ``diagnose`` parser to ``subparsers`` (from ``ArgumentParser.add_subparsers``); its ``func`` is :func:`run`.

    Parameters
    ----------
    subparsers
        The object ``argparse.ArgumentParser.add_subparsers`` returned.
    """
    parser = subparsers.add_parser("diagnose", help="read an NCCL_DEBUG=INFO log: what NCCL set up, known problems",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", metavar="LOG", help="the log (a text file), or - for standard input")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    parser.set_defaults(func=run)
