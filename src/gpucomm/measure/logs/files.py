"""Read a log file (or standard input) as text, refusing what cannot be a log: one reader for every log verb.

``gpucomm parse`` (nccl-tests output, :mod:`gpucomm.measure.logs.nccl_tests`) and ``gpucomm diagnose``
(NCCL_DEBUG=INFO output, :mod:`gpucomm.measure.logs.nccl_info`) read their input through
:func:`read_log_text`, so a missing file, a directory, a binary or a huge file gives the same one-line
error everywhere. Standard library only.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpucomm import GpucommError

__all__ = ["MAX_LOG_BYTES", "read_log_text"]

MAX_LOG_BYTES = 64 * 2**20
"""Larger inputs are refused: an nccl-tests or NCCL INFO log is kilobytes to megabytes; 64 MiB is a wrong file."""


def read_log_text(path: str, expected: str = "the text output of an nccl-tests binary such as all_reduce_perf") -> str:
    """The text of ``path`` (``-``: standard input), undecodable bytes replaced.

    Parameters
    ----------
    path : str
        A file name, or ``-`` for standard input.
    expected : str
        What the caller reads, ending the error messages (``gpucomm diagnose`` passes its own).

    Returns
    -------
    str
        The text, decoded as UTF-8 with undecodable bytes replaced by U+FFFD.

    Raises
    ------
    GpucommError
        One line: the file is missing, a directory, unreadable, larger than
        :data:`MAX_LOG_BYTES`, gzip-compressed (with the command that decompresses it), or binary (NUL bytes;
        with a hint for UTF-16 without a byte-order mark). UTF-16 with its byte-order mark is decoded.
    """
    if path == "-":
        data = sys.stdin.buffer.read(MAX_LOG_BYTES + 1) if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        where = "standard input"
    else:
        try:
            with Path(path).open("rb") as f:
                data = f.read(MAX_LOG_BYTES + 1)
        except OSError as exc:
            raise GpucommError(f"cannot read log {path!r}: {exc.strerror or type(exc).__name__}") from None
        where = repr(path)
    if len(data) > MAX_LOG_BYTES:
        raise GpucommError(f"log {where} is larger than {MAX_LOG_BYTES // 2**20} MiB: expected {expected}")
    text = _utf16_text(data)
    if text is not None:
        return text
    if data[:2] == b"\x1f\x8b":  # gzip's magic number (RFC 1952, section 2.3.1)
        name = "log.gz" if path == "-" else path
        raise GpucommError(f"log {where} is gzip-compressed: decompress it first (zcat {name} | gpucomm ... -); "
                           f"expected {expected}")
    if b"\x00" in data:
        hint = ("; UTF-16 text without a byte-order mark? convert it with iconv -f UTF-16 -t UTF-8"
                if _looks_like_utf16(data) else "")
        raise GpucommError(f"log {where} is binary (it contains NUL bytes{hint}): expected {expected}")
    return data.decode("utf-8", errors="replace")


def _looks_like_utf16(data: bytes) -> bool:
    """Whether ``data`` reads as ASCII text in UTF-16 without a byte-order mark: every other byte NUL (an ELF or
    other binary file does not look like that, and gets no UTF-16 hint)."""
    head = data[:4096]
    for offset in (0, 1):  # big-endian: the NUL first; little-endian: second
        nuls, chars = head[offset::2], head[1 - offset::2]
        if len(chars) >= 8 and nuls.count(0) >= 0.95 * len(nuls) and all(32 <= c < 127 or c in b"\t\r\n" for c in chars):
            return True
    return False


def _utf16_text(data: bytes) -> str | None:
    """The text of UTF-16 data that starts with its byte-order mark (PowerShell's ``>`` writes such files), else None."""
    if data[:2] not in (b"\xff\xfe", b"\xfe\xff"):
        return None
    return data.decode("utf-16", errors="replace")
