"""NCCL's symmetric kernels: which one NCCL picks for an all_reduce inside an NVLink domain, and its time estimate.

Since NCCL 2.27 a buffer registered on every rank of a communicator with ``ncclCommWindowRegister(...,
NCCL_WIN_COLL_SYMMETRIC)`` lets NCCL run *symmetric kernels*: each GPU loads from and stores to its peers'
copies of the buffer directly (CUDA P2P, or NVLink SHARP's multicast addresses), with no FIFO of chunks between
ranks as the ring and tree kernels have (NCCL v2.27.3-1 release notes). NCCL picks one kernel per call with its
own small cost model, ``queryModel_lsa`` and ``ncclSymkPickKernel`` in ``src/sym_kernels.cc`` at v2.30.7-1
(``src/symmetric.cc`` at v2.27.3-1 has the same model for the first four kernels). This module is that model,
for an all_reduce whose send and receive buffers are both registered, on a single NVLink domain:

* ``AGxLL_R``: every GPU pushes its whole buffer to every peer with the LL protocol (flag and data in one
  8-byte store) and reduces what it received: the *one-shot* shape of vLLM's and TensorRT-LLM's kernels;
* ``AGxLLMC_R``: the same through NVLink SHARP multicast stores (one store reaches every peer);
* ``RSxLD_AGxST``: a reduce-scatter by loads from every peer, then an all-gather by stores: the *two-shot* shape;
* ``RSxLDMC_AGxSTMC``: the same with the switch reducing (``multimem.ld_reduce``) and broadcasting
  (``multimem.st``): NVLS without NCCL's FIFO.

The model's constants (base latency, bandwidth per SM, peak bandwidth, the factor 9 of LL's bus bytes, the
2.5 % penalty per SM used) are NCCL's, quoted below with their lines. They are NCCL's *estimate*, used to choose
a kernel, not a measurement; the cost model of the course (:mod:`gpucomm.model.cost`) is what the chapters
validate. Standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpucomm import GpucommError

__all__ = ["ALL_REDUCE_KERNELS", "KERNEL_SHAPES", "SymmetricChoice", "kernel_time_us", "pick_all_reduce_kernel", "SOURCE"]

SOURCE = "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/sym_kernels.cc"
"""NCCL v2.30.7-1 ``src/sym_kernels.cc``: ``softmin``, ``softplus``, ``model`` (l. 151-165), ``queryModel_lsa``
(l. 338-428), ``ncclSymkMask`` and ``ncclSymkPickKernel`` (l. 540-640)."""

ALL_REDUCE_KERNELS = ("AGxLL_R", "AGxLLMC_R", "RSxLD_AGxST", "RSxLDMC_AGxSTMC")
"""The all_reduce kernels of ``kernelName`` (``src/sym_kernels.cc`` l. 16-34) in NCCL's order, less the TMA
variant that ``NCCL_SYM_TMA_ENABLE`` (default 0, l. 134) leaves off."""

KERNEL_SHAPES = {
    "AGxLL_R": "one-shot: an all-gather with the LL protocol, then a local reduce",
    "AGxLLMC_R": "one-shot: an all-gather with the LL protocol through multicast stores, then a local reduce",
    "RSxLD_AGxST": "two-shot: a reduce-scatter by loads from every peer, then an all-gather by stores",
    "RSxLDMC_AGxSTMC": "two-shot through the switch: it reduces on load and broadcasts on store",
}
"""What each kernel of :data:`ALL_REDUCE_KERNELS` does, in words (from its name and ``src/device/symmetric/``)."""

_MAX_BLOCKS = 64  # ncclSymkMaxBlocks, src/include/sym_kernels.h l. 25 (v2.30.7-1)
_MIN_CTAS, _MAX_CTAS = 1, 64  # config defaults minCTAs 1, maxCTAs MAXCHANNELS = 64 (src/init.cc l. 2412-2413)
_LL_BUS_FACTOR = 9  # "2X the bytes, plus some processing, plus no unrolling" (l. 339)
_SM_PENALTY = 0.025  # "2.5% percent increase in time per SM" (l. 622)
_GBPS = 2**30 / 1e6  # NCCL's GBps constant: bytes per microsecond of one GiB/s (l. 410)
_LL_LIMIT_BYTES = 2 << 30  # LL kernels count elements in 32-bit ints: off from 2 GiB of bus bytes (l. 576)
_MULTIMEM = ("AGxLLMC_R", "RSxLDMC_AGxSTMC")  # kernelMask_STMC's all_reduce members
_LOAD_REDUCE = ("RSxLDMC_AGxSTMC",)  # kernelMask_LDMC: the switch reduces
# which element types the switch can reduce (ncclSymkMask l. 547-568); fp8 only from compute capability 10.0
_LDMC_DTYPES = {"fp32": 0, "fp16": 0, "bf16": 0, "fp8": 100}
_DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1}


def _softmin(x: float, ceiling: float, softness: float) -> float:
    return ceiling - softness * math.log1p((math.exp(ceiling / softness) - 1) * math.exp(-x / softness))


def _softplus(x: float, softness: float) -> float:
    z = x / softness
    return x if z >= 100.0 else softness * math.log1p(math.exp(z))


def _model_us(bus_bytes: float, base_lat_us: float, n_sms: int, sm_bw: float, bus_multiplier: float,
              peak_bw: float) -> float:
    bw = _softmin(n_sms * sm_bw * bus_multiplier, peak_bw, sm_bw)
    return base_lat_us + _softplus(bus_bytes / bw - 1, 1)


def _check(msg_bytes: int, num_ranks: int, compute_capability: int) -> None:
    if not isinstance(msg_bytes, int) or msg_bytes <= 0:
        raise GpucommError(f"msg_bytes must be a positive integer, got {msg_bytes!r}")
    if not isinstance(num_ranks, int) or num_ranks < 2:
        raise GpucommError(f"num_ranks must be an integer >= 2, got {num_ranks!r}")
    if not isinstance(compute_capability, int) or compute_capability < 70:
        raise GpucommError(f"compute_capability must be an integer such as 90 (sm_90) or 100, got {compute_capability!r}")


def kernel_time_us(kernel: str, msg_bytes: int, *, num_ranks: int, compute_capability: int) -> tuple[float, int]:
    """NCCL's time estimate of one symmetric all_reduce kernel, and the thread blocks it would use.

    Parameters
    ----------
    kernel : str
        One of :data:`ALL_REDUCE_KERNELS`.
    msg_bytes : int
        The all_reduce's buffer, bytes (nccl-tests' size).
    num_ranks : int
        GPUs in the communicator (all in one NVLink domain), >= 2.
    compute_capability : int
        ``major * 10 + minor`` of the GPU (90 for H100/H200, 100 for B200): NCCL's constants differ below and from 100.

    Returns
    -------
    tuple of (float, int)
        The estimate in microseconds and the number of blocks (SMs): the fewest whose time is within 2.5 % of the
        time at the most blocks the kernel may use.

    Raises
    ------
    GpucommError
        For an unknown kernel or a value out of range.

    Notes
    -----
    ``queryModel_lsa`` (``src/sym_kernels.cc`` l. 338-428, v2.30.7-1): bus bytes ``n x S x 9`` for the LL kernels,
    ``2 S (n-1)/n`` for ``RSxLD_AGxST``, ``S/n + S`` for ``RSxLDMC_AGxSTMC`` (whose bandwidth per SM is multiplied
    by ``n`` and which may use ``ceil(16/n)`` blocks below compute capability 10.0, ``ceil(32/n)`` from it), 1.1 for
    the LL multicast kernel "to beat non-MC LL". Below 10.0: base latency 4.5 us (LL) or 7.8 us, 65 GiB/s per SM,
    peak 480 GiB/s for ``RSxLDMC_AGxSTMC`` and 320 GiB/s for the others; from 10.0: 11 us (LL all_reduce) or
    19.5 us, 55 GiB/s per SM, peak 1000 and 600 GiB/s. Time = base latency + softplus(bus bytes / bandwidth - 1),
    bandwidth = softmin(blocks x per-SM bandwidth x multiplier, peak).

    Examples
    --------
    >>> t_us, blocks = kernel_time_us("AGxLL_R", 16384, num_ranks=8, compute_capability=90)
    >>> round(t_us, 1), blocks
    (7.1, 7)
    """
    _check(msg_bytes, num_ranks, compute_capability)
    if kernel not in ALL_REDUCE_KERNELS:
        raise GpucommError(f"unknown symmetric all_reduce kernel {kernel!r}; choose from {', '.join(ALL_REDUCE_KERNELS)}")
    n = num_ranks
    max_blocks = min(_MAX_BLOCKS, _MAX_CTAS)
    max_blocks_nvls = -(-(16 if compute_capability < 100 else 32) // n)
    multiplier = 1.0
    if kernel == "AGxLL_R":
        bus_bytes = n * msg_bytes * _LL_BUS_FACTOR
    elif kernel == "AGxLLMC_R":
        bus_bytes, multiplier = n * msg_bytes * _LL_BUS_FACTOR, 1.1
    elif kernel == "RSxLD_AGxST":
        bus_bytes = 2 * msg_bytes * (n - 1) // n  # size_t arithmetic in NCCL
    else:
        bus_bytes, multiplier = msg_bytes // n + msg_bytes, float(n)
        max_blocks = min(max_blocks_nvls, _MAX_CTAS)
    is_ll = kernel in ("AGxLL_R", "AGxLLMC_R")
    if compute_capability < 100:
        base_lat_us, sm_bw = (4.5 if is_ll else 7.8), 65 * _GBPS
        peak_bw = (480 if kernel == "RSxLDMC_AGxSTMC" else 320) * _GBPS
    else:
        base_lat_us, sm_bw = (11.0 if is_ll else 19.5), 55 * _GBPS
        peak_bw = (1000 if kernel == "RSxLDMC_AGxSTMC" else 600) * _GBPS
    best_us = _model_us(bus_bytes, base_lat_us, max_blocks, sm_bw, multiplier, peak_bw)
    for blocks in range(_MIN_CTAS, max_blocks):
        time_us = _model_us(bus_bytes, base_lat_us, blocks, sm_bw, multiplier, peak_bw)
        if time_us <= 1.025 * best_us:
            return time_us, blocks
    return best_us, max_blocks


@dataclass(frozen=True)
class SymmetricChoice:
    """The kernel NCCL picks for one symmetric all_reduce, with every candidate's estimate.

    ``time_s`` is NCCL's estimate for the chosen kernel (its launch not included); ``candidates`` maps each kernel
    NCCL considered to ``(time_s, blocks)``.
    """

    kernel: str
    time_s: float
    blocks: int
    candidates: dict


def pick_all_reduce_kernel(msg_bytes: int, *, num_ranks: int, compute_capability: int, multimem: bool = True,
                           dtype: str = "bf16", both_registered: bool = True) -> SymmetricChoice:
    """The symmetric kernel NCCL picks for an all_reduce of ``msg_bytes`` on one NVLink domain.

    Parameters
    ----------
    msg_bytes : int
        The all_reduce's buffer, bytes.
    num_ranks : int
        GPUs in the communicator, >= 2.
    compute_capability : int
        90 for Hopper, 100 for Blackwell (see :func:`kernel_time_us`).
    multimem : bool
        Whether NVLink SHARP is there (an NVSwitch system with NVLS on). NCCL also turns the multicast kernels
        off for 2 ranks (``hasLsaMultimem`` needs more than 2, ``ncclSymkInitOnce``).
    dtype : str
        ``fp32``, ``fp16``, ``bf16`` or ``fp8``: the switch reduces fp8 only from compute capability 10.0.
    both_registered : bool
        Whether the send and the receive buffer are both in a symmetric window; otherwise NCCL keeps only the LL
        kernels (``ncclSymkPickKernel``: ``winRegType != ncclSymSendRegRecvReg``).

    Returns
    -------
    SymmetricChoice
        The kernel with the lowest ``time x (1 + 0.025 x blocks)`` (NCCL charges 2.5 % per SM it takes from the
        application), its time in seconds and blocks.

    Raises
    ------
    GpucommError
        For a value out of range or an unknown ``dtype``.

    Examples
    --------
    >>> pick_all_reduce_kernel(16384, num_ranks=8, compute_capability=90).kernel
    'AGxLLMC_R'
    >>> pick_all_reduce_kernel(64 * 2**20, num_ranks=8, compute_capability=90).kernel
    'RSxLDMC_AGxSTMC'
    """
    _check(msg_bytes, num_ranks, compute_capability)
    if dtype not in _DTYPE_BYTES:
        raise GpucommError(f"unknown dtype {dtype!r}; choose from {', '.join(_DTYPE_BYTES)}")
    kernels = list(ALL_REDUCE_KERNELS)
    if not (multimem and num_ranks > 2):
        kernels = [k for k in kernels if k not in _MULTIMEM]
    if compute_capability < _LDMC_DTYPES[dtype]:
        kernels = [k for k in kernels if k not in _LOAD_REDUCE]
    if msg_bytes >= _LL_LIMIT_BYTES:
        kernels = [k for k in kernels if not k.startswith("AGxLL")]
    if not both_registered:
        kernels = [k for k in kernels if k.startswith("AGxLL")]
    if not kernels:
        raise GpucommError(f"no symmetric kernel runs a {msg_bytes}-byte all_reduce with these settings")
    candidates = {k: kernel_time_us(k, msg_bytes, num_ranks=num_ranks, compute_capability=compute_capability)
                  for k in kernels}
    best = min(kernels, key=lambda k: candidates[k][0] * (1 + _SM_PENALTY * candidates[k][1]))
    time_us, blocks = candidates[best]
    return SymmetricChoice(best, time_us * 1e-6, blocks, {k: (t * 1e-6, b) for k, (t, b) in candidates.items()})
