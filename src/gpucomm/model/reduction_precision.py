"""How much a low-precision all_reduce loses: rounding in the element type at every hop, or once at the end.

A sum over ``n`` GPUs is computed in some order and rounded somewhere. NCCL's ring and tree kernels add two
elements *in the element type*: ``FuncSum`` on ``__nv_bfloat16`` is ``__hadd`` (NCCL v2.30.7-1
``src/device/reduce_kernel.h`` l. 451-461), on fp8 a half-precision add converted back to fp8 (l. 472-473), so a
ring's partial sum is rounded to bf16 at each of its ``n - 1`` hops. NCCL's symmetric kernels (2.27 and later)
"always" sum "in fp32 accumulators (with the exception of fp8 on NVLS, where it uses fp16 inside the switch)"
(NCCL v2.27.3-1 release notes), so the result is rounded once. This module rounds like the hardware does
(round to nearest, ties to even, with subnormals; fp8 E4M3 saturates at 448) and measures the error of each
order on a reproducible sample, so that a page can show the difference instead of asserting it.

Formats: bfloat16 (8 significant bits, Kalamkar et al., arXiv:1905.12322), IEEE binary16 (11 bits) and FP8 E4M3
(4 bits, largest finite 448; Micikevicius et al., "FP8 Formats for Deep Learning", arXiv:2209.05433, Table 1).
Standard library only.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from gpucomm import GpucommError

__all__ = ["FORMATS", "ORDERS", "FloatFormat", "round_to", "all_reduce_error", "reduce_values"]


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format: significant bits (implicit bit included), smallest normal exponent, largest
    finite value (None: IEEE overflow to infinity is not modelled, values here stay far below it)."""

    name: str
    significant_bits: int
    min_exponent: int
    max_finite: float | None


FORMATS: dict[str, FloatFormat] = {
    "fp32": FloatFormat("fp32", 24, -126, None),
    "bf16": FloatFormat("bf16", 8, -126, None),
    "fp16": FloatFormat("fp16", 11, -14, 65504.0),
    "fp8": FloatFormat("fp8", 4, -6, 448.0),  # E4M3 (OCP FP8; arXiv:2209.05433 Table 1)
}
"""The formats by the package's short names (``gpucomm.model.dtypes``)."""

ORDERS = ("ring", "accumulate_fp32", "switch_fp16")
"""``ring``: ``n - 1`` hops, each rounded to the element type (NCCL's ring kernels); ``accumulate_fp32``: the
sum in fp32, rounded once (NCCL's symmetric kernels); ``switch_fp16``: the sum in fp16, each add rounded, then
once to the element type (NVLS on fp8, per the 2.27 release notes)."""


def _format(dtype: str) -> FloatFormat:
    try:
        return FORMATS[dtype]
    except KeyError:
        raise GpucommError(f"unknown element type {dtype!r}; choose from {', '.join(FORMATS)}") from None


def round_to(value: float, dtype: str) -> float:
    """``value`` rounded to the nearest number of format ``dtype`` (ties to even, subnormals kept).

    Parameters
    ----------
    value : float
        A finite number.
    dtype : str
        A key of :data:`FORMATS`.

    Returns
    -------
    float
        The rounded value (fp8 saturates at +-448, as NVIDIA's saturating conversion does).

    Raises
    ------
    GpucommError
        For an unknown ``dtype`` or a value that is not finite.

    Examples
    --------
    >>> round_to(1 + 2**-8, "bf16"), round_to(1 + 3 * 2**-8, "bf16")   # ties go to the even neighbour
    (1.0, 1.015625)
    >>> round_to(1000.0, "fp8")
    448.0
    """
    fmt = _format(dtype)
    if not math.isfinite(value):
        raise GpucommError(f"value must be finite, got {value!r}")
    if value == 0.0:
        return 0.0
    exponent = max(math.frexp(value)[1] - 1, fmt.min_exponent)  # value = m * 2**exponent, 1 <= |m| < 2
    step = math.ldexp(1.0, exponent - fmt.significant_bits + 1)
    rounded = round(value / step) * step  # Python's round() ties to even
    if fmt.max_finite is not None and abs(rounded) > fmt.max_finite:
        rounded = math.copysign(fmt.max_finite, value)
    return rounded


def reduce_values(values: list[float], dtype: str, order: str) -> float:
    """The sum of one element's ``values`` (one per GPU, already in ``dtype``) as the kernel ``order`` computes it.

    Parameters
    ----------
    values : list of float
        One value per rank, in ring order, at least 2.
    dtype : str
        The element type (a key of :data:`FORMATS`).
    order : str
        One of :data:`ORDERS`.

    Returns
    -------
    float
        The result, a number of format ``dtype``.

    Raises
    ------
    GpucommError
        For an unknown order or type, or fewer than 2 values.

    Examples
    --------
    >>> reduce_values([1.0, 2**-8, 2**-8], "bf16", "ring")              # each 2**-8 is lost at its hop
    1.0
    >>> reduce_values([1.0, 2**-8, 2**-8], "bf16", "accumulate_fp32")   # their sum is not
    1.0078125
    """
    if order not in ORDERS:
        raise GpucommError(f"unknown order {order!r}; choose from {', '.join(ORDERS)}")
    if len(values) < 2:
        raise GpucommError(f"need a value per rank, at least 2, got {len(values)}")
    work = {"ring": dtype, "accumulate_fp32": "fp32", "switch_fp16": "fp16"}[order]
    partial = values[0]
    for v in values[1:]:
        partial = round_to(partial + v, work)
    return round_to(partial, dtype)


def all_reduce_error(dtype: str, order: str, *, num_ranks: int, num_elements: int = 2048, seed: int = 0) -> float:
    """Relative RMS error of an all_reduce of standard-normal values, against the exact sum of the same inputs.

    Parameters
    ----------
    dtype : str
        The element type the ranks hold (inputs are rounded to it first: that rounding is not the all_reduce's).
    order : str
        One of :data:`ORDERS`.
    num_ranks : int
        GPUs, >= 2.
    num_elements : int
        Elements sampled, >= 1 (default 2048).
    seed : int
        Seed of the sample (:class:`random.Random`), so that a page's number is reproducible.

    Returns
    -------
    float
        ``sqrt(sum (y - exact)^2 / sum exact^2)``, the error the reduction adds, relative to the result's size.

    Raises
    ------
    GpucommError
        For a value out of range.

    Examples
    --------
    >>> ring = all_reduce_error("bf16", "ring", num_ranks=8)
    >>> once = all_reduce_error("bf16", "accumulate_fp32", num_ranks=8)
    >>> ring > 2 * once
    True
    """
    if not isinstance(num_ranks, int) or num_ranks < 2:
        raise GpucommError(f"num_ranks must be an integer >= 2, got {num_ranks!r}")
    if not isinstance(num_elements, int) or num_elements < 1:
        raise GpucommError(f"num_elements must be a positive integer, got {num_elements!r}")
    rng = random.Random(seed)
    err2 = ref2 = 0.0
    for _ in range(num_elements):
        values = [round_to(rng.gauss(0.0, 1.0), dtype) for _ in range(num_ranks)]
        exact = math.fsum(values)
        err2 += (reduce_values(values, dtype, order) - exact) ** 2
        ref2 += exact**2
    return math.sqrt(err2 / ref2)
