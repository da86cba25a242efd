"""What the nccl-tests parser returns: :class:`Record` (one measurement), :class:`LogWarning`, :class:`ParsedLog`.

The records of the text parser (:mod:`gpucomm.measure.logs.nccl_tests`) and of the JSON reader
(:mod:`gpucomm.measure.logs.nccl_tests_json`), with the two tables both derive from the model layer
(:data:`TYPE_BYTES`, :data:`PERF_BINARY_TO_COLLECTIVE`) and the words that say where a value came from
(:data:`SOURCE_WORDS`). Standard library and :mod:`gpucomm.model` only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpucomm import GpucommError
from gpucomm.model.collectives import REGISTRY
from gpucomm.model.dtypes import BY_SPELLING

__all__ = ["Record", "LogWarning", "ParsedLog", "TYPE_BYTES", "PERF_BINARY_TO_COLLECTIVE", "SOURCE_WORDS", "algbw_factor"]

TYPE_BYTES = {spelling: t.size_bytes for spelling, t in BY_SPELLING.items()}
"""Bytes per element of the type names nccl-tests prints (``test_typenames`` in ``src/common.cu``), and of every
other spelling of those types (:data:`gpucomm.model.dtypes.BY_SPELLING`)."""

PERF_BINARY_TO_COLLECTIVE = {c.nccl_tests_binary.removesuffix("_perf"): name for name, c in REGISTRY.items()}
"""nccl-tests binary stem (``all_reduce`` of ``all_reduce_perf``) -> torch.distributed collective name
(``Collective.nccl_tests_binary`` of :mod:`gpucomm.model.collectives`)."""


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
    iter_min_us, iter_p50_us, iter_p99_us, iter_max_us, iter_mean_us, iter_stdev_us : float or None
        Per-iteration times in microseconds (nccl-tests ``-I 1``: each iteration's time, the maximum over
        process rows): the text prints ``i_min``, ``i_max``, ``i_p99``; the ``-J`` JSON all six. None where not printed.
    iter_cv_pct : float or None
        ``i_cv%``: standard deviation over mean of the per-iteration times, percent.
    timestamp : str or None
        The time the row was printed (nccl-tests ``-S 1``: ``YYYY-MM-DD HH:MM:SS``, local time).
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
    iter_min_us: float | None = None
    iter_p50_us: float | None = None
    iter_p99_us: float | None = None
    iter_max_us: float | None = None
    iter_mean_us: float | None = None
    iter_stdev_us: float | None = None
    iter_cv_pct: float | None = None
    timestamp: str | None = None

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
                 "time_s": r.time_s, "algbw_bytes_per_s": r.algbw_bytes_per_s / algbw_factor(self.metadata),
                 "busbw_bytes_per_s": r.busbw_bytes_per_s,
                 "num_wrong": r.wrong} for r in rows if r.time_s is not None and r.time_s > 0]



def algbw_factor(meta: dict) -> float:
    """Printed algbw over size / time: 1, or (n-1)/n for all_gather and reduce_scatter of nccl-tests before 2020-06-19.

    Parameters
    ----------
    meta : dict
        :attr:`ParsedLog.metadata`; ``old_algbw_ranks`` is set where the rows are of that old kind
        (:func:`gpucomm.measure.logs.nccl_tests_shape.old_gather_scatter`).

    Returns
    -------
    float
        The factor (1.0 for every current log).
    """
    n = meta.get("old_algbw_ranks")
    return (n - 1) / n if n else 1.0


SOURCE_WORDS = {"devices": "from the device list", "command": "from the command line", "log": "from the log's test name",
                "argument": "given", "busbw/algbw": "inferred from busbw/algbw",
                "size/count": "inferred from size / (count x type size)",
                "columns": "inferred from busbw/algbw and the redop and root columns",
                "json": "from the JSON output's device list and thread and GPU counts",
                "gpucomm_header": "from the gpucomm bench header line"}
"""How each ``*_source`` of :attr:`ParsedLog.metadata` reads in a sentence."""
