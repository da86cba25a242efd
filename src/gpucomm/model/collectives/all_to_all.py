"""all_to_all: rank ``q`` receives chunk ``q`` of every rank's buffer (nccl-tests ``alltoall_perf``).

``S`` is one rank's whole send buffer, ``n`` chunks of ``S/n``. ``busbw = algbw * (n-1)/n``: the chunk for
itself never leaves the rank (nccl-tests ``src/alltoall.cu``, ``AlltoAllGetBw``).
"""

from __future__ import annotations

from gpucomm.model.collectives import THAKUR_2005, Algorithm, Collective


def _busbw_factor(n: int) -> float:
    return (n - 1) / n


COLLECTIVE = Collective(
    name="all_to_all",
    order=5,
    nccl_tests_binary="alltoall_perf",
    chunked=True,
    reduces=False,
    min_ranks=1,
    busbw_factor=_busbw_factor,
    busbw_source="nccl-tests src/alltoall.cu, AlltoAllGetBw",
    algorithms=(
        Algorithm("ring", "n-1 exchanges, one per peer (NCCL posts them all at once: a send and a receive per peer, "
                  "gpucomm.model.nccl_p2p)", lambda n: n - 1,
                  lambda s, n: s * _busbw_factor(n), f"pairwise exchange, {THAKUR_2005}"),
    ),
)
