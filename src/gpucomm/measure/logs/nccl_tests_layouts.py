"""The row layouts of nccl-tests' result table, one per era, and how a row's columns are read.

nccl-tests has printed three layouts (``print_line_header`` / ``writeResultHeader`` and
``writeBenchmarkLineBody`` in ``src/common.cu``, later ``src/util.cu``):

* ``current`` (about 2021 on): ``size count type redop root``, then ``time algbw busbw #wrong`` per placement;
* ``legacy``: ``size count type redop``, then ``time algbw busbw error`` (the largest deviation, not a count);
* ``legacy_no_redop``: ``size count type``, then ``time algbw busbw error`` (all_gather and friends of that era).

Options add columns: ``-I 1`` (nccl-tests 2.19) four per half after ``#wrong`` (:data:`ITER_COLUMNS`), ``-S 1``
a timestamp after the last (:data:`TIMESTAMP_RE`); ``-C 1`` titles the time ``cputime``.

A :class:`Layout` comes from the column-title line when the log has one (:func:`layout_from_header`),
else from a row's width and what its columns hold (:func:`infer_layout`). A row printing one
placement only (the other blank: a measurement not made) is placed by :func:`blank_half`.
Standard library only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

HALF_WIDTH = 4  # columns of one measurement: time, algbw, busbw, then #wrong or error
ALIGN_SLACK = 3  # characters a value may end away from its column title (the halves are 32 apart)
WRONG_MARK = "WRONG"  # gpucomm bench ends a row with wrong elements with it (gpucomm.measure.results)
MAX_DIGITS = 20  # a size or count with more digits is not a size (and int() of huge strings is slow or refused)
INT_RE = re.compile(r"^\d{1,%d}$" % MAX_DIGITS)
SIGNED_INT_RE = re.compile(r"^-?\d{1,%d}$" % MAX_DIGITS)
FLOAT_RE = re.compile(r"^[+-]?(?:\d{1,30}(?:\.\d{0,30})?|\.\d{1,30})(?:[eE][+-]?\d{1,4})?$")
TYPE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")


def parse_float(token: str) -> float | None:
    """A finite float from a token, None for N/A; raises ValueError for anything else."""
    if token.upper() == "N/A":
        return None
    if not FLOAT_RE.match(token):
        raise ValueError(token)
    value = float(token)
    if not math.isfinite(value):
        raise ValueError(token)
    return value



def looks_like_row(tokens: list[str]) -> bool:
    """Whether the tokens of a line start as a result row does: size, count (integers), a type name."""
    return len(tokens) >= 3 and bool(INT_RE.match(tokens[0]) and INT_RE.match(tokens[1]) and TYPE_RE.match(tokens[2]))


ITER_COLUMNS = ("i_min", "i_max", "i_p99", "i_cv%")
"""The columns nccl-tests ``-I 1`` adds after ``#wrong`` in each half (``writePerIterReport``, ``src/util.cu``
v2.19.6; ``gpucomm bench -I 1`` prints the same)."""

TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$"), re.compile(r"^\d{2}:\d{2}:\d{2}$")
"""The two tokens nccl-tests ``-S 1`` appends to each row (``writeTimestamp``: ``%Y-%m-%d %H:%M:%S``, ``src/util.cu``)."""

FUSED_RE = re.compile(r"^([+-]?\d{1,20}\.\d{2})(\d{1,20}(?:\.\d{1,2})?)$")
"""Two numbers printed without a space between them (``10.4012905.60``): nccl-tests prints a bandwidth, and a time
below 10 ms, with exactly 2 decimals (``getFloatStr``, ``src/util.cu``), so the first number ends 2 digits after
its point."""


@dataclass
class Layout:
    """The columns of one era of nccl-tests' table.

    Attributes
    ----------
    name : str
        ``current``, ``legacy`` or ``legacy_no_redop`` (module docstring).
    has_redop, has_root : bool
        Whether the row has those columns.
    check : str
        ``wrong`` (a count of wrong elements) or ``error`` (the largest deviation).
    per_iteration : bool
        Each half ends with nccl-tests ``-I 1``'s columns (:data:`ITER_COLUMNS`).
    """

    name: str
    has_redop: bool
    has_root: bool
    check: str
    per_iteration: bool = False

    @property
    def half_width(self) -> int:
        """Columns of one measurement: time, algbw, busbw, #wrong or error (and the ``-I 1`` columns)."""
        return HALF_WIDTH + (len(ITER_COLUMNS) if self.per_iteration else 0)

    @property
    def width(self) -> int:
        """Columns of a full row."""
        return 3 + self.has_redop + self.has_root + 2 * self.half_width


LAYOUTS = {
    13: Layout("current", True, True, "wrong"),
    12: Layout("legacy", True, False, "error"),
    11: Layout("legacy_no_redop", False, False, "error"),
    21: Layout("current", True, True, "wrong", per_iteration=True),
}
"""The layouts by the width of a full row, for logs without column titles."""


def split_fused(tokens: list[str], width: int) -> list[str]:
    """``tokens`` with a token of two fused numbers (:data:`FUSED_RE`) split, where the row is one token short of ``width``.

    Examples
    --------
    >>> split_fused(["8", "2", "float", "sum", "-1", "12905.60", "10.4012905.60", "0"], 9)
    ['8', '2', 'float', 'sum', '-1', '12905.60', '10.40', '12905.60', '0']
    """
    if len(tokens) != width - 1:
        return tokens
    for k, token in enumerate(tokens[3:], start=3):
        fused = FUSED_RE.match(token)
        if fused:
            return tokens[:k] + list(fused.groups()) + tokens[k + 1:]
    return tokens


def infer_layout(tokens: list[str], halves: int = 2) -> Layout | None:
    """The layout of a row when no header line says it: by width, then by what the columns hold.

    ``halves`` is how many of the row's two measurements are printed (1: one half blank).
    """
    layout = LAYOUTS.get(len(tokens) + HALF_WIDTH * (2 - halves))
    if layout is None:
        return None
    time_at = 3 + layout.has_redop + layout.has_root
    if layout.has_redop and not TYPE_RE.match(tokens[3]):
        return None
    if not FLOAT_RE.match(tokens[time_at]) and tokens[time_at].upper() != "N/A":
        return None  # e.g. a current-layout row cut after 11 columns: 'sum' where a time should be
    check = tokens[time_at + 3]
    if layout.check == "error" and (INT_RE.match(check) or check.upper() == "N/A"):
        return None  # an integer check column is #wrong: a current-layout row with columns missing
    return layout


def layout_from_header(tokens: list[str]) -> Layout | None:
    """The table layout from a '#  size  count  type ...' header line, or None if it is not one."""
    words = [t.lower() for t in tokens]
    if not {"size", "count", "type", "algbw", "busbw"} <= set(words) or not {"time", "cputime"} & set(words):
        return None
    has_redop, has_root = "redop" in words, "root" in words
    check = "error" if "error" in words else "wrong"
    name = "current" if has_root and check == "wrong" else ("legacy" if has_redop else "legacy_no_redop")
    return Layout(name, has_redop, has_root, check, per_iteration="i_min" in words)


def title_half_ends(line: str, layout: Layout) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Where the out-of-place and in-place columns end in a column-title line (``line`` without its prefix).

    nccl-tests right-aligns each title over its column (``writeResultHeader`` and
    ``writeBenchmarkLineBody``, ``src/util.cu``), and so does ``gpucomm bench``: the character
    offset where a title ends is where its values end. None unless the line holds one title per
    column of ``layout`` (a leading lone ``#`` aside).
    """
    words = [w for w in re.finditer(r"\S+", line) if w.group().lower() != "timestamp"]  # -S 1 adds it at the end
    if words and words[0].group() == "#":
        words = words[1:]
    if len(words) != layout.width:
        return None
    half = layout.half_width
    ends = tuple(w.end() for w in words[-2 * half:])
    return ends[:half], ends[half:]


def blank_half(line: str, half_ends: tuple[tuple[int, ...], tuple[int, ...]] | None,
                not_measured: bool | None) -> bool | None:
    """Which half of a row printing one measurement is blank: True for in-place, False for out-of-place.

    Two kinds of evidence: ``not_measured``, the half a ``# out-of-place: not measured`` (or
    ``in-place``) line says is blank; and the columns, where the printed values end (``line``
    without its prefix) against ``half_ends`` (:func:`title_half_ends`, or a full row of the
    table), within :data:`ALIGN_SLACK` characters. The columns alone place only a blank
    out-of-place half (nccl-tests' null body): values ending under the out-of-place titles are
    also what a row cut after its first half looks like. None when nothing places the row, or when
    the line and the columns disagree: the row is then not read.
    """
    columns = None
    if half_ends is not None:
        ends = [w.end() for w in re.finditer(r"\S+", line)][-len(half_ends[0]):]
        fits = [all(abs(a - b) <= ALIGN_SLACK for a, b in zip(ends, half)) for half in half_ends]
        if fits.count(True) == 1:
            columns = fits[0]  # values under the out-of-place titles: the in-place half is the blank one
    if not_measured is None:
        return False if columns is False else None
    return not_measured if columns in (None, not_measured) else None


def parse_half(tokens: list[str], check: str) -> tuple[float | None, float, float, int | None, float | None, dict]:
    """One measurement's columns: time (us), algbw, busbw (GB/s), #wrong or error, and the ``-I 1`` columns if any.

    Parameters
    ----------
    tokens : list of str
        The half's columns (4, or 8 with :data:`ITER_COLUMNS`).
    check : str
        ``wrong`` or ``error``: what the fourth column holds.

    Returns
    -------
    tuple
        ``(time_us, algbw_gbps, busbw_gbps, wrong, error, iters)``; ``iters`` holds the :class:`Record` fields
        ``iter_min_us``, ``iter_max_us``, ``iter_p99_us``, ``iter_cv_pct`` (empty without those columns).

    Raises
    ------
    ValueError
        A value that is not a number as nccl-tests prints it (a negative bandwidth or time, a fractional count).
    """
    time_us = parse_float(tokens[0])
    algbw, busbw = parse_float(tokens[1]), parse_float(tokens[2])
    if algbw is None or busbw is None or algbw < 0 or busbw < 0 or (time_us is not None and time_us < 0):
        raise ValueError("bandwidth")
    wrong, err = None, None
    if check == "wrong":
        if tokens[3].upper() != "N/A":
            if INT_RE.match(tokens[3]):
                wrong = int(tokens[3])
            else:
                value = parse_float(tokens[3])  # some versions print a float count (e.g. "0.0")
                if value is None or value < 0 or value != int(value):
                    raise ValueError(tokens[3])
                wrong = int(value)
    else:
        err = parse_float(tokens[3])
    iters = {}
    if len(tokens) > HALF_WIDTH:
        values = [parse_float(tok) for tok in tokens[HALF_WIDTH:HALF_WIDTH + len(ITER_COLUMNS)]]
        if any(v is not None and v < 0 for v in values):
            raise ValueError("per-iteration time")
        iters = dict(zip(("iter_min_us", "iter_max_us", "iter_p99_us", "iter_cv_pct"), values))
    return time_us, algbw, busbw, wrong, err, iters

