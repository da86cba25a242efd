"""The header of an nccl-tests log: the run's parameters, version, device list and command line.

nccl-tests prints, before its table (``src/util.cu``, v2.19.6)::

    # nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903
    # Collective test starting: all_reduce_perf
    # nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
    #  Rank  0 Group  0 Pid  12345 on   node1 device  0 [0x18] NVIDIA H100 80GB HBM3

Each function here reads one kind of those lines (or a command line, or the first line of ``gpucomm
bench``'s own table) into :attr:`ParsedLog.metadata`. Standard library and :mod:`gpucomm.model` only.
"""

from __future__ import annotations

import re

from gpucomm import GpucommError
from gpucomm.measure.logs.nccl_tests_layouts import INT_RE
from gpucomm.measure.logs.nccl_tests_lines import GPUCOMM_ITERS_RE, HEADER_KEYS, LIBRARY_RE, PERF_RE
from gpucomm.measure.logs.nccl_tests_records import PERF_BINARY_TO_COLLECTIVE, LogWarning
from gpucomm.model.collectives import COLLECTIVES

__all__ = ["read_run_header", "read_version", "read_device", "ranks_from_devices", "read_command", "read_gpucomm_header",
           "nccl_version_from_code"]


def read_run_header(body: str, match: re.Match, meta: dict) -> None:
    """The ``nThread 1 nGpus 8 minBytes ... maxBytes ... step: 2(factor) warmup iters: 5 ...`` line.

    Parameters
    ----------
    body : str
        The line after its ``#``.
    match : re.Match
        :data:`gpucomm.measure.logs.nccl_tests_lines.HEADER_RE`'s match of it.
    meta : dict
        Completed in place, the first such line winning: ``nThread``, ``nGpus``, ``minBytes``, ``maxBytes``
        (bytes), ``step_factor`` or ``step_bytes``, and the counts named in ``HEADER_KEYS`` (``iters``,
        ``validation``...).
    """
    n_thread, n_gpus, lo, hi, step, kind = match.groups()
    meta.setdefault("nThread", int(n_thread))
    meta.setdefault("nGpus", int(n_gpus))
    meta.setdefault("minBytes", int(lo))
    meta.setdefault("maxBytes", int(hi))
    if step is not None:
        meta.setdefault("step_factor" if kind == "factor" else "step_bytes", int(step))
    for label, key in HEADER_KEYS:
        m = re.search(r"(?<![a-z])(?<!warmup )(?<!agg )" + label + r":\s*(-?\d{1,9})", body)
        if m and key not in meta:
            meta[key] = int(m.group(1))


def nccl_version_from_code(code: int) -> str | None:
    """``"2.19.3"`` from NCCL's version code (``NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z`` since 2.9), None before.

    Parameters
    ----------
    code : int
        ``nccl-library=`` of the version line, or the JSON output's ``nccl_version``.

    Returns
    -------
    str or None
        The dotted version; None for a code below 20900 (older NCCL coded ``X*1000 + Y*100 + Z``, ambiguous).

    Examples
    --------
    >>> nccl_version_from_code(21903), nccl_version_from_code(2708)
    ('2.19.3', None)
    """
    return f"{code // 10000}.{code // 100 % 100}.{code % 100}" if code >= 20900 else None


def read_version(body: str, match: re.Match, meta: dict) -> None:
    """The ``nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903`` line: ``version``, ``nccl_version``.

    Parameters
    ----------
    body : str
        The line after its ``#``.
    match : re.Match
        The version pattern's match of it (group 1: the nccl-tests version).
    meta : dict
        Completed in place.
    """
    meta.setdefault("version", match.group(1))
    library = LIBRARY_RE.search(body)
    if library:
        version = nccl_version_from_code(int(library.group(1)))
        if version is not None:
            meta.setdefault("nccl_version", version)


def read_device(match: re.Match) -> dict:
    """One ``#  Rank  0 Group  0 Pid 12345 on node1 device  0 [0x18] NVIDIA H100`` line of the device list.

    Parameters
    ----------
    match : re.Match
        :data:`gpucomm.measure.logs.nccl_tests_lines.DEVICE_RE`'s match of the line.

    Returns
    -------
    dict
        ``rank``, ``host``, ``device`` (CUDA index), ``bus_id`` (as printed), ``name``.
    """
    rank, host, dev, bus, name = match.groups()
    return {"rank": int(rank), "host": host, "device": int(dev), "bus_id": bus, "name": name.strip()}


def ranks_from_devices(devices: list[dict], meta: dict, warnings: list[LogWarning]) -> None:
    """The rank count from the device list (``num_ranks_source`` ``devices``); a rank printed twice is flagged.

    Parameters
    ----------
    devices : list of dict
        From :func:`read_device`, in order (none: nothing is done).
    meta : dict
        Completed in place: ``devices``, ``num_ranks``, ``num_ranks_source``.
    warnings : list of LogWarning
        An ``interleaved_runs`` warning is appended when a rank appears more than once: several
        independent runs printed together (nccl-tests under mpirun without ``MPI=1``).
    """
    if not devices:
        return
    meta["devices"] = devices
    ranks = [d["rank"] for d in devices]
    if len(set(ranks)) != len(ranks):
        warnings.append(LogWarning(
            "interleaved_runs", f"the device list names rank(s) {sorted({r for r in ranks if ranks.count(r) > 1})} "
            "more than once: several independent runs printed together, each with its own ranks (nccl-tests "
            "launched by mpirun but built without MPI=1 runs one job per process; nccl-tests issues #27, #213)"))
        n_dev = max(ranks) + 1
    else:
        n_dev = len(ranks)
    meta["num_ranks"] = n_dev
    meta["num_ranks_source"] = "devices"


def read_command(command: str, meta: dict) -> None:
    """Fill collective, sizes, step and rank count from a command line (nccl-tests README arguments).

    Parameters
    ----------
    command : str
        The command, launcher included (``mpirun -np 2 ./build/all_reduce_perf -b 8 -e 1G -g 4``).
    meta : dict
        :attr:`ParsedLog.metadata`, completed in place: ``collective`` (from the binary's name),
        ``minBytes``, ``maxBytes``, ``step_factor`` or ``step_bytes`` where the header line did not
        give them, and ``num_ranks`` = processes x threads x GPUs (nccl-tests' README).
    """
    from gpucomm.model.units import parse_size

    perf = PERF_RE.search(command)
    if perf and "collective" not in meta:
        stem = perf.group(1)
        meta["collective"] = PERF_BINARY_TO_COLLECTIVE.get(stem, stem)
        meta["collective_source"] = "command"
    tokens = command.split()
    perf_at = next((i for i, t in enumerate(tokens) if t.endswith("_perf")), None)
    launcher, test = (tokens[:perf_at], tokens[perf_at + 1:]) if perf_at is not None else ([], tokens)

    def option(args: list[str], names: tuple[str, ...]) -> str | None:
        for i, tok in enumerate(args):
            for name in names:
                if tok == name and i + 1 < len(args):
                    return args[i + 1]
                if name.startswith("--") and tok.startswith(name + "="):
                    return tok.split("=", 1)[1]
                if len(name) == 2 and not name.startswith("--") and tok.startswith(name) and len(tok) > 2 \
                        and tok[2:3].isdigit():
                    return tok[2:]  # -b8 -e16G
        return None

    def integer(text: str | None) -> int | None:
        return int(text) if text is not None and INT_RE.match(text) else None

    def size(text: str | None) -> int | None:
        if text is None:
            return None
        try:
            return parse_size(text)
        except (GpucommError, OverflowError, ValueError):  # parse_size("1e308T") overflows in int(round(inf))
            return None

    for key, names in (("minBytes", ("-b", "--minbytes")), ("maxBytes", ("-e", "--maxbytes"))):
        value = size(option(test, names))
        if value is not None:
            meta.setdefault(key, value)
    factor = integer(option(test, ("-f", "--stepfactor")))
    if factor is not None and "step_bytes" not in meta:
        meta.setdefault("step_factor", factor)
    step = size(option(test, ("-i", "--stepbytes")))
    if step is not None and "step_factor" not in meta:
        meta.setdefault("step_bytes", step)
    gpus = integer(option(test, ("-g", "--ngpus"))) or 1
    threads = integer(option(test, ("-t", "--nthreads"))) or 1
    procs = 1
    if launcher and any(t.split("/")[-1] in ("mpirun", "mpiexec", "srun") for t in launcher):
        procs = integer(option(launcher, ("-np", "-n", "--np", "--ntasks")))
    if procs is not None and "num_ranks" not in meta:
        meta["num_ranks"] = procs * threads * gpus
        meta["num_ranks_source"] = "command"



def read_gpucomm_header(body: str, match: re.Match, meta: dict) -> None:
    """Collective, rank count, iterations and check from the first line of ``gpucomm bench``'s table.

    ``# gpucomm.measure all_reduce: 2 ranks, backend gloo, float32 sum, 8 B to 1 MiB step x4, iters 20,
    warm-up 5, check 1`` (:mod:`gpucomm.measure.results`). Its sizes are rounded to 3 digits
    there, so they are not read: the rows give them.

    Parameters
    ----------
    body : str
        The line after its ``#``.
    match : re.Match
        :data:`GPUCOMM_HEADER_RE`'s match of it.
    meta : dict
        Completed in place (``collective``, ``num_ranks``, ``iters``, ``warmup_iters``, ``validation``).
    """
    name, ranks = match.group(1), int(match.group(2))
    if name in COLLECTIVES and "collective" not in meta:
        meta["collective"], meta["collective_source"] = name, "gpucomm_header"
    if ranks >= 1 and "num_ranks" not in meta:
        meta["num_ranks"], meta["num_ranks_source"] = ranks, "gpucomm_header"
    counts = GPUCOMM_ITERS_RE.search(body)
    if counts:
        for key, value in zip(("iters", "warmup_iters", "validation"), counts.groups()):
            meta.setdefault(key, int(value))
