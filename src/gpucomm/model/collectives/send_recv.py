"""send_recv: one buffer from one rank to another (nccl-tests ``sendrecv_perf``: rank ``r`` to ``r + 1``).

``S`` is the buffer. ``busbw = algbw`` (factor 1): one transfer, one direction of one link
(nccl-tests ``src/sendrecv.cu``, ``SendRecvGetBw``). It needs a sender and a receiver: 2 ranks.
"""

from __future__ import annotations

from gpucomm.model.collectives import Algorithm, Collective

COLLECTIVE = Collective(
    name="send_recv",
    order=6,
    nccl_tests_binary="sendrecv_perf",
    chunked=False,
    reduces=False,
    min_ranks=2,
    busbw_factor=lambda n: 1.0,
    busbw_source="nccl-tests src/sendrecv.cu, SendRecvGetBw",
    algorithms=(
        Algorithm("ring", "one transfer to the next rank, all ranks at once", lambda n: 1,
                  lambda s, n: 1.0 * s, "nccl-tests src/sendrecv.cu: rank r sends to r + 1, receives from r - 1"),
    ),
)
