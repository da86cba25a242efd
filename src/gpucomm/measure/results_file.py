"""The results file: records in a list with their metadata, written one JSON line at a time and read back (no torch).

:class:`ResultsWriter` writes and syncs each record as soon as its measurement finishes, so an interrupted run keeps
every record it finished; :func:`read_results` reads any results file back. The record fields are described in
:mod:`gpucomm.measure.results`, which prints them as tables and re-exports every name here.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from gpucomm import GpucommError
from gpucomm.measure.output_paths import is_regular_file

__all__ = ["Results", "SweepResults", "ResultsWriter", "read_results"]


class Results(list):
    """A list of result records (dicts) with the run's metadata record in :attr:`meta`.

    Attributes
    ----------
    meta : dict
        The metadata record (empty if none was found).
    line_numbers : list of int
        For records read from a file (:func:`read_results`): the line of each record, from 1, so an
        error can name it; empty otherwise.
    """

    def __init__(self, records: Iterable[dict] = (), meta: dict | None = None, line_numbers: Iterable[int] = ()):
        super().__init__(records)
        self.meta = dict(meta or {})
        self.line_numbers = list(line_numbers)


class SweepResults(Results):
    """The per-size result records of a collective sweep, with the run's metadata in :attr:`meta`."""

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


class ResultsWriter:
    """Write records as JSON lines, each flushed and synced to disk before returning.

    A regular file is synced (``os.fsync``) after every record, so a crash or Ctrl-C keeps every
    record written; a FIFO, a pipe or a device (``--out /dev/stdout``) cannot be synced and is
    only flushed. A write that fails (disk full, a reader that left) raises one line, and the
    records written before it stay on disk.

    Parameters
    ----------
    path : str or Path
        The results file; created (with its missing folders: the Python API's rule, the ``gpucomm``
        verbs check :func:`gpucomm.measure.output_paths.check_output_file` first).
    replace : bool
        True (the default): an existing regular file is truncated. False: it is refused, as
        nccl-tests opens its ``-J`` file with ``"wx"``; a FIFO or a device is written either way.

    Raises
    ------
    GpucommError
        The file cannot be opened (or exists, with ``replace=False``).
    """

    def __init__(self, path: str | os.PathLike, *, replace: bool = True):
        self.path = Path(path)
        self.records_written = 0
        self._failed = False
        try:
            if self.path.parent and not self.path.parent.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            exclusive = not replace and (is_regular_file(self.path) or not self.path.exists())
            self._file: IO[str] | None = open(self.path, "x" if exclusive else "w", encoding="utf-8")
            self._sync = stat.S_ISREG(os.fstat(self._file.fileno()).st_mode)
        except FileExistsError:
            raise GpucommError(f"results file {str(self.path)!r} already exists: expected a new file name, or --force "
                               "to replace it") from None
        except OSError as exc:
            raise GpucommError(f"results file {str(self.path)!r} cannot be written: {exc.strerror or exc}") from None

    def write(self, record: dict) -> None:
        """Append one record and ``os.fsync`` it (a regular file), so a crash after this call keeps it.

        Raises
        ------
        GpucommError
            The write failed (disk full, a pipe whose reader left), or the writer is closed.
        """
        if self._file is None:
            raise GpucommError(f"results file {self.path} is already closed")
        # One write call per line: an interruption leaves whole lines, or at worst a
        # truncated last line, which read_results skips.
        line = json.dumps(record, sort_keys=False) + "\n"
        try:
            self._file.write(line)
            self._file.flush()
            if self._sync:
                os.fsync(self._file.fileno())
        except OSError as exc:
            self._failed = True
            kept = (f"; the {self.records_written} record{'s' if self.records_written != 1 else ''} written before are "
                    "in it" if self.records_written and self._sync else "")
            raise GpucommError(f"results file {str(self.path)!r} cannot be written: {exc.strerror or exc}{kept}") from None
        self.records_written += 1

    def close(self) -> None:
        """Close the file (idempotent); every record written is already on disk.

        After a failed write the unwritten rest is dropped quietly: that failure was already raised.
        """
        if self._file is None:
            return
        file, self._file = self._file, None
        try:
            file.close()
        except OSError as exc:
            if not self._failed:
                raise GpucommError(f"results file {str(self.path)!r} cannot be written: {exc.strerror or exc}") from None

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_results(path: str | os.PathLike) -> SweepResults:
    """Read a results file (also one cut short).

    Parameters
    ----------
    path : str or Path
        A JSON-lines file from ``gpucomm bench --out`` or ``run_sweep(out=...)``; also
        ``gpucomm copybw --out`` (:func:`gpucomm.measure.copy_bandwidth.read_copy_results`
        gives its records their methods) and ``run_tp_layer(out=...)``.

    Returns
    -------
    SweepResults
        Every record but the metadata, in file order, with the metadata record in ``.meta`` and
        each record's line number in ``.line_numbers``.

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
    numbers: list[int] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GpucommError(f"results file {str(path)!r} line {number} is not valid JSON: {exc.msg}") from None
        except RecursionError:  # brackets nested thousands deep
            raise GpucommError(f"results file {str(path)!r} line {number} is nested too deeply: expected one JSON "
                               "object of fields") from None
        if not isinstance(record, dict):
            raise GpucommError(f"results file {str(path)!r} line {number} is not a JSON object")
        if record.get("record") == "meta":
            meta = record
        else:
            records.append(record)
            numbers.append(number)
    return SweepResults(records, meta, numbers)
