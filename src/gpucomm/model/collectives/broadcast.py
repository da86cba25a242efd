"""broadcast: the root's buffer copied to every rank (nccl-tests ``broadcast_perf``).

``S`` is the buffer. ``busbw = algbw`` (factor 1): in a pipelined chain every link carries ``S`` once
(nccl-tests ``doc/PERFORMANCE.md``, "Broadcast").
"""

from __future__ import annotations

from gpucomm.model.collectives import PERFORMANCE_MD, Algorithm, Collective, ceil_log2

COLLECTIVE = Collective(
    name="broadcast",
    order=3,
    nccl_tests_binary="broadcast_perf",
    chunked=False,
    reduces=False,
    min_ranks=1,
    busbw_factor=lambda n: 1.0,
    busbw_source=f"{PERFORMANCE_MD}, Broadcast",
    algorithms=(
        Algorithm("ring", "pipelined chain from the root", lambda n: n - 1,
                  lambda s, n: 1.0 * s, "pipelined chain, as NCCL's ring broadcast"),
        Algorithm("binary_tree", "pipelined binary tree (alpha-beta, not NCCL's Tree) from the root", ceil_log2,
                  lambda s, n: 1.0 * s, "Sanders, Speck, Traeff, Parallel Computing 35 (2009)"),
    ),
)
