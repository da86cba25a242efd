"""The numbers of ``book/profiling.md`` (seeing communication in a profile: exposed and overlapped time).

Two parts: :func:`numbers` (the lab's set-up as the page describes it, and the expected answers of the numeric
self-checks), and :func:`trace_numbers`, which reads the PyTorch profiler traces that the page's lab records on the
machine that builds it (two gloo ranks, :func:`gpucomm.measure.profile_trace.profile_all_reduce`) with
:func:`gpucomm.model.trace_overlap.overlap_summary`. The traces are measured anew at every build, so the sentences
about them take their words from :func:`gpucomm.model.claims.compare_word`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpucomm.model import claims
from gpucomm.model.collectives import algbw_bytes_per_s, busbw_bytes_per_s
from gpucomm.model.trace_overlap import overlap_summary
from gpucomm.model.units import format_size

__all__ = ["INSPECTOR_RECORD", "QUIZ_TRACE", "numbers", "trace_numbers"]

INSPECTOR_RECORD = {"n_ranks": 8, "coll_msg_size_bytes": 17179869184, "coll_exec_time_us": 61974}
"""The self-check's NCCL Inspector record: the example of NCCL's ``plugins/profiler/inspector/README.md`` at
v2.30.7-1 (an 8-rank AllReduce of 16 GiB in 61,974 us)."""
QUIZ_TRACE = [{"ph": "X", "name": "ProfilerStep#7", "ts": 0, "dur": 10_000},
              {"ph": "X", "name": "sm90_xmma_gemm_bf16", "cat": "kernel", "ts": 0, "dur": 6_000},
              {"ph": "X", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "cat": "kernel", "ts": 2_000,
               "dur": 7_000}]
"""The self-check's step: a 10 ms step, a GEMM from 0 to 6 ms, an all_reduce kernel from 2 to 9 ms (Chrome trace
events, times in us)."""
_FIELDS = ("comm_s", "compute_s", "overlapped_s", "exposed_comm_s", "window_s")


def numbers(*, msg_bytes: int, matmuls: int, matmul_n: int, steps: int) -> dict[str, object]:
    """The lab's set-up and the self-checks' expected answers, by glue key.

    Parameters
    ----------
    msg_bytes : int
        The lab's all_reduce size in bytes (``ProfileConfig.msg_bytes`` of :mod:`gpucomm.measure.profile_trace`).
    matmuls, matmul_n, steps : int
        Matrix multiplies per step, their size (n x n), and profiled steps per variant.

    Returns
    -------
    dict of str to object
        ``lab_msg`` (size as text), ``lab_matmuls``, ``lab_n``, ``lab_steps``; ``quiz_inspector_busbw`` and
        ``quiz_inspector_algbw`` (GB/s, from :data:`INSPECTOR_RECORD`), ``quiz_exposed_ms`` (ms, from
        :data:`QUIZ_TRACE`).

    Raises
    ------
    ClaimError
        If the quiz's exposed time is not the 3 ms its explanation works out (6 to 9 ms).

    Notes
    -----
    Sources: nccl-tests' busbw factor (:func:`gpucomm.model.collectives.busbw_bytes_per_s`), the Inspector README's
    example record, and :func:`gpucomm.model.trace_overlap.overlap_summary`.
    """
    r = INSPECTOR_RECORD
    exposed_ms = overlap_summary(QUIZ_TRACE, step_label="ProfilerStep").exposed_comm_s * 1e3
    claims.require(abs(exposed_ms - 3) < 1e-9, "the quiz's all_reduce is exposed from 6 to 9 ms")
    return {
        "lab_msg": format_size(msg_bytes), "lab_matmuls": matmuls, "lab_n": matmul_n, "lab_steps": steps,
        "quiz_inspector_busbw": busbw_bytes_per_s("all_reduce", r["coll_msg_size_bytes"], r["coll_exec_time_us"] * 1e-6,
                                                  r["n_ranks"]) / 1e9,
        "quiz_inspector_algbw": algbw_bytes_per_s(r["coll_msg_size_bytes"], r["coll_exec_time_us"] * 1e-6) / 1e9,
        "quiz_exposed_ms": exposed_ms,
    }


def trace_numbers(traces: Sequence[Mapping]) -> dict[str, object]:
    """The lab's measured split of each rank's steps, and the words of the sentences that read it.

    Parameters
    ----------
    traces : sequence of mapping
        One mapping per rank, variant name (``serial``, ``overlapped``) to its Chrome-format trace (a dict or list of
        events), as :func:`gpucomm.measure.profile_trace.profile_all_reduce` returns them.

    Returns
    -------
    dict of str to object
        Per rank ``r`` and variant ``v``: ``r{r}_{v}_comm_s``, ``_compute_s``, ``_overlapped_s``, ``_exposed_comm_s``,
        ``_window_s`` (ms, despite the ``_s`` of the field they copy), ``_overlap_pct`` and ``_exposed_pct`` (%). Rank
        0's comparison: ``exposed_word`` (more/less), ``step_word`` (longer/shorter), ``comm_word`` (longer, shorter or
        as long, within 5 %), ``comm_why`` (the reading that goes with it), ``ovl_pct`` (%), ``ovl_comm_ms`` and
        ``ser_comm_ms`` (ms).

    Raises
    ------
    ClaimError
        If the serial variant shows overlap (more than 5 % of its communication; gloo's thread may close its event a
        few microseconds late).
    GpucommError
        If two compared times tie exactly (:func:`gpucomm.model.claims.compare_word`).
    """
    out: dict[str, object] = {}
    for rank, by_variant in enumerate(traces):
        for variant, trace in by_variant.items():
            s = overlap_summary(trace)
            for field in _FIELDS:
                out[f"r{rank}_{variant}_{field}"] = getattr(s, field) * 1e3
            out[f"r{rank}_{variant}_overlap_pct"] = 100 * s.overlap_fraction
            out[f"r{rank}_{variant}_exposed_pct"] = 100 * s.exposed_share
    ser, ovl = overlap_summary(traces[0]["serial"]), overlap_summary(traces[0]["overlapped"])
    claims.require(ser.overlapped_s <= 0.05 * ser.comm_s, "the serial variant shows no overlap")
    stretch = claims.compare_word(ovl.comm_s, ser.comm_s, higher="longer", lower="shorter", same="as long", rel_tol=0.05)
    out.update({
        "exposed_word": claims.compare_word(ovl.exposed_comm_s, ser.exposed_comm_s, higher="more", lower="less"),
        "step_word": claims.compare_word(ovl.window_s, ser.window_s, higher="longer", lower="shorter"),
        "comm_word": stretch,
        "comm_why": {
            "longer": "on a CPU the collective and the matrix multiplies compete for the same cores and memory, so "
                      "overlap stretched the communication",
            "as long": "the cores had room for both, so overlap did not stretch the communication; on a busier machine "
                       "it would",
            "shorter": "the serial all_reduce waited longer for its peer to arrive, which counts as communication",
        }[stretch],
        "ovl_pct": 100 * ovl.overlap_fraction, "ovl_comm_ms": ovl.comm_s * 1e3, "ser_comm_ms": ser.comm_s * 1e3,
    })
    return out
