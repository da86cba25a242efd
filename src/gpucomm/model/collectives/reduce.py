"""reduce: the reduction of all ranks' buffers, delivered to the root (nccl-tests ``reduce_perf``).

``S`` is the buffer. ``busbw = algbw`` (factor 1): in a pipelined chain every link carries ``S`` once
(nccl-tests ``doc/PERFORMANCE.md``, "Reduce").
"""

from __future__ import annotations

from gpucomm.model.collectives import PERFORMANCE_MD, Algorithm, Collective, ceil_log2

COLLECTIVE = Collective(
    name="reduce",
    order=4,
    nccl_tests_binary="reduce_perf",
    chunked=False,
    reduces=True,
    min_ranks=1,
    busbw_factor=lambda n: 1.0,
    busbw_source=f"{PERFORMANCE_MD}, Reduce",
    algorithms=(
        Algorithm("ring", "pipelined chain to the root", lambda n: n - 1,
                  lambda s, n: 1.0 * s, "pipelined chain, as NCCL's ring reduce"),
        Algorithm("binary_tree", "pipelined binary tree (alpha-beta, not NCCL's Tree) to the root", ceil_log2,
                  lambda s, n: 1.0 * s, "Sanders, Speck, Traeff, Parallel Computing 35 (2009)"),
    ),
)
