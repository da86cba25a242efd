"""all_reduce: every rank ends with the reduction of all ranks' buffers (nccl-tests ``all_reduce_perf``).

``S`` is one rank's buffer. ``busbw = algbw * 2(n-1)/n``: a ring reduce-scatter then a ring all-gather,
each moving ``(n-1)/n S`` over every link (nccl-tests ``doc/PERFORMANCE.md``, "AllReduce").
Across nodes the cost model adds its hierarchical schedule (:mod:`gpucomm.model.cost`).
"""

from __future__ import annotations

from gpucomm.model.collectives import PERFORMANCE_MD, THAKUR_2005, Algorithm, Collective, ceil_log2


def _busbw_factor(n: int) -> float:
    return 2 * (n - 1) / n


COLLECTIVE = Collective(
    name="all_reduce",
    order=0,
    nccl_tests_binary="all_reduce_perf",
    chunked=False,
    reduces=True,
    min_ranks=1,
    busbw_factor=_busbw_factor,
    busbw_source=f"{PERFORMANCE_MD}, AllReduce",
    algorithms=(
        Algorithm("ring", "reduce-scatter then all-gather round a ring", lambda n: 2 * (n - 1),
                  lambda s, n: s * _busbw_factor(n), f"{THAKUR_2005}, sec. 4.4; {PERFORMANCE_MD}"),
        Algorithm("tree", "double binary tree: reduce up, broadcast down", lambda n: 2 * ceil_log2(n),
                  lambda s, n: 2.0 * s, "Sanders, Speck, Traeff, Parallel Computing 35 (2009); NVIDIA Technical Blog, "
                  "\"Massively Scale Your Deep Learning Training with NCCL 2.4\" (Feb 2019)"),
        Algorithm("rhd", "recursive halving/doubling", lambda n: 2 * ceil_log2(n),
                  lambda s, n: s * _busbw_factor(n), f"Rabenseifner's algorithm, {THAKUR_2005}, sec. 4.4",
                  power_of_two_ranks=True),
        Algorithm("one_shot", "every GPU reads all peers' buffers and reduces them", lambda n: 2,
                  lambda s, n: (n - 1) * float(s), "vLLM / TensorRT-LLM custom all_reduce"),
        Algorithm("two_shot", "reduce-scatter + all-gather by direct access to peers", lambda n: 4,
                  lambda s, n: s * _busbw_factor(n), "vLLM / TensorRT-LLM custom all_reduce"),
        Algorithm("nvls", "NVLink SHARP: reduction in the NVSwitch", lambda n: 1,
                  lambda s, n: s * (1 + 1 / n), "NCCL's NVLS algorithm (NCCL 2.17+, third-generation NVSwitch)"),
    ),
)
