"""Which GPUs of this machine can read each other's memory directly (CUDA peer access, through torch).

NCCL's P2P transport copies between GPUs without staging through host memory when the CUDA
driver grants peer access and the topology allows it (by default up to ``PXB``; see
:mod:`gpucomm.measure.topology`). This is the CUDA side of that question, as
``torch.cuda.can_device_access_peer`` answers it; ``nvidia-smi topo -p2p r`` prints the
driver's view of the same matrix.
"""

from __future__ import annotations

from gpucomm.measure.harness import device_name


def peer_access_matrix() -> dict:
    """Peer access between every pair of visible CUDA GPUs.

    Returns
    -------
    dict
        ``devices``: ``"cuda:0 NVIDIA H100 80GB HBM3"``...; ``can_access``: ``can_access[i][j]``
        is True when GPU ``i`` can access GPU ``j``'s memory (None on the diagonal);
        ``cuda``: whether CUDA is available. Empty lists without CUDA GPUs.

    Examples
    --------
    >>> m = peer_access_matrix()
    >>> sorted(m)
    ['can_access', 'cuda', 'devices']
    """
    import torch

    if not torch.cuda.is_available():
        return {"cuda": False, "devices": [], "can_access": []}
    n = torch.cuda.device_count()
    devices = [device_name(i) for i in range(n)]
    matrix = [[None if i == j else bool(torch.cuda.can_device_access_peer(i, j)) for j in range(n)] for i in range(n)]
    return {"cuda": True, "devices": devices, "can_access": matrix}
