"""Sweep results: the nccl-tests-like text table and the JSON-lines results file (no torch).

The results file holds one JSON object per line. The first is the metadata record
(``"record": "meta"``: host, devices, world size, backend, versions, ``NCCL_*`` variables,
date, command line); then one ``"record": "result"`` per message size, written and synced
to disk (``os.fsync``) as soon as that size finishes, so an interrupted sweep keeps every
size it finished.

Result record fields (SI units, the unit in the name)::

    collective, msg_bytes, count, dtype, op, num_ranks, iters, warmup_iters,
    time_s            time of one operation, the maximum over ranks
    algbw_bytes_per_s msg_bytes / time_s
    busbw_bytes_per_s algbw * busbw_factor(collective, num_ranks)
    num_wrong         wrong elements summed over ranks (None when the check is off)

References
----------
nccl-tests ``doc/PERFORMANCE.md`` (v2.19.6) for algbw and busbw; the table layout copies the
output of nccl-tests' ``all_reduce_perf``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import IO, Iterable

from gpucomm import GpucommError
from gpucomm.model.units import format_size, to_gb_per_s

SCHEMA_VERSION = 1

_COLS = [  # (title, unit, width)
    ("size", "(B)", 12), ("count", "(elements)", 13), ("type", "", 9), ("redop", "", 6),
    ("time", "(us)", 10), ("algbw", "(GB/s)", 8), ("busbw", "(GB/s)", 8), ("#wrong", "", 7),
]


class SweepResults(list):
    """A list of per-size result records (dicts), with the run's metadata in :attr:`meta`.

    Attributes
    ----------
    meta : dict
        The metadata record (empty if none was found).
    """

    def __init__(self, records: Iterable[dict] = (), meta: dict | None = None):
        super().__init__(records)
        self.meta = dict(meta or {})

    @property
    def num_wrong(self) -> int:
        """Wrong elements over all sizes (sizes run without the check count 0)."""
        return sum(r.get("num_wrong") or 0 for r in self)

    @property
    def ok(self) -> bool:
        """True when every checked size has zero wrong elements."""
        return self.num_wrong == 0

    def __repr__(self) -> str:
        return f"SweepResults({len(self)} sizes, num_wrong={self.num_wrong}, meta keys={sorted(self.meta)})"


def _fmt_time_us(time_s: float) -> str:
    us = time_s * 1e6
    if us < 1e4:
        return f"{us:.2f}"
    if us < 1e6:
        return f"{us:.1f}"
    return f"{us:.0f}"


def format_header(meta: dict) -> str:
    """The comment lines and column titles printed before the first row."""
    m = meta.get
    lines = [
        f"# gpucomm.measure {m('collective', '?')}: {m('num_ranks', '?')} ranks, backend {m('backend', '?')}, "
        f"{m('dtype', '?')} {m('op', '?')}, {format_size(m('min_bytes', 0))} to {format_size(m('max_bytes', 0))} "
        f"step x{m('step_factor', '?')}, iters {m('iters', '?')}"
        + (f" x {m('blocks')} blocks" if m("blocks", 1) > 1 else "") + ", "
        f"warm-up {m('warmup_iters', '?')}, check {int(bool(m('check', 0)))}",
    ]
    if meta.get("backend_note"):
        lines.append(f"# {meta['backend_note']}")
    for rank, (host, device) in enumerate(zip(meta.get("rank_hosts", []), meta.get("devices", []))):
        lines.append(f"#  rank {rank:3d} on {host}: {device}")
    if meta.get("timing_note"):
        lines.append(f"# {meta['timing_note']}")
    median = ", median of blocks" if m("blocks", 1) > 1 else ""
    lines.append(f"# time: one operation, the maximum over ranks{median}; GB/s = 1e9 B/s; "
                 f"busbw = algbw * {m('busbw_factor', '?')} (nccl-tests doc/PERFORMANCE.md)")
    lines.append("#" + "".join(f"{t:>{w}}" for t, _, w in _COLS)[1:])
    lines.append("#" + "".join(f"{u:>{w}}" for _, u, w in _COLS)[1:])
    return "\n".join(lines)


def format_row(record: dict) -> str:
    """One table row for a result record; a row with wrong elements ends in ``WRONG``."""
    wrong = record.get("num_wrong")
    cells = [
        str(record["msg_bytes"]), str(record["count"]), record["dtype"], record["op"],
        _fmt_time_us(record["time_s"]), f"{to_gb_per_s(record['algbw_bytes_per_s']):.2f}",
        f"{to_gb_per_s(record['busbw_bytes_per_s']):.2f}", "N/A" if wrong is None else str(wrong),
    ]
    row = "".join(f"{c:>{w}}" for c, (_, _, w) in zip(cells, _COLS))
    return row + ("  WRONG" if wrong else "")


def format_footer(records: list[dict]) -> str:
    """Summary lines after the last row: wrong elements and the average busbw (as nccl-tests)."""
    checked = [r for r in records if r.get("num_wrong") is not None]
    wrong = sum(r["num_wrong"] for r in checked)
    status = "N/A (check off)" if not checked else ("OK" if wrong == 0 else "FAILED")
    avg = sum(r["busbw_bytes_per_s"] for r in records) / len(records) if records else 0.0
    return (f"# Wrong elements     : {wrong} {status}\n"
            f"# Avg bus bandwidth  : {to_gb_per_s(avg):.4g} GB/s over {len(records)} sizes")


def format_table(results: SweepResults | list[dict], meta: dict | None = None) -> str:
    """The whole table (header, rows, footer) as printed during a sweep."""
    meta = meta if meta is not None else getattr(results, "meta", {})
    return "\n".join([format_header(meta)] + [format_row(r) for r in results] + [format_footer(list(results))])


class TableReporter:
    """Print the table as a sweep runs: header, one row per finished size, footer.

    Rows go to ``stream`` (default: ``sys.stdout`` when created); an optional tqdm
    progress bar goes to stderr and never into the table.

    Parameters
    ----------
    stream : file or None
        Where the table goes; None for ``sys.stdout``.
    progress : bool or None
        Show a progress bar on stderr: True, False, or None for "when stderr is a terminal".
    """

    def __init__(self, *, stream: IO[str] | None = None, progress: bool | None = None):
        self.stream = stream if stream is not None else sys.stdout
        self.progress = progress
        self._bar = None

    def _print(self, text: str) -> None:
        if self._bar is not None:
            self._bar.write(text, file=self.stream)  # clears and redraws the bar around the line
        else:
            print(text, file=self.stream)
        self.stream.flush()

    def start(self, meta: dict, total: int) -> None:
        """Print the header; open the progress bar for ``total`` sizes."""
        self._print(format_header(meta))
        if self.progress is not False:
            try:
                from tqdm import tqdm  # text bar on stderr (tqdm.auto would put a widget in notebooks)
            except ImportError:  # tqdm is optional: no bar
                return
            # disable=None: tqdm shows the bar only if stderr is a terminal.
            self._bar = tqdm(total=total, unit="size", file=sys.stderr, leave=False,
                             disable=None if self.progress is None else False, desc="sweep")

    def row(self, record: dict) -> None:
        """Print one finished size."""
        self._print(format_row(record))
        if self._bar is not None:
            self._bar.update(1)

    def finish(self, results: list[dict], out: str | os.PathLike | None = None) -> None:
        """Print the footer (and where the results file is)."""
        self.close()
        self._print(format_footer(list(results)) + (f"\n# Results file       : {out}" if out else ""))

    def close(self) -> None:
        """Close the progress bar (idempotent)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class ResultsWriter:
    """Write records as JSON lines, each flushed and synced to disk before returning.

    Parameters
    ----------
    path : str or Path
        The results file; created (with its folder), or truncated if it exists.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        try:
            if self.path.parent and not self.path.parent.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file: IO[str] | None = open(self.path, "w", encoding="utf-8")
        except OSError as exc:
            raise GpucommError(f"results file {str(self.path)!r} cannot be written: {exc.strerror}") from None

    def write(self, record: dict) -> None:
        """Append one record and ``os.fsync`` it, so a crash after this call keeps it."""
        if self._file is None:
            raise GpucommError(f"results file {self.path} is already closed")
        # One write call per line: an interruption leaves whole lines, or at worst a
        # truncated last line, which read_results skips.
        self._file.write(json.dumps(record, sort_keys=False) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "ResultsWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_results(path: str | os.PathLike) -> SweepResults:
    """Read a results file written by a sweep (also one cut short).

    Parameters
    ----------
    path : str or Path
        A JSON-lines file from ``gpucomm bench --out`` or ``run_sweep(out=...)``.

    Returns
    -------
    SweepResults
        The result records in file order, with the metadata record in ``.meta``.

    Raises
    ------
    GpucommError
        If the file is missing or a complete line is not a JSON object. A last line
        without its newline (a write cut by a kill) is skipped.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise GpucommError(f"results file {str(path)!r} cannot be read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise GpucommError(f"results file {str(path)!r} is not text: expected JSON lines written by gpucomm bench "
                           "or gpucomm parse") from None
    lines = text.split("\n")
    if lines and lines[-1] != "":
        lines = lines[:-1]  # truncated by an interruption mid-write
    meta: dict = {}
    records: list[dict] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GpucommError(f"results file {str(path)!r} line {number} is not valid JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise GpucommError(f"results file {str(path)!r} line {number} is not a JSON object")
        if record.get("record") == "meta":
            meta = record
        else:
            records.append(record)
    return SweepResults(records, meta)
