"""The collective operations: names, bus-bandwidth factors, bytes on the wire.

algbw and busbw follow nccl-tests exactly (``doc/PERFORMANCE.md`` in
https://github.com/NVIDIA/nccl-tests/blob/v2.19.6/doc/PERFORMANCE.md):

* ``algbw = S / t`` where ``S`` is the size nccl-tests reports for the operation
  (for all_gather and reduce_scatter: the *total* buffer, ``count * nranks`` elements),
  and ``t`` the time of one operation.
* ``busbw = algbw * factor`` with the factor below. busbw is the rate each rank's
  slowest link must sustain in an optimal ring; it is comparable to the hardware's
  per-direction link bandwidth regardless of the number of ranks.
"""

from __future__ import annotations

from gpucomm import GpucommError

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all", "send_recv")


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
        ``2(n-1)/n`` for all_reduce; ``(n-1)/n`` for all_gather, reduce_scatter and
        all_to_all; ``1`` for broadcast, reduce and send_recv. With one rank the
        factor of the n-dependent collectives is 0 (nccl-tests prints busbw 0).

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
    check_collective(collective)
    n = check_num_ranks(num_ranks)
    if collective == "all_reduce":
        return 2 * (n - 1) / n
    if collective in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0


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
    >>> busbw_bytes_per_s("all_reduce", 67108864, 603e-6, 4) / 1e9  # the seed's NVLink 3.0 case
    166.937...
    """
    return algbw_bytes_per_s(msg_bytes, time_s) * busbw_factor(collective, num_ranks)
