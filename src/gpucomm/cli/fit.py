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

Examples
--------
>>> rows = [{"collective": "all_reduce", "num_ranks": 2, "msg_bytes": 8 * 4**k,
...          "time_s": 20e-6 + 8 * 4**k / 100e9} for k in range(12)]
>>> report = fit_regions(rows)
>>> len(report.regions), round(report.regions[0].fit.busbw_bytes_per_s / 1e9)
(1, 100)
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from gpucomm import GpucommError
from gpucomm.cli.common import int_arg
from gpucomm.model.fit import AlphaBetaFit, fit_alpha_beta
from gpucomm.model.units import format_size, format_time, to_gb_per_s

#: A single fit whose rms relative error is at or below this is kept as it is.
DEFAULT_MAX_RMS = 0.15
#: Fewest sizes in a region of a split fit.
MIN_REGION_POINTS = 3
#: A split is taken only if it cuts the rms relative error by at least this factor.
SPLIT_GAIN = 1.5


@dataclass(frozen=True)
class Region:
    """One size range and the alpha-beta fit of its points.

    Attributes
    ----------
    min_bytes, max_bytes : int
        Smallest and largest measured size in the region, bytes.
    fit : AlphaBetaFit
        ``alpha_s`` (seconds), ``busbw_bytes_per_s`` (bytes/s) and the fit quality.
    """

    min_bytes: int
    max_bytes: int
    fit: AlphaBetaFit

    def __str__(self) -> str:
        return (f"{format_size(self.min_bytes)} to {format_size(self.max_bytes)}: alpha = {format_time(self.fit.alpha_s)}, "
                f"B = {to_gb_per_s(self.fit.busbw_bytes_per_s):.3g} GB/s (rms relative error "
                f"{self.fit.rms_rel_error:.0%} over {self.fit.num_points} sizes)")


@dataclass(frozen=True)
class FitReport:
    """What :func:`fit_regions` found.

    Attributes
    ----------
    collective : str
    num_ranks : int
    single : AlphaBetaFit
        One fit over every size.
    regions : list of Region
        ``[Region(all sizes, single)]``, or two regions (small sizes, large sizes) when the
        single fit's rms relative error exceeds ``max_rms`` and a split improves it.
    split_reason : str
        Why the report has one region or two, in words.
    """

    collective: str
    num_ranks: int
    single: AlphaBetaFit
    regions: list[Region] = field(default_factory=list)
    split_reason: str = ""

    def region_for(self, msg_bytes: float) -> Region:
        """The region whose fit applies at ``msg_bytes`` (sizes between regions go to the nearer one)."""
        if len(self.regions) == 1 or msg_bytes <= self.regions[0].max_bytes:
            return self.regions[0]
        if msg_bytes >= self.regions[1].min_bytes:
            return self.regions[1]
        mid = math.sqrt(self.regions[0].max_bytes * self.regions[1].min_bytes)
        return self.regions[0] if msg_bytes < mid else self.regions[1]

    def time_s(self, msg_bytes: float) -> float:
        """Model time at ``msg_bytes`` from the region that covers it, seconds."""
        return self.region_for(msg_bytes).fit.time_s(msg_bytes)

    def busbw_at(self, msg_bytes: float) -> float:
        """Model busbw at ``msg_bytes`` from the region that covers it, bytes/s."""
        return self.region_for(msg_bytes).fit.busbw_at(msg_bytes)


def _result_rows(records: Iterable[dict]) -> tuple[list[dict], str, int]:
    rows = sorted((r for r in records if r.get("record", "result") == "result"), key=lambda r: r["msg_bytes"])
    if not rows:
        raise GpucommError("no result records to fit: expected a results file from gpucomm bench --out")
    kinds = {(r.get("collective"), r.get("num_ranks")) for r in rows}
    if len(kinds) != 1:
        raise GpucommError(f"records mix collectives or rank counts {sorted(kinds, key=str)}: expected one sweep")
    (collective, num_ranks), = kinds
    return rows, collective, num_ranks


def _fit(rows: list[dict], collective: str, num_ranks: int) -> AlphaBetaFit:
    return fit_alpha_beta([r["msg_bytes"] for r in rows], [r["time_s"] for r in rows],
                          collective=collective, num_ranks=num_ranks)


def _sum_sq(fit: AlphaBetaFit) -> float:
    return fit.rms_rel_error ** 2 * fit.num_points


def fit_regions(records: Iterable[dict], *, max_rms: float = DEFAULT_MAX_RMS,
                min_points: int = MIN_REGION_POINTS) -> FitReport:
    """Fit alpha and beta to one sweep; split it in two size regions if a single fit is poor.

    Parameters
    ----------
    records : iterable of dict
        Result records of one sweep (``collective``, ``num_ranks``, ``msg_bytes``, ``time_s``);
        metadata records are skipped.
    max_rms : float
        A single fit with rms relative error at or below this is kept (default 0.15).
    min_points : int
        Fewest sizes in each region of a split (default 3).

    Returns
    -------
    FitReport
        The single fit and one or two :class:`Region` fits.

    Raises
    ------
    GpucommError
        No records, records of several sweeps, or sizes that cannot be fitted at all.

    Notes
    -----
    The split is the best of all splits between consecutive sizes, each side keeping at least
    ``min_points`` sizes, that both sides can fit: the one with the least total squared
    relative residual. It is kept if it cuts the rms relative error by a factor of at least
    :data:`SPLIT_GAIN` (else one region). Searching every split finds the change of regime
    without guessing where NCCL's protocol switch or the CPU's cache edge lies; the point
    where the single fit's residuals change sign is usually near it.
    """
    rows, collective, num_ranks = _result_rows(records)
    single = _fit(rows, collective, num_ranks)
    whole = [Region(rows[0]["msg_bytes"], rows[-1]["msg_bytes"], single)]
    if single.rms_rel_error <= max_rms:
        return FitReport(collective, num_ranks, single, whole,
                         f"one region: rms relative error {single.rms_rel_error:.0%} <= {max_rms:.0%}")
    best = None
    for k in range(min_points, len(rows) - min_points + 1):
        try:
            low, high = _fit(rows[:k], collective, num_ranks), _fit(rows[k:], collective, num_ranks)
        except GpucommError:  # a side whose times do not grow with size: no bandwidth to fit there
            continue
        score = _sum_sq(low) + _sum_sq(high)
        if best is None or score < best[0]:
            best = (score, k, low, high)
    if best is None:
        return FitReport(collective, num_ranks, single, whole,
                         f"one region: rms relative error {single.rms_rel_error:.0%} > {max_rms:.0%}, but no split "
                         f"into two regions of >= {min_points} sizes could be fitted")
    score, k, low, high = best
    split_rms = math.sqrt(score / len(rows))
    if split_rms * SPLIT_GAIN > single.rms_rel_error:
        return FitReport(collective, num_ranks, single, whole,
                         f"one region: rms relative error {single.rms_rel_error:.0%} > {max_rms:.0%}, and the best "
                         f"split only reaches {split_rms:.0%}")
    regions = [Region(rows[0]["msg_bytes"], rows[k - 1]["msg_bytes"], low),
               Region(rows[k]["msg_bytes"], rows[-1]["msg_bytes"], high)]
    return FitReport(collective, num_ranks, single, regions,
                     f"two regions split between {format_size(rows[k - 1]['msg_bytes'])} and "
                     f"{format_size(rows[k]['msg_bytes'])}: rms relative error {single.rms_rel_error:.0%} -> "
                     f"{split_rms:.0%}")


def catalog_comparison(records: Iterable[dict], *, link: str, num_gpus: int | None = None, p2p: bool = True,
                       algorithm: str = "auto") -> list[dict]:
    """Measured busbw against the catalog model at every measured size.

    Parameters
    ----------
    records : iterable of dict
        Result records of one sweep.
    link : str
        Catalog link key (``nvlink4``, ``pcie5``...), see :func:`gpucomm.model.hardware.link_keys`.
    num_gpus : int or None
        GPUs in the model (default: the sweep's rank count). busbw is designed to be comparable
        across rank counts, so a 2-rank sweep can be held against an 8-GPU model, with care.
    p2p : bool
        False: the model stages traffic through host memory (PCIe links only).
    algorithm : str
        Passed to :func:`gpucomm.model.cost.collective_cost` (default ``auto``, as NCCL's tuner).

    Returns
    -------
    list of dict
        Per size: ``msg_bytes``, ``time_s``, ``busbw_bytes_per_s`` (measured),
        ``model_time_s``, ``model_busbw_bytes_per_s``, ``model_algorithm``, ``model_protocol``
        and ``ratio`` = measured busbw / model busbw.

    Raises
    ------
    GpucommError
        Unknown link or algorithm, or a collective/size the model does not cover.
    """
    from gpucomm.model.cost import collective_cost

    rows, collective, num_ranks = _result_rows(records)
    n = num_ranks if num_gpus is None else num_gpus
    out = []
    for r in rows:
        cost = collective_cost(collective, r["msg_bytes"], num_ranks=n, link=link, p2p=p2p, algorithm=algorithm)
        model_busbw = cost.busbw_bytes_per_s
        out.append({"msg_bytes": r["msg_bytes"], "time_s": r["time_s"], "busbw_bytes_per_s": r["busbw_bytes_per_s"],
                    "model_time_s": cost.time_s, "model_busbw_bytes_per_s": model_busbw,
                    "model_algorithm": cost.algorithm, "model_protocol": cost.protocol,
                    "ratio": r["busbw_bytes_per_s"] / model_busbw if model_busbw > 0 else math.nan})
    return out


def fit_figure(records, report: FitReport, *, comparison: list[dict] | None = None, label: str | None = None):
    """The measured-vs-model figure: measured busbw, the region fits, and the catalog model if given."""
    from gpucomm.viz.figures.measured import measured_vs_model_figure

    rows, _, _ = _result_rows(records)
    curves = {}
    if len(report.regions) == 1:
        fit = report.regions[0].fit
    else:
        fit = None
        for region in report.regions:
            sizes = [r["msg_bytes"] for r in rows if region.min_bytes <= r["msg_bytes"] <= region.max_bytes]
            grid = _log_grid(sizes[0], sizes[-1])
            name = (f"fit {format_size(region.min_bytes)}-{format_size(region.max_bytes)}: alpha = "
                    f"{format_time(region.fit.alpha_s)}, B = {to_gb_per_s(region.fit.busbw_bytes_per_s):.3g} GB/s")
            curves[name] = (grid, [region.fit.busbw_at(s) for s in grid])
    if comparison:
        curves[label or "catalog model"] = ([c["msg_bytes"] for c in comparison],
                                            [c["model_busbw_bytes_per_s"] for c in comparison])
    return measured_vs_model_figure(records, curves, fit=fit)


def _log_grid(lo: float, hi: float, points: int = 60) -> list[float]:
    if hi <= lo:
        return [lo]
    a, b = math.log(lo), math.log(hi)
    return [math.exp(a + (b - a) * i / (points - 1)) for i in range(points)]


# --- the fit command ------------------------------------------------------------------------

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
            fig = fit_figure(results, report, comparison=comparison, label=label)
            fig.write_html(args.plot, include_plotlyjs=True, full_html=True, auto_play=False)
        except (OSError, GpucommError) as exc:
            raise GpucommError(f"plot {args.plot!r} cannot be written: {exc}") from exc
        print(f"# plot: {args.plot}")
    return 0


__all__ = ["Region", "FitReport", "fit_regions", "catalog_comparison", "fit_figure", "register", "run"]
