"""The numbers of ``book/debugging.md`` (debugging a hang or a timeout).

The page reads NCCL ``NCCL_DEBUG=INFO`` logs from public issue threads with the parser of :mod:`gpucomm.measure`,
which the model layer does not import: the page parses them and hands them to :func:`numbers` (objects with
``transports``, ``findings``, ``warnings``, ``hosts`` and ``num_ranks``, as
:class:`gpucomm.measure.logs.nccl_info.NcclInfoLog` has). The InfiniBand timeout arithmetic comes from
:mod:`gpucomm.model.failure_timing`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gpucomm.model import claims
from gpucomm.model.failure_timing import (
    IB_RETRY_CNT_DEFAULT,
    IB_TIMEOUT_DEFAULT,
    ib_ack_timeout_s,
    ib_error_after_s,
)

__all__ = ["numbers"]

_IB_STATUS = re.compile(r"with error (\d+)")


def numbers(info_logs: Mapping[str, object]) -> dict[str, object]:
    """Every number ``book/debugging.md`` glues, by glue key.

    Parameters
    ----------
    info_logs : mapping of str to NcclInfoLog
        The bundled ``NCCL_DEBUG=INFO`` logs, parsed, by name (the page reads them with
        :func:`gpucomm.measure.logs.nccl_info.read_bundled_info_log`); it must hold ``nccl_928`` and ``nccl_1412``.

    Returns
    -------
    dict of str to object
        ``n_info_logs``, ``n_with_connections`` (logs that print connection lines); NCCL issue #1412's log:
        ``l1412_ranks``, ``l1412_ib`` (connections over ``NET/IB`` without GPUDirect RDMA), ``l1412_codes`` (what
        ``gpucomm diagnose`` flags); NCCL issue #928's: ``l928_hosts`` (hosts with a WARN line), ``l928_status`` (the
        ``ibv_wc_status`` they print); InfiniBand timeouts: ``ib_timeout_default``, ``ib_retry_default``,
        ``ib_ack_s`` (s per try) and ``ib_error_s`` (s until status 12, NCCL's documented product).

    Raises
    ------
    ClaimError
        If a log no longer shows what the page says of it (each :func:`gpucomm.model.claims.require` names it).
    KeyError
        If a log the page quotes is missing.

    Notes
    -----
    Sources: the bundled logs (each with its issue URL, ``data/nccl_info_logs/README.md``) and NCCL's ``env.rst`` at
    v2.30.7-1 (``NCCL_IB_TIMEOUT``, ``NCCL_IB_RETRY_CNT``) through :mod:`gpucomm.model.failure_timing`.
    """
    with_connections = [log for log in info_logs.values() if log.transports]
    gdr = info_logs["nccl_1412"]
    codes = [f.code for f in gdr.findings]
    claims.require(gdr.transports.get("NET/IB", 0) > 0 and "no_gdrdma" in codes,
                   "issue #1412's connections show NET/IB without /GDRDMA, and the parser flags it")
    ib_err = info_logs["nccl_928"]
    statuses = {m.group(1) for w in ib_err.warnings for m in [_IB_STATUS.search(w.message)] if m}
    hosts = {w.host for w in ib_err.warnings if _IB_STATUS.search(w.message)}
    claims.require(statuses == {"4"} and len(hosts) > 1, "the same local protection error (status 4) on several hosts")
    return {
        "n_info_logs": len(info_logs), "n_with_connections": len(with_connections),
        "l1412_ranks": gdr.num_ranks, "l1412_ib": gdr.transports["NET/IB"], "l1412_codes": ", ".join(codes),
        "l928_hosts": len(hosts), "l928_status": int(statuses.pop()),
        "ib_timeout_default": IB_TIMEOUT_DEFAULT, "ib_retry_default": IB_RETRY_CNT_DEFAULT,
        "ib_ack_s": ib_ack_timeout_s(), "ib_error_s": ib_error_after_s(),
    }
