"""``gpucomm doctor``: is this node healthy? One command, a terminal summary, an offline HTML report and JSON.

Runs :func:`gpucomm.measure.doctor.run_doctor`: inventory (GPUs, driver, CUDA, NCCL, torch),
topology (``nvidia-smi topo -m``), PCIe links and NVLinks (NVML), NVLS and Fabric Manager, the P2P
access matrix, IOMMU and ACS, GPUDirect RDMA, copy bandwidth, a short all_reduce sweep with NCCL's
INFO log read back, and the sweep against the model's band for this machine. Each check ends
``ok``, ``below`` expected, a known ``pathology`` with its fix, or ``skipped`` with the reason.
Without GPUs it runs the CPU parts (host copies, a gloo sweep) and lists what it skipped.

Writes ``report.json`` and ``report.html`` (one self-contained page, plotly.js inlined once, no
network) into ``--out-dir``, with the measurements' results files and NCCL's debug logs. The
folder's parent must exist, the folder must be writable, and a folder holding an earlier report
is refused unless ``--force`` (the rule of every verb, :mod:`gpucomm.measure.output_paths`);
all checked before any work.

Exit status: 0 when every check is ok or skipped; 1 when one is below expected or a pathology;
2 on bad input (the output folder) or without torch; 130 on Ctrl-C, after writing the report of
the steps that finished. Importing this module imports neither torch nor plotly.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from gpucomm.cli.common import print_error, print_json, print_table, require_torch
from gpucomm.measure.doctor import DoctorReport, run_doctor
from gpucomm.measure.output_paths import check_output_folder

__all__ = ["register", "run", "check_out_dir", "write_report", "summary_rows"]

DESCRIPTION = """Check this node: GPUs, driver, CUDA/NCCL/torch versions, topology, PCIe and NVLink state (NVML),
NVLS/Fabric Manager, P2P access, IOMMU and ACS, GPUDirect RDMA, copy bandwidth, a short all_reduce
sweep with NCCL's INFO log read back, and the sweep against the model. Every check ends ok, below
expected, a known pathology with its fix, or skipped (with why). Without GPUs the CPU parts run."""
EPILOG = """examples:
  gpucomm doctor                                   report into ./gpucomm-doctor/
  gpucomm doctor --out-dir /tmp/node7 --quick      smaller copies and sweep
  gpucomm doctor --no-sweep --json                 no sweep; the report as one JSON line on stdout
  gpucomm doctor --force                           run again, replacing the report in ./gpucomm-doctor/

exit status: 0 all ok (or skipped), 1 something below expected or a pathology, 2 bad input, 130 Ctrl-C"""

DEFAULT_OUT_DIR = "gpucomm-doctor"


def register(subparsers) -> None:
    """Add the ``doctor`` parser to ``subparsers``; its ``func`` is :func:`run`."""
    parser = subparsers.add_parser("doctor", help="check this node: topology, links, P2P, copies, a sweep vs the model "
                                                  "(needs torch)",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", default=DEFAULT_OUT_DIR, metavar="DIR",
                        help=f"folder for report.html, report.json and the raw results (default ./{DEFAULT_OUT_DIR}; "
                             "created if missing, its parent must exist; an earlier report there needs --force)")
    parser.add_argument("--force", action="store_true",
                        help="replace the report of an earlier run in --out-dir (default: refuse that folder)")
    parser.add_argument("--quick", action="store_true", help="smaller copies and a shorter sweep")
    parser.add_argument("--no-sweep", action="store_true", help="skip the all_reduce sweep (and so NCCL's log)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON line instead of the summary")
    parser.set_defaults(func=run)


REPORT_FILES = ("report.json", "report.html", "copy.jsonl", "sweep.jsonl")
"""The files ``gpucomm doctor`` writes into ``--out-dir`` (:func:`write_report`, and the measurements'
results files of :func:`gpucomm.measure.doctor.run_doctor`), with NCCL's logs :data:`REPORT_PATTERNS`."""

REPORT_PATTERNS = ("nccl_debug.*.log",)
"""NCCL's debug logs of the sweep in ``--out-dir`` (``NCCL_DEBUG_FILE``), which a new run replaces."""


def check_out_dir(path: str, force: bool = False) -> Path:
    """The output folder, created if missing, after checking that it can hold the report.

    The rule of every verb (:func:`gpucomm.measure.output_paths.check_output_folder`): not empty
    (``--out-dir ''`` would write into the current folder), its parent folder must exist, and
    the report of an earlier run in it is replaced only with ``--force``.

    Parameters
    ----------
    path : str
        ``--out-dir``.
    force : bool
        ``--force``: replace the files of an earlier report in the folder.

    Returns
    -------
    Path
        The folder (absolute).

    Raises
    ------
    GpucommError
        Empty, the parent folder does not exist, the path is a file, nothing can be written there,
        or it holds an earlier report without ``force``.
    """
    return check_output_folder(path, flag="--out-dir", force=force, names=REPORT_FILES, patterns=REPORT_PATTERNS)


def write_report(report: DoctorReport, out_dir: Path) -> dict:
    """Write ``report.json`` and ``report.html`` into ``out_dir``; return the report's data.

    The JSON is written first, so that a failure while drawing still leaves the data.
    """
    from gpucomm.viz.figures.doctor import doctor_report_html

    data = report.write_json(out_dir / "report.json")
    (out_dir / "report.html").write_text(doctor_report_html(data), encoding="utf-8")
    return data


_STATUS_STYLE = {"ok": "[green]ok[/]", "below": "[yellow]below[/]", "pathology": "[bold red]pathology[/]",
                 "skipped": "[dim]skipped[/]"}


def summary_rows(report: DoctorReport) -> list[tuple[str, str, str, str]]:
    """(status, check, measured, expected) of every check that ran, in display order (rich markup in status)."""
    from rich.markup import escape

    return [(_STATUS_STYLE[c.status], escape(c.name), escape(c.measured), escape(c.expected))
            for c in report.ordered() if c.status != "skipped"]


def _print_summary(report: DoctorReport, out_dir: Path) -> None:
    from rich.markup import escape

    width = max(80, shutil.get_terminal_size((120, 24)).columns)
    counts = report.as_dict()["counts"]
    where = "CUDA GPUs" if report.mode == "gpu" else "no CUDA GPU: CPU parts only"
    title = (f"gpucomm doctor on {report.host} ({where}): {report.status} - " +
             ", ".join(f"{counts[s]} {s}" for s in ("ok", "below", "pathology", "skipped")))
    print_table(escape(title), ("status", "check", "measured", "expected"), summary_rows(report), width=width)
    problems = [c for c in report.ordered() if c.status in ("below", "pathology")]
    if problems:
        print("what to fix")
        for c in problems:
            print(f"  [{c.status}] {c.name}: {c.fix}" + (f" (source: {c.source})" if c.source else ""))
    skipped = report.skipped()
    if skipped:
        print("not run here")
        for c in skipped:
            print(f"  {c.name}: {c.measured}")
    print(f"report: {out_dir / 'report.html'} and {out_dir / 'report.json'}")


class _Progress:
    """Progress on stderr: one line rewritten in place at a terminal, else one line per step."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc) -> None:
        if self.tty:
            self.stream.write("\r\033[K")  # clear the line: the summary follows
            self.stream.flush()

    def __call__(self, step: int, total: int, title: str) -> None:
        text = f"gpucomm doctor: [{step}/{total}] {title}"
        self.stream.write(f"\r\033[K{text}" if self.tty else text + "\n")
        self.stream.flush()


def run(args: argparse.Namespace) -> int:
    """Check the output folder, run the doctor, write the report and print the summary (or ``--json``).

    Returns
    -------
    int
        0 all checks ok or skipped, 1 a check below expected or a pathology, 130 on Ctrl-C (the
        finished checks are written).

    Raises
    ------
    GpucommError
        A missing parent folder, a file, or an unwritable path for ``--out-dir``; no torch.
    """
    out_dir = check_out_dir(args.out_dir, force=args.force)  # before any work
    require_torch("gpucomm doctor")
    report = DoctorReport()
    try:
        with _Progress() as progress:
            run_doctor(report, out_dir=out_dir, quick=args.quick, sweep=not args.no_sweep, progress=progress)
    except KeyboardInterrupt:
        report.interrupted = True
        write_report(report, out_dir)
        return print_error("doctor", f"interrupted after {report.steps_done} of {report.steps_total} steps; the "
                                     f"finished checks are in {out_dir / 'report.html'}", status=130)
    data = write_report(report, out_dir)
    if args.json:
        print_json(data)
    else:
        _print_summary(report, out_dir)
    return 0 if report.status == "ok" else 1
