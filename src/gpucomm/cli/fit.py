"""``gpucomm fit RESULTS``: fit alpha and beta to a saved sweep, per size region if one line does not fit.

Reads a JSON-lines results file from ``gpucomm bench --out`` (or ``run_sweep(out=...)``), fits
the alpha-beta model ``t = alpha + f S / B`` (:func:`gpucomm.model.fit.fit_alpha_beta`), and, when
that single fit is poor, fits the small and the large sizes separately: NCCL switches protocol
(LL for small messages, Simple for large ones) and a CPU falls out of its caches, so one
``(alpha, B)`` pair often cannot follow a whole sweep. Optionally compares every size with the
catalog model (:func:`gpucomm.model.cost.collective_cost`: ``--link nvlink4 --gpus 8``) and writes
a measured-vs-model plot as a standalone HTML file.

No torch here, so a results file copied off a GPU node can be fitted anywhere; plotly is
imported only for ``--plot``.

The computation is :func:`gpucomm.model.fit.fit_regions` and
:func:`gpucomm.model.fit.catalog_comparison`, the plot
:func:`gpucomm.viz.figures.measured.fit_report_figure`; this module reads the flags and prints.
"""

from __future__ import annotations

import argparse
import math

from gpucomm import GpucommError
from gpucomm.cli.common import int_arg
from gpucomm.model.fit import DEFAULT_MAX_RMS, catalog_comparison, fit_regions
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
    parser.add_argument("--max-rms", type=_fraction, default=DEFAULT_MAX_RMS, metavar="FRACTION",
                        help=f"split into two size regions when one fit's rms relative error is above this "
                             f"(default {DEFAULT_MAX_RMS})")
    parser.add_argument("--plot", default=None, metavar="FILE.html",
                        help="write the measured-vs-model plot as a standalone HTML file (plotly.js included)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``gpucomm fit``: print the fit (and the comparison, and write the plot); return 0.

    Raises
    ------
    GpucommError
        An unreadable results file, records that cannot be fitted, an unknown link, model flags
        without ``--link``, or a plot that cannot be written (printed by ``gpucomm``'s main, exit status 2).
    """
    from gpucomm.measure.results import read_results

    if args.plot is not None and not args.plot.lower().endswith((".html", ".htm")):
        # the plot is an interactive plotly page; a .png name would get HTML inside it
        raise GpucommError(f"--plot {args.plot!r} is written as a standalone HTML page: expected a file name ending in "
                           ".html (or .htm)")
    results = read_results(args.results)
    for number, record in enumerate(results, start=1):
        missing = [key for key in ("msg_bytes", "time_s") if key not in record]
        if missing:
            raise GpucommError(f"results file {args.results!r} record {number} has no {', '.join(missing)}: "
                               "expected records written by gpucomm bench or gpucomm parse")
    report = fit_regions(results, max_rms=args.max_rms)
    comparison = None
    if args.link:
        comparison = catalog_comparison(results, link=args.link, num_gpus=args.gpus, p2p=not args.no_p2p)
    elif args.gpus or args.no_p2p:
        raise GpucommError("--gpus and --no-p2p describe the catalog model: expected --link too")
    meta = results.meta
    where = f", backend {meta['backend']}" if meta.get("backend") else ""
    print(f"# {report.collective} on {report.num_ranks} ranks{where}: {len(results)} sizes from {args.results}")
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
        header += f"{'model':>9}{'ratio':>7}  algo/proto"
        units += f"{'(GB/s)':>9}{'':>7}"
    print(header)
    print(units)
    by_size = {c["msg_bytes"]: c for c in comparison or []}
    for r in sorted(results, key=lambda r: r["msg_bytes"]):
        s = r["msg_bytes"]
        line = (f"{s:>12}{r['time_s'] * 1e6:>11.2f}{to_gb_per_s(r['busbw_bytes_per_s']):>9.3f}"
                f"{to_gb_per_s(report.busbw_at(s)):>9.3f}")
        if comparison:
            c = by_size[s]
            line += (f"{to_gb_per_s(c['model_busbw_bytes_per_s']):>9.3f}{c['ratio']:>7.2f}  "
                     f"{c['model_algorithm']}/{c['model_protocol']}")
        print(line)
    if comparison:
        big = comparison[-1]
        print(f"# at the largest size ({format_size(big['msg_bytes'])}): measured {to_gb_per_s(big['busbw_bytes_per_s']):.3g} "
              f"GB/s, model {to_gb_per_s(big['model_busbw_bytes_per_s']):.3g} GB/s, ratio {big['ratio']:.2f}")
    if args.plot is not None:
        try:
            label = f"catalog: {args.link}, {args.gpus or report.num_ranks} GPUs" if comparison else None
            from gpucomm.viz.figures.measured import fit_report_figure

            fig = fit_report_figure(results, report, comparison=comparison, label=label)
            fig.write_html(args.plot, include_plotlyjs=True, full_html=True, auto_play=False)
        except (OSError, GpucommError) as exc:
            raise GpucommError(f"plot {args.plot!r} cannot be written: {exc}") from exc
        print(f"# plot: {args.plot}")
    return 0

