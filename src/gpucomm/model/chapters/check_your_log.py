"""The numbers of ``book/check_your_log.md`` (check your own log, read in the page).

The page reads its example logs with :func:`gpucomm.viz.calculators.log_check.check_log`, the reader the page's live
panel runs in the browser; the model layer does not import it, so the page hands its output (plain dicts, as
``gpucomm parse --json`` and ``gpucomm diagnose --json`` write them) to :func:`numbers`.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpucomm.model import claims
from gpucomm.model.units import GiB

__all__ = ["numbers"]

# The parser's warnings in words (``gpucomm.measure.logs.nccl_tests``; book/measuring.md, "Reading real logs").
WARNING_WORDS = {
    "in_place_outlier": "at one size the in-place time is far from the out-of-place one",
    "busbw_dip": "busbw dips below the smaller sizes' best at one size and recovers after",
}


def numbers(example: Mapping, info: Mapping) -> dict[str, object]:
    """Every number ``book/check_your_log.md`` glues, by glue key.

    Parameters
    ----------
    example : mapping
        ``check_log(...)["nccl_tests"]`` of the example nccl-tests log: its ``runs``, the first of which has ``meta``
        (``num_ranks``, ``warnings``), ``records`` (``msg_bytes``, ``busbw_bytes_per_s``) and ``model``
        (``busbw_bytes_per_s`` per size).
    info : mapping
        ``check_log(...)["nccl_info"]`` of the example ``NCCL_DEBUG=INFO`` log: its ``findings`` (``code``).

    Returns
    -------
    dict of str to object
        ``example_ranks``, ``example_warnings`` (the parser's warning codes), ``example_size`` (the largest size, GiB),
        ``example_ratio`` (measured / model busbw at that size), ``info_findings`` (what ``gpucomm diagnose`` flags),
        ``example_warnings_text`` and ``info_findings_text`` (the same in words, :data:`WARNING_WORDS` and each
        finding's title).

    Raises
    ------
    ClaimError
        If the example's model and measured rows do not end at the same size, or the INFO log flags nothing (the page
        quotes its findings).

    Notes
    -----
    Sources: the bundled DGX A100 ``all_reduce_perf`` log and NCCL issue #892's log (each with its source URL), and the
    cost model as :func:`gpucomm.viz.calculators.log_check.check_log` applies it to the log's system.
    """
    run = example["runs"][0]
    last = run["records"][-1]
    model = run["model"]
    claims.require(model["sizes"][-1] == last["msg_bytes"], "the ratio compares the run and the model at one size")
    codes = [f["code"] for f in info["findings"]]
    claims.require(bool(codes), "the INFO log's findings are listed")
    return {
        "example_ranks": run["meta"]["num_ranks"],
        "example_warnings": ", ".join(w["code"] for w in run["meta"]["warnings"]) or "none",
        "example_size": last["msg_bytes"] / GiB,
        "example_ratio": last["busbw_bytes_per_s"] / model["busbw_bytes_per_s"][-1],
        "info_findings": ", ".join(codes),
        # the same in words, for the prose: each warning's first clause, each finding's title
        "example_warnings_text": "; ".join(f"{WARNING_WORDS.get(w['code'], w['code'])} ({w['code']})"
                                           for w in run["meta"]["warnings"]) or "none",
        "info_findings_text": "; ".join(f"{f['title']} ({f['code']})" for f in info["findings"]),
    }
