"""Read the text that nccl-tests prints (``all_reduce_perf`` and friends) into records, and flag what looks wrong.

nccl-tests (https://github.com/NVIDIA/nccl-tests) prints one table row per message size, with an
out-of-place and an in-place measurement side by side::

    #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
      1073741824     268435456     float     sum      -1   7163.5  149.89  224.84      0   7161.8  149.93  224.89      0

:func:`parse_nccl_tests` reads that table and the lines around it, in the layouts found in
published logs:

* the current layout (``redop``, ``root`` and ``#wrong`` columns; nccl-tests 2.x since about 2021);
* older layouts with an ``error`` column (the largest deviation from the expected result) instead
  of ``#wrong``, with or without a ``redop`` column and without ``root``. In the oldest one the
  ``size`` column is twice ``count x type size`` while algbw is computed from ``count x type size``
  (nccl-tests issue #44, NCCL 2.6): the parser detects it from algbw and uses the smaller size;
* the columns nccl-tests 2.19 adds with ``-I 1`` (``i_min i_max i_p99 i_cv%`` after each half's ``#wrong``,
  in ``gpucomm bench -I 1``'s table too) and ``-S 1`` (a timestamp after the row), the ``-R`` fallback
  note, and two numbers printed without a space between them (``10.4012905.60``: the first ends two
  digits after its point, as nccl-tests prints a bandwidth);
* lines prefixed by OpenMPI's ``--tag-output`` (``[1,0]<stdout>:``, with or without a space
  before the size), Intel MPI's or MPICH's rank tag (``[0]``), a bracketed timestamp, ``srun
  --label`` (``0: ``) or a Markdown quote (``> ``), nested up to four deep, rank markers inside a row
(``... -1[0]    1626.5 ...``: mpirun tags each chunk a rank writes), and NCCL_DEBUG=INFO
  lines mixed in (ignored, except the ``NCCL version`` line);
* rows with one half blank, a measurement not made: nccl-tests prints no out-of-place half when it
  replays a trace (``writeBenchMarkLineNullBody``, ``src/util.cu``), and ``gpucomm bench`` none for
  all_reduce and broadcast, which torch.distributed runs in place only. Such a row is read when a
  ``# out-of-place: not measured`` (or ``in-place``) line says which half is blank, or when its
  values end under the in-place column titles (or under a full row's in-place values): values
  under the out-of-place titles alone are a row cut in the middle. The blank half gives no
  record, never a count of wrong elements. The ``WRONG`` that ends
  ``gpucomm bench``'s rows with wrong elements is skipped (the ``#wrong`` columns hold the counts).

It also reads the header (``# nThread 1 nGpus 8 minBytes ... maxBytes ...``), the ``# Using
devices`` list, the nccl-tests version line, the command line if the log contains one, the first
line of ``gpucomm bench``'s table (``# gpucomm.measure all_reduce: 2 ranks, ...``: collective, ranks,
iterations) and the summary (``# Avg bus bandwidth``). The number of ranks comes from the device
list or that line, else from the command (``mpirun -np P ... -t T -g G``: P x T x G, the rule in
nccl-tests' README), else from the numbers: size / (count x type size) for the collectives that
print a per-rank count, or the one rank count whose bus-bandwidth factor (``doc/PERFORMANCE.md``)
matches busbw / algbw of every row to the printed precision. The collective comes from the
binary's name or that line, else from busbw / algbw with the ``redop`` and ``root`` columns
(:func:`finish_log`); ``*_source`` in the metadata says which.

:func:`parse_nccl_tests_runs` splits a text holding several runs (one after another, or ``-d all``
sweeping each type in turn) into one :class:`ParsedLog` per run; :func:`parse_nccl_tests` reads the
text as one, with a ``several_runs`` warning. ``gpucomm.measure.logs.nccl_tests_json`` reads the ``-J``
JSON output into the same records.

Warnings (:class:`LogWarning`, ``code`` in brackets) flag:

* ``wrong``: a non-zero ``#wrong`` count (the data check failed; the bandwidth means nothing);
  ``error``: an old-layout ``error`` value (the largest deviation, not a count) above nccl-tests' own
  bound for the type and rank count (:func:`legacy_error_bound`), unless the footer says ``0 OK``;
  ``out_of_bounds``: a FAILED summary;
* ``one_rank``: a single rank. busbw is then 0 for all_reduce (factor ``2(n-1)/n``), and nothing
  crossed a link. Several single-rank runs printed together mean nccl-tests was launched by
  ``mpirun`` without being built with ``MPI=1`` (nccl-tests issues #27, #213, #249);
* ``stopped_early``: the last size is below ``maxBytes`` although the next step would fit, or the
  summary is missing (``no_summary``): the run crashed, hung, ran out of memory, or the log was cut;
* ``in_place_outlier``: in-place and out-of-place times of one size differ by more than 25 % (by
  more than 2x below 1 MiB, where times are a few microseconds and noisy);
* ``busbw_drop``: from some size on, busbw stays more than 10 % below the best of the smaller sizes
  (1 MiB or more) up to the largest size: a cliff or drift (host staging, memory placement, thermal
  throttling, contention), named with the size where it starts; ``busbw_dip``: sizes in the middle
  of the sweep more than 10 % below that best, with larger sizes recovering (one slow measurement,
  or a band of sizes with a worse algorithm), each named;
* ``max_bytes_reduced``: nccl-tests lowered maxBytes to fit GPU memory (``Reducing maxBytes``): the
  sweep ends early by design, so it is not ``stopped_early``;
* ``contradiction``: a collective or rank count given by the caller that differs from what the log
  says, or whose bus-bandwidth factor does not match busbw / algbw (both values named);
* ``several_runs`` (the text read as one sweep), ``empty_run`` (a run that printed no row);
* ``old_algbw`` (all_gather or reduce_scatter of nccl-tests before 2020-06-19, whose algbw was (n-1)/n of today's);
* ``inconsistent_shape``: busbw / algbw that does not fit the collective and rank count the log states
  (a device list of 8 ranks beside rows of ratio 1.5); ``size_mismatch``: a size that is not count x type
  size (x ranks where the count is per rank); ``unordered_sizes``: sizes that fall within a sweep;
* ``env_after_binary``: an ``NCCL_*=value`` written after the binary on the command line (an argument,
  not an environment variable);
* ``algbw_mismatch``, ``duplicate_size``, ``incomplete_row``, ``bad_row``,
  ``interleaved_runs``: format problems.

The parser never raises anything but :class:`gpucomm.GpucommError`, and raises it only when the
text holds no result row at all.

The parser's parts, each its own module: :mod:`~gpucomm.measure.logs.nccl_tests_records` (what it
returns), :mod:`~gpucomm.measure.logs.nccl_tests_layouts` (the row layouts of each nccl-tests era),
:mod:`~gpucomm.measure.logs.nccl_tests_lines` (the line classifier, run boundaries),
:mod:`~gpucomm.measure.logs.nccl_tests_header` (header, device list, command line),
:mod:`~gpucomm.measure.logs.nccl_tests_parse` (one handler per kind of line),
:mod:`~gpucomm.measure.logs.nccl_tests_shape` (what the numbers imply) and
:mod:`~gpucomm.measure.logs.nccl_tests_checks` (the warnings and their thresholds). This module holds the
entry points and the bundled logs; every public name of the parser is importable from it.
"""

from __future__ import annotations

from gpucomm import GpucommError
from gpucomm.measure.logs.nccl_tests_checks import (
    BUSBW_DROP_FRACTION,
    DROP_MIN_BYTES,
    IN_PLACE_OUTLIER_RATIO,
    LEGACY_DELTA_MAX,
    SMALL_OUTLIER_RATIO,
    finish_log,
    legacy_error_bound,
)
from gpucomm.measure.logs.nccl_tests_lines import is_run_start, run_spans, strip_prefix
from gpucomm.measure.logs.nccl_tests_parse import parse_lines
from gpucomm.measure.logs.nccl_tests_records import (
    PERF_BINARY_TO_COLLECTIVE,
    SOURCE_WORDS,
    TYPE_BYTES,
    LogWarning,
    ParsedLog,
    Record,
)
from gpucomm.model.collectives import COLLECTIVES
from gpucomm.model.measurements import bundled_data

__all__ = ["Record", "LogWarning", "ParsedLog", "parse_nccl_tests", "parse_nccl_tests_runs", "finish_log",
           "check_overrides", "legacy_error_bound", "bundled_log_names", "bundled_log_text", "read_bundled_log",
           "TYPE_BYTES", "PERF_BINARY_TO_COLLECTIVE", "SOURCE_WORDS", "LOG_SWEEPS_CSV", "log_sweeps_csv",
           "IN_PLACE_OUTLIER_RATIO", "SMALL_OUTLIER_RATIO", "BUSBW_DROP_FRACTION", "DROP_MIN_BYTES", "LEGACY_DELTA_MAX"]


# ----------------------------------------------------------------------------------------------- parser

def parse_nccl_tests(text: str, *, collective: str | None = None, num_ranks: int | None = None) -> ParsedLog:
    """Parse the text output of an nccl-tests binary (``all_reduce_perf``...).

    Parameters
    ----------
    text : str
        The log: the table, optionally with the header, device list, summary, the command,
        NCCL_DEBUG=INFO lines and launcher prefixes (see the module docstring).
    collective : str, optional
        torch.distributed name of the collective, when the log does not say (no command line):
        overrides what the log says.
    num_ranks : int, optional
        Number of ranks, overriding what the log says.

    Returns
    -------
    ParsedLog
        Records (out-of-place and in-place for each size), warnings and metadata.

    Raises
    ------
    GpucommError
        If ``text`` is not a string, the overrides are invalid, or the text holds no result row.

    Notes
    -----
    busbw is read, never recomputed: nccl-tests computes it as ``algbw x factor`` with the factor
    of ``doc/PERFORMANCE.md`` (:func:`gpucomm.model.collectives.busbw_factor`), and the parser uses that
    relation the other way round to infer the number of ranks when nothing else gives it.

    References
    ----------
    nccl-tests ``README.md`` (arguments; ranks = processes x threads x GPUs) and
    ``src/common.cu`` (``BenchTime``: the printed columns), v2.19.6:
    https://github.com/NVIDIA/nccl-tests/blob/v2.19.6/src/common.cu

    Examples
    --------
    >>> log = parse_nccl_tests('''
    ... # command: ./build/all_reduce_perf -b 1G -e 1G -g 4
    ...   1073741824     268435456     float     sum      -1   7163.5  149.89  224.84      0   7161.8  149.93  224.89      0
    ... # Avg bus bandwidth    : 224.865
    ... ''')
    >>> r = log.records[0]
    >>> r.size_bytes, r.busbw_gbps, log.metadata["num_ranks"], log.metadata["collective"]
    (1073741824, 224.84, 4, 'all_reduce')
    """
    check_overrides(text, collective, num_ranks)
    numbered = list(enumerate(text.splitlines(), start=1))
    log = parse_lines(numbered, collective, num_ranks)
    spans = run_spans(numbered)
    if len(spans) < 2:
        return log
    where = ", ".join(f"{numbered[rows[0]][0]}-{numbered[rows[-1]][0]}" for _, rows in spans[:4])
    several = LogWarning("several_runs", f"{len(spans)} runs one after another (result rows at lines {where}"
                                         + (", ..." if len(spans) > 4 else "") + "), read here as one sweep: "
                                         "parse_nccl_tests_runs (gpucomm parse) keeps each run its own sweep")
    return ParsedLog(log.records, (*log.warnings, several), log.metadata)


def check_overrides(text: object, collective: str | None, num_ranks: int | None) -> None:
    """Refuse a log that is not text and overrides that are not a collective name or a positive rank count.

    Raises
    ------
    GpucommError
        One line naming the value and what is accepted.
    """
    if not isinstance(text, str):
        raise GpucommError(f"nccl-tests log must be text (str), got {type(text).__name__}: read the file with .read_text()")
    if collective is not None and collective not in COLLECTIVES:
        raise GpucommError(f"unknown collective {collective!r}: expected one of {', '.join(COLLECTIVES)}")
    if num_ranks is not None and (isinstance(num_ranks, bool) or not isinstance(num_ranks, int) or num_ranks < 1):
        raise GpucommError(f"number of ranks {num_ranks!r} is not valid: expected a positive integer")


def parse_nccl_tests_runs(text: str, *, collective: str | None = None,
                          num_ranks: int | None = None) -> tuple[ParsedLog, ...]:
    """Parse nccl-tests output that may hold several runs: one :class:`ParsedLog` per run, in order.

    A run starts where the text starts another invocation after result rows (an ``nccl-tests
    version``, ``Collective test starting``, ``nThread`` header or command line), or where the sizes
    start again from a smaller one (``-d all`` and ``-o all`` sweep each type or operation in turn;
    those runs share the header and the summary). Runs printed at the same time by processes that
    do not share a job (nccl-tests under ``mpirun`` without ``MPI=1``: several ``nThread`` headers
    before the first row) stay one run, with its ``interleaved_runs`` warning.

    Parameters
    ----------
    text : str
        The output, as for :func:`parse_nccl_tests`.
    collective, num_ranks : optional
        As for :func:`parse_nccl_tests`, applied to every run.

    Returns
    -------
    tuple of ParsedLog
        One per run; each ``metadata`` has ``run`` (1-based), ``runs`` and ``lines`` (first and last
        line of its result rows). A run that printed no result row (stopped before its first size)
        is not returned: the run before it gets an ``empty_run`` warning.

    Raises
    ------
    GpucommError
        As :func:`parse_nccl_tests`: bad arguments, or no result row at all.

    Examples
    --------
    >>> row = "  {0}  {1}  float  sum  -1  10.0  {2}  {2}  0  10.0  {2}  {2}  0"
    >>> one = "\\n".join(["# nThread 1 nGpus 2 minBytes 4096 maxBytes 8192 step: 2(factor)",
    ...                    row.format(4096, 1024, "0.41"), row.format(8192, 2048, "0.82"), "# Avg bus bandwidth : 0.6"])
    >>> [len(run.records) for run in parse_nccl_tests_runs(one + "\\n" + one)]
    [4, 4]
    """
    check_overrides(text, collective, num_ranks)
    numbered = list(enumerate(text.splitlines(), start=1))
    spans = run_spans(numbered)
    if not spans:
        return (parse_nccl_tests(text, collective=collective, num_ranks=num_ranks),)  # raises: no rows
    runs = []
    for k, (indices, rows) in enumerate(spans, start=1):
        log = parse_lines([numbered[i] for i in indices], collective, num_ranks)
        log.metadata.update(run=k, runs=len(spans), lines=(numbered[rows[0]][0], numbered[rows[-1]][0]))
        runs.append(log)
    source = next((r.metadata["source"] for r in runs if "source" in r.metadata), None)
    for r in runs:
        if source is not None:
            r.metadata.setdefault("source", source)
    last_row = spans[-1][1][-1]
    tail = [(n, raw) for n, raw in numbered[last_row + 1:] if is_run_start(strip_prefix(raw).strip())]
    if tail:
        last = runs[-1]
        runs[-1] = ParsedLog(last.records, (*last.warnings, LogWarning(
            "empty_run", f"line {tail[0][0]} starts another run that printed no result row: it stopped before its "
                         "first size (a crash, a hang or an error in its setup; the lines after it may say which)")),
                             last.metadata)
    return tuple(runs)




# ----------------------------------------------------------------------------------------------- bundled logs

def bundled_log_names() -> list[str]:
    """Names (``"C01"``...) of the nccl-tests logs bundled in ``gpucomm/model/data/nccl_logs``."""
    folder = bundled_data("nccl_logs")
    return sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".txt"))


def bundled_log_text(name: str) -> str:
    """The text of one bundled log (its first line is ``# source: <URL>``).

    Raises
    ------
    GpucommError
        If there is no such log.
    """
    names = bundled_log_names()
    if name not in names:
        raise GpucommError(f"unknown bundled nccl-tests log {name!r}: expected one of {', '.join(names)}")
    return bundled_data("nccl_logs", f"{name}.txt").read_text()


def read_bundled_log(name: str, **overrides) -> ParsedLog:
    """:func:`parse_nccl_tests` of a bundled log (keywords as there).

    Examples
    --------
    >>> log = read_bundled_log("C04")
    >>> log.metadata["num_ranks"], log.warning_codes()
    (4, ['in_place_outlier', 'busbw_dip'])
    """
    return parse_nccl_tests(bundled_log_text(name), **overrides)


LOG_SWEEPS_CSV = "nccl_log_sweeps.csv"
"""The bundled CSV (``gpucomm/model/data``) holding the in-place rows of the logs the validation sweeps name."""


def log_sweeps_csv(names: list[str]) -> str:
    """The text of :data:`LOG_SWEEPS_CSV`: the in-place rows of bundled logs, as this parser reads them.

    The model layer cannot import this parser (imports point down only), so the rows that
    :mod:`gpucomm.model.validation` compares with the model are written once into a CSV by
    ``scripts/extract_log_sweeps.py``; ``tests/measure/test_nccl_tests_log.py`` checks that the file
    equals this function's output, so the CSV cannot drift from the logs.

    Parameters
    ----------
    names : list of str
        Bundled log names (``"S01"``), in the order to write them.

    Returns
    -------
    str
        Comment lines (where the rows come from), a header ``log,bytes,n_gpus,busbw_GBps,time_us``
        and one line per in-place measurement: size in bytes, ranks, busbw in GB/s and time in
        microseconds as printed.

    Raises
    ------
    GpucommError
        An unknown log, or one whose rank count the parser cannot tell.

    Examples
    --------
    >>> log_sweeps_csv(["C06"]).splitlines()[3]
    'C06,1073741824,4,368.83,4366.8'
    """
    lines = ["# source: the bundled nccl-tests logs nccl_logs/<log>.txt (each log's first line gives its URL)",
             "# in-place rows of the logs named by gpucomm.model.validation.SWEEPS, written by "
             "scripts/extract_log_sweeps.py with gpucomm.measure's nccl-tests parser; do not edit by hand",
             "log,bytes,n_gpus,busbw_GBps,time_us"]
    for name in names:
        log = read_bundled_log(name)
        ranks = log.metadata.get("num_ranks")
        if not ranks:
            raise GpucommError(f"bundled log {name!r}: the rank count cannot be read from it")
        lines += [f"{name},{r.size_bytes},{ranks},{r.busbw_gbps:g},{r.time_us:g}" for r in log.in_place()]
    return "\n".join(lines) + "\n"
