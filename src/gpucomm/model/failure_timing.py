"""How long a failure takes to surface: InfiniBand's retry timer under NCCL, and PyTorch's watchdog timeout.

A reliable-connection (RC) queue pair waits a *local ACK timeout* for each transmission to be acknowledged and
retransmits up to ``retry_cnt`` times before it completes the work request with an error
(``IBV_WC_RETRY_EXC_ERR``, status 12: "transport retry counter exceeded"). NCCL sets both on every queue pair it
creates (``ncclIbQpRts``, NCCL v2.30.7-1 ``src/transport/net_ib/connect.cc``: ``qpAttr.timeout =
ncclParamIbTimeout()``, ``qpAttr.retry_cnt = ncclParamIbRetryCnt()``), from ``NCCL_IB_TIMEOUT`` and
``NCCL_IB_RETRY_CNT``. NCCL's documentation (``docs/userguide/source/env.rst`` at v2.30.7-1, sections
``NCCL_IB_TIMEOUT`` and ``NCCL_IB_RETRY_CNT``) gives the timeout as 4.096 us x 2^``NCCL_IB_TIMEOUT`` (InfiniBand
specification Vol. 1, 12.7.34) and the "total time spent waiting for a response" as the product of that timeout and
the retry count: about 30 s with the defaults, the figure NCCL's own hint prints next to a status-12 error
(``printIbWcStatusHint``, ``src/transport/net_ib/common.h`` at v2.30.7-1: "Default value is 20, which is ~30
seconds before error"; printed at ``NCCL_DEBUG=INFO``). The wait after the original transmission comes before the
first retry, so a queue pair with packets in flight when its peer goes silent errors between ``retry_cnt`` and
``retry_cnt + 1`` timeouts later (later still if it sends nothing until then); :func:`ib_error_after_s` gives both.
The verbs interface defines the timeout as the *minimum* wait before a retransmission (D. Barak, "ibv_modify_qp()",
RDMAmojo, 2013-01-12, https://www.rdmamojo.com/2013/01/12/ibv_modify_qp/), so these are the earliest the error can
come, not a deadline. The error reaches the application as ``ncclRemoteError`` (``src/transport/net_ib/p2p.cc`` at
v2.30.7-1).

PyTorch notices a collective that never completes only when its process-group timeout expires (``timeout`` of
``init_process_group``; for NCCL ``kProcessGroupNCCLDefaultTimeout`` = 10 min, ``ProcessGroupNCCL.hpp`` of
PyTorch v2.13.0, read in the installed wheel). A network failure that NCCL reports sooner reaches PyTorch as an
NCCL error through ``ncclCommGetAsyncError``; :func:`failure_surfaces` says which comes first.

Standard library only.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from gpucomm import GpucommError

__all__ = ["IB_TIME_UNIT_S", "IB_TIMEOUT_DEFAULT", "IB_RETRY_CNT_DEFAULT", "PG_NCCL_TIMEOUT_DEFAULT_S",
           "FAILURE_CAUSES", "Surfacing", "ib_ack_timeout_s", "ib_error_after_s", "failure_surfaces", "SOURCES"]

SOURCES = {
    "nccl_env": "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/docs/userguide/source/env.rst",
    "nccl_ib_params": "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/net_ib/connect.cc",
    "nccl_ib_hint": "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/net_ib/common.h",
    "ibv_timeout_minimum": "https://www.rdmamojo.com/2013/01/12/ibv_modify_qp/",
    "torch_pg_nccl": "https://github.com/pytorch/pytorch/blob/v2.13.0/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp",
}
"""Where each constant below was read."""

IB_TIME_UNIT_S = 4.096e-6
"""The local ACK timeout's unit: timeout = 4.096 us x 2^``NCCL_IB_TIMEOUT`` (NCCL ``env.rst`` at v2.30.7-1,
``NCCL_IB_TIMEOUT``; InfiniBand specification Vol. 1, 12.7.34)."""
IB_TIMEOUT_DEFAULT = 20
"""``NCCL_IB_TIMEOUT`` default: ``NCCL_PARAM(IbTimeout, "IB_TIMEOUT", 20)``, ``src/transport/net_ib/connect.cc`` l. 15
at v2.30.7-1 (20 since NCCL 2.23, 18 from 2.14, 14 before: ``env.rst``)."""
IB_RETRY_CNT_DEFAULT = 7
"""``NCCL_IB_RETRY_CNT`` default: ``NCCL_PARAM(IbRetryCnt, "IB_RETRY_CNT", 7)``, ``src/transport/net_ib/connect.cc``
l. 16 at v2.30.7-1."""
_IB_TIMEOUT_RANGE = (0, 31)  # env.rst: "Values can be 0-31"; 0 (or >= 32) means an infinite timeout
_IB_RETRY_RANGE = (0, 7)     # env.rst: "Valid values are 0-7" (a 3-bit field of the queue pair)
PG_NCCL_TIMEOUT_DEFAULT_S = 600.0
"""PyTorch's default process-group timeout for NCCL: ``kProcessGroupNCCLDefaultTimeout =
std::chrono::milliseconds(10 * 60 * 1000)``, ``torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp`` l. 157-158 of
PyTorch v2.13.0 (other backends: 30 min, ``kProcessGroupDefaultTimeout`` in ``ProcessGroup.hpp``)."""

FAILURE_CAUSES = ("missing_rank", "dead_link")
"""What :func:`failure_surfaces` models: a rank that never calls the collective (nothing fails on the wire, the
peers wait), and a link that stops delivering packets under a running collective (InfiniBand/RoCE)."""


class Surfacing(NamedTuple):
    """When and how a failure first shows up in the log of a rank that waits on it."""

    time_s: float
    """Seconds from the failure (the link going dark, or the waiting rank issuing the collective) to the first error."""
    reported_by: str
    """``"nccl_ib_retry_exceeded"`` (an ``NCCL WARN NET/IB ... Got completion ... 12`` line, then ``ncclRemoteError``
    in PyTorch) or ``"torch_watchdog_timeout"`` (``Watchdog caught collective operation timeout``)."""


def _check_int(name: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise GpucommError(f"{name} must be an integer from {low} to {high}, got {value!r}")


def ib_ack_timeout_s(ib_timeout: int = IB_TIMEOUT_DEFAULT) -> float:
    """The InfiniBand local ACK timeout NCCL sets on its queue pairs: 4.096 us x 2^``ib_timeout``.

    Parameters
    ----------
    ib_timeout : int
        ``NCCL_IB_TIMEOUT``, 0-31 (default 20, NCCL's own). 0 disables the timer.

    Returns
    -------
    float
        Seconds one transmission waits for its acknowledgement; ``math.inf`` for 0 (NCCL ``env.rst``: "Setting a value
        of 0 ... will result in an infinite timeout value").

    Raises
    ------
    GpucommError
        (a ValueError) If ``ib_timeout`` is not an integer from 0 to 31.

    Examples
    --------
    >>> round(ib_ack_timeout_s(), 2), round(ib_ack_timeout_s(17) * 1e3, 1)
    (4.29, 536.9)
    """
    _check_int("ib_timeout (NCCL_IB_TIMEOUT)", ib_timeout, *_IB_TIMEOUT_RANGE)
    return math.inf if ib_timeout == 0 else IB_TIME_UNIT_S * 2.0**ib_timeout


def ib_error_after_s(ib_timeout: int = IB_TIMEOUT_DEFAULT, retry_cnt: int = IB_RETRY_CNT_DEFAULT, *,
                     count_first_wait: bool = False) -> float:
    """Seconds until a queue pair whose peer stopped answering completes with status 12 (retry counter exceeded).

    Parameters
    ----------
    ib_timeout : int
        ``NCCL_IB_TIMEOUT``, 0-31 (default 20).
    retry_cnt : int
        ``NCCL_IB_RETRY_CNT``, 0-7 (default 7).
    count_first_wait : bool
        False (default): NCCL's documented figure, ``retry_cnt`` x timeout ("the product of the retry count and the
        timeout", ``env.rst`` at v2.30.7-1). True: add the wait after the original transmission,
        (``retry_cnt`` + 1) x timeout, the upper end of the window.

    Returns
    -------
    float
        Seconds, from the nominal timeout (the verbs interface's minimum, so the real error can come later);
        ``math.inf`` when ``ib_timeout`` is 0.

    Raises
    ------
    GpucommError
        (a ValueError) If ``ib_timeout`` is not an integer from 0 to 31 or ``retry_cnt`` not one from 0 to 7.

    Examples
    --------
    >>> round(ib_error_after_s(), 1), round(ib_error_after_s(count_first_wait=True), 1)
    (30.1, 34.4)
    >>> round(ib_error_after_s(22) / 60, 1)  # NCCL's table: "2 minutes"
    2.0
    """
    per_try_s = ib_ack_timeout_s(ib_timeout)
    _check_int("retry_cnt (NCCL_IB_RETRY_CNT)", retry_cnt, *_IB_RETRY_RANGE)
    return per_try_s * (retry_cnt + 1 if count_first_wait else retry_cnt)


def failure_surfaces(cause: str, *, pg_timeout_s: float = PG_NCCL_TIMEOUT_DEFAULT_S,
                     ib_timeout: int = IB_TIMEOUT_DEFAULT, retry_cnt: int = IB_RETRY_CNT_DEFAULT) -> Surfacing:
    """When a waiting rank first reports a failure, and which layer reports it.

    Parameters
    ----------
    cause : str
        ``"missing_rank"``: a rank never calls the collective. Nothing fails on the wire; every peer waits until
        PyTorch's watchdog gives up after ``pg_timeout_s``. ``"dead_link"``: packets stop being delivered between
        two ranks during a collective; a queue pair with unacknowledged packets on that link (the sender's, and the
        receiver's when it has messages of its own in flight) exhausts its retries after :func:`ib_error_after_s`
        (NCCL's documented figure, a lower bound) and NCCL reports an error, unless the watchdog's timeout expires
        first. Ranks not on that link learn only when their own peers fail or time out.
    pg_timeout_s : float
        The process group's ``timeout`` in s, > 0 (default 600 s, PyTorch's for NCCL).
    ib_timeout, retry_cnt : int
        ``NCCL_IB_TIMEOUT`` (0-31) and ``NCCL_IB_RETRY_CNT`` (0-7), NCCL's defaults 20 and 7.

    Returns
    -------
    Surfacing
        ``time_s`` and ``reported_by`` (``"nccl_ib_retry_exceeded"`` or ``"torch_watchdog_timeout"``). The
        watchdog's own polling (a fraction of a second) is not included.

    Raises
    ------
    GpucommError
        (a ValueError) For a cause not in :data:`FAILURE_CAUSES`, a ``pg_timeout_s`` that is not a positive finite
        number, or IB settings out of their ranges.

    Examples
    --------
    >>> failure_surfaces("missing_rank")
    Surfacing(time_s=600.0, reported_by='torch_watchdog_timeout')
    >>> s = failure_surfaces("dead_link"); round(s.time_s, 1), s.reported_by
    (30.1, 'nccl_ib_retry_exceeded')
    >>> failure_surfaces("dead_link", pg_timeout_s=20).reported_by  # the timeout fires before NCCL's error
    'torch_watchdog_timeout'
    """
    if cause not in FAILURE_CAUSES:
        raise GpucommError(f"cause must be one of {', '.join(FAILURE_CAUSES)}, got {cause!r}")
    if isinstance(pg_timeout_s, bool) or not isinstance(pg_timeout_s, (int, float)) or not (
            math.isfinite(pg_timeout_s) and pg_timeout_s > 0):
        raise GpucommError(f"pg_timeout_s must be a positive finite number of seconds, got {pg_timeout_s!r}")
    ib_s = ib_error_after_s(ib_timeout, retry_cnt)
    if cause == "dead_link" and ib_s < pg_timeout_s:
        return Surfacing(ib_s, "nccl_ib_retry_exceeded")
    return Surfacing(float(pg_timeout_s), "torch_watchdog_timeout")
