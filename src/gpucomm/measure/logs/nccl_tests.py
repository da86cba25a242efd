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
* lines prefixed by OpenMPI's ``--tag-output`` (``[1,0]<stdout>:``, with or without a space
  before the size), Intel MPI's or MPICH's rank tag (``[0]``), a bracketed timestamp, ``srun
  --label`` (``0: ``) or a Markdown quote (``> ``), nested up to four deep, and NCCL_DEBUG=INFO
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
* ``algbw_mismatch``, ``duplicate_size``, ``incomplete_row``, ``bad_row``,
  ``interleaved_runs``: format problems.

The parser never raises anything but :class:`gpucomm.GpucommError`, and raises it only when the
text holds no result row at all.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from gpucomm import GpucommError
from gpucomm.model.collectives import COLLECTIVES, REGISTRY, busbw_factor
from gpucomm.model.dtypes import BY_SPELLING
from gpucomm.model.measurements import bundled_data

__all__ = ["Record", "LogWarning", "ParsedLog", "parse_nccl_tests", "parse_nccl_tests_runs", "finish_log",
           "check_overrides", "legacy_error_bound", "bundled_log_names", "bundled_log_text", "read_bundled_log",
           "TYPE_BYTES", "PERF_BINARY_TO_COLLECTIVE", "SOURCE_WORDS"]

TYPE_BYTES = {spelling: t.size_bytes for spelling, t in BY_SPELLING.items()}
"""Bytes per element of the type names nccl-tests prints (``test_typenames`` in ``src/common.cu``), and of every
other spelling of those types (:data:`gpucomm.model.dtypes.BY_SPELLING`)."""

PERF_BINARY_TO_COLLECTIVE = {c.nccl_tests_binary.removesuffix("_perf"): name for name, c in REGISTRY.items()}
"""nccl-tests binary stem (``all_reduce`` of ``all_reduce_perf``) -> torch.distributed collective name
(``Collective.nccl_tests_binary`` of :mod:`gpucomm.model.collectives`)."""

IN_PLACE_OUTLIER_RATIO = 1.25
"""Flag a size of 1 MiB or more whose in-place and out-of-place times differ by more than this factor."""
SMALL_OUTLIER_RATIO = 2.0
"""Below ``DROP_MIN_BYTES`` times are microseconds and noisy: flag only a factor of two."""
BUSBW_DROP_FRACTION = 0.10
"""Flag a size whose busbw is more than this fraction below the best of the smaller sizes (sizes >= ``DROP_MIN_BYTES``)."""
DROP_MIN_BYTES = 1 << 20
"""Below 1 MiB busbw is latency-bound and noisy: not checked for drops."""

_HALF_WIDTH = 4  # columns of one measurement: time, algbw, busbw, then #wrong or error
_ALIGN_SLACK = 3  # characters a value may end away from its column title (the halves are 32 apart)
_WRONG_MARK = "WRONG"  # gpucomm bench ends a row with wrong elements with it (gpucomm.measure.results)
_MAX_DIGITS = 20  # a size or count with more digits is not a size (and int() of huge strings is slow or refused)
_INT_RE = re.compile(r"^\d{1,%d}$" % _MAX_DIGITS)
_SIGNED_INT_RE = re.compile(r"^-?\d{1,%d}$" % _MAX_DIGITS)
_FLOAT_RE = re.compile(r"^[+-]?(?:\d{1,30}(?:\.\d{0,30})?|\.\d{1,30})(?:[eE][+-]?\d{1,4})?$")
_TYPE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
_PREFIXES = (
    # Open MPI --tag-output ([1,0]<stdout>:), Intel MPI / MPICH -l and -prepend-rank ([0]), a timestamp
    # ([2024-05-01 10:00:00]): a bracketed tag, written directly before the text or after spaces
    re.compile(r"^\s*\[[^\]\n]{1,80}\](?:<(?:stdout|stderr)>)?:?[ \t]?"),
    re.compile(r"^\s*\d{1,6}:\s"),                        # srun --label
    re.compile(r"^\s*>\s?"),                              # Markdown quote (logs pasted into READMEs)
)
_MAX_PREFIXES = 4  # launchers nest (srun --label around mpirun --tag-output, then a timestamp): strip up to 4
_HEADER_RE = re.compile(r"nThread\s+(\d{1,9})\s+nGpus\s+(\d{1,9})\s+minBytes\s+(\d{1,20})\s+maxBytes\s+(\d{1,20})"
                        r"(?:\s+step:\s+(\d{1,20})\((factor|bytes)\))?")
_HEADER_KEYS = (("warmup iters", "warmup_iters"), ("agg iters", "agg_iters"), ("iters", "iters"),
                ("validation", "validation"), ("graph", "graph"), ("unalign", "unalign"))
_DEVICE_RE = re.compile(r"^#?\s*Rank\s+(\d{1,9})\s+(?:Group\s+\d{1,9}\s+)?Pid\s+\d{1,12}\s+on\s+(\S+)\s+device\s+(\d{1,6})"
                        r"\s+\[([^\]]{0,40})\]\s*(.*)$")
_VERSION_RE = re.compile(r"nccl-tests version\s+(\S+)")
_LIBRARY_RE = re.compile(r"nccl-library=(\d{1,9})")
_NCCL_VERSION_RE = re.compile(r"NCCL version\s+(\d{1,3}\.\d{1,3}\.\d{1,3})")
_PERF_RE = re.compile(r"(?:^|[/\s])([a-z_]+)_perf(?:\s|$)")
_AVG_RE = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)")
_REDUCED_RE = re.compile(r"Reducing maxBytes to\s+(\d{1,20})")
_OOB_RE = re.compile(r"Out of bounds values\s*:\s*(\d{1,12})\s*(\w*)")
_COMMAND_START_RE = re.compile(r"(?:^|[\s/])(?:mpirun|mpiexec|srun|torchrun|[a-z_]+_perf)(?:\s|$)")
_COLLECTIVE_START_RE = re.compile(r"Collective test starting:\s*([a-z_]+?)(?:_perf)?\s*$")
_NOT_MEASURED_RE = re.compile(r"^(out-of-place|in-place)\s*:\s*not measured\b", re.IGNORECASE)
# the first line of gpucomm bench's table (gpucomm.measure.results._sweep_comments)
_GPUCOMM_HEADER_RE = re.compile(r"^gpucomm\.measure\s+([a-z_]{1,40}):\s+(\d{1,9})\s+ranks\b")
_GPUCOMM_ITERS_RE = re.compile(r"\biters\s+(\d{1,9})(?:\s+x\s+\d{1,9}\s+blocks)?,\s+warm-up\s+(\d{1,9}),\s+check\s+([01])\b")


@dataclass(frozen=True)
class Record:
    """One measurement: one message size, out-of-place or in-place.

    Attributes
    ----------
    size_bytes : int
        nccl-tests' ``size`` column: the bytes today's algbw refers to (all_gather's gathered buffer,
        ``n x count x type size``).
    count : int
        Elements, as printed (per rank for all_gather, reduce_scatter and all_to_all).
    type : str
        Element type as printed (``float``, ``bfloat16``...).
    redop : str or None
        Reduction (``sum``, ``none``...); None in the layout without the column.
    root : int or None
        Root rank, -1 when the collective has none; None in layouts without the column.
    in_place : bool
        True for the right-hand (in-place) half of the row.
    time_us : float or None
        Time of one operation in microseconds; None when printed as ``N/A``.
    algbw_gbps, busbw_gbps : float
        Algorithm and bus bandwidth in GB/s (1e9 bytes/s), as printed.
    wrong : int or None
        ``#wrong`` (elements that failed the check, summed over ranks); None when not checked
        (``N/A``) or in the old layout.
    max_error : float or None
        The old layout's ``error`` column (largest deviation); None in the current layout.
    printed_size_bytes : int
        The ``size`` column as printed.
    line : int
        1-based line number in the text.
    """

    size_bytes: int
    count: int
    type: str
    redop: str | None
    root: int | None
    in_place: bool
    time_us: float | None
    algbw_gbps: float
    busbw_gbps: float
    wrong: int | None
    max_error: float | None
    printed_size_bytes: int
    line: int

    @property
    def time_s(self) -> float | None:
        """Time of one operation in seconds (None when not printed)."""
        return None if self.time_us is None else self.time_us * 1e-6

    @property
    def algbw_bytes_per_s(self) -> float:
        """algbw in bytes/s."""
        return self.algbw_gbps * 1e9

    @property
    def busbw_bytes_per_s(self) -> float:
        """busbw in bytes/s."""
        return self.busbw_gbps * 1e9

    @property
    def placement(self) -> str:
        """``"in-place"`` or ``"out-of-place"``."""
        return "in-place" if self.in_place else "out-of-place"


@dataclass(frozen=True)
class LogWarning:
    """Something in a log that a reader should look at. ``str()`` gives the message."""

    code: str
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class ParsedLog:
    """What :func:`parse_nccl_tests` found.

    Attributes
    ----------
    records : tuple of Record
        Every measurement, in the order of the text (out-of-place then in-place for each row; none
        for a blank half, a measurement not made).
    warnings : tuple of LogWarning
        Problems found, each with a ``code`` (see the module docstring).
    metadata : dict
        What the log says about the run. Keys present only when found: ``nGpus``, ``nThread``,
        ``minBytes``, ``maxBytes``, ``step_factor`` or ``step_bytes``, ``warmup_iters``, ``iters``,
        ``agg_iters``, ``validation``, ``graph`` (the header line); ``command``; ``version``
        (nccl-tests), ``nccl_version``; ``collective`` (torch.distributed name, or the binary's
        stem when it has no torch name) with ``collective_source``; ``num_ranks`` with
        ``num_ranks_source`` (``"devices"``, ``"command"``, ``"gpucomm_header"``, ``"busbw/algbw"``...:
        :data:`SOURCE_WORDS`); ``devices`` (list of dicts: rank, host, device, bus_id, name);
        ``avg_busbw_gbps``; ``out_of_bounds``; ``source`` (a ``# source:`` line); ``not_measured``
        (``"out-of-place"`` or ``"in-place"``, the half a ``# out-of-place: not measured`` line says
        is blank); always ``layout`` (``"current"``, ``"legacy"`` with redop, ``"legacy_no_redop"``).
    """

    records: tuple[Record, ...]
    warnings: tuple[LogWarning, ...]
    metadata: dict = field(default_factory=dict)

    def out_of_place(self) -> list[Record]:
        """Out-of-place records, sorted by size."""
        return sorted((r for r in self.records if not r.in_place), key=lambda r: r.size_bytes)

    def in_place(self) -> list[Record]:
        """In-place records, sorted by size."""
        return sorted((r for r in self.records if r.in_place), key=lambda r: r.size_bytes)

    def warning_codes(self) -> list[str]:
        """The codes of :attr:`warnings`, in order."""
        return [w.code for w in self.warnings]

    def as_results(self, *, in_place: bool = False) -> list[dict]:
        """Records as the result dicts of :mod:`gpucomm.measure` (for :mod:`gpucomm.viz.figures.measured`).

        Keys: ``collective``, ``num_ranks``, ``msg_bytes``, ``time_s``, ``algbw_bytes_per_s``,
        ``busbw_bytes_per_s``, ``num_wrong``. Records without a time are left out.

        Raises
        ------
        GpucommError
            If the collective or the number of ranks is unknown.
        """
        collective, n = self.metadata.get("collective"), self.metadata.get("num_ranks")
        if collective is None or n is None:
            raise GpucommError("the log does not say which collective or how many ranks: expected a command line, "
                               "a '# Using devices' list, or rows whose busbw/algbw ratio gives them")
        rows = self.in_place() if in_place else self.out_of_place()
        return [{"record": "result", "collective": collective, "num_ranks": n, "msg_bytes": r.size_bytes,
                 "time_s": r.time_s, "algbw_bytes_per_s": r.algbw_bytes_per_s / _algbw_factor(self.metadata),
                 "busbw_bytes_per_s": r.busbw_bytes_per_s,
                 "num_wrong": r.wrong} for r in rows if r.time_s is not None and r.time_s > 0]


# ----------------------------------------------------------------------------------------------- helpers

def _float(token: str) -> float | None:
    """A finite float from a token, None for N/A; raises ValueError for anything else."""
    if token.upper() == "N/A":
        return None
    if not _FLOAT_RE.match(token):
        raise ValueError(token)
    value = float(token)
    if not math.isfinite(value):
        raise ValueError(token)
    return value


def _strip_prefix(line: str) -> str:
    """``line`` without the launcher prefixes of :data:`_PREFIXES` in front of it (several, nested)."""
    for _ in range(_MAX_PREFIXES):
        for pattern in _PREFIXES:
            stripped = pattern.sub("", line, count=1)
            if stripped != line:
                line = stripped
                break
        else:
            return line
    return line


def _looks_like_row(tokens: list[str]) -> bool:
    return len(tokens) >= 3 and bool(_INT_RE.match(tokens[0]) and _INT_RE.match(tokens[1]) and _TYPE_RE.match(tokens[2]))


@dataclass
class _Layout:
    name: str
    has_redop: bool
    has_root: bool
    check: str  # "wrong" or "error"

    @property
    def width(self) -> int:
        return 3 + self.has_redop + self.has_root + 8


_LAYOUTS = {
    13: _Layout("current", True, True, "wrong"),
    12: _Layout("legacy", True, False, "error"),
    11: _Layout("legacy_no_redop", False, False, "error"),
}


def _infer_layout(tokens: list[str], halves: int = 2) -> _Layout | None:
    """The layout of a row when no header line says it: by width, then by what the columns hold.

    ``halves`` is how many of the row's two measurements are printed (1: one half blank).
    """
    layout = _LAYOUTS.get(len(tokens) + _HALF_WIDTH * (2 - halves))
    if layout is None:
        return None
    time_at = 3 + layout.has_redop + layout.has_root
    if layout.has_redop and not _TYPE_RE.match(tokens[3]):
        return None
    if not _FLOAT_RE.match(tokens[time_at]) and tokens[time_at].upper() != "N/A":
        return None  # e.g. a current-layout row cut after 11 columns: 'sum' where a time should be
    check = tokens[time_at + 3]
    if layout.check == "error" and (_INT_RE.match(check) or check.upper() == "N/A"):
        return None  # an integer check column is #wrong: a current-layout row with columns missing
    return layout


def _layout_from_header(tokens: list[str]) -> _Layout | None:
    """The table layout from a '#  size  count  type ...' header line, or None if it is not one."""
    words = [t.lower() for t in tokens]
    if not {"size", "count", "type", "time", "algbw", "busbw"} <= set(words):
        return None
    has_redop, has_root = "redop" in words, "root" in words
    check = "error" if "error" in words else "wrong"
    name = "current" if has_root and check == "wrong" else ("legacy" if has_redop else "legacy_no_redop")
    return _Layout(name, has_redop, has_root, check)


def _title_half_ends(line: str, layout: _Layout) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Where the out-of-place and in-place columns end in a column-title line (``line`` without its prefix).

    nccl-tests right-aligns each title over its column (``writeResultHeader`` and
    ``writeBenchmarkLineBody``, ``src/util.cu``), and so does ``gpucomm bench``: the character
    offset where a title ends is where its values end. None unless the line holds one title per
    column of ``layout`` (a leading lone ``#`` aside).
    """
    words = list(re.finditer(r"\S+", line))
    if words and words[0].group() == "#":
        words = words[1:]
    if len(words) != layout.width:
        return None
    ends = tuple(w.end() for w in words[-2 * _HALF_WIDTH:])
    return ends[:_HALF_WIDTH], ends[_HALF_WIDTH:]


def _blank_half(line: str, half_ends: tuple[tuple[int, ...], tuple[int, ...]] | None,
                not_measured: bool | None) -> bool | None:
    """Which half of a row printing one measurement is blank: True for in-place, False for out-of-place.

    Two kinds of evidence: ``not_measured``, the half a ``# out-of-place: not measured`` (or
    ``in-place``) line says is blank; and the columns, where the printed values end (``line``
    without its prefix) against ``half_ends`` (:func:`_title_half_ends`, or a full row of the
    table), within :data:`_ALIGN_SLACK` characters. The columns alone place only a blank
    out-of-place half (nccl-tests' null body): values ending under the out-of-place titles are
    also what a row cut after its first half looks like. None when nothing places the row, or when
    the line and the columns disagree: the row is then not read.
    """
    columns = None
    if half_ends is not None:
        ends = [w.end() for w in re.finditer(r"\S+", line)][-_HALF_WIDTH:]
        fits = [all(abs(a - b) <= _ALIGN_SLACK for a, b in zip(ends, half)) for half in half_ends]
        if fits.count(True) == 1:
            columns = fits[0]  # values under the out-of-place titles: the in-place half is the blank one
    if not_measured is None:
        return False if columns is False else None
    return not_measured if columns in (None, not_measured) else None


def _parse_half(tokens: list[str], check: str) -> tuple[float | None, float, float, int | None, float | None]:
    time_us = _float(tokens[0])
    algbw, busbw = _float(tokens[1]), _float(tokens[2])
    if algbw is None or busbw is None or algbw < 0 or busbw < 0 or (time_us is not None and time_us < 0):
        raise ValueError("bandwidth")
    wrong, err = None, None
    if check == "wrong":
        if tokens[3].upper() != "N/A":
            if _INT_RE.match(tokens[3]):
                wrong = int(tokens[3])
            else:
                value = _float(tokens[3])  # some versions print a float count (e.g. "0.0")
                if value is None or value < 0 or value != int(value):
                    raise ValueError(tokens[3])
                wrong = int(value)
    else:
        err = _float(tokens[3])
    return time_us, algbw, busbw, wrong, err


def _log_ratio(a: float, b: float) -> float:
    return abs(math.log(a / b)) if a > 0 and b > 0 else math.inf


# ----------------------------------------------------------------------------------------------- command line

def _parse_command(command: str, meta: dict) -> None:
    """Fill collective, sizes, step and rank count from a command line (nccl-tests README arguments)."""
    from gpucomm.model.units import parse_size

    perf = _PERF_RE.search(command)
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
        return int(text) if text is not None and _INT_RE.match(text) else None

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
    log = _parse_lines(numbered, collective, num_ranks)
    spans = _run_spans(numbered)
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
    spans = _run_spans(numbered)
    if not spans:
        return (parse_nccl_tests(text, collective=collective, num_ranks=num_ranks),)  # raises: no rows
    runs = []
    for k, (indices, rows) in enumerate(spans, start=1):
        log = _parse_lines([numbered[i] for i in indices], collective, num_ranks)
        log.metadata.update(run=k, runs=len(spans), lines=(numbered[rows[0]][0], numbered[rows[-1]][0]))
        runs.append(log)
    source = next((r.metadata["source"] for r in runs if "source" in r.metadata), None)
    for r in runs:
        if source is not None:
            r.metadata.setdefault("source", source)
    last_row = spans[-1][1][-1]
    tail = [(n, raw) for n, raw in numbered[last_row + 1:] if _is_run_start(_strip_prefix(raw).strip())]
    if tail:
        last = runs[-1]
        runs[-1] = ParsedLog(last.records, (*last.warnings, LogWarning(
            "empty_run", f"line {tail[0][0]} starts another run that printed no result row: it stopped before its "
                         "first size (a crash, a hang or an error in its setup; the lines after it may say which)")),
                             last.metadata)
    return tuple(runs)


def _is_run_start(stripped: str) -> bool:
    """A line that begins an invocation of an nccl-tests binary: its version, test name, header or command."""
    if stripped.startswith("#"):
        body = stripped.lstrip("#").strip()
        return bool(_HEADER_RE.search(body) or _VERSION_RE.search(body) or _COLLECTIVE_START_RE.search(body)
                    or _GPUCOMM_HEADER_RE.match(body) or body.lower().startswith("command:"))
    if _looks_like_row(stripped.split()):
        return False
    return bool(_COMMAND_START_RE.search(stripped) or ("_perf" in stripped and _PERF_RE.search(stripped)))


def _run_spans(numbered: list[tuple[int, str]]) -> list[tuple[list[int], list[int]]]:
    """Split numbered lines into runs: per run, (indices of its lines, indices of its result rows).

    Invocations are cut at a :func:`_is_run_start` line that follows result rows; inside one, sweeps are
    cut where the size falls (each sweep keeps the invocation's lines before its first row and after
    its last one), unless the invocation is several interleaved single-process runs.
    """
    invocations: list[list[int]] = [[]]
    has_rows = False
    for i, (_, raw) in enumerate(numbered):
        stripped = _strip_prefix(raw).strip()
        if has_rows and _is_run_start(stripped):
            invocations.append([])
            has_rows = False
        invocations[-1].append(i)
        if stripped and not stripped.startswith("#") and _looks_like_row(stripped.split()):
            has_rows = True
    spans: list[tuple[list[int], list[int]]] = []
    for lines in invocations:
        rows = [i for i in lines if _row_size(numbered[i][1]) is not None]
        if not rows:
            continue
        pre = [i for i in lines if i < rows[0]]
        post = [i for i in lines if i > rows[-1]]
        headers = sum(1 for i in pre if _HEADER_RE.search(_strip_prefix(numbered[i][1])))
        ranks = [m.group(1) for i in pre for m in [_DEVICE_RE.match(_strip_prefix(numbered[i][1]).strip().lstrip("#").strip())]
                 if m]
        interleaved = headers > 1 or len(set(ranks)) != len(ranks)
        starts = [0] + ([k for k in range(1, len(rows)) if _row_size(numbered[rows[k]][1]) < _row_size(numbered[rows[k - 1]][1])]
                        if not interleaved else [])
        for a, b in zip(starts, [*starts[1:], len(rows)]):
            first, last = rows[a], rows[b - 1]
            body = [i for i in lines if first <= i <= last]
            spans.append((pre + body + post, rows[a:b]))
    return spans


def _row_size(raw: str) -> int | None:
    """The size of a result row (its first column), None for any other line."""
    stripped = _strip_prefix(raw).strip()
    if not stripped or stripped.startswith("#"):
        return None
    tokens = stripped.split()
    return int(tokens[0]) if _looks_like_row(tokens) else None


def _read_gpucomm_header(body: str, match: re.Match, meta: dict) -> None:
    """Collective, rank count, iterations and check from the first line of ``gpucomm bench``'s table.

    ``# gpucomm.measure all_reduce: 2 ranks, backend gloo, float32 sum, 8 B to 1 MiB step x4, iters 20,
    warm-up 5, check 1`` (:mod:`gpucomm.measure.results`). Its sizes are rounded to 3 digits
    there, so they are not read: the rows give them.
    """
    name, ranks = match.group(1), int(match.group(2))
    if name in COLLECTIVES and "collective" not in meta:
        meta["collective"], meta["collective_source"] = name, "gpucomm_header"
    if ranks >= 1 and "num_ranks" not in meta:
        meta["num_ranks"], meta["num_ranks_source"] = ranks, "gpucomm_header"
    counts = _GPUCOMM_ITERS_RE.search(body)
    if counts:
        for key, value in zip(("iters", "warmup_iters", "validation"), counts.groups()):
            meta.setdefault(key, int(value))


def _parse_lines(numbered: list[tuple[int, str]], collective: str | None, num_ranks: int | None) -> ParsedLog:
    """:func:`parse_nccl_tests` of some numbered lines of a log (all of it, or one run)."""
    meta: dict = {}
    warnings: list[LogWarning] = []
    records: list[Record] = []
    layout: _Layout | None = None
    header_layout: _Layout | None = None
    pending_command = ""
    devices: list[dict] = []
    seen_headers = 0
    legacy_rows: list[int] = []  # indices into records of old-layout rows (error column)
    incomplete: list[int] = []
    unplaced: list[int] = []  # rows with one half's columns where nothing says which half is blank
    bad: list[int] = []
    commands: list[str] = []
    not_measured: bool | None = None  # the half a '# in-place: not measured' line names (True: in-place)
    half_ends: tuple[tuple[int, ...], tuple[int, ...]] | None = None  # where each half's columns end

    for lineno, raw in numbered:
        line = _strip_prefix(raw)
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            body = stripped.lstrip("#").strip()
            low = body.lower()
            if low.startswith("source:") and "source" not in meta:
                meta["source"] = body.split(":", 1)[1].strip()
                continue
            if low.startswith("command:"):
                commands.append(body.split(":", 1)[1].strip())
                continue
            header = _HEADER_RE.search(body)
            if header:
                seen_headers += 1
                n_thread, n_gpus, lo, hi, step, kind = header.groups()
                meta.setdefault("nThread", int(n_thread))
                meta.setdefault("nGpus", int(n_gpus))
                meta.setdefault("minBytes", int(lo))
                meta.setdefault("maxBytes", int(hi))
                if step is not None:
                    meta.setdefault("step_factor" if kind == "factor" else "step_bytes", int(step))
                for label, key in _HEADER_KEYS:
                    m = re.search(r"(?<![a-z])(?<!warmup )(?<!agg )" + label + r":\s*(-?\d{1,9})", body)
                    if m and key not in meta:
                        meta[key] = int(m.group(1))
                continue
            reduced = _REDUCED_RE.search(body)
            if reduced:
                # printed after the header line when the GPUs cannot hold 2 or 3 buffers of maxBytes (src/common.cu):
                # the sweep ends at this size on purpose
                meta.setdefault("requested_max_bytes", meta.get("maxBytes"))
                meta["maxBytes"] = int(reduced.group(1))
                warnings.append(LogWarning(
                    "max_bytes_reduced", f"line {lineno}: nccl-tests reduced maxBytes to {int(reduced.group(1))} B "
                    + (f"(from {meta['requested_max_bytes']} B) " if meta.get("requested_max_bytes") else "")
                    + "because GPU memory cannot hold the buffers: the sweep ends there by design, not by a crash"))
                continue
            ours = _GPUCOMM_HEADER_RE.match(body)
            if ours:
                _read_gpucomm_header(body, ours, meta)
                continue
            blank = _NOT_MEASURED_RE.match(body)
            if blank:
                not_measured = blank.group(1).lower() == "in-place"
                meta["not_measured"] = blank.group(1).lower()
                continue
            device = _DEVICE_RE.match(body)
            if device:
                rank, host, dev, bus, name = device.groups()
                devices.append({"rank": int(rank), "host": host, "device": int(dev), "bus_id": bus, "name": name.strip()})
                continue
            version = _VERSION_RE.search(body)
            if version:
                meta.setdefault("version", version.group(1))
                library = _LIBRARY_RE.search(body)
                if library:
                    code = int(library.group(1))
                    if code >= 20900:  # NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9
                        meta.setdefault("nccl_version", f"{code // 10000}.{code // 100 % 100}.{code % 100}")
                continue
            start = _COLLECTIVE_START_RE.search(body)
            if start:
                stem = start.group(1)
                meta.setdefault("collective", PERF_BINARY_TO_COLLECTIVE.get(stem, stem))
                meta.setdefault("collective_source", "log")
                continue
            avg = _AVG_RE.search(body)
            if avg:
                try:
                    value = _float(avg.group(1))
                except ValueError:
                    value = None
                if value is not None:
                    meta.setdefault("avg_busbw_gbps", value)
                continue
            oob = _OOB_RE.search(body)
            if oob:
                meta.setdefault("out_of_bounds", int(oob.group(1)))
                if int(oob.group(1)) or oob.group(2).upper() == "FAILED":
                    warnings.append(LogWarning("out_of_bounds", f"line {lineno}: '{body}': the data check failed "
                                                                "(values out of bounds); the bandwidth is not trustworthy"))
                continue
            tokens = body.split()
            found = _layout_from_header(tokens)
            if found is not None:
                if header_layout is not None and (header_layout.name, header_layout.width) != (found.name, found.width):
                    warnings.append(LogWarning("interleaved_runs", f"line {lineno}: a second table header with a "
                                                                   "different layout: several runs are mixed"))
                header_layout = layout = found
                half_ends = _title_half_ends(line, found) or half_ends
            continue

        nccl_version = _NCCL_VERSION_RE.search(stripped)
        if nccl_version:
            meta.setdefault("nccl_version", nccl_version.group(1))
        if stripped.endswith("\\") and (pending_command or _COMMAND_START_RE.search(stripped)):
            pending_command += stripped[:-1] + " "  # a command continued on the next line
            continue
        if pending_command:
            stripped, pending_command = pending_command + stripped, ""
            if "_perf" in stripped:
                commands.append(stripped)
            continue
        if "_perf" in stripped and _PERF_RE.search(stripped) and not _looks_like_row(stripped.split()):
            commands.append(stripped)
            continue
        tokens = stripped.split()
        if not _looks_like_row(tokens):
            continue
        if tokens[-1] == _WRONG_MARK:
            tokens, line = tokens[:-1], line[:line.rindex(_WRONG_MARK)]
        if header_layout is not None:
            row_layout = header_layout if len(tokens) == header_layout.width else None
        else:
            row_layout = _infer_layout(tokens)
        blank_half = None  # a row printing one measurement, the other half blank (not measured)
        if row_layout is None:
            one_half = (header_layout if header_layout is not None and len(tokens) == header_layout.width - _HALF_WIDTH
                        else _infer_layout(tokens, halves=1) if header_layout is None else None)
            blank_half = _blank_half(line, half_ends, not_measured) if one_half is not None else None
            row_layout = one_half if blank_half is not None else None
        if row_layout is None:
            expected = header_layout.width if header_layout is not None else 13
            (incomplete if len(tokens) < expected else bad).append(lineno)
            if len(tokens) == expected - _HALF_WIDTH:
                unplaced.append(lineno)
            continue
        try:
            size, count = int(tokens[0]), int(tokens[1])
            dtype = tokens[2]
            k = 3
            redop = None
            if row_layout.has_redop:
                redop = tokens[k]
                k += 1
            root = None
            if row_layout.has_root:
                if not _SIGNED_INT_RE.match(tokens[k]):
                    raise ValueError(tokens[k])
                root = int(tokens[k])
                k += 1
            placements = (False, True) if blank_half is None else (not blank_half,)
            halves = [_parse_half(tokens[k + _HALF_WIDTH * i:k + _HALF_WIDTH * (i + 1)], row_layout.check)
                      for i in range(len(placements))]
        except (ValueError, IndexError):
            bad.append(lineno)
            continue
        if layout is None:
            layout = row_layout
        if blank_half is None and half_ends is None:
            ends = [w.end() for w in re.finditer(r"\S+", line)][-2 * _HALF_WIDTH:]
            half_ends = (tuple(ends[:_HALF_WIDTH]), tuple(ends[_HALF_WIDTH:]))  # no title line: a full row says
        for in_place, (time_us, algbw, busbw, wrong, err) in zip(placements, halves):
            if row_layout.check == "error":
                legacy_rows.append(len(records))
            records.append(Record(size, count, dtype, redop, root, in_place, time_us, algbw, busbw, wrong, err, size,
                                  lineno))

    if not records:
        raise GpucommError(
            "no nccl-tests result rows found: expected lines such as '  1073741824  268435456  float  sum  -1  7163.5  "
            "149.89  224.84  0  7161.8  149.93  224.89  0' (size, count, type, [redop, root,] then time, algbw, busbw, "
            "#wrong or error for out-of-place and in-place), as all_reduce_perf prints them"
            + (f"; {len(incomplete)} line(s) looked like cut rows" if incomplete else "")
            + (f" ({len(unplaced)} of them print one half, and no '# out-of-place: not measured' (or in-place) line "
               "or column-title line says which half is blank)" if unplaced else ""))

    meta["layout"] = layout.name if layout is not None else "current"

    # --- command line, devices, ranks and collective
    for command in commands:
        if "_perf" in command:
            meta.setdefault("command", command.strip())
    if "command" in meta:
        _parse_command(meta["command"], meta)
    if devices:
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
    if seen_headers > 1 and not any(w.code == "interleaved_runs" for w in warnings):
        warnings.append(LogWarning("interleaved_runs", f"{seen_headers} 'nThread ... nGpus' header lines: several runs "
                                                       "are printed together (or a run without MPI=1 under mpirun)"))

    _old_gather_scatter(records, legacy_rows, meta, warnings)

    if incomplete:
        warnings.append(LogWarning("incomplete_row", f"line(s) {_lines(incomplete)}: result row(s) with too few columns "
                                                     "(cut off?"
                                                     + (", or one half blank where neither a '# out-of-place: not "
                                                        "measured' line nor the column titles say which" if unplaced
                                                        else "") + "): skipped"))
    if bad:
        warnings.append(LogWarning("bad_row", f"line(s) {_lines(bad)}: result row(s) with values that are not numbers "
                                              "or an unknown number of columns: skipped"))
    return finish_log(records, meta, warnings, collective=collective, num_ranks=num_ranks)


def finish_log(records: list[Record], meta: dict, warnings: list[LogWarning], *, collective: str | None = None,
               num_ranks: int | None = None) -> ParsedLog:
    """Complete what a reader of nccl-tests output found: the overrides, what the numbers imply, the checks.

    Shared by the text parser (:func:`parse_nccl_tests`) and the JSON reader
    (:mod:`gpucomm.measure.logs.nccl_tests_json`), so both infer and flag the same way.

    Parameters
    ----------
    records : list of Record
        Every measurement read, in order (at least one).
    meta : dict
        What the output says (keys of :attr:`ParsedLog.metadata`); completed in place.
    warnings : list of LogWarning
        Format warnings found so far; the checks' warnings are appended.
    collective, num_ranks : optional
        Given by the caller (``gpucomm parse --collective/--ranks``): they override what the output says,
        with a ``contradiction`` warning naming both values where they differ from it or from busbw/algbw.

    Returns
    -------
    ParsedLog
        The records, the warnings and the metadata, with ``collective`` and ``num_ranks`` inferred from the
        numbers where nothing says them (``*_source`` names how).
    """
    stated = {key: (meta[key], meta.get(f"{key}_source")) for key in ("collective", "num_ranks") if key in meta}
    if collective is not None:
        meta["collective"], meta["collective_source"] = collective, "argument"
    if num_ranks is not None:
        meta["num_ranks"], meta["num_ranks_source"] = num_ranks, "argument"
    _infer_shape(records, meta)
    _check_given_shape(records, meta, stated, warnings)
    _check_records(records, meta, warnings)
    return ParsedLog(tuple(records), tuple(warnings), meta)


def _lines(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:5])
    return shown + (f" and {len(numbers) - 5} more" if len(numbers) > 5 else "")


def _old_gather_scatter(records: list[Record], legacy_rows: list[int], meta: dict, warnings: list[LogWarning]) -> None:
    """Recognise all_gather and reduce_scatter rows of nccl-tests before 2020-06-19 (``meta["old_algbw_ranks"]``).

    Those versions printed the whole buffer beside the per-rank count (size = n x count x type size) and computed
    ``algbw = count x type size x (n - 1) / time`` with ``busbw = algbw`` (``AllGatherGetBw`` and ``ReduceScatterGetBw``
    until nccl-tests commit ec1b5e2, "Change all_gather/reduce_scatter algbw to match the documentation",
    2020-06-19): busbw is today's, algbw ``(n - 1) / n`` of today's. all_gather's output had no redop column,
    reduce_scatter's had one (``print_line_header`` in ``src/all_gather.cu`` and ``src/reduce_scatter.cu`` at commit
    ba924da). Rows that fit those definitions to the printed precision give the collective and the rank count."""
    rows = [records[i] for i in legacy_rows]
    if not rows:
        return
    n = _size_count_ranks(rows)
    timed = [r for r in rows if r.time_us and r.algbw_gbps >= 0.05]
    if n is None or n < 2 or not timed or not _factor_fits(timed, 1.0):
        return
    if any(abs(r.printed_size_bytes * (n - 1) / n / (r.time_us * 1e3) - r.algbw_gbps) > max(0.011, 0.03 * r.algbw_gbps)
           for r in timed):
        return
    collective = "all_gather" if meta.get("layout") == "legacy_no_redop" else "reduce_scatter"
    meta["old_algbw_ranks"] = n
    if "collective" not in meta:
        meta["collective"], meta["collective_source"] = collective, "size/count"
    if "num_ranks" not in meta:
        meta["num_ranks"], meta["num_ranks_source"] = n, "size/count"
    column = "no redop column" if collective == "all_gather" else "a redop column"
    warnings.append(LogWarning(
        "old_algbw", f"{collective} of nccl-tests before 2020-06-19 on {n} ranks ({column}, size = {n} x count x type "
        f"size): its algbw is count x type size x (n-1) / time and its busbw equals it, so busbw is today's and algbw "
        f"{n - 1}/{n} of today's size / time (nccl-tests commit ec1b5e2)"))


def _algbw_factor(meta: dict) -> float:
    """Printed algbw over size / time: 1, or (n-1)/n for all_gather and reduce_scatter of nccl-tests before 2020-06-19."""
    n = meta.get("old_algbw_ranks")
    return (n - 1) / n if n else 1.0


SOURCE_WORDS = {"devices": "from the device list", "command": "from the command line", "log": "from the log's test name",
                "argument": "given", "busbw/algbw": "inferred from busbw/algbw",
                "size/count": "inferred from size / (count x type size)",
                "columns": "inferred from busbw/algbw and the redop and root columns",
                "json": "from the JSON output's device list and thread and GPU counts",
                "gpucomm_header": "from the gpucomm bench header line"}
"""How each ``*_source`` of :attr:`ParsedLog.metadata` reads in a sentence."""

_MAX_INFERRED_RANKS = 1 << 20  # more ranks than any machine: the ratio is then too close to its limit to tell


def _printed_half_unit(value: float) -> float:
    """Half a unit of the last digit nccl-tests prints for a bandwidth.

    ``getFloatStr`` in ``src/util.cu`` (v2.19.6) prints ``%.2f`` in 6 columns, then ``%.1f``, then ``%.0f``
    as the value grows; older versions ``%6.2f``.
    """
    return 0.005 if value < 999.995 else 0.05 if value < 9999.95 else 0.5


def _factor_fits(rows: list[Record], factor: float) -> bool:
    """busbw = factor x algbw in every row, within what printing to 2 decimals can change."""
    return all(abs(r.busbw_gbps - factor * r.algbw_gbps)
               <= _printed_half_unit(r.busbw_gbps) + factor * _printed_half_unit(r.algbw_gbps) + 1e-9 for r in rows)


def _ratio_rows(records: list[Record]) -> list[Record]:
    return [r for r in records if r.algbw_gbps > 0 and r.time_us]


def _ranks_fitting(rows: list[Record], collective: str) -> list[int]:
    """Every rank count whose bus-bandwidth factor for ``collective`` fits all ``rows`` (busbw/algbw)."""
    if not rows or collective not in COLLECTIVES or busbw_factor(collective, 2) == busbw_factor(collective, 3):
        return []  # broadcast, reduce, send_recv: factor 1 for any rank count
    best = max(rows, key=lambda r: r.algbw_gbps)
    lo = (best.busbw_gbps - _printed_half_unit(best.busbw_gbps)) / (best.algbw_gbps + _printed_half_unit(best.algbw_gbps))
    hi = (best.busbw_gbps + _printed_half_unit(best.busbw_gbps)) / max(best.algbw_gbps - _printed_half_unit(best.algbw_gbps),
                                                                        1e-12)
    # f(n) = top (1 - 1/n) with top = 2 (all_reduce) or 1, so n = 1 / (1 - f / top): the counts the ratio allows
    top = 2.0 if collective == "all_reduce" else 1.0
    if hi >= top:
        return []
    n_lo = max(1, math.floor(1 / (1 - max(lo, 0.0) / top)) - 1)
    n_hi = math.ceil(1 / (1 - hi / top)) + 1
    return [n for n in range(n_lo, min(n_hi, _MAX_INFERRED_RANKS) + 1) if _factor_fits(rows, busbw_factor(collective, n))]


def _size_count_ranks(records: list[Record]) -> int | None:
    """all_gather, reduce_scatter, all_to_all print the per-rank count and the total size: size / (count x type size)."""
    ratios = set()
    for r in records:
        type_bytes = TYPE_BYTES.get(r.type.lower())
        if not type_bytes or not r.count:
            return None
        if r.printed_size_bytes % (r.count * type_bytes):
            return None
        ratios.add(r.printed_size_bytes // (r.count * type_bytes))
    return ratios.pop() if len(ratios) == 1 else None


def _collective_from_columns(records: list[Record], meta: dict) -> tuple[str | None, list[str]]:
    """The collective the numbers and the redop/root columns allow: (the one, or None; the candidates)."""
    rows = _ratio_rows(records)
    if not rows:
        return None, []
    if any(r.busbw_gbps > r.algbw_gbps + _printed_half_unit(r.busbw_gbps) + _printed_half_unit(r.algbw_gbps)
           for r in rows):
        return "all_reduce", ["all_reduce"]  # busbw > algbw: only all_reduce's factor exceeds 1
    equal = _factor_fits(rows, 1.0)
    redops = {(r.redop or "").lower() for r in records}
    roots = {r.root for r in records}
    reducing = None if meta.get("layout") == "legacy_no_redop" or len(redops) != 1 else redops != {"none"}
    rooted = None if None in roots or len(roots) != 1 else roots != {-1}
    if equal:  # factor 1: broadcast, reduce, send_recv on any count, or all_reduce on 2 ranks
        if rooted is None or reducing is None:
            return None, ["all_reduce", "broadcast", "reduce", "send_recv"]
        if rooted:
            return ("reduce" if reducing else "broadcast"), []
        return ("all_reduce" if reducing else "send_recv"), []
    if all(r.busbw_gbps == 0 for r in rows):
        return None, []  # one rank: every factor is 0
    if reducing is None:
        return None, ["all_gather", "reduce_scatter", "all_to_all"]
    return ("reduce_scatter", []) if reducing else (None, ["all_gather", "all_to_all"])


def _infer_shape(records: list[Record], meta: dict) -> None:
    """Collective and rank count from the numbers when the log does not say them.

    The collective: busbw > algbw is all_reduce (factor ``2(n-1)/n``); busbw = algbw with the root and
    redop columns tells broadcast, reduce, send_recv and 2-rank all_reduce apart; busbw < algbw is
    reduce_scatter when it reduces, all_gather or all_to_all otherwise (``collective_candidates``). The
    rank count: size / (count x type size) for the collectives that print a per-rank count, else the
    one rank count whose factor fits busbw/algbw of every row to the printed precision.
    """
    rows = _ratio_rows(records)
    if "collective" not in meta:
        found, candidates = _collective_from_columns(records, meta)
        if found is not None:
            meta["collective"] = found
            meta["collective_source"] = "busbw/algbw" if candidates == ["all_reduce"] else "columns"
        elif candidates:
            meta["collective_candidates"] = candidates
    if "num_ranks" in meta:
        return
    collective = meta.get("collective")
    same_factor = {"all_gather", "reduce_scatter", "all_to_all"}  # candidates whose factor is the same (n-1)/n
    candidates = meta.get("collective_candidates", [])
    family = [collective] if collective in COLLECTIVES else (candidates if set(candidates) <= same_factor else [])
    if family and set(family) <= same_factor:
        if meta.get("layout") == "current":
            n = _size_count_ranks(records)
            if n is not None and n >= 2 and _factor_fits(rows, busbw_factor(family[0], n)):
                meta["num_ranks"], meta["num_ranks_source"] = n, "size/count"
                return
        family = family[:1]  # the three share one factor
    fitting = sorted({n for c in family for n in _ranks_fitting(rows, c)})
    if len(fitting) == 1:
        meta["num_ranks"], meta["num_ranks_source"] = fitting[0], "busbw/algbw"


def _check_given_shape(records: list[Record], meta: dict, stated: dict, warnings: list[LogWarning]) -> None:
    """A ``contradiction`` warning where a given collective or rank count differs from the log or its numbers."""
    for key, what in (("collective", "collective"), ("num_ranks", "number of ranks")):
        if meta.get(f"{key}_source") != "argument" or key not in stated:
            continue
        value, source = stated[key]
        if value != meta[key]:
            warnings.append(LogWarning(
                "contradiction", f"the {what} given ({meta[key]}) contradicts the log: {value} "
                                 f"({SOURCE_WORDS.get(source, source)}); the given value is recorded"))
    collective, n = meta.get("collective"), meta.get("num_ranks")
    given = [k for k in ("collective", "num_ranks") if meta.get(f"{k}_source") == "argument"]
    rows = [r for r in _ratio_rows(records) if r.algbw_gbps >= 0.05]
    if not given or collective not in COLLECTIVES or not n or not rows:
        return
    # busbw/algbw as printed: all_gather and reduce_scatter of nccl-tests before 2020-06-19 printed busbw = algbw
    old = collective in ("all_gather", "reduce_scatter")
    factor = busbw_factor(collective, n) / _algbw_factor(meta) if old else busbw_factor(collective, n)
    if _factor_fits(rows, factor):
        return
    best = max(rows, key=lambda r: r.algbw_gbps)
    alternatives = [f"{c} on {k} ranks" for c in COLLECTIVES for k in _ranks_fitting(rows, c)[:1]
                    if c in (collective, "all_reduce", "all_gather")][:2]
    if not alternatives and _factor_fits(rows, 1.0):
        alternatives = ["a factor of 1 (broadcast, reduce, send_recv, or all_reduce on 2 ranks)"]
    warnings.append(LogWarning(
        "contradiction", f"busbw/algbw of the rows is {best.busbw_gbps / best.algbw_gbps:.4g} (line {best.line}), not "
                         f"{factor:g}, the factor of {collective} on {n} ranks as given"
                         + (f"; the rows fit {' or '.join(alternatives)}" if alternatives else "")
                         + ": busbw was computed by nccl-tests for the run's own shape, so check the values given"))


def _check_records(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    wrong = [r for r in records if r.wrong]
    if wrong:
        sizes = sorted({r.size_bytes for r in wrong})
        warnings.append(LogWarning(
            "wrong", f"{len(wrong)} measurement(s) with #wrong > 0 (first at {sizes[0]} B, {wrong[0].placement}, "
                     f"{wrong[0].wrong} wrong elements): the results were incorrect, do not trust these rows"))
    n_for_bound = meta.get("num_ranks") or 2  # unknown: the strictest bound nccl-tests applies (2 ranks)
    errors = [r for r in records if r.max_error and r.max_error > legacy_error_bound(r.type, n_for_bound)]
    if errors and meta.get("out_of_bounds") != 0:  # a footer '0 OK' is nccl-tests' own verdict on these values
        worst = max(errors, key=lambda r: r.max_error or 0.0)
        warnings.append(LogWarning(
            "error", f"{len(errors)} measurement(s) whose 'error' column (the largest deviation from the expected "
                     f"result) exceeds nccl-tests' bound (largest {worst.max_error:g} at {worst.size_bytes} B, bound "
                     f"{legacy_error_bound(worst.type, n_for_bound):g} for {worst.type} on {n_for_bound} ranks"
                     + ("" if meta.get("num_ranks") else ", the rank count being unknown") + "): the results were wrong"))

    n = meta.get("num_ranks")
    collective = meta.get("collective")
    all_zero = all(r.busbw_gbps == 0 for r in records) and any(r.algbw_gbps > 0 for r in records)
    if n == 1 or (n is None and all_zero and collective in (None, "all_reduce", "all_gather", "reduce_scatter",
                                                            "all_to_all")):
        factor = busbw_factor(collective, 1) if collective in COLLECTIVES else 0.0
        warnings.append(LogWarning(
            "one_rank", f"one rank: nothing crossed a link, so busbw (algbw x {factor:g}) measures nothing; algbw is a "
                        "local copy. With several processes, nccl-tests was probably not built with MPI=1 "
                        "(each process ran alone; nccl-tests issues #27, #249)"))

    by_key: dict[tuple[int, bool], list[Record]] = {}
    for r in records:
        by_key.setdefault((r.size_bytes, r.in_place), []).append(r)
    dups = sorted({size for (size, _), rs in by_key.items() if len(rs) > 1})
    if dups:
        warnings.append(LogWarning("duplicate_size", f"{len(dups)} size(s) appear more than once (first {dups[0]} B): "
                                                     "several runs are interleaved; each row is kept"))

    ratio = _algbw_factor(meta)
    mismatched = [r for r in records if r.time_us and r.algbw_gbps >= 0.05
                  and abs(ratio * r.size_bytes / (r.time_us * 1e3) - r.algbw_gbps) > max(0.011, 0.03 * r.algbw_gbps)]
    if mismatched:
        r = mismatched[0]
        warnings.append(LogWarning(
            "algbw_mismatch", f"{len(mismatched)} measurement(s) where algbw differs from size / time (line {r.line}: "
                              f"{r.size_bytes} B / {r.time_us} us = {r.size_bytes / (r.time_us * 1e3):.3g} GB/s, "
                              f"printed {r.algbw_gbps} GB/s)"))

    out = {r.size_bytes: r for r in records if not r.in_place and r.time_us}
    inp = {r.size_bytes: r for r in records if r.in_place and r.time_us}
    outliers = [(s, out[s], inp[s]) for s in sorted(out.keys() & inp.keys())
                if max(out[s].time_us, inp[s].time_us) > min(out[s].time_us, inp[s].time_us)
                * (IN_PLACE_OUTLIER_RATIO if s >= DROP_MIN_BYTES else SMALL_OUTLIER_RATIO)]
    if outliers:
        s, o, i = outliers[0]
        warnings.append(LogWarning(
            "in_place_outlier", f"{len(outliers)} size(s) where in-place and out-of-place times differ by more than "
                                f"{IN_PLACE_OUTLIER_RATIO - 1:.0%} (first {s} B: out-of-place {o.time_us:g} us, busbw "
                                f"{o.busbw_gbps:g}; in-place {i.time_us:g} us, busbw {i.busbw_gbps:g}): one slow "
                                "measurement; rerun with more iterations (-n) before drawing conclusions"))

    for in_place in (False, True):
        rows = sorted((r for r in records if r.in_place == in_place and r.size_bytes >= DROP_MIN_BYTES),
                      key=lambda r: r.size_bytes)
        warnings.extend(_busbw_dips_and_cliff(rows))

    _check_stopped_early(records, meta, warnings)


LEGACY_DELTA_MAX = {"float16": 1e-2, "bfloat16": 1e-2, "float32": 1e-5, "float64": 1e-12}
"""Largest deviation per rank beyond the first that old nccl-tests accepted, by type (``DeltaMaxValue``); any other
type (integers) must be exact. Source: nccl-tests ``src/common.cu`` before commit 51af557 (v2.13, 2022), e.g. tag
v2.10.1: ``CheckData`` counts an error when ``maxDelta > DeltaMaxValue(type) * (nranks - 1)``."""


def legacy_error_bound(type_name: str, num_ranks: int) -> float:
    """The largest ``error`` value old nccl-tests (before v2.13) accepted for ``type_name`` on ``num_ranks`` ranks.

    The old layout's ``error`` column is the largest absolute deviation from the expected result, not a
    count of wrong elements: floating-point sums in another order differ in the last bits, so a small value
    is expected. nccl-tests judged it against ``DeltaMaxValue(type) * (nranks - 1)`` (:data:`LEGACY_DELTA_MAX`).

    Parameters
    ----------
    type_name : str
        The type column as printed (``float``, ``half``...).
    num_ranks : int
        Ranks of the run (at least 2 is assumed: one rank reduces nothing).

    Returns
    -------
    float
        The bound; 0 for integer and unknown types (any deviation is an error).

    Examples
    --------
    >>> [f"{legacy_error_bound(t, n):g}" for t, n in (("float", 8), ("half", 2), ("int", 8))]
    ['7e-05', '0.01', '0']
    """
    known = BY_SPELLING.get(type_name.lower())
    per_rank = LEGACY_DELTA_MAX.get(known.name, 0.0) if known is not None else 0.0
    return per_rank * max(num_ranks - 1, 1)


def _busbw_dips_and_cliff(rows: list[Record]) -> list[LogWarning]:
    """Sizes where busbw falls more than :data:`BUSBW_DROP_FRACTION` below the best of the smaller sizes.

    ``rows``: one placement, sizes >= :data:`DROP_MIN_BYTES`, by increasing size. A stretch of such sizes
    that recovers before the last size is a dip (``busbw_dip``: one slow size or a band of them); one that
    lasts to the largest size is a cliff (``busbw_drop``: large messages get slower). Each names the size
    where it happens.
    """
    out: list[LogWarning] = []
    dips: list[tuple[Record, Record, float]] = []  # (worst row of the stretch, peak before it, fraction)
    cliff: tuple[Record, Record] | None = None
    peak: Record | None = None
    stretch: list[Record] = []
    for r in rows:
        if peak is not None and peak.busbw_gbps > 0 and r.busbw_gbps < (1 - BUSBW_DROP_FRACTION) * peak.busbw_gbps:
            stretch.append(r)
            continue
        if stretch:
            worst = min(stretch, key=lambda x: x.busbw_gbps)
            dips.append((worst, peak, worst.busbw_gbps / peak.busbw_gbps - 1))
            stretch = []
        if peak is None or r.busbw_gbps > peak.busbw_gbps:
            peak = r
    if stretch:
        cliff = (stretch[0], peak)
    if dips:
        placement = dips[0][0].placement
        where = "; ".join(f"{w.size_bytes} B: {w.busbw_gbps:g} GB/s ({frac:+.0%} from {p.busbw_gbps:g} GB/s at "
                          f"{p.size_bytes} B)" for w, p, frac in dips[:3]) + (f"; and {len(dips) - 3} more"
                                                                                 if len(dips) > 3 else "")
        out.append(LogWarning(
            "busbw_dip", f"{placement}: busbw dips at {len(dips)} size(s) and recovers at larger ones ({where}): a slow "
                         "measurement or a band of sizes with a worse algorithm or protocol; rerun those sizes with "
                         "more iterations (-n) before drawing conclusions"))
    if cliff is not None:
        first, p = cliff
        last = rows[-1]
        where = (f"at the largest size, {last.size_bytes} B ({last.busbw_gbps / p.busbw_gbps - 1:+.0%})" if first is last
                 else f"at {first.size_bytes} B and stays down to the largest size ({last.busbw_gbps:g} GB/s at "
                      f"{last.size_bytes} B, {last.busbw_gbps / p.busbw_gbps - 1:+.0%})")
        out.append(LogWarning(
            "busbw_drop", f"{first.placement}: busbw falls from {p.busbw_gbps:g} GB/s at {p.size_bytes} B to "
                          f"{first.busbw_gbps:g} GB/s {where}: large messages get slower, a cliff or drift (host "
                          "staging, memory placement, throttling or contention), not a bandwidth limit"))
    return out


def _check_stopped_early(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    sizes = sorted({r.printed_size_bytes for r in records})
    last = sizes[-1]
    max_bytes = meta.get("maxBytes")
    nxt = None
    if meta.get("step_factor", 0) > 1:
        nxt = last * meta["step_factor"]
    elif meta.get("step_bytes", 0) > 0:
        nxt = last + meta["step_bytes"]
    short = max_bytes is not None and last < max_bytes and (nxt is None or nxt <= max_bytes)
    if short and "avg_busbw_gbps" in meta:
        # the summary follows the last size only when the sweep finished: nccl-tests itself ended it early
        if not any(w.code == "max_bytes_reduced" for w in warnings):
            warnings.append(LogWarning(
                "max_bytes_reduced", f"the sweep ends at {last} B below maxBytes {max_bytes} B, but the run finished "
                                     "(its summary is there): nccl-tests lowers maxBytes when GPU memory cannot hold "
                                     "the buffers ('Reducing maxBytes', printed before the table)"))
    elif short:
        warnings.append(LogWarning(
            "stopped_early", f"the sweep ends at {last} B but maxBytes is {max_bytes} B"
                             + (f" and the next size ({nxt} B) would fit" if nxt is not None else "")
                             + ": the run crashed, hung or ran out of memory, or the log was cut"))
    elif "avg_busbw_gbps" not in meta:
        warnings.append(LogWarning(
            "no_summary", "no '# Avg bus bandwidth' line: the log was cut, or the run did not finish"))


# ----------------------------------------------------------------------------------------------- bundled logs

def bundled_log_names() -> list[str]:
    """Names (``"C01"``...) of the nccl-tests logs bundled in ``gpucomm/data/nccl_logs``."""
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
