"""Sizes and rates: parse human input, format for people.

Inside the package every quantity is a plain number in SI base units (bytes,
seconds, bytes/s). Conversion happens only at the edges, with the helpers here.
Rates are decimal (1 GB/s = 1e9 B/s); sizes shown to people are binary (KiB, MiB, GiB).
"""

from __future__ import annotations

import math
import re

from gpucomm import GpucommError

KiB = 1024
MiB = 1024**2
GiB = 1024**3
KB = 1000
MB = 1000**2
GB = 1000**3

_SIZE_UNITS = {
    "": 1, "B": 1,
    "KIB": KiB, "MIB": MiB, "GIB": GiB, "TIB": 1024**4,
    "KB": KB, "MB": MB, "GB": GB, "TB": 1000**4,
    # nccl-tests style single letters (-b 8 -e 128M) are binary
    "K": KiB, "M": MiB, "G": GiB, "T": 1024**4,
}
_SIZE_RE = re.compile(r"^\s*([+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")
ACCEPTED_SIZE_FORMS = "a positive number of bytes with an optional unit B, KiB, MiB, GiB, TiB, KB, MB, GB, TB or K/M/G (binary), e.g. 64MiB"


def parse_size(text: str | int | float) -> int:
    """Parse a message size such as ``"64MiB"``, ``"1.5GB"`` or ``"8"`` into bytes.

    Parameters
    ----------
    text : str or int or float
        The size. Binary units (KiB, MiB, GiB and the nccl-tests letters K, M, G)
        are powers of 1024; decimal units (KB, MB, GB) are powers of 1000.
        Units are case-insensitive, except that a final lowercase ``b`` (bits) is refused.

    Returns
    -------
    int
        Size in bytes, rounded to the nearest byte, at least 1.

    Raises
    ------
    GpucommError
        If the text is not a number with a known unit, or the size is not positive.

    Examples
    --------
    >>> parse_size("64MiB")
    67108864
    >>> parse_size("1GB")
    1000000000
    >>> parse_size("128M")
    134217728
    """
    if isinstance(text, bool):
        raise GpucommError(f"size {text!r} is not valid: expected {ACCEPTED_SIZE_FORMS}")
    if isinstance(text, (int, float)):
        value, unit = float(text), ""
    else:
        match = _SIZE_RE.match(str(text))
        if not match:
            raise GpucommError(f"size {text!r} is not valid: expected {ACCEPTED_SIZE_FORMS}")
        value, unit = float(match.group(1)), match.group(2).upper()
        if match.group(2).endswith("b"):
            # a lowercase b is a bit (Gb/s vs GB/s): refuse rather than read 64Mb as 64 MB
            raise GpucommError(f"size {text!r} ends in 'b', which means bits: sizes are in bytes, "
                               f"expected {ACCEPTED_SIZE_FORMS}")
        if unit not in _SIZE_UNITS:
            raise GpucommError(f"size {text!r} has unknown unit {match.group(2)!r}: expected {ACCEPTED_SIZE_FORMS}")
    if not math.isfinite(value):
        raise GpucommError(f"size {text!r} is not a finite number: expected {ACCEPTED_SIZE_FORMS}")
    if str(text).strip().startswith("-") or value <= 0:
        raise GpucommError(f"size {text!r} must be positive: expected {ACCEPTED_SIZE_FORMS}")
    scaled = value * _SIZE_UNITS[unit]
    if not math.isfinite(scaled) or scaled > 2**62:
        raise GpucommError(f"size {text!r} is too large: expected {ACCEPTED_SIZE_FORMS}, at most 4 EiB")
    if scaled != int(scaled):
        raise GpucommError(f"size {text!r} is not a whole number of bytes ({scaled:g} B): expected {ACCEPTED_SIZE_FORMS}")
    size = int(scaled)
    if size < 1:
        raise GpucommError(f"size {text!r} is below one byte: expected {ACCEPTED_SIZE_FORMS}")
    return size


def format_size(num_bytes: float) -> str:
    """Format a byte count for people in binary units (B, KiB, MiB, GiB, TiB).

    Parameters
    ----------
    num_bytes : float
        A size in bytes (>= 0).

    Returns
    -------
    str
        The size in the first binary unit where it is below 1024, three significant digits (bytes as a whole number).

    Examples
    --------
    >>> format_size(67108864)
    '64 MiB'
    >>> format_size(1536)
    '1.5 KiB'
    """
    value = float(num_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            text = f"{value:.3g}" if unit != "B" else f"{value:.0f}"
            return f"{text} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_time(time_s: float) -> str:
    """Format a duration in s, ms or us with three significant digits.

    Parameters
    ----------
    time_s : float
        A duration in seconds.

    Returns
    -------
    str
        ``'603 us'``, ``'1.82 ms'`` or ``'1.82 s'``.

    Examples
    --------
    >>> format_time(603e-6)
    '603 us'
    >>> format_time(1.819)
    '1.82 s'
    """
    if time_s >= 1:
        return f"{time_s:.3g} s"
    if time_s >= 1e-3:
        return f"{time_s * 1e3:.3g} ms"
    return f"{time_s * 1e6:.3g} us"


def to_gb_per_s(bw_bytes_per_s: float) -> float:
    """Convert bytes/s to decimal GB/s (1 GB/s = 1e9 B/s), as nccl-tests prints it.

    Parameters
    ----------
    bw_bytes_per_s : float
        A bandwidth in bytes/s.

    Returns
    -------
    float
        The same bandwidth in GB/s.
    """
    return bw_bytes_per_s / 1e9


def gb_per_s(value_gb_per_s: float) -> float:
    """Convert decimal GB/s to bytes/s (1 GB/s = 1e9 B/s).

    Parameters
    ----------
    value_gb_per_s : float
        A bandwidth in decimal GB/s.

    Returns
    -------
    float
        The same bandwidth in bytes/s.
    """
    return value_gb_per_s * 1e9


def check_int(value: object, what: str, minimum: int = 1) -> int:
    """``value`` if it is an integer >= ``minimum`` (a bool is refused), else one clear error.

    The one check of a whole-number argument (counts, step factors, GPUs per node) that the model
    and the measurement layer share, so each says the same thing about a bad value.

    Parameters
    ----------
    value : object
        The value to check.
    what : str
        What the value is, starting the message (``"step factor -f"``, ``"number of nodes"``).
    minimum : int
        The smallest accepted value (default 1).

    Returns
    -------
    int
        ``value`` unchanged.

    Raises
    ------
    GpucommError
        ``"<what> <value> is not valid: expected an integer >= <minimum>"``.

    Examples
    --------
    >>> check_int(3, "iterations -n")
    3
    >>> check_int(1, "step factor -f", 2)
    Traceback (most recent call last):
    gpucomm.GpucommError: step factor -f 1 is not valid: expected an integer >= 2
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise GpucommError(f"{what} {value!r} is not valid: expected an integer >= {minimum}")
    return value
