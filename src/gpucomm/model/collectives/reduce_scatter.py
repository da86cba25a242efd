"""reduce_scatter: rank ``r`` ends with chunk ``r`` reduced over all ranks (nccl-tests ``reduce_scatter_perf``).

``S`` is the total input buffer, ``n`` chunks of ``S/n``. ``busbw = algbw * (n-1)/n``: each rank sends
the ``n - 1`` chunks it does not keep (nccl-tests ``doc/PERFORMANCE.md``, "ReduceScatter").
"""

from __future__ import annotations

from gpucomm.model.collectives import PERFORMANCE_MD, THAKUR_2005, Algorithm, Collective, ceil_log2


def _busbw_factor(n: int) -> float:
    return (n - 1) / n


COLLECTIVE = Collective(
    name="reduce_scatter",
    order=2,
    nccl_tests_binary="reduce_scatter_perf",
    chunked=True,
    reduces=True,
    min_ranks=1,
    busbw_factor=_busbw_factor,
    busbw_source=f"{PERFORMANCE_MD}, ReduceScatter",
    algorithms=(
        Algorithm("ring", "each chunk reduced on its way round a ring", lambda n: n - 1,
                  lambda s, n: s * _busbw_factor(n), f"{THAKUR_2005}, sec. 4.1"),
        Algorithm("rhd", "recursive halving/doubling", ceil_log2,
                  lambda s, n: s * _busbw_factor(n), f"recursive halving, {THAKUR_2005}",
                  power_of_two_ranks=True),
        Algorithm("nvls", "NVLink SHARP: reduction in the NVSwitch", lambda n: 1,
                  lambda s, n: float(s) * (n - 1) / n, "NCCL's NVLS algorithm (NCCL 2.17+, third-generation NVSwitch)"),
    ),
)
