"""all_gather: every rank ends with all ranks' chunks, in rank order (nccl-tests ``all_gather_perf``).

``S`` is the total output buffer, ``n`` chunks of ``S/n``. ``busbw = algbw * (n-1)/n``: each rank receives
the ``n - 1`` chunks it lacks (nccl-tests ``doc/PERFORMANCE.md``, "AllGather").
"""

from __future__ import annotations

from gpucomm.model.collectives import PERFORMANCE_MD, THAKUR_2005, Algorithm, Collective, ceil_log2


def _busbw_factor(n: int) -> float:
    return (n - 1) / n


COLLECTIVE = Collective(
    name="all_gather",
    order=1,
    nccl_tests_binary="all_gather_perf",
    chunked=True,
    reduces=False,
    min_ranks=1,
    busbw_factor=_busbw_factor,
    busbw_source=f"{PERFORMANCE_MD}, AllGather",
    algorithms=(
        Algorithm("ring", "each chunk passed round a ring", lambda n: n - 1,
                  lambda s, n: s * _busbw_factor(n), f"{THAKUR_2005}, sec. 4.1"),
        Algorithm("rhd", "recursive halving/doubling", ceil_log2,
                  lambda s, n: s * _busbw_factor(n), f"recursive doubling, {THAKUR_2005}, sec. 4.1",
                  power_of_two_ranks=True),
        Algorithm("nvls", "NVLink SHARP: multicast in the NVSwitch", lambda n: 1,
                  lambda s, n: float(s) * (n - 1) / n, "NCCL's NVLS algorithm (NCCL 2.17+, third-generation NVSwitch)"),
    ),
)
