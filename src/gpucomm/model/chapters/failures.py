"""The numbers of ``book/failures.md`` (When things fail).

Sections: InfiniBand's retry counter under NCCL (the wait per try and until status 12, by ``NCCL_IB_TIMEOUT``);
PyTorch's process-group timeout; which clock fires first for a dead link and for a missing rank; the self-check answers.
The page also quotes two logs, kept here as text (:data:`BASICSR_737`, :data:`QUIZ_IB_LINES`); reading them takes the
log parsers of :mod:`gpucomm.measure`, so the page does that itself.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model.failure_timing import (
    IB_RETRY_CNT_DEFAULT,
    IB_TIMEOUT_DEFAULT,
    PG_NCCL_TIMEOUT_DEFAULT_S,
    failure_surfaces,
    ib_ack_timeout_s,
    ib_error_after_s,
)
from gpucomm.model.units import format_time

__all__ = ["BASICSR_737", "QUIZ_IB_LINES", "numbers"]

TABLE_IB_TIMEOUTS = range(18, 24)
"""The ``NCCL_IB_TIMEOUT`` values of the page's table."""
SHORT_PG_TIMEOUT_S = 20
"""The short process-group timeout of the page's example and self-check 4 (s)."""
QUIZ_IB_TIMEOUT = 22
"""Self-check 3's ``NCCL_IB_TIMEOUT``."""

BASICSR_737 = """\
[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.
[rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.
[rank0]:[E626 06:24:44.159932949 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600030 milliseconds before timing out.
[rank0]:[E626 06:24:44.160366013 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.
[rank2]:[E626 06:24:44.173078629 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600061 milliseconds before timing out.
"""  # noqa: E501 - log lines as posted
"""A real watchdog timeout: the first five lines of the log in BasicSR issue #737
(https://github.com/XPixelGroup/BasicSR/issues/737, 2025-06-26), ranks 0-2, as posted."""

QUIZ_IB_LINES = """\
node07:81234:81390 [3] NCCL WARN NET/IB: Got completion from peer 10.1.0.12<43817> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_3
node12:40211:40377 [5] NCCL WARN NET/IB: Got completion from peer 10.1.0.7<52210> with status=12 opcode=0 len=0 vendor err 129 (Recv) hca mlx5_5
"""  # noqa: E501 - log lines in NCCL's format
"""Self-check 2's lines, in NCCL 2.2x's format (``src/transport/net_ib.cc`` at v2.27.3-1); made up, not from a job."""


def _ib_retry() -> dict[str, object]:
    out: dict[str, object] = {
        "ib_timeout_default": IB_TIMEOUT_DEFAULT, "ib_retry_default": IB_RETRY_CNT_DEFAULT,
        "ib_try_s": ib_ack_timeout_s(), "ib_err_s": ib_error_after_s(),
        "ib_err_upper_s": ib_error_after_s(count_first_wait=True),
        "pg_timeout_min": PG_NCCL_TIMEOUT_DEFAULT_S / 60,
    }
    claims.require(round(ib_error_after_s(20, 7)) == 30 and round(ib_error_after_s(22, 7) / 60) == 2,
                   "the formula reproduces NCCL's documented table (30 seconds at 20, 2 minutes at 22)")
    for t in TABLE_IB_TIMEOUTS:  # NCCL_IB_RETRY_CNT at its default
        out[f"row_try_{t}"] = format_time(ib_ack_timeout_s(t))
        out[f"row_err_{t}"] = format_time(ib_error_after_s(t))
        out[f"row_err_upper_{t}"] = format_time(ib_error_after_s(t, count_first_wait=True))
    return out


def _which_clock() -> dict[str, object]:
    dead, missing = failure_surfaces("dead_link"), failure_surfaces("missing_rank")
    short = failure_surfaces("dead_link", pg_timeout_s=SHORT_PG_TIMEOUT_S)
    claims.require(dead.reported_by == "nccl_ib_retry_exceeded" and missing.reported_by == "torch_watchdog_timeout",
                   "with the defaults NCCL reports a dead link before the watchdog's timeout")
    claims.require(short.reported_by == "torch_watchdog_timeout",
                   "a 20 s process-group timeout fires before NCCL's IB retries end (quiz 4)")
    claims.require(ib_error_after_s(QUIZ_IB_TIMEOUT) < PG_NCCL_TIMEOUT_DEFAULT_S,
                   "at NCCL_IB_TIMEOUT=22 the IB error still comes before the timeout")
    claims.require(100 <= ib_error_after_s(QUIZ_IB_TIMEOUT) <= 140 and ib_error_after_s() < 45,
                   "quiz 3: at NCCL_IB_TIMEOUT=22 the warning comes 'about two minutes' after the stall, not a half minute")
    return {
        "dead_vs_missing": claims.compare_word(dead.time_s, missing.time_s, higher="later", lower="sooner"),
        "missing_over_dead": missing.time_s / dead.time_s,
        "short_pg_s": SHORT_PG_TIMEOUT_S, "min_pg_for_ib_s": ib_error_after_s(count_first_wait=True),
        "quiz_ib22_s": ib_error_after_s(QUIZ_IB_TIMEOUT),
        "quiz_ib22_ratio": ib_error_after_s(QUIZ_IB_TIMEOUT) / ib_error_after_s(),
    }


def numbers() -> dict[str, object]:
    """Every number ``book/failures.md`` glues from the model, by glue key (the page adds what it reads from the logs).

    Returns
    -------
    dict of str to object
        InfiniBand: ``ib_timeout_default``, ``ib_retry_default`` (NCCL's defaults), ``ib_try_s``, ``ib_err_s``,
        ``ib_err_upper_s`` (s), ``row_try_{t}``, ``row_err_{t}``, ``row_err_upper_{t}`` for ``t`` in 18..23 (times in
        words). PyTorch: ``pg_timeout_min`` (min). Which clock: ``dead_vs_missing`` (word), ``missing_over_dead``
        (ratio), ``short_pg_s``, ``min_pg_for_ib_s`` (s). Self-check 3: ``quiz_ib22_s`` (s), ``quiz_ib22_ratio``.

    Raises
    ------
    ClaimError
        If the numbers contradict a sentence of the page (each :func:`gpucomm.model.claims.require` names it).

    Notes
    -----
    Sources: :mod:`gpucomm.model.failure_timing` (NCCL's ``NCCL_IB_TIMEOUT`` and ``NCCL_IB_RETRY_CNT`` defaults and
    documented wait, ``env.rst`` and ``src/transport/net_ib/connect.cc`` at v2.30.7-1; PyTorch's default
    process-group timeout, ``ProcessGroupNCCL.hpp`` of v2.13.0).
    """
    return {**_ib_retry(), **_which_clock()}
