"""``gpucomm fit RESULTS``: fit alpha and beta to a saved sweep, per size region if one line does not fit.

Reads a JSON-lines results file from ``gpucomm bench --out`` (or ``run_sweep(out=...)``, or
``gpucomm parse --out``), takes the measurement at the top level of each record (the placement it
names; ``gpucomm parse --out-of-place`` puts the other one there), fits the alpha-beta model
``t = alpha + f S / B`` (:func:`gpucomm.model.fit.fit_alpha_beta`), and, when that single fit is
poor, fits the small and the large sizes separately: NCCL switches protocol
(LL for small messages, Simple for large ones) and a CPU falls out of its caches, so one
``(alpha, B)`` pair often cannot follow a whole sweep. Optionally compares every size with the
catalog model (:func:`gpucomm.model.cost.collective_cost`: ``--link nvlink4 --gpus 8``) and writes
a measured-vs-model plot as a standalone HTML file.

No torch here, so a results file copied off a GPU node can be fitted anywhere; plotly is
imported only for ``--plot``.

``--plot`` follows the output-path rule of every verb (:mod:`gpucomm.measure.output_paths`): never
the results file, an existing file only with ``--force``, a folder that exists; all checked before
the fit. A record whose numbers a fit cannot read (``"msg_bytes": "8"``) is refused with its line.

The computation is :func:`gpucomm.model.fit.fit_regions` and
:func:`gpucomm.model.fit.catalog_comparison`, the plot
:func:`gpucomm.viz.figures.measured.fit_report_figure`; this module reads the flags and prints.
"""

from __future__ import annotations

import argparse
import math

from gpucomm import GpucommError
from gpucomm.cli.common import int_arg
from gpucomm.measure.output_paths import check_output_file
from gpucomm.model.collectives import COLLECTIVES
from gpucomm.model.fit import DEFAULT_MAX_RMS, catalog_comparison, fit_regions, split_wrong
from gpucomm.model.units import format_size, format_time, to_gb_per_s

__all__ = ["register", "run"]

DESCRIPTION = """Fit the alpha-beta model t = alpha + f S / B to a results file from gpucomm bench
(JSON lines): alpha is the fixed cost per operation, B the bus bandwidth (GB/s = 1e9 B/s, per
direction). If one fit is poor, the small and large sizes are fitted separately (NCCL's LL and
Simple protocols; a CPU's caches). With --link, every size is compared with the catalog model."""
EPILOG = """examples:
  gpucomm fit results/all_reduce-20261129-080000.jsonl
  gpucomm fit sweep.jsonl --link nvlink4 --gpus 8 --plot sweep.html
  gpucomm fit sweep.jsonl --link pcie4 --no-p2p"""


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value < 10):
        raise argparse.ArgumentTypeError(f"--max-rms {text!r} is not valid: expected a fraction such as 0.15")
    return value


def register(subparsers) -> None:
    """Add the ``fit`` parser to ``subparsers`` (from ``ArgumentParser.add_subparsers``); its ``func`` is :func:`run`.

    Neither torch nor plotly is imported: plotly only when ``--plot`` writes a figure.
    """
    parser = subparsers.add_parser("fit", help="fit alpha and beta to a gpucomm bench results file",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", metavar="RESULTS", help="JSON-lines results file from gpucomm bench --out")
    parser.add_argument("--link", default=None, metavar="KEY",
                        help="compare with the catalog model over this link (e.g. nvlink4, pcie5)")
    parser.add_argument("--gpus", type=int_arg("--gpus", 1), default=None, metavar="N",
                        help="GPUs in the model (default: the sweep's rank count)")
    parser.add_argument("--no-p2p", action="store_true", help="model without P2P: staged through host memory (PCIe)")
    parser.add_argument("--collective", default=None, choices=COLLECTIVES, metavar="NAME",
                        help="the collective, for results that do not say it (a partial log parsed without it)")
    parser.add_argument("--ranks", type=int_arg("--ranks", 2), default=None, metavar="N",
                        help="the sweep's rank count, for results that do not say it (default there: --gpus)")
    parser.add_argument("--max-rms", type=_fraction, default=DEFAULT_MAX_RMS, metavar="FRACTION",
                        help=f"split into two size regions when one fit's rms relative error is above this "
                             f"(default {DEFAULT_MAX_RMS})")
    parser.add_argument("--plot", default=None, metavar="FILE.html",
                        help="write the measured-vs-model plot as a standalone HTML file (plotly.js included)")
    parser.add_argument("--force", action="store_true", help="replace an existing --plot file (default: refuse it)")
    parser.set_defaults(func=run)


def _shape(rows: list[dict], meta: dict, args: argparse.Namespace, where: str) -> tuple[list[dict], list[str]]:
    """The rows with their collective and rank count, from the records or from --collective/--ranks/--gpus.

    A partial log parsed without them leaves ``None`` in the records; the flags fill that, and a flag that
    contradicts what the records say is refused. Returns the rows and the notes to print.
    """
    notes = []
    filled = {}
    for key, flag, value in (("collective", "--collective", args.collective), ("num_ranks", "--ranks", args.ranks)):
        said = {r.get(key) for r in rows} - {None}
        if value is not None and said and said != {value}:
            raise GpucommError(f"{flag} {value} contradicts results file {where}: its records say "
                               f"{', '.join(map(str, sorted(said, key=str)))}; expected {flag} only for results that "
                               "do not say it")
        if not said:
            if value is None and key == "num_ranks" and args.gpus is not None:
                value = args.gpus
                notes.append(f"# the results do not say how many ranks: --gpus {value} is taken as the sweep's "
                             "rank count too")
            if value is None:
                expected = (f"--collective NAME (one of {', '.join(meta.get('collective_candidates') or COLLECTIVES)})"
                            if key == "collective" else "--ranks N")
                raise GpucommError(f"results file {where} does not say "
                                   + ("which collective" if key == "collective" else "how many ranks")
                                   + " the sweep ran (a log without its command line or device list?): expected "
                                   + f"{expected}, or gpucomm parse {flag} when parsing it")
            filled[key] = value
    if filled:
        rows = [dict(r, **{k: v for k, v in filled.items() if r.get(k) is None}) for r in rows]
    return rows, notes


_NUMBER_FIELDS = (("msg_bytes", False), ("time_s", False), ("busbw_bytes_per_s", True))
"""The numbers a fit reads from every record, and whether zero is allowed (busbw is 0 on 1 rank)."""


def _is_number(value: object) -> bool:
    """A JSON number a float can hold: not a bool, a string, NaN, infinity, nor an integer past 1.8e308."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an integer of hundreds of digits
        return False


def _short(value: object) -> str:
    """``repr(value)``, cut to 40 characters: an error line names the value, not a thousand digits of it."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def _check_records(results, where: str) -> None:
    """Refuse, in one line naming the file's line, a record whose fields a fit cannot read.

    A results file is JSON a person may have edited or another tool written: a number given as a
    string (``"msg_bytes": "8"``), a negative time or a list where a count belongs would otherwise
    end in a traceback deep in the fit.
    """
    meta = results.meta
    candidates = meta.get("collective_candidates")
    if candidates is not None and not (isinstance(candidates, list) and all(isinstance(c, str) for c in candidates)):
        raise GpucommError(f"results file {where}: the metadata's collective_candidates {_short(candidates)} is not a list of "
                           "names: expected records written by gpucomm bench or gpucomm parse")
    lines = results.line_numbers or list(range(1, len(results) + 1))
    for line, record in zip(lines, results):
        at = f"results file {where} line {line}"
        missing = [key for key, _ in _NUMBER_FIELDS if key not in record]
        if missing:
            raise GpucommError(f"{at} has no {', '.join(missing)}: expected records written by gpucomm bench or "
                               "gpucomm parse")
        for key, zero_ok in _NUMBER_FIELDS:
            value = record[key]
            if not _is_number(value) or value < 0 or (value == 0 and not zero_ok):
                raise GpucommError(f"{at}: {key} {_short(value)} is not valid: expected a number "
                                   f"{'>= 0' if zero_ok else '> 0'}")
        for key, minimum in (("num_wrong", 0), ("num_ranks", 1)):
            value = record.get(key)
            if value is not None and not (isinstance(value, int) and _is_number(value) and value >= minimum):
                raise GpucommError(f"{at}: {key} {_short(value)} is not valid: expected an integer >= {minimum}, "
                                   "or null")
        collective = record.get("collective")
        if collective is not None and collective not in COLLECTIVES:
            raise GpucommError(f"{at}: collective {_short(collective)} is not known: expected one of {', '.join(COLLECTIVES)}, "
                               "or null")


def _ratio(value: float) -> str:
    """A busbw ratio with 3 significant digits, so a tiny one reads 0.00213, not 0.00."""
    return f"{value:.3g}"


def _caveats(meta: dict, num_ranks: int, model_gpus: int, link: str) -> list[str]:
    """Lines saying when the measurement and the catalog model describe different systems."""
    lines = []
    backend = meta.get("backend")
    if backend and backend != "nccl":
        lines.append(f"# caveat: measured with backend {backend} (CPU processes exchanging data through host memory "
                     f"and sockets), compared with NCCL over {link}: two different systems, so the ratio says how "
                     "far this setup is from that GPU system, not how well the model predicts this one")
    if num_ranks != model_gpus:
        lines.append(f"# caveat: the sweep ran on {num_ranks} ranks, the model on {model_gpus} GPUs: busbw is meant "
                     "to compare across rank counts, but the latency and NCCL's choice of algorithm change with them")
    return lines


def run(args: argparse.Namespace) -> int:
    """Run ``gpucomm fit``: print the fit (and the comparison, and write the plot); return 0.

    Raises
    ------
    GpucommError
        An unreadable results file, records that cannot be fitted, an unknown link, model flags
        without ``--link``, or a plot that cannot be written (printed by ``gpucomm``'s main, exit status 2).
    """
    from gpucomm.measure.logs.nccl_tests_results import primary_records
    from gpucomm.measure.results import read_results

    if args.plot is not None and not args.plot.lower().endswith((".html", ".htm")):
        # the plot is an interactive plotly page; a .png name would get HTML inside it
        raise GpucommError(f"--plot {args.plot!r} is written as a standalone HTML page: expected a file name ending in "
                           ".html (or .htm)")
    if (args.gpus or args.no_p2p) and not args.link:
        raise GpucommError("--gpus and --no-p2p describe the catalog model: expected --link too")
    if args.plot is not None:  # the rule of every verb, before any work: never the results file, never clobbered
        check_output_file(args.plot, flag="--plot", force=args.force, inputs=[args.results], example="fit.html")
    results = read_results(args.results)
    _check_records(results, repr(args.results))
    meta = results.meta
    rows = primary_records(meta, [r for r in results if r.get("record", "result") == "result"])
    if not rows:
        raise GpucommError(f"results file {args.results!r} holds no result records: expected a results file from "
                           "gpucomm bench --out or gpucomm parse --out")
    notes = []
    if len(rows) < len(results):
        placement = str(meta.get("placement") or "in_place").replace("_", "-")
        notes.append(f"# {placement} records: {len(rows)} of {len(results)} (one placement per fit: the others hold "
                     "the other of nccl-tests' two at their top level)")
    rows, shape_notes = _shape(rows, meta, args, repr(args.results))
    notes += shape_notes
    rows, wrong = split_wrong(rows)
    if wrong:
        sizes = ", ".join(format_size(r["msg_bytes"]) for r in wrong[:4]) + (", ..." if len(wrong) > 4 else "")
        if not rows:
            raise GpucommError(f"every record of results file {args.results!r} has wrong elements ({sizes}): a "
                               "collective that returned wrong data has no time to fit; expected a sweep that passed "
                               "its check")
        notes.append(f"# warning [wrong]: {len(wrong)} size(s) with wrong elements left out of the fit ({sizes}: "
                     f"{sum(r['num_wrong'] for r in wrong)} wrong in all): their times are not of a correct collective")
    report = fit_regions(rows, max_rms=args.max_rms)
    comparison = None
    if args.link:
        comparison = catalog_comparison(rows, link=args.link, num_gpus=args.gpus, p2p=not args.no_p2p)
    where = f", backend {meta['backend']}" if meta.get("backend") else ""
    print(f"# {report.collective} on {report.num_ranks} ranks{where}: {len(rows)} sizes from {args.results}")
    for note in notes:
        print(note)
    print("# model: t = alpha + f S / B with f = busbw factor; GB/s = 1e9 B/s")
    print(f"# single fit: alpha = {format_time(report.single.alpha_s)}, "
          f"B = {to_gb_per_s(report.single.busbw_bytes_per_s):.3g} GB/s, rms relative error "
          f"{report.single.rms_rel_error:.0%}")
    print(f"# {report.split_reason}")
    if len(report.regions) > 1:
        for i, region in enumerate(report.regions, 1):
            print(f"#   region {i}: {region}")
    header = f"#{'size':>11}{'time':>11}{'busbw':>9}{'fit':>9}"
    units = f"#{'(B)':>11}{'(us)':>11}{'(GB/s)':>9}{'(GB/s)':>9}"
    if comparison:
        n = args.gpus or report.num_ranks
        print(f"# catalog model: {args.link}, {n} GPUs" + (", no P2P" if args.no_p2p else "")
              + " (gpucomm.model.cost.collective_cost, algorithm auto); ratio = measured busbw / model busbw")
        for line in _caveats(meta, report.num_ranks, n, args.link):
            print(line)
        header += f"{'model':>9}{'ratio':>8}  algo/proto"
        units += f"{'(GB/s)':>9}{'':>8}"
    print(header)
    print(units)
    by_size = {c["msg_bytes"]: c for c in comparison or []}
    for r in rows:
        s = r["msg_bytes"]
        line = (f"{s:>12}{r['time_s'] * 1e6:>11.2f}{to_gb_per_s(r['busbw_bytes_per_s']):>9.3f}"
                f"{to_gb_per_s(report.busbw_at(s)):>9.3f}")
        if comparison:
            c = by_size[s]
            line += (f"{to_gb_per_s(c['model_busbw_bytes_per_s']):>9.3f}{_ratio(c['ratio']):>8}  "
                     f"{c['model_algorithm']}/{c['model_protocol']}")
        print(line)
    if comparison:
        big = comparison[-1]
        print(f"# at the largest size ({format_size(big['msg_bytes'])}): measured {to_gb_per_s(big['busbw_bytes_per_s']):.3g} "
              f"GB/s, model {to_gb_per_s(big['model_busbw_bytes_per_s']):.3g} GB/s, ratio {_ratio(big['ratio'])}")
    if args.plot is not None:
        try:
            label = f"catalog: {args.link}, {args.gpus or report.num_ranks} GPUs" if comparison else None
            from gpucomm.viz.figures.measured import fit_report_figure

            fig = fit_report_figure(rows, report, comparison=comparison, label=label)
            fig.write_html(args.plot, include_plotlyjs=True, full_html=True, auto_play=False)
        except (OSError, GpucommError) as exc:
            raise GpucommError(f"plot {args.plot!r} cannot be written: {exc}") from exc
        print(f"# plot: {args.plot}")
    return 0
