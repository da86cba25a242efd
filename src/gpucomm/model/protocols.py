"""Where NCCL's two protocols trade places: the message size above which Simple beats LL.

LL (low latency) pays a small start-up and a latency per algorithm step but moves data at half the
bandwidth (:data:`gpucomm.model.hardware.calibration.LL_BW_FRACTION`); Simple pays a large fixed
start-up at full bandwidth. :func:`gpucomm.model.cost.collective_cost` prices both; this module asks
it where the cheaper one changes. NCCL's tuner makes the same comparison (``src/graph/tuning.cc``,
``ncclTopoGetAlgoTime``).
"""

from __future__ import annotations

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import Fabric
from gpucomm.model.hardware import Link

MAX_CROSSOVER_BYTES = 64 * 2**30
"""Largest size :func:`protocol_crossover_bytes` scans (64 GiB): beyond the buffers any GPU holds."""


def protocol_crossover_bytes(collective: str, *, num_ranks: int, fabric: Fabric | str | Link,
                             algorithm: str = "ring") -> int:
    """Smallest power-of-two message size at which the Simple protocol is cheaper than LL, in bytes.

    Parameters
    ----------
    collective : str
        torch.distributed name.
    num_ranks : int
        GPUs taking part.
    fabric : Fabric, str or Link
        How the GPUs are connected, as :func:`gpucomm.model.cost.collective_cost` (a link key for a plain link).
    algorithm : str
        An algorithm that runs both protocols (not ``nvls``, which is Simple only).

    Returns
    -------
    int
        Size in bytes (a power of two from 8 B to :data:`MAX_CROSSOVER_BYTES`).

    Raises
    ------
    GpucommError
        If Simple never wins up to 64 GiB, or any error of :func:`gpucomm.model.cost.collective_cost`.

    Notes
    -----
    Scans powers of two with ``collective_cost(..., protocol="LL")`` and ``protocol="Simple"``.

    Examples
    --------
    >>> protocol_crossover_bytes("all_reduce", num_ranks=8, fabric="nvlink4") > 2**20
    True
    """
    size = 8
    while size <= MAX_CROSSOVER_BYTES:
        ll = collective_cost(collective, size, num_ranks=num_ranks, fabric=fabric, algorithm=algorithm, protocol="LL")
        simple = collective_cost(collective, size, num_ranks=num_ranks, fabric=fabric, algorithm=algorithm,
                                 protocol="Simple")
        if simple.time_s < ll.time_s:
            return size
        size *= 2
    label = fabric.label if isinstance(fabric, Fabric) else getattr(fabric, "key", fabric)
    raise GpucommError(f"the Simple protocol never beats LL for {collective} on {num_ranks} x {label} below 64 GiB")
