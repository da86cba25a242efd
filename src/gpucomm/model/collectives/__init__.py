"""The collective operations, one module each: size convention, busbw factor, nccl-tests binary, algorithms.

Each collective is one file of this package (``all_reduce.py``, ``all_gather.py``, ...) holding one
:class:`Collective` record, ``COLLECTIVE``: what nccl-tests calls it, what its message size ``S``
means, whether it reduces, how many ranks it needs, its bus-bandwidth factor and the algorithms that
implement it, each with its sequential steps and the bytes its busiest GPU link carries. Everything
else that lists collectives derives from these files: :data:`COLLECTIVES`, the cost model's
algorithms (:data:`gpucomm.model.cost.ALGORITHMS_FOR`), the benchmark's registries
(``gpucomm.measure.config``), the log parser's binary names (``gpucomm.measure.logs.nccl_tests``) and
the command line's choices. A new collective is a new file here.

algbw and busbw follow nccl-tests exactly (``doc/PERFORMANCE.md`` in
https://github.com/NVIDIA/nccl-tests/blob/v2.19.6/doc/PERFORMANCE.md):

* ``algbw = S / t`` where ``S`` is the size nccl-tests reports for the operation
  (for all_gather and reduce_scatter: the *total* buffer, ``count * nranks`` elements),
  and ``t`` the time of one operation.
* ``busbw = algbw * factor`` with the factor of the collective's file. busbw is the rate each rank's
  slowest link must sustain in an optimal ring; it is comparable to the hardware's
  per-direction link bandwidth regardless of the number of ranks.

References
----------
Thakur, Rabenseifner, Gropp, "Optimization of collective communication operations in MPICH", IJHPCA 19 (2005).
Sanders, Speck, Traeff, "Two-tree algorithms for full bandwidth broadcast, reduction and scan", Parallel Computing 35 (2009).
nccl-tests ``doc/PERFORMANCE.md`` and ``src/*.cu`` (``*GetBw``, ``*GetCollByteCount``).
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

from gpucomm import GpucommError

THAKUR_2005 = "Thakur, Rabenseifner, Gropp, IJHPCA 19 (2005)"
"""Short citation of the MPICH collectives paper (full reference in the package docstring)."""
PERFORMANCE_MD = "nccl-tests doc/PERFORMANCE.md (v2.19.6)"
"""Short citation of nccl-tests' definition of algbw and busbw."""


@dataclass(frozen=True)
class Algorithm:
    """One algorithm of one collective, inside a node: its latency-bound steps and its bytes on the wire.

    Attributes
    ----------
    name : str
        The name :mod:`gpucomm.model.cost` and the command line use (``"ring"``, ``"nvls"``).
    title : str
        What it is, in a few words (``"recursive halving/doubling"``).
    steps : callable
        ``steps(n) -> int``: sequential communication steps on ``n >= 2`` ranks; each pays a
        per-step latency in the LL protocol.
    wire_bytes : callable
        ``wire_bytes(S, n) -> float``: bytes per direction on the busiest GPU link, for a message of
        ``S`` bytes (as nccl-tests reports it) on ``n >= 2`` ranks.
    source : str
        Where the schedule and its counts come from.
    power_of_two_ranks : bool
        True if the schedule needs a power-of-two rank count (recursive halving/doubling).
    """

    name: str
    title: str
    steps: Callable[[int], int]
    wire_bytes: Callable[[float, int], float]
    source: str
    power_of_two_ranks: bool = False


@dataclass(frozen=True)
class Collective:
    """Everything the package knows about one collective that is not torch code.

    Attributes
    ----------
    name : str
        torch.distributed spelling (``"all_to_all"``), also the name of the collective's module.
    order : int
        Position in :data:`COLLECTIVES` (the order of the command line's help and of figures):
        reductions first, then data movement, then point-to-point, as nccl-tests' README lists them.
    nccl_tests_binary : str
        The nccl-tests program that measures it (``"alltoall_perf"``).
    chunked : bool
        The size convention. False: ``S`` is one rank's buffer (``count`` elements per rank).
        True: ``S`` is the total buffer, split into ``n`` equal chunks of ``count / n`` elements, one
        per rank (nccl-tests ``*GetCollByteCount``), so a size must be a whole number of elements per rank.
    reduces : bool
        Whether it combines the ranks' data with a reduction operation (``-o sum``...).
    min_ranks : int
        Fewest ranks it needs (2 for a point-to-point transfer).
    busbw_factor : callable
        ``busbw_factor(n) -> float``: ``busbw / algbw`` on ``n >= 1`` ranks.
    busbw_source : str
        Where nccl-tests defines that factor.
    algorithms : tuple of Algorithm
        The algorithms that implement it inside a node, in the order the cost model lists them.
    """

    name: str
    order: int
    nccl_tests_binary: str
    chunked: bool
    reduces: bool
    min_ranks: int
    busbw_factor: Callable[[int], float]
    busbw_source: str
    algorithms: tuple[Algorithm, ...]

    def algorithm(self, name: str) -> Algorithm:
        """The algorithm called ``name``.

        Parameters
        ----------
        name : str
            One of the names in :attr:`algorithms`.

        Returns
        -------
        Algorithm
            Its record.

        Raises
        ------
        GpucommError
            If no algorithm of this collective has that name.
        """
        for algo in self.algorithms:
            if algo.name == name:
                return algo
        raise GpucommError(f"algorithm {name!r} does not implement {self.name}: expected one of "
                           + ", ".join(a.name for a in self.algorithms))


def ceil_log2(num_ranks: int) -> int:
    """Rounds of a doubling schedule over ``num_ranks`` ranks.

    Parameters
    ----------
    num_ranks : int
        Ranks ``n``, >= 1.

    Returns
    -------
    int
        ``ceil(log2(n))``: the depth of a binary tree, the rounds of recursive doubling.

    Examples
    --------
    >>> ceil_log2(8), ceil_log2(6)
    (3, 3)
    """
    return math.ceil(math.log2(num_ranks))


def _discover() -> dict[str, Collective]:
    """Every collective module of this package, by name, in :attr:`Collective.order`.

    A module is a collective's file when it defines ``COLLECTIVE``; its name must be the record's name.
    """
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        record = importlib.import_module(f"{__name__}.{info.name}").COLLECTIVE
        if record.name != info.name:
            raise ImportError(f"{__name__}.{info.name} defines the collective {record.name!r}: expected {info.name!r}")
        found.append(record)
    return {c.name: c for c in sorted(found, key=lambda c: c.order)}


REGISTRY: dict[str, Collective] = _discover()
"""Every collective, by name, in :data:`COLLECTIVES` order: read from this package's modules."""

COLLECTIVES: tuple[str, ...] = tuple(REGISTRY)
"""The collectives' names (torch.distributed spelling), in their :attr:`Collective.order`."""


def check_collective(collective: str) -> str:
    """Return ``collective`` if it is known, else raise a clear error.

    Parameters
    ----------
    collective : str
        Collective name.

    Returns
    -------
    str
        ``collective`` unchanged.

    Raises
    ------
    GpucommError
        If the name is not one of :data:`COLLECTIVES` (torch.distributed spelling).
    """
    if collective not in COLLECTIVES:
        raise GpucommError(f"unknown collective {collective!r}: expected one of {', '.join(COLLECTIVES)}")
    return collective


def get_collective(collective: str) -> Collective:
    """The record of a collective.

    Parameters
    ----------
    collective : str
        One of :data:`COLLECTIVES`.

    Returns
    -------
    Collective
        Its entry of :data:`REGISTRY`.

    Raises
    ------
    GpucommError
        As :func:`check_collective`.

    Examples
    --------
    >>> get_collective("all_to_all").nccl_tests_binary
    'alltoall_perf'
    """
    return REGISTRY[check_collective(collective)]


def check_num_ranks(num_ranks: int, *, minimum: int = 1, maximum: int = 1_000_000, what: str = "number of GPUs/ranks") -> int:
    """Return ``num_ranks`` if it is an integer in [minimum, maximum], else raise.

    Parameters
    ----------
    num_ranks : int
        Number of GPUs/ranks to check (a bool is refused).
    minimum, maximum : int
        Inclusive bounds.
    what : str
        What the count is, for the error message (``"number of nodes"``).

    Returns
    -------
    int
        ``num_ranks`` unchanged.

    Raises
    ------
    GpucommError
        If ``num_ranks`` is not an int or lies outside [minimum, maximum].
    """
    if isinstance(num_ranks, bool) or not isinstance(num_ranks, int) or not minimum <= num_ranks <= maximum:
        raise GpucommError(f"{what} {num_ranks!r} is not valid: expected an integer from {minimum} to {maximum}")
    return num_ranks


def busbw_factor(collective: str, num_ranks: int) -> float:
    """Bus-bandwidth factor ``busbw / algbw`` for a collective on ``num_ranks`` ranks.

    Parameters
    ----------
    collective : str
        One of :data:`COLLECTIVES`.
    num_ranks : int
        Number of ranks ``n`` (>= 1).

    Returns
    -------
    float
        The :attr:`Collective.busbw_factor` of the collective's file: ``2(n-1)/n`` for all_reduce;
        ``(n-1)/n`` for all_gather, reduce_scatter and all_to_all; ``1`` for broadcast, reduce and
        send_recv. With one rank the factor of the n-dependent collectives is 0 (nccl-tests prints busbw 0).

    Raises
    ------
    GpucommError
        For an unknown collective or a rank count below 1.

    References
    ----------
    nccl-tests ``doc/PERFORMANCE.md`` (v2.19.6), sections "AllReduce", "ReduceScatter",
    "AllGather", "Broadcast", "Reduce"; ``src/alltoall.cu`` ``AlltoAllGetBw`` for all_to_all.

    Examples
    --------
    >>> busbw_factor("all_reduce", 4)
    1.5
    >>> busbw_factor("all_gather", 8)
    0.875
    """
    record = get_collective(collective)
    return float(record.busbw_factor(check_num_ranks(num_ranks)))


def algbw_bytes_per_s(msg_bytes: float, time_s: float) -> float:
    """Algorithm bandwidth ``S / t`` in bytes/s (nccl-tests ``doc/PERFORMANCE.md``, "Algorithm bandwidth").

    Parameters
    ----------
    msg_bytes : float
        Size ``S`` in bytes as nccl-tests reports it (total buffer for all_gather and reduce_scatter).
    time_s : float
        Time ``t`` of one operation, in s.

    Returns
    -------
    float
        ``msg_bytes / time_s``, in bytes/s.

    Raises
    ------
    GpucommError
        If ``time_s`` is not positive or ``msg_bytes`` is negative.

    Examples
    --------
    >>> algbw_bytes_per_s(1e9, 0.5)
    2000000000.0
    """
    if not time_s > 0:
        raise GpucommError(f"time {time_s!r} s must be positive")
    if msg_bytes < 0:
        raise GpucommError(f"message size {msg_bytes!r} bytes must be >= 0")
    return msg_bytes / time_s


def busbw_bytes_per_s(collective: str, msg_bytes: float, time_s: float, num_ranks: int) -> float:
    """Bus bandwidth in bytes/s: ``algbw * busbw_factor(collective, num_ranks)``.

    Parameters
    ----------
    collective : str
        One of :data:`COLLECTIVES`.
    msg_bytes : float
        Size ``S`` in bytes as nccl-tests reports it.
    time_s : float
        Time of one operation, in s.
    num_ranks : int
        Ranks ``n``, >= 1.

    Returns
    -------
    float
        Bus bandwidth in bytes/s, as nccl-tests ``doc/PERFORMANCE.md`` ("Bus bandwidth") defines it.

    Raises
    ------
    GpucommError
        As :func:`algbw_bytes_per_s` and :func:`busbw_factor`.

    Examples
    --------
    The nccl-tests all_reduce of 64 MiB on 4x A100 NVLink 3.0 (603 us) of
    :func:`gpucomm.model.measurements.llama70b_tp4_4xa100`:

    >>> busbw_bytes_per_s("all_reduce", 67108864, 603e-6, 4) / 1e9
    166.937...
    """
    return algbw_bytes_per_s(msg_bytes, time_s) * busbw_factor(collective, num_ranks)


def busbw_factors_table(num_ranks: int) -> list[tuple[str, float]]:
    """(collective, nccl-tests busbw factor) for every collective at ``num_ranks`` ranks.

    Parameters
    ----------
    num_ranks : int
        Ranks ``n``, >= 1.

    Returns
    -------
    list of (str, float)
        One pair per collective of :data:`COLLECTIVES`, in that order, with :func:`busbw_factor`.

    Raises
    ------
    GpucommError
        As :func:`busbw_factor`.

    Examples
    --------
    >>> dict(busbw_factors_table(8))["all_reduce"]
    1.75
    """
    return [(c, busbw_factor(c, num_ranks)) for c in COLLECTIVES]
