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
from gpucomm.measure.logs.nccl_tests_lines import GPUCOMM_BACKEND_RE, GPUCOMM_ITERS_RE, HEADER_KEYS, LIBRARY_RE, PERF_RE
from gpucomm.measure.logs.nccl_tests_records import PERF_BINARY_TO_COLLECTIVE, LogWarning
from gpucomm.model.collectives import COLLECTIVES

__all__ = ["read_run_header", "read_version", "read_device", "ranks_from_devices", "read_command", "read_gpucomm_header",
           "read_gpucomm_timing", "read_registration_note", "nccl_version_from_code", "TIME_OVER_RANKS", "REGISTRATION"]


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


def _option(args: list[str], names: tuple[str, ...]) -> str | None:
    """The value of the first of ``names`` in ``args`` (``-b 8``, ``--minbytes=8``, ``-b8``), or None."""
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


def _integer(text: str | None) -> int | None:
    return int(text) if text is not None and INT_RE.match(text) else None


TIME_OVER_RANKS = {0: "rank0", 1: "avg", 2: "min", 3: "max"}
"""nccl-tests ``-a,--average`` -> how the time of each size is reduced over ranks (``Allreduce`` in ``src/common.cu``
v2.19.6: 0 rank 0's, 1 the mean (the default), 2 the minimum, 3 the maximum); ``gpucomm bench -a`` takes the same."""
REGISTRATION = {0: "none", 1: "local", 2: "symmetric"}
"""nccl-tests ``-R,--local_register`` -> buffer registration (README, v2.19.6): ``ncclCommRegister`` (1) or
``ncclCommWindowRegister`` (2, NCCL 2.27 and later; earlier versions fall back to 1 and say so)."""
_ENV_RE = re.compile(r"^([A-Z][A-Z0-9_]{0,63})=(\S*)$")


def _read_options(launcher: list[str], test: list[str], meta: dict, warnings: list[LogWarning]) -> None:
    """``-a`` (time over ranks), ``-R`` (buffer registration) and the ``NCCL_*`` variables of a command line."""
    average = _integer(_option(test, ("-a", "--average")))  # test: the arguments after the binary
    if average in TIME_OVER_RANKS and "time_over_ranks" not in meta:
        meta["time_over_ranks"], meta["time_over_ranks_source"] = TIME_OVER_RANKS[average], "command"
    registration = _integer(_option(test, ("-R", "--local_register")))
    if registration in REGISTRATION:
        meta.setdefault("buffer_registration", REGISTRATION[registration])
    env = dict(meta.get("env") or {})
    for tok in launcher:
        found = _ENV_RE.match(tok)
        if found and found.group(1).startswith("NCCL_"):  # 'NCCL_X=1 mpirun ...' or 'mpirun -x NCCL_X=1 ...'
            env.setdefault(found.group(1), found.group(2))
    if env:
        meta["env"] = env
    # NCCL's variables only: nothing else after the binary is known to be meant for the environment
    late = [tok for tok in test if _ENV_RE.match(tok) and tok.startswith("NCCL_")]
    if late:
        warnings.append(LogWarning(
            "env_after_binary", f"{', '.join(late[:3])} written after the nccl-tests binary: there it is an argument, "
                                "which nccl-tests ignores, not an environment variable, so the run did not have it; "
                                "write it before the command (NCCL_P2P_DISABLE=1 ./build/all_reduce_perf ...) or pass it "
                                "with mpirun -x"))


def read_gpucomm_timing(match: re.Match, meta: dict) -> None:
    """``# time: one operation, the maximum over ranks (-a 3; ...)`` of ``gpucomm bench``'s table: ``time_over_ranks``.

    Parameters
    ----------
    match : re.Match
        :data:`gpucomm.measure.logs.nccl_tests_lines.GPUCOMM_TIMING_RE`'s match (group 1: the ``-a`` value).
    meta : dict
        Completed in place: ``time_over_ranks`` (:data:`TIME_OVER_RANKS`) with ``time_over_ranks_source``.
    """
    meta["time_over_ranks"], meta["time_over_ranks_source"] = TIME_OVER_RANKS[int(match.group(1))], "gpucomm_header"


def read_registration_note(match: re.Match, meta: dict) -> None:
    """nccl-tests' ``Option -R 2 (symmetric) is not supported before NCCL 2.27. Defaulting to local registration``
    (or ``-R ... before NCCL 2.19. Ignoring``, ``src/common.cu``): the registration the run really used.

    Parameters
    ----------
    match : re.Match
        :data:`gpucomm.measure.logs.nccl_tests_lines.REGISTRATION_NOTE_RE`'s match (group 1: what it falls back to).
    meta : dict
        Completed in place: ``buffer_registration``.
    """
    meta["buffer_registration"] = "local" if "local" in match.group(1).lower() else "none"


def read_command(command: str, meta: dict, warnings: list[LogWarning] | None = None) -> None:
    """Fill collective, sizes, step and rank count from a command line (nccl-tests README arguments).

    Parameters
    ----------
    command : str
        The command, launcher included (``mpirun -np 2 ./build/all_reduce_perf -b 8 -e 1G -g 4``).
    meta : dict
        :attr:`ParsedLog.metadata`, completed in place: ``collective`` (from the binary's name),
        ``minBytes``, ``maxBytes``, ``step_factor`` or ``step_bytes`` where the header line did not
        give them, ``num_ranks`` = processes x threads x GPUs (nccl-tests' README), ``time_over_ranks``
        (``-a``), ``buffer_registration`` (``-R``), ``env`` (``NCCL_*`` variables set before the binary).
    warnings : list of LogWarning, optional
        Appended to: ``env_after_binary`` for a ``NAME=value`` written after the binary.
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

    def size(text: str | None) -> int | None:
        if text is None:
            return None
        try:
            return parse_size(text)
        except (GpucommError, OverflowError, ValueError):  # parse_size("1e308T") overflows in int(round(inf))
            return None

    for key, names in (("minBytes", ("-b", "--minbytes")), ("maxBytes", ("-e", "--maxbytes"))):
        value = size(_option(test, names))
        if value is not None:
            meta.setdefault(key, value)
    factor = _integer(_option(test, ("-f", "--stepfactor")))
    if factor is not None and "step_bytes" not in meta:
        meta.setdefault("step_factor", factor)
    step = size(_option(test, ("-i", "--stepbytes")))
    if step is not None and "step_factor" not in meta:
        meta.setdefault("step_bytes", step)
    gpus = _integer(_option(test, ("-g", "--ngpus"))) or 1
    threads = _integer(_option(test, ("-t", "--nthreads"))) or 1
    procs = 1
    if launcher and any(t.split("/")[-1] in ("mpirun", "mpiexec", "srun") for t in launcher):
        procs = _integer(_option(launcher, ("-np", "-n", "--np", "--ntasks")))
    if procs is not None and "num_ranks" not in meta:
        meta["num_ranks"] = procs * threads * gpus
        meta["num_ranks_source"] = "command"
    # without a binary named *_perf (a wrapper script, all_reduce_perf_mpi) nothing tells the test's arguments apart
    _read_options(launcher if perf_at is not None else tokens, test if perf_at is not None else [], meta,
                  warnings if warnings is not None else [])



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
        Completed in place (``collective``, ``num_ranks``, ``backend``, ``iters``, ``warmup_iters``, ``validation``).
    """
    meta["gpucomm_table"] = True
    name, ranks = match.group(1), int(match.group(2))
    if name in COLLECTIVES and "collective" not in meta:
        meta["collective"], meta["collective_source"] = name, "gpucomm_header"
    if ranks >= 1 and "num_ranks" not in meta:
        meta["num_ranks"], meta["num_ranks_source"] = ranks, "gpucomm_header"
    backend = GPUCOMM_BACKEND_RE.search(body)
    if backend:
        meta.setdefault("backend", backend.group(1))
    counts = GPUCOMM_ITERS_RE.search(body)
    if counts:
        for key, value in zip(("iters", "warmup_iters", "validation"), counts.groups()):
            meta.setdefault(key, int(value))
