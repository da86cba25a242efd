"""The checks of a parsed nccl-tests log: what looks wrong, each threshold named with where it comes from.

:func:`finish_log` completes a parsed log (the caller's overrides, the shape its numbers imply:
:mod:`gpucomm.measure.logs.nccl_tests_shape`) and runs :data:`CHECKS`, each appending its
:class:`~gpucomm.measure.logs.nccl_tests_records.LogWarning` (codes in the docstring of
:mod:`gpucomm.measure.logs.nccl_tests`). Thresholds that are nccl-tests' own cite its source; the others
are choices of this parser, said so. Standard library and :mod:`gpucomm.model` only.
"""

from __future__ import annotations

from collections.abc import Callable

from gpucomm.measure.logs.nccl_tests_records import SOURCE_WORDS, TYPE_BYTES, LogWarning, ParsedLog, Record, algbw_factor
from gpucomm.measure.logs.nccl_tests_shape import (
    MIN_RATIO_ALGBW_GBPS,
    algbw_agrees,
    factor_fits,
    infer_shape,
    ranks_fitting,
    ratio_rows,
)
from gpucomm.model.collectives import COLLECTIVES, busbw_factor
from gpucomm.model.dtypes import BY_SPELLING

__all__ = ["IN_PLACE_OUTLIER_RATIO", "SMALL_OUTLIER_RATIO", "BUSBW_DROP_FRACTION", "DROP_MIN_BYTES", "LEGACY_DELTA_MAX",
           "CHECKS", "finish_log", "check_given_shape", "check_records", "legacy_error_bound"]

IN_PLACE_OUTLIER_RATIO = 1.25
"""Flag a size of 1 MiB or more whose in-place and out-of-place times differ by more than this factor: a choice of
this parser. Both halves run the same algorithm on the same bytes (nccl-tests ``BenchTime``, ``src/common.cu``), so
they should agree within run-to-run noise."""
SMALL_OUTLIER_RATIO = 2.0
"""Below :data:`DROP_MIN_BYTES` times are microseconds and noisy: flag only a factor of two (a choice of this parser)."""
BUSBW_DROP_FRACTION = 0.10
"""Flag a size whose busbw is more than this fraction below the best of the smaller sizes (sizes >= :data:`DROP_MIN_BYTES`):
a choice of this parser, above run-to-run noise at large sizes."""
DROP_MIN_BYTES = 1 << 20
"""Below 1 MiB busbw is latency-bound and noisy: not checked for drops or dips (a choice of this parser)."""


def check_given_shape(records: list[Record], meta: dict, stated: dict, warnings: list[LogWarning]) -> None:
    """A ``contradiction`` warning where a given collective or rank count differs from the log or its numbers.

    Parameters
    ----------
    records : list of Record
        The log's measurements.
    meta : dict
        Its metadata, the caller's values already in it (``*_source`` ``"argument"``).
    stated : dict
        ``{"collective" or "num_ranks": (value, source)}``: what the log itself said, before the caller's values.
    warnings : list of LogWarning
        Appended to.
    """
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
    rows = [r for r in ratio_rows(records) if r.algbw_gbps >= MIN_RATIO_ALGBW_GBPS]
    if not given or collective not in COLLECTIVES or not n or not rows:
        return
    # busbw/algbw as printed: all_gather and reduce_scatter of nccl-tests before 2020-06-19 printed busbw = algbw
    old = collective in ("all_gather", "reduce_scatter")
    factor = busbw_factor(collective, n) / algbw_factor(meta) if old else busbw_factor(collective, n)
    if factor_fits(rows, factor):
        return
    best = max(rows, key=lambda r: r.algbw_gbps)
    alternatives = [f"{c} on {k} ranks" for c in COLLECTIVES for k in ranks_fitting(rows, c)[:1]
                    if c in (collective, "all_reduce", "all_gather")][:2]
    if not alternatives and factor_fits(rows, 1.0):
        alternatives = ["a factor of 1 (broadcast, reduce, send_recv, or all_reduce on 2 ranks)"]
    warnings.append(LogWarning(
        "contradiction", f"busbw/algbw of the rows is {best.busbw_gbps / best.algbw_gbps:.4g} (line {best.line}), not "
                         f"{factor:g}, the factor of {collective} on {n} ranks as given"
                         + (f"; the rows fit {' or '.join(alternatives)}" if alternatives else "")
                         + ": busbw was computed by nccl-tests for the run's own shape, so check the values given"))


def _check_wrong(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    """``wrong``: measurements with a non-zero ``#wrong`` count."""
    wrong = [r for r in records if r.wrong]
    if wrong:
        sizes = sorted({r.size_bytes for r in wrong})
        warnings.append(LogWarning(
            "wrong", f"{len(wrong)} measurement(s) with #wrong > 0 (first at {sizes[0]} B, {wrong[0].placement}, "
                     f"{wrong[0].wrong} wrong elements): the results were incorrect, do not trust these rows"))


def _check_legacy_error(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    """``error``: old-layout ``error`` values above nccl-tests' own bound (:func:`legacy_error_bound`)."""
    n_for_bound = meta.get("num_ranks") or 2  # unknown: the strictest bound nccl-tests applies (2 ranks)
    errors = [r for r in records if r.max_error and r.max_error > legacy_error_bound(r.type, n_for_bound)]
    if errors and meta.get("out_of_bounds") != 0:  # a footer '0 OK' is nccl-tests' own verdict on these values
        worst = max(errors, key=lambda r: r.max_error or 0.0)
        warnings.append(LogWarning(
            "error", f"{len(errors)} measurement(s) whose 'error' column (the largest deviation from the expected "
                     f"result) exceeds nccl-tests' bound (largest {worst.max_error:g} at {worst.size_bytes} B, bound "
                     f"{legacy_error_bound(worst.type, n_for_bound):g} for {worst.type} on {n_for_bound} ranks"
                     + ("" if meta.get("num_ranks") else ", the rank count being unknown") + "): the results were wrong"))


def _check_one_rank(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    """``one_rank``: a single rank (stated, or busbw 0 with algbw > 0 for a collective whose factor is 0 at n = 1)."""
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


def _check_duplicates(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    """``duplicate_size``: a size measured twice in one placement."""
    by_key: dict[tuple[int, bool], list[Record]] = {}
    for r in records:
        by_key.setdefault((r.size_bytes, r.in_place), []).append(r)
    dups = sorted({size for (size, _), rs in by_key.items() if len(rs) > 1})
    if dups:
        warnings.append(LogWarning("duplicate_size", f"{len(dups)} size(s) appear more than once (first {dups[0]} B): "
                                                     "several runs are interleaved; each row is kept"))


def _check_algbw(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    """``algbw_mismatch``: algbw not size / time (:func:`gpucomm.measure.logs.nccl_tests_shape.algbw_agrees`)."""
    ratio = algbw_factor(meta)
    mismatched = [r for r in records if r.time_us and r.algbw_gbps >= MIN_RATIO_ALGBW_GBPS
                  and not algbw_agrees(ratio * r.size_bytes / (r.time_us * 1e3), r.algbw_gbps)]
    if mismatched:
        r = mismatched[0]
        warnings.append(LogWarning(
            "algbw_mismatch", f"{len(mismatched)} measurement(s) where algbw differs from size / time (line {r.line}: "
                              f"{r.size_bytes} B / {r.time_us} us = {r.size_bytes / (r.time_us * 1e3):.3g} GB/s, "
                              f"printed {r.algbw_gbps} GB/s)"))


def _check_in_place_outliers(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    """``in_place_outlier``: in-place and out-of-place times of one size far apart (:data:`IN_PLACE_OUTLIER_RATIO`)."""
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


def _check_stated_shape(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    """``inconsistent_shape``: busbw / algbw does not fit the collective and rank count the log itself states.

    busbw is algbw times the factor of the run's collective and rank count (nccl-tests ``doc/PERFORMANCE.md``), so a
    device list of 8 ranks beside rows whose busbw / algbw is 1.5 (all_reduce on 4 ranks) is a log pasted together
    from two runs, or edited. Values given by the caller are checked by :func:`check_given_shape` instead.
    """
    collective, n = meta.get("collective"), meta.get("num_ranks")
    stated = meta.get("num_ranks_source") in ("devices", "command", "gpucomm_header", "json")
    rows = [r for r in ratio_rows(records) if r.algbw_gbps >= MIN_RATIO_ALGBW_GBPS]
    if not stated or meta.get("collective_source") == "argument" or collective not in COLLECTIVES or not n or not rows \
            or meta.get("old_algbw_ranks"):
        return
    if factor_fits(rows, busbw_factor(collective, n)):
        return
    best = max(rows, key=lambda r: r.algbw_gbps)
    fitting = ranks_fitting(rows, collective)[:1]
    warnings.append(LogWarning(
        "inconsistent_shape", f"busbw/algbw of the rows is {best.busbw_gbps / best.algbw_gbps:.4g} (line {best.line}), not "
                              f"{busbw_factor(collective, n):g}, the factor of {collective} on {n} ranks "
                              f"({SOURCE_WORDS.get(meta['num_ranks_source'], meta['num_ranks_source'])})"
                              + (f"; the rows fit {collective} on {fitting[0]} ranks" if fitting else "")
                              + ": the header and the rows come from different runs, or the log was edited"))


def _check_size_count(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    """``size_mismatch``: a size that is not count x type size (x ranks where the count is per rank).

    nccl-tests prints ``size`` and ``count`` of one buffer (``writeBenchmarkLinePreamble``, ``src/util.cu``): size =
    count x type size, times the ranks for all_gather, reduce_scatter and all_to_all, whose count is per rank
    (``getCollByteCount`` of each test). Old layouts are left out (their sizes followed other rules, :func:`old_gather_scatter`).
    """
    if meta.get("layout") not in ("current", "json"):
        return
    chunked = meta.get("collective") in ("all_gather", "reduce_scatter", "all_to_all")
    n = meta.get("num_ranks")
    bad = []
    for r in records:
        type_bytes = TYPE_BYTES.get(r.type.lower())
        if not type_bytes:
            continue
        per_buffer = r.count * type_bytes
        if chunked:
            fits = per_buffer * n == r.size_bytes if n else per_buffer > 0 and r.size_bytes % per_buffer == 0
        else:
            fits = per_buffer == r.size_bytes or (meta.get("collective") is None and per_buffer > 0
                                                  and r.size_bytes % per_buffer == 0)
        if not fits:
            bad.append(r)
    if bad:
        r = bad[0]
        warnings.append(LogWarning(
            "size_mismatch", f"{len({x.line for x in bad})} row(s) whose size is not count x type size"
                             + (" x ranks" if chunked else "") + f" (line {r.line}: {r.size_bytes} B, count {r.count} "
                             f"{r.type}): the row was edited or comes from another tool"))


def _check_order(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    """``unordered_sizes``: sizes that do not grow from one row to the next (nccl-tests sweeps upwards, ``-b`` to ``-e``)."""
    rows = sorted({r.line: r.size_bytes for r in records}.items())
    falls = [(line, size, before) for (line, size), (_, before) in zip(rows[1:], rows) if size < before]
    if falls:
        line, size, before = falls[0]
        warnings.append(LogWarning(
            "unordered_sizes", f"{len(falls)} row(s) smaller than the row before (first line {line}: {size} B after "
                               f"{before} B): nccl-tests sweeps sizes upwards, so the rows were shuffled or pasted "
                               "together from several runs"))


def _check_dips(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    """``busbw_dip`` and ``busbw_drop`` of each placement (:func:`busbw_dips_and_cliff`)."""
    for in_place in (False, True):
        rows = sorted((r for r in records if r.in_place == in_place and r.size_bytes >= DROP_MIN_BYTES),
                      key=lambda r: r.size_bytes)
        warnings.extend(busbw_dips_and_cliff(rows))


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


def busbw_dips_and_cliff(rows: list[Record]) -> list[LogWarning]:
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


def check_stopped_early(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
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


CHECKS: tuple[Callable[[list[Record], dict, list[LogWarning]], None], ...] = (
    _check_wrong, _check_legacy_error, _check_one_rank, _check_stated_shape, _check_size_count, _check_order,
    _check_duplicates, _check_algbw, _check_in_place_outliers, _check_dips, check_stopped_early)
"""The checks :func:`check_records` runs, in order: each ``check(records, meta, warnings)`` appends what it finds."""


def check_records(records: list[Record], meta: dict, warnings: list[LogWarning]) -> None:
    """Run every check of :data:`CHECKS` on a log's records.

    Parameters
    ----------
    records : list of Record
        The measurements (at least one).
    meta : dict
        The log's metadata (``num_ranks``, ``collective``, ``maxBytes``... where known).
    warnings : list of LogWarning
        Appended to.
    """
    for check in CHECKS:
        check(records, meta, warnings)


def finish_log(records: list[Record], meta: dict, warnings: list[LogWarning], *, collective: str | None = None,
               num_ranks: int | None = None) -> ParsedLog:
    """Complete what a reader of nccl-tests output found: the overrides, what the numbers imply, the checks.

    Shared by the text parser (:func:`gpucomm.measure.logs.nccl_tests.parse_nccl_tests`) and the JSON reader
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
    infer_shape(records, meta)
    check_given_shape(records, meta, stated, warnings)
    check_records(records, meta, warnings)
    return ParsedLog(tuple(records), tuple(warnings), meta)


