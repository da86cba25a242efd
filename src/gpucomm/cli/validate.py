"""``gpucomm validate``: the model against every bundled published measurement.

Runs :func:`gpucomm.model.validation.validate` and prints one row per case (measured, model,
relative error: out of sample, the model refitted without that case; the in-sample error beside it), the
leave-one-sweep-out accuracy by size band, transport and GPU generation (:func:`gpucomm.model.validation.accuracy`)
and how many points the 10-90 % band holds (:func:`gpucomm.model.validation.band_coverage`), the summary per group
(:func:`gpucomm.model.validation.summarize`),
the error of each bundled sweep by size band, in- and out-of-sample apart
(:func:`gpucomm.model.validation.sweep_bands`), and the model issue's targets with what the model
reaches (:func:`gpucomm.model.validation.targets`); with ``--json`` one JSON object holding them all. The
table fits the terminal: below 150 columns
the group and algorithm columns are left out. Pure Python: no torch, plotly or pandas.
"""

from __future__ import annotations

import argparse

from gpucomm.cli.common import print_json, print_table

__all__ = ["register", "run"]

NARROW_COLUMNS = 150
"""Terminals narrower than this get the short table (no group, no algorithm column)."""


def register(subparsers) -> None:
    """Add the ``validate`` parser to ``subparsers``; its ``func`` is :func:`run`."""
    val = subparsers.add_parser("validate", help="the model against every bundled published measurement")
    val.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    val.add_argument("--all", action="store_true", help="also list every size of the full sweeps")
    val.set_defaults(func=run)



def run(args: argparse.Namespace) -> int:
    """Print the validation tables (or ``--json``); return 0."""
    import shutil

    from gpucomm.model.validation import (
        SWEEPS,
        accuracy,
        band_coverage,
        format_error,
        format_value,
        nvlink_sweep_ids,
        summarize,
        sweep_bands,
        targets,
        validate,
    )

    results = validate()
    acc, coverage = accuracy(results), band_coverage(results)
    summary = summarize(results)
    nvlink = nvlink_sweep_ids()
    bands, goals, nvlink_goals = sweep_bands(results), targets(results), targets(results, sweeps=nvlink)
    if args.json:
        print_json({"results": [dict(r.__dict__, error=r.error) for r in results],
                    "summary": [dict(s.__dict__, target=s.target) for s in summary],
                    "sweep_bands": [dict(b.__dict__) for b in bands],
                    "targets": [dict(t.__dict__) for t in goals],
                    "targets_nvlink_sweeps": [dict(t.__dict__) for t in nvlink_goals],
                    "leave_one_out_accuracy": [dict(a.__dict__) for a in acc],
                    "band_coverage": coverage})
        return 0
    width = shutil.get_terminal_size((200, 24)).columns  # the terminal's width, or $COLUMNS; 200 when piped
    shown = [r for r in results if args.all or not r.label.endswith(" sweep")]
    columns = ("case", "what", "measured", "model", "error", "in-sample", "note") if width < NARROW_COLUMNS else \
        ("case", "group", "what", "measured", "model", "error", "in-sample", "algorithm", "note")
    rows = []
    for r in shown:
        cells = dict(case=r.case_id, group=r.group, what=r.label, measured=format_value(r.measured, r.metric),
                     model=format_value(r.predicted, r.metric), error=format_error(r.error), **{"in-sample": format_error(r.fit_error)},
                     algorithm=r.algorithm, note=("in-sample, not held out: " if r.in_sample else "") + r.why)
        rows.append([cells[c] for c in columns])
    hidden = len(results) - len(shown)
    note = (f"{hidden} sizes of the full sweeps ({', '.join(s.sweep_id for s in SWEEPS)}) are counted in the summary; "
            "--all lists them" if hidden else None)
    print_table("model vs published measurements (model and error: leave-one-out, refitted without the row)", columns, rows,
                right_aligned=("measured", "model", "error", "in-sample"), width=width, note=note)
    print_table("leave-one-sweep-out accuracy (sweep points with busbw >= 1 GB/s, each predicted with the parameters "
                "refitted without its sweep)",
                ("by", "group", "points", "within 15 %", "median |error|", "in-sample: within 15 %", "in-sample: median"),
                [(a.by, a.group, str(a.points), f"{a.within_15:.0%}", f"{100 * a.median_abs_error:.1f} %",
                  f"{a.in_sample_within_15:.0%}", f"{100 * a.in_sample_median_abs_error:.1f} %") for a in acc],
                right_aligned=("points", "within 15 %", "median |error|", "in-sample: within 15 %", "in-sample: median"),
                width=width, note=f"the 10-90 % prediction band holds {coverage:.0%} of the leave-one-out points "
                                  "(sweeps and cases)")
    print_table("summary (leave-one-out)",
                ("group", "cases", "median |error|", "worst |error|", "median factor", "worst factor", "target", "meet it"),
                [(s.group, str(s.count), f"{100 * s.median_abs_error:.1f} %", f"{100 * s.worst_abs_error:.0f} %",
                  f"{s.median_factor:.2f}x", f"{s.worst_factor:.2f}x", s.target,
                  "" if s.within_target is None else f"{s.within_target} of {s.count}") for s in summary],
                width=width)
    print_table("sweeps by size band (points with busbw >= 1 GB/s; left out: predicted leave-one-sweep-out)",
                ("sweep", "band", "sample", "points", "median |error|", "worst |error|", "within 15 %"),
                [(b.sweep, b.band, "in (fitted)" if b.in_sample else "left out", str(b.count),
                  f"{100 * b.median_abs_error:.1f} %", f"{100 * b.worst_abs_error:.0f} %", f"{b.share_within:.0%}")
                 for b in bands], right_aligned=("points", "median |error|", "worst |error|", "within 15 %"), width=width)
    print_table("the model issue's targets (leave-one-sweep-out, every sweep)", ("target", "reached", "met"),
                [(t.name, t.reached, "yes" if t.met else "no") for t in goals], width=width)
    print_table(f"the same on the NVLink/NVSwitch sweeps ({', '.join(s.sweep_id for s in SWEEPS if s.sweep_id in nvlink)})",
                ("target", "reached", "met"),
                [(t.name, t.reached, "yes" if t.met else "no") for t in nvlink_goals], width=width,
                note="the PCIe hosts' sweeps are left out: host-memory staging and the socket path vary by host")
    return 0
