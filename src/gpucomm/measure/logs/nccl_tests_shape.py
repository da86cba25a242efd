"""What a log's numbers say about its shape: the collective and the rank count, where nothing else says them.

busbw is ``algbw x factor`` with the factor of nccl-tests' ``doc/PERFORMANCE.md``
(:func:`gpucomm.model.collectives.busbw_factor`): the parser uses that relation the other way round,
to the precision nccl-tests prints (:func:`printed_half_unit`), with the ``redop`` and ``root`` columns
and ``size / (count x type size)`` (:func:`infer_shape`). It also recognises the all_gather and
reduce_scatter rows of nccl-tests before 2020-06-19, whose algbw was not today's
(:func:`old_gather_scatter`). Standard library and :mod:`gpucomm.model` only.
"""

from __future__ import annotations

import math

from gpucomm.measure.logs.nccl_tests_records import TYPE_BYTES, LogWarning, Record
from gpucomm.model.collectives import COLLECTIVES, busbw_factor

__all__ = ["ALGBW_ABS_TOLERANCE_GBPS", "ALGBW_REL_TOLERANCE", "MIN_RATIO_ALGBW_GBPS", "algbw_agrees", "old_gather_scatter",
           "printed_half_unit",
           "factor_fits", "ratio_rows", "ranks_fitting", "size_count_ranks", "collective_from_columns", "infer_shape"]

ALGBW_ABS_TOLERANCE_GBPS = 0.011
"""How far a printed algbw may be from size / time, GB/s, at least: a choice of this parser, a little over two
rounding steps of the 2 decimals nccl-tests prints (``getFloatStr``, ``src/util.cu`` v2.19.6)."""
ALGBW_REL_TOLERANCE = 0.03
"""... or this fraction of the printed algbw, the larger: a choice of this parser. It covers the rounding of the
printed time (0.01 us; 0.1 and 1 us above 10 ms and 100 ms, ``getFloatStr``), and is narrow enough to tell today's
algbw from the ``(n-1)/n`` of it that nccl-tests before 2020-06-19 printed for all_gather and reduce_scatter up to
32 ranks (``1/n`` apart)."""

MIN_RATIO_ALGBW_GBPS = 0.05
"""Rows with a smaller algbw, GB/s, are not used to compare busbw / algbw or algbw with size / time: printed to
2 decimals (``getFloatStr``, ``src/util.cu``), such a value is uncertain by 10 % or more (a choice of this parser)."""


def algbw_agrees(computed_gbps: float, printed_gbps: float) -> bool:
    """Whether an algbw computed from a row's size and time agrees with the printed one.

    Parameters
    ----------
    computed_gbps, printed_gbps : float
        GB/s (1e9 B/s).

    Returns
    -------
    bool
        Within :data:`ALGBW_ABS_TOLERANCE_GBPS` or :data:`ALGBW_REL_TOLERANCE` of the printed value, the larger.

    Examples
    --------
    >>> algbw_agrees(149.9, 149.89), algbw_agrees(100.0, 149.89)
    (True, False)
    """
    return abs(computed_gbps - printed_gbps) <= max(ALGBW_ABS_TOLERANCE_GBPS, ALGBW_REL_TOLERANCE * printed_gbps)


def old_gather_scatter(records: list[Record], legacy_rows: list[int], meta: dict, warnings: list[LogWarning]) -> None:
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
    n = size_count_ranks(rows)
    timed = [r for r in rows if r.time_us and r.algbw_gbps >= MIN_RATIO_ALGBW_GBPS]
    if n is None or n < 2 or not timed or not factor_fits(timed, 1.0):
        return
    if any(not algbw_agrees(r.printed_size_bytes * (n - 1) / n / (r.time_us * 1e3), r.algbw_gbps) for r in timed):
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


MAX_INFERRED_RANKS = 1 << 20  # more ranks than any machine: the ratio is then too close to its limit to tell


def printed_half_unit(value: float) -> float:
    """Half a unit of the last digit nccl-tests prints for a bandwidth.

    ``getFloatStr`` in ``src/util.cu`` (v2.19.6) prints ``%.2f`` in 6 columns, then ``%.1f``, then ``%.0f``
    as the value grows; older versions ``%6.2f``.
    """
    return 0.005 if value < 999.995 else 0.05 if value < 9999.95 else 0.5


def factor_fits(rows: list[Record], factor: float) -> bool:
    """busbw = factor x algbw in every row, within what printing to 2 decimals can change."""
    return all(abs(r.busbw_gbps - factor * r.algbw_gbps)
               <= printed_half_unit(r.busbw_gbps) + factor * printed_half_unit(r.algbw_gbps) + 1e-9 for r in rows)


def ratio_rows(records: list[Record]) -> list[Record]:
    return [r for r in records if r.algbw_gbps > 0 and r.time_us]


def ranks_fitting(rows: list[Record], collective: str) -> list[int]:
    """Every rank count whose bus-bandwidth factor for ``collective`` fits all ``rows`` (busbw/algbw)."""
    if not rows or collective not in COLLECTIVES or busbw_factor(collective, 2) == busbw_factor(collective, 3):
        return []  # broadcast, reduce, send_recv: factor 1 for any rank count
    best = max(rows, key=lambda r: r.algbw_gbps)
    lo = (best.busbw_gbps - printed_half_unit(best.busbw_gbps)) / (best.algbw_gbps + printed_half_unit(best.algbw_gbps))
    hi = (best.busbw_gbps + printed_half_unit(best.busbw_gbps)) / max(best.algbw_gbps - printed_half_unit(best.algbw_gbps),
                                                                        1e-12)
    # f(n) = top (1 - 1/n) with top = 2 (all_reduce) or 1, so n = 1 / (1 - f / top): the counts the ratio allows
    top = 2.0 if collective == "all_reduce" else 1.0
    if hi >= top:
        return []
    n_lo = max(1, math.floor(1 / (1 - max(lo, 0.0) / top)) - 1)
    n_hi = math.ceil(1 / (1 - hi / top)) + 1
    return [n for n in range(n_lo, min(n_hi, MAX_INFERRED_RANKS) + 1) if factor_fits(rows, busbw_factor(collective, n))]


def size_count_ranks(records: list[Record]) -> int | None:
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


def collective_from_columns(records: list[Record], meta: dict) -> tuple[str | None, list[str]]:
    """The collective the numbers and the redop/root columns allow: (the one, or None; the candidates)."""
    rows = ratio_rows(records)
    if not rows:
        return None, []
    if any(r.busbw_gbps > r.algbw_gbps + printed_half_unit(r.busbw_gbps) + printed_half_unit(r.algbw_gbps)
           for r in rows):
        return "all_reduce", ["all_reduce"]  # busbw > algbw: only all_reduce's factor exceeds 1
    equal = factor_fits(rows, 1.0)
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


def infer_shape(records: list[Record], meta: dict) -> None:
    """Collective and rank count from the numbers when the log does not say them.

    The collective: busbw > algbw is all_reduce (factor ``2(n-1)/n``); busbw = algbw with the root and
    redop columns tells broadcast, reduce, send_recv and 2-rank all_reduce apart; busbw < algbw is
    reduce_scatter when it reduces, all_gather or all_to_all otherwise (``collective_candidates``). The
    rank count: size / (count x type size) for the collectives that print a per-rank count, else the
    one rank count whose factor fits busbw/algbw of every row to the printed precision.
    """
    rows = ratio_rows(records)
    if "collective" not in meta:
        found, candidates = collective_from_columns(records, meta)
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
            n = size_count_ranks(records)
            if n is not None and n >= 2 and factor_fits(rows, busbw_factor(family[0], n)):
                meta["num_ranks"], meta["num_ranks_source"] = n, "size/count"
                return
        family = family[:1]  # the three share one factor
    fitting = sorted({n for c in family for n in ranks_fitting(rows, c)})
    if len(fitting) == 1:
        meta["num_ranks"], meta["num_ranks_source"] = fitting[0], "busbw/algbw"
