"""The parameters of a sweep, validated, and the message sizes it visits (no torch here).

Flags and size semantics follow nccl-tests (``README.md`` and ``src/common.cu`` in
https://github.com/NVIDIA/nccl-tests, v2.19.6): sizes go from ``-b`` to ``-e`` multiplying
by the integer ``-f``, or, with ``-f`` 0 or 1, adding ``-i`` bytes (``TimeTest``: ``size =
stepfactor > 1 ? size * stepfactor : size + stepbytes``); each size is rounded down to a
whole number of elements. For the
collectives in :data:`CHUNKED_COLLECTIVES` the size ``S`` is the *total* buffer, one equal
chunk per rank, so it is rounded down to a whole number of elements per rank (nccl-tests
``AllGatherGetCollByteCount`` and its siblings: ``count / nranks`` elements per rank).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gpucomm import GpucommError
from gpucomm.measure.collectives import MEASURED
from gpucomm.model.collectives import REGISTRY
from gpucomm.model.dtypes import element_type
from gpucomm.model.units import check_int, format_size, parse_size

#: Collectives the runner can measure: those with a spec module in ``gpucomm.measure.collectives``.
BENCH_COLLECTIVES = MEASURED

#: Collectives whose size ``S`` is the total buffer split into one equal chunk per rank
#: (nccl-tests: all_gather's output, reduce_scatter's input, all_to_all's send buffer):
#: ``Collective.chunked`` of their files in ``gpucomm.model.collectives``.
CHUNKED_COLLECTIVES = tuple(c for c in BENCH_COLLECTIVES if REGISTRY[c].chunked)

#: Collectives that reduce, and so take ``-o``; the others move data and report redop "none".
REDUCING_COLLECTIVES = tuple(c for c in BENCH_COLLECTIVES if REGISTRY[c].reduces)

#: Fewest ranks a collective needs, where it is more than 1 (send_recv: a sender and a receiver).
MIN_RANKS = {c: REGISTRY[c].min_ranks for c in BENCH_COLLECTIVES if REGISTRY[c].min_ranks > 1}

#: Collectives a backend does not implement, with the reason (one line, shown as the error).
UNSUPPORTED = {
    "gloo": {
        "reduce_scatter": (
            "gloo has no reduce-scatter algorithm: older torch raises 'ProcessGroupGloo does not support "
            "reduce_scatter', and torch >= 2.3 emulates it with a full all_reduce (twice a reduce-scatter's traffic, "
            "pytorch/pytorch#118911), whose time is not a reduce_scatter's"),
    },
}

#: Element types the benchmark takes, by torch name: those whose correctness inputs stay exact
#: (small integers, see ``gpucomm.measure.spec``).
BENCH_DTYPES = ("float32", "float64", "float16", "bfloat16")
#: Element sizes in bytes, by torch dtype name (``gpucomm.model.dtypes``).
DTYPE_BYTES = {name: element_type(name).size_bytes for name in BENCH_DTYPES}
#: nccl-tests type names (``-d float``) and short names (``fp16``) accepted as aliases of the torch names.
DTYPE_ALIASES = {spelling: name for name in BENCH_DTYPES for spelling in element_type(name).spellings if spelling != name}
#: dtypes gloo cannot all-reduce on CPU (gloo has no bfloat16 reduction); NCCL only.
NCCL_ONLY_DTYPES = ("float16", "bfloat16")

#: Reduction operations, in nccl-tests ``-o`` spelling.
REDOPS = ("sum", "prod", "max", "min")

BACKENDS = ("auto", "nccl", "gloo")

#: The two measurements of every size, in nccl-tests' order: separate send and receive buffers,
#: then the result written over the input (``BenchTime(..., in_place)`` in ``src/common.cu``).
PLACEMENTS = ("out_of_place", "in_place")

#: How the ranks' times of one block become one time, by nccl-tests' ``-a`` value (``-a,--average
#: <0/1/2/3> report average iteration time <0=RANK0/1=AVG/2=MIN/3=MAX>``, ``src/common.cu``):
#: rank 0's own time, the mean, the minimum or the maximum over ranks.
TIME_OVER_RANKS = ("rank0", "avg", "min", "max")
#: The default here is the maximum (``-a 3``): the slowest rank sets the pace of a collective.
#: nccl-tests' default is the mean (``-a 1``); the two agree when the ranks are balanced.
DEFAULT_TIME_OVER_RANKS = "max"

#: nccl-tests' size increment ``-i`` when none is given (``stepBytes = 1*1024*1024``, ``src/common.cu``).
DEFAULT_STEP_BYTES = 2**20
#: More sizes than this in one sweep is refused (``-f 1`` with a tiny ``-i`` over a wide range).
MAX_SWEEP_SIZES = 10_000

#: The root rank of the rooted collectives (nccl-tests ``-r``, default 0); the others print root -1.
ROOT_RANK = 0
ROOTED_COLLECTIVES = ("broadcast",)

#: Default process-group timeout: a peer that never arrives fails the run after this long.
DEFAULT_TIMEOUT_S = 60.0


def check_dtype(dtype: str) -> str:
    """Return the canonical torch name of ``dtype`` (``float`` -> ``float32``), or raise."""
    name = DTYPE_ALIASES.get(str(dtype).lower(), str(dtype).lower())
    if name not in DTYPE_BYTES:
        raise GpucommError(f"dtype {dtype!r} is not valid: expected one of {', '.join(DTYPE_BYTES)}")
    return name


def sweep_sizes(min_bytes: int, max_bytes: int, step_factor: int, elem_bytes: int, *,
                count_multiple: int = 1, step_bytes: int | None = None) -> list[tuple[int, int]]:
    """Message sizes of a sweep, as ``(msg_bytes, count)`` pairs.

    Parameters
    ----------
    min_bytes, max_bytes : int
        First and last size requested, in bytes (nccl-tests ``-b`` and ``-e``).
    step_factor : int
        Multiplication factor between sizes, an integer >= 2 (nccl-tests ``-f``); 0 or 1 with
        ``step_bytes``: add ``step_bytes`` instead.
    elem_bytes : int
        Bytes per element of the dtype.
    count_multiple : int
        The element count is rounded down to a multiple of this (at least one multiple):
        the number of ranks for :data:`CHUNKED_COLLECTIVES`, else 1.
    step_bytes : int or None
        Increment between sizes in bytes (nccl-tests ``-i``), with ``step_factor`` 0 or 1 only.

    Returns
    -------
    list of (int, int)
        ``(msg_bytes, count)``: each requested size rounded down to a multiple of
        ``elem_bytes * count_multiple``, at least one such multiple;
        ``count = msg_bytes / elem_bytes``. Sizes that round to the same value appear once.

    Raises
    ------
    GpucommError
        If ``min_bytes > max_bytes``, a size is below 1 byte, ``step_factor < 2`` without
        ``step_bytes``, ``step_bytes`` with ``step_factor >= 2``, or more than
        :data:`MAX_SWEEP_SIZES` sizes.

    Examples
    --------
    >>> sweep_sizes(8, 64, 2, 4)
    [(8, 2), (16, 4), (32, 8), (64, 16)]
    >>> sweep_sizes(1, 8, 2, 4)  # 1 and 2 bytes round up to one float32 element
    [(4, 1), (8, 2)]
    >>> sweep_sizes(8, 64, 2, 4, count_multiple=4)  # all_gather on 4 ranks: one element per rank at least
    [(16, 4), (32, 8), (64, 16)]
    >>> sweep_sizes(1024, 4096, 1, 4, step_bytes=1024)  # -f 1 -i 1K: nccl-tests' additive steps
    [(1024, 256), (2048, 512), (3072, 768), (4096, 1024)]
    """
    check_int(min_bytes, "minimum size -b (bytes)", 1)
    check_int(max_bytes, "maximum size -e (bytes)", 1)
    if step_bytes is None:
        check_int(step_factor, "step factor -f", 2)
    else:
        check_int(step_factor, "step factor -f", 0)
        check_int(step_bytes, "size increment -i (bytes)", 1)
        if step_factor > 1:
            raise GpucommError(f"size increment -i {step_bytes} B is used only with -f 0 or 1 (nccl-tests adds -i when "
                               f"-f <= 1), but -f is {step_factor}: expected -f 1 with -i, or no -i")
    check_int(elem_bytes, "element size (bytes)", 1)
    check_int(count_multiple, "count multiple", 1)
    if min_bytes > max_bytes:
        raise GpucommError(
            f"minimum size -b {min_bytes} B ({format_size(min_bytes)}) is larger than maximum size -e "
            f"{max_bytes} B ({format_size(max_bytes)}): expected -b <= -e")
    additive = step_bytes is not None
    if additive and (max_bytes - min_bytes) // step_bytes + 1 > MAX_SWEEP_SIZES:
        raise GpucommError(f"-b {format_size(min_bytes)} to -e {format_size(max_bytes)} in steps of -i "
                           f"{format_size(step_bytes)} is {(max_bytes - min_bytes) // step_bytes + 1} sizes: "
                           f"expected at most {MAX_SWEEP_SIZES} (a larger -i, or -f 2)")
    sizes: list[tuple[int, int]] = []
    size = min_bytes
    while size <= max_bytes:
        count = max(count_multiple, size // elem_bytes // count_multiple * count_multiple)
        if not sizes or sizes[-1][1] != count:
            sizes.append((count * elem_bytes, count))
        size = size + step_bytes if additive else size * step_factor
    return sizes


@dataclass(frozen=True)
class SweepConfig:
    """What one sweep measures; validated on creation. Picklable, so ranks receive it.

    Parameters
    ----------
    collective : str
        One of :data:`BENCH_COLLECTIVES` (torch.distributed spelling).
    min_bytes, max_bytes : int or str
        Size range in bytes, or strings for :func:`gpucomm.model.units.parse_size` (``"64MiB"``):
        per rank, or the total buffer for :data:`CHUNKED_COLLECTIVES` (as nccl-tests).
    step_factor : int
        Integer factor between sizes (>= 2), nccl-tests ``-f``; 0 or 1: add :attr:`step_bytes`.
    step_bytes : int or str or None
        Increment between sizes in bytes, nccl-tests ``-i``, used with ``step_factor`` 0 or 1
        only; None there means nccl-tests' default, 1 MiB (:data:`DEFAULT_STEP_BYTES`).
    iters : int
        Timed iterations per block (>= 1), nccl-tests ``-n``.
    blocks : int
        Timed blocks per size (>= 1). The reported time is the median over blocks of the
        block time / iters (each block's time reduced over ranks by :attr:`time_over_ranks`).
        1 (default) is nccl-tests' method; more blocks resist the rare millisecond stalls of
        shared or virtual CPUs, which inflate a block's mean.
    warmup_iters : int
        Untimed iterations before each timed block (>= 0), nccl-tests ``-w``.
    check : bool
        Run the separate correctness pass and count wrong elements (nccl-tests ``-c``).
    dtype : str
        ``float32`` (default), ``float64``; ``float16``/``bfloat16`` on NCCL only.
    op : str
        Reduction: ``sum``, ``prod``, ``max`` or ``min`` (ignored by collectives that do not
        reduce, which record ``"none"``).
    backend : str
        ``auto`` (NCCL with one GPU per rank when possible, else gloo on CPU), ``nccl`` or ``gloo``.
    out : str or None
        JSON-lines results file, or None for none.
    max_seconds_per_size : float or None
        If set, large sizes run fewer timed iterations (at least 1) so that one timed
        block takes about this long; the estimate comes from the warm-up, agreed by all
        ranks. None (default): every size runs ``iters`` iterations.
    timeout_s : float
        Process-group timeout in seconds: a hung or missing peer fails the run after it.
    argv : tuple of str
        The command line, recorded in the results metadata.
    time_over_ranks : str
        How a block's time on each rank becomes one time, one of :data:`TIME_OVER_RANKS`
        (nccl-tests ``-a`` 0 to 3): ``rank0``, ``avg``, ``min`` or ``max`` (default, ``-a 3``).
    graph_launches : int
        nccl-tests ``-G``: 0 (default) calls each operation from Python; N >= 1 captures the
        ``iters`` operations of a block in one CUDA graph and times N launches of it (NCCL on
        GPUs only: :func:`check_backend_graphs`).
    """

    collective: str = "all_reduce"
    min_bytes: int = 8
    max_bytes: int = 64 * 2**20
    step_factor: int = 2
    iters: int = 20
    blocks: int = 1
    warmup_iters: int = 5
    check: bool = True
    dtype: str = "float32"
    op: str = "sum"
    backend: str = "auto"
    out: str | None = None
    max_seconds_per_size: float | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    argv: tuple[str, ...] = field(default_factory=tuple)
    step_bytes: int | None = None
    time_over_ranks: str = DEFAULT_TIME_OVER_RANKS
    graph_launches: int = 0

    def __post_init__(self) -> None:
        fix = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen dataclass)
        if self.collective not in BENCH_COLLECTIVES:
            raise GpucommError(f"collective {self.collective!r} is not measured yet: expected one of {', '.join(BENCH_COLLECTIVES)}")
        fix("min_bytes", parse_size(self.min_bytes))
        fix("max_bytes", parse_size(self.max_bytes))
        if self.step_bytes is not None:
            fix("step_bytes", parse_size(self.step_bytes))
        elif isinstance(self.step_factor, int) and not isinstance(self.step_factor, bool) and self.step_factor in (0, 1):
            fix("step_bytes", DEFAULT_STEP_BYTES)  # nccl-tests: -f 0 or 1 adds -i, 1 MiB by default
        check_int(self.step_factor, "step factor -f", 0)
        check_int(self.iters, "iterations -n", 1)
        check_int(self.blocks, "timed blocks --blocks", 1)
        check_int(self.warmup_iters, "warm-up iterations -w", 0)
        if self.check not in (0, 1, True, False):
            raise GpucommError(f"check -c {self.check!r} is not valid: expected 0 or 1")
        fix("check", bool(self.check))
        fix("dtype", check_dtype(self.dtype))
        if self.op not in REDOPS:
            raise GpucommError(f"reduction op -o {self.op!r} is not valid: expected one of {', '.join(REDOPS)}")
        if self.backend not in BACKENDS:
            raise GpucommError(f"backend {self.backend!r} is not valid: expected one of {', '.join(BACKENDS)}")
        if self.time_over_ranks not in TIME_OVER_RANKS:
            raise GpucommError(f"time over ranks {self.time_over_ranks!r} is not valid: expected one of "
                               f"{', '.join(TIME_OVER_RANKS)} (-a 0 to 3)")
        check_int(self.graph_launches, "CUDA graph launches -G", 0)
        if self.backend == "gloo":
            check_backend_dtype("gloo", self.dtype)
            check_backend_collective("gloo", self.collective)
            check_backend_graphs("gloo", self.graph_launches)
        if self.max_seconds_per_size is not None and not (
                isinstance(self.max_seconds_per_size, (int, float)) and math.isfinite(self.max_seconds_per_size)
                and self.max_seconds_per_size > 0):
            raise GpucommError(f"max seconds per size {self.max_seconds_per_size!r} is not valid: expected a number > 0")
        if not (isinstance(self.timeout_s, (int, float)) and math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise GpucommError(f"timeout {self.timeout_s!r} s is not valid: expected a number of seconds > 0")
        fix("argv", tuple(self.argv))
        self.sizes()  # raises on min > max

    @property
    def elem_bytes(self) -> int:
        """Bytes per element of :attr:`dtype`."""
        return DTYPE_BYTES[self.dtype]

    @property
    def op_name(self) -> str:
        """The reduction recorded in results: :attr:`op`, or ``"none"`` for a collective that does not reduce."""
        return self.op if self.collective in REDUCING_COLLECTIVES else "none"

    @property
    def op_ignored(self) -> bool:
        """True when ``-o`` asked for a reduction other than the default on a collective that does not reduce.

        nccl-tests then runs the collective with no reduction and prints redop ``none``; the table
        header says that ``-o`` was ignored.
        """
        return self.op != "sum" and self.collective not in REDUCING_COLLECTIVES

    def sizes(self, num_ranks: int = 1) -> list[tuple[int, int]]:
        """``(msg_bytes, count)`` for every size of the sweep on ``num_ranks`` ranks, see :func:`sweep_sizes`.

        The rank count matters only for :data:`CHUNKED_COLLECTIVES` (whole elements per rank).
        """
        multiple = num_ranks if self.collective in CHUNKED_COLLECTIVES else 1
        return sweep_sizes(self.min_bytes, self.max_bytes, self.step_factor, self.elem_bytes, count_multiple=multiple,
                           step_bytes=self.step_bytes)


def check_backend_dtype(backend: str, dtype: str) -> None:
    """Raise if ``backend`` cannot reduce ``dtype`` (gloo: float32/float64 only here)."""
    if backend == "gloo" and dtype in NCCL_ONLY_DTYPES:
        raise GpucommError(
            f"dtype {dtype} is not supported on gloo (CPU): gloo all_reduce has no bfloat16, and this runner "
            f"allows {' and '.join(NCCL_ONLY_DTYPES)} on NCCL only: expected -d float32 or float64, or GPUs with --backend nccl")


def check_backend_collective(backend: str, collective: str) -> None:
    """Raise if ``backend`` does not implement ``collective`` (see :data:`UNSUPPORTED`).

    Nothing is emulated: a collective a backend lacks is reported, not replaced by another.

    Examples
    --------
    >>> check_backend_collective("gloo", "all_gather")
    >>> check_backend_collective("gloo", "reduce_scatter")
    Traceback (most recent call last):
    ...
    gpucomm.GpucommError: reduce_scatter is not supported on gloo (CPU): gloo has no reduce-scatter ...
    """
    reason = UNSUPPORTED.get(backend, {}).get(collective)
    if reason is not None:
        raise GpucommError(f"{collective} is not supported on {backend} (CPU): {reason}; expected GPUs with "
                           f"--backend nccl, or another collective")


def check_backend_graphs(backend: str, graph_launches: int) -> None:
    """Raise if CUDA graphs are asked for (``-G N``, N >= 1) on a backend that does not run on GPUs.

    nccl-tests ``-G`` captures NCCL calls in a CUDA graph; gloo runs on the CPU, where there is
    no graph to capture.

    Examples
    --------
    >>> check_backend_graphs("nccl", 10)
    >>> check_backend_graphs("gloo", 0)
    >>> check_backend_graphs("gloo", 10)
    Traceback (most recent call last):
    ...
    gpucomm.GpucommError: -G 10 (CUDA graph launches) needs NCCL on GPUs, but the backend is gloo (CPU): ...
    """
    if graph_launches and backend != "nccl":
        raise GpucommError(f"-G {graph_launches} (CUDA graph launches) needs NCCL on GPUs, but the backend is {backend} "
                           "(CPU): expected -G 0, or GPUs with --backend nccl")


def supported_collectives(backend: str) -> tuple[str, ...]:
    """The collectives of :data:`BENCH_COLLECTIVES` that ``backend`` (``nccl`` or ``gloo``) implements.

    Examples
    --------
    >>> supported_collectives("gloo")
    ('all_reduce', 'all_gather', 'broadcast', 'all_to_all', 'send_recv')
    """
    return tuple(c for c in BENCH_COLLECTIVES if c not in UNSUPPORTED.get(backend, {}))


def check_collective_ranks(collective: str, num_ranks: int) -> None:
    """Raise if ``collective`` needs more ranks than ``num_ranks`` (send_recv needs 2)."""
    needed = MIN_RANKS.get(collective, 1)
    if num_ranks < needed:
        raise GpucommError(f"{collective} needs at least {needed} ranks, but {num_ranks} was asked for: "
                           f"expected --ranks {needed} or more")
