"""A Megatron-style tensor-parallel transformer layer on N ranks: compute time vs all_reduce time.

Each rank holds ``1/N`` of the layer's weights, as in Megatron-LM (Shoeybi et al.,
arXiv:1909.08053, sec. 3, Fig. 3):

* **MLP block**: the first linear is *column-parallel* (rank ``r`` holds rows
  ``r f/N .. (r+1) f/N`` of ``W1``, so it computes its own slice of the ``f`` hidden
  activations and applies GeLU locally), the second is *row-parallel* (rank ``r`` holds the
  matching columns of ``W2``, so each rank produces a full-width partial sum). One
  ``all_reduce`` of ``tokens x hidden`` adds the partial sums: Megatron's operator ``g``.
* **Attention block** (optional, ``attention=True``, run before the MLP): Q, K, V
  projections column-parallel by heads (each rank owns ``heads/N`` heads and computes their
  causal attention locally), output projection row-parallel, then one ``all_reduce``.

Both blocks are pre-norm with a residual (``x + block(layer_norm(x))``); layer norm and the
residual are replicated on every rank, as in Megatron-LM. The input ``x`` is the same on all
ranks (operator ``f`` is the identity in the forward pass).

What is measured (every time: the slowest rank, the median of ``blocks`` timed blocks of
``iters`` layers, after ``warmup_iters`` untimed layers; the blocks of all the timed functions
below are interleaved, so that a change of load on a shared machine affects them alike; on
GPUs each block ends with ``torch.cuda.synchronize``):

* ``compute_s``: the layer with the all_reduces left out (each rank's own work);
* ``comm_s``: the layer's all_reduces alone, on buffers of the same sizes;
* ``layer_s``: the whole layer, and ``exposed_comm_s = layer_s - compute_s``: the part of the
  communication that the layer waits for;
* ``rank_compute_s``, ``rank_all_reduce_s``: inside the blocking layer, each rank's own time in
  compute and in the all_reduces (median over iterations). A rank that finishes its compute
  early waits for the slowest one inside the all_reduce, so the two lists show load imbalance.

With ``overlap=True`` the tokens are split into ``chunks`` (whole sequences each) and the
all_reduce of chunk ``i`` runs asynchronously (``async_op=True`` work handles) while chunk
``i+1`` is computed; a block's next stage waits for its chunk's handle only when it needs
that chunk. The unchunked, blocking layer is measured in the same run as the baseline
(``serial_*`` keys, ``overlap_gain``).

A separate correctness pass compares the TP output with a single-rank reference computed
from the concatenated shards (float64 on CPU, float32 on GPUs) and reports the relative
Frobenius error; with ``overlap=True`` the chunked output is checked too.

The timing (warm-up, interleaved blocks, the maximum over ranks, the median block), the
process group and the metadata record are the shared harness's (:mod:`gpucomm.measure.harness`,
as for the collective sweep and copy bandwidth); ``run_tp_layer(out=...)`` writes the same
JSON-lines results file (a metadata record, then the result record), and
:func:`~gpucomm.measure.tp_layer_table.format_tp_layer_table` prints results with the same table
printer (:mod:`gpucomm.measure.tp_layer_table`, :mod:`gpucomm.measure.results`).

The layer's FLOPs per rank, the size of its all_reduce and the time of the overlapped layer are
model formulas (:func:`gpucomm.model.tp.tp_layer_flops_per_rank`,
:func:`~gpucomm.model.tp.tp_layer_all_reduce_bytes`, :func:`~gpucomm.model.tp.overlapped_time_s`):
the result record's rates are computed with them, and their names stay importable from here.

gloo (CPU) runs float32 with small dimensions in seconds; NCCL (one GPU per rank) runs
bfloat16 by default. torch is imported only when a layer runs: importing this module loads
neither torch nor plotly.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from gpucomm import GpucommError
from gpucomm.measure import harness
from gpucomm.measure.config import BACKENDS, DEFAULT_TIMEOUT_S, check_dtype
from gpucomm.measure.launch import launch_workers
from gpucomm.measure.results import ResultsWriter

# The table of results and the layer's formulas live in their own modules; their names stay importable from here.
from gpucomm.measure.tp_layer_table import TP_LAYER_TABLE, format_tp_layer_table, tp_layer_rows
from gpucomm.model.collectives import busbw_factor, check_num_ranks
from gpucomm.model.tp import overlapped_time_s, tp_layer_all_reduce_bytes, tp_layer_flops_per_rank
from gpucomm.model.units import check_int

__all__ = ["TPLayerConfig", "run_tp_layer", "tp_layer_flops_per_rank", "tp_layer_all_reduce_bytes",
           "overlapped_time_s", "CHECK_TOLERANCE", "TP_LAYER_TABLE", "tp_layer_rows", "format_tp_layer_table"]

#: Relative Frobenius error ``|y_tp - y_ref| / |y_ref|`` accepted by the correctness pass, by dtype.
#: float32: reductions in a different order differ by a few ulps (about 1e-7 relative per
#: operation); 1e-4 leaves room for the layer's ~1e4 additions per output element.
#: bfloat16 has an 8-bit significand (ulp 2**-8 = 0.4 %): the TP output rounds partial sums
#: before adding them, which the float32 reference does not.
CHECK_TOLERANCE = {"float32": 1e-4, "float64": 1e-10, "bfloat16": 3e-2, "float16": 5e-3}


@dataclass(frozen=True)
class TPLayerConfig:
    """What :func:`run_tp_layer` measures (validated against the rank count by :meth:`validate`).

    Attributes
    ----------
    hidden : int
        Model width ``h`` (activation columns); divisible by ``head_dim`` with attention.
    ffn : int
        MLP inner width ``f``; divisible by the number of ranks.
    tokens : int
        Tokens in the batch ``T`` (batch x sequence length); a multiple of ``seq_len``.
    seq_len : int or None
        Tokens per sequence for attention (None: ``min(tokens, 64)``); with the MLP alone a
        token is its own sequence for chunking purposes.
    head_dim : int
        Attention head size; ``hidden / head_dim`` heads, divisible by the number of ranks.
    attention : bool
        Run the attention block before the MLP (two all_reduces per layer instead of one).
    overlap : bool
        Also measure the chunked layer that overlaps chunk ``i``'s all_reduce with chunk
        ``i+1``'s compute.
    chunks : int
        Chunks for ``overlap`` (>= 2); each chunk holds whole sequences.
    iters, warmup_iters, blocks : int
        Layers per timed block, untimed layers before timing, timed blocks (median reported).
    dtype : str
        ``auto`` (float32 on gloo, bfloat16 on NCCL), ``float32``, ``float64``; ``bfloat16`` and
        ``float16`` on NCCL only.
    backend : str
        ``auto``, ``nccl`` or ``gloo``.
    check : bool
        Run the correctness pass against the single-rank reference.
    rng_seed : int
        Starting value of the random-number generator for the weights and the input (the same on every rank count's shards).
    timeout_s : float
        Process-group timeout in seconds.
    """

    hidden: int = 1024
    ffn: int = 4096
    tokens: int = 256
    seq_len: int | None = None
    head_dim: int = 64
    attention: bool = False
    overlap: bool = False
    chunks: int = 4
    iters: int = 5
    warmup_iters: int = 2
    blocks: int = 3
    dtype: str = "auto"
    backend: str = "auto"
    check: bool = True
    rng_seed: int = 0
    timeout_s: float = DEFAULT_TIMEOUT_S

    @property
    def sequence_tokens(self) -> int:
        """Tokens per sequence: ``seq_len`` with attention (default ``min(tokens, 64)``), 1 without."""
        if not self.attention:
            return 1
        return self.seq_len if self.seq_len is not None else min(self.tokens, 64)

    @property
    def num_heads(self) -> int:
        """Attention heads, ``hidden / head_dim``."""
        return self.hidden // self.head_dim

    def validate(self, num_ranks: int) -> TPLayerConfig:
        """Check every field for ``num_ranks`` ranks; return self.

        Raises
        ------
        GpucommError
            With the field, the value and what is expected.
        """
        check_num_ranks(num_ranks, maximum=4096)
        for name in ("hidden", "ffn", "tokens", "head_dim", "iters", "blocks"):
            check_int(getattr(self, name), name, 1)
        check_int(self.warmup_iters, "warmup_iters", 0)
        if self.seq_len is not None:
            check_int(self.seq_len, "seq_len", 1)
        if self.ffn % num_ranks:
            raise GpucommError(f"ffn {self.ffn} is not divisible by {num_ranks} ranks: expected a multiple of {num_ranks} "
                               "(each rank holds ffn / ranks columns of the first linear)")
        if self.attention:
            if self.hidden % self.head_dim:
                raise GpucommError(f"hidden {self.hidden} is not a multiple of head_dim {self.head_dim}: expected "
                                   "hidden = heads x head_dim")
            if self.num_heads % num_ranks:
                raise GpucommError(f"{self.num_heads} attention heads (hidden {self.hidden} / head_dim {self.head_dim}) "
                                   f"are not divisible by {num_ranks} ranks: expected heads to be a multiple of the ranks")
            if self.tokens % self.sequence_tokens:
                raise GpucommError(f"tokens {self.tokens} is not a multiple of seq_len {self.sequence_tokens}: expected "
                                   "whole sequences")
        if self.overlap:
            check_int(self.chunks, "chunks", 2)
            sequences = self.tokens // self.sequence_tokens
            if sequences % self.chunks:
                what = "sequences" if self.attention else "tokens"
                raise GpucommError(f"{sequences} {what} cannot be split into {self.chunks} equal chunks: expected chunks "
                                   f"to divide the number of {what}")
        if self.backend not in BACKENDS:
            raise GpucommError(f"backend {self.backend!r} is not valid: expected one of {', '.join(BACKENDS)}")
        if self.dtype != "auto":
            check_dtype(self.dtype)
        if not (isinstance(self.timeout_s, (int, float)) and math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise GpucommError(f"timeout {self.timeout_s!r} s is not valid: expected a number of seconds > 0")
        return self


# ----------------------------------------------------------------------------------- the rank (torch)

def _weights(config: TPLayerConfig, rank: int, num_ranks: int, torch):
    """This rank's shards (float32, CPU), each drawn from its own seeded generator.

    Shard ``r`` of every matrix depends only on ``(rng_seed, matrix, r, N)``, so the reference can
    rebuild the full matrices by concatenating the shards of all ranks.
    """
    h, f, hd = config.hidden, config.ffn, config.head_dim

    def draw(index: int, shape: tuple[int, ...], fan_in: int):
        g = torch.Generator().manual_seed(config.rng_seed * 1_000_003 + num_ranks * 10_007 + rank * 101 + index)
        return torch.randn(shape, generator=g) / math.sqrt(fan_in)  # unit-variance activations

    shards = {"w1": draw(1, (f // num_ranks, h), h), "w2": draw(2, (h, f // num_ranks), f)}
    if config.attention:
        heads_r = config.num_heads // num_ranks
        shards["wqkv"] = draw(3, (3, heads_r * hd, h), h)   # q, k, v rows of this rank's heads
        shards["wo"] = draw(4, (h, heads_r * hd), h)
    return shards


def _input(config: TPLayerConfig, torch):
    g = torch.Generator().manual_seed(config.rng_seed * 1_000_003 + 7)
    return torch.randn((config.tokens, config.hidden), generator=g)


def _attention_partial(x, w, config: TPLayerConfig, torch):
    """This rank's heads: causal attention, then its columns of the output projection (a partial sum)."""
    F = torch.nn.functional
    tokens, h = x.shape
    s = config.sequence_tokens
    a = F.layer_norm(x, (h,))
    wqkv = w["wqkv"]
    hr = wqkv.shape[1]
    heads_r = hr // config.head_dim
    qkv = a @ wqkv.reshape(3 * hr, h).T                       # [T, 3 hr]
    q, k, v = (t.reshape(tokens // s, s, heads_r, config.head_dim).transpose(1, 2) for t in qkv.split(hr, dim=1))
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)   # [B, heads_r, S, d]
    o = o.transpose(1, 2).reshape(tokens, hr)
    return o @ w["wo"].T                                        # [T, h], summed over ranks by the all_reduce


def _mlp_partial(x, w, torch):
    """Column-parallel W1 + GeLU, row-parallel W2: this rank's partial sum of the MLP output."""
    F = torch.nn.functional
    a = F.layer_norm(x, (x.shape[1],))
    return F.gelu(a @ w["w1"].T) @ w["w2"].T


def _stages(config: TPLayerConfig, w, torch) -> list:
    stages = []
    if config.attention:
        stages.append(lambda x: _attention_partial(x, w, config, torch))
    stages.append(lambda x: _mlp_partial(x, w, torch))
    return stages


def _layer(x, stages, *, chunks: int, comm: str, dist):
    """One layer over ``chunks`` chunks; ``comm`` is ``blocking``, ``async`` or ``none``.

    The wave schedule: every chunk goes through stage 0 (each all_reduce started as soon as its
    partial sum exists), then every chunk through stage 1, which first waits for that chunk's
    stage-0 all_reduce. With ``async`` the all_reduce of chunk ``i`` overlaps the compute of
    chunk ``i+1`` (and the last chunk's overlaps stage 1 of chunk 0).
    """
    cur = list(x.chunk(chunks, dim=0)) if chunks > 1 else [x]
    pending: list = [None] * len(cur)   # (residual input, partial, work) per chunk
    for stage in stages:
        for i in range(len(cur)):
            if pending[i] is not None:
                inp, partial, work = pending[i]
                if work is not None:
                    work.wait()
                cur[i] = inp + partial
            partial = stage(cur[i])
            work = None
            if comm == "blocking":
                dist.all_reduce(partial)
            elif comm == "async":
                work = dist.all_reduce(partial, async_op=True)
            pending[i] = (cur[i], partial, work)
    out = []
    for inp, partial, work in pending:
        if work is not None:
            work.wait()
        out.append(inp + partial)
    return out[0] if len(out) == 1 else out


def _comm_only(buffers: list, dist) -> None:
    for b in buffers:
        dist.all_reduce(b)


def _reference(config: TPLayerConfig, num_ranks: int, x, device, torch):
    """The layer on one rank with the full (concatenated) weights: float64 on CPU, float32 on GPU."""
    ref_dtype = torch.float64 if device.type == "cpu" else torch.float32
    shards = [_weights(config, r, num_ranks, torch) for r in range(num_ranks)]
    full = {"w1": torch.cat([s["w1"] for s in shards], dim=0), "w2": torch.cat([s["w2"] for s in shards], dim=1)}
    if config.attention:
        full["wqkv"] = torch.cat([s["wqkv"] for s in shards], dim=1)
        full["wo"] = torch.cat([s["wo"] for s in shards], dim=1)
    return full, ref_dtype


def _rel_error(out, ref, torch) -> float:
    diff = (out.to(ref.dtype) - ref).norm().item()
    norm = ref.norm().item()
    return diff / norm if norm > 0 else diff


def _tp_rank(config: TPLayerConfig, *, rank: int, world_size: int, local_rank: int, local_world_size: int,
             init_method: str | None, launcher: str, out: str | os.PathLike | None = None,
             argv: Sequence[str] = ()) -> dict:
    """One rank: form the process group, check, time, and return the result (the same on every rank).

    Rank 0 writes the results file ``out`` (if given): the metadata record first, then the
    result record when the layer has been measured.
    """
    import torch
    import torch.distributed as dist

    from gpucomm.measure.spec import TORCH_DTYPES

    requested = "float32" if config.dtype == "auto" else check_dtype(config.dtype)
    backend, note = harness.resolve_backend(config.backend, local_world_size, requested)
    dtype_name = ("bfloat16" if backend == "nccl" else "float32") if config.dtype == "auto" else requested
    device = harness.rank_device(backend, local_rank, local_world_size)
    with harness.process_group(backend, rank=rank, world_size=world_size, device=device, timeout_s=config.timeout_s,
                               init_method=init_method):
        rank_hosts, devices = harness.gather_rank_names(device, world_size)
        meta = harness.metadata_record(
            "gpucomm.bench.tp_layer", rank_hosts=rank_hosts, devices=devices, argv=argv, num_ranks=world_size,
            backend=backend, backend_note=note, launcher=launcher, dtype=dtype_name, iters=config.iters,
            warmup_iters=config.warmup_iters, blocks=config.blocks,
            timing=("host clock per block of iters layers (after cuda synchronize on GPU) / iters, max over ranks, "
                    "median over interleaved blocks"),
            config=asdict(config))
        writer = ResultsWriter(out) if rank == 0 and out is not None else None
        try:
            if writer:
                writer.write(meta)
            result = _measure(config, rank=rank, world_size=world_size, device=device,
                              dtype=TORCH_DTYPES[dtype_name], dtype_name=dtype_name, meta=meta, torch=torch, dist=dist)
            if writer:
                writer.write(result)
        finally:
            if writer:
                writer.close()
    return result


def _measure(config: TPLayerConfig, *, rank, world_size, device, dtype, dtype_name, meta, torch, dist) -> dict:
    """Check and time the layer on this rank (collective); the result record, the same on every rank."""
    w = {k: v.to(device=device, dtype=dtype) for k, v in _weights(config, rank, world_size, torch).items()}
    x = _input(config, torch).to(device=device, dtype=dtype)
    stages = _stages(config, w, torch)
    chunks = config.chunks if config.overlap else 1
    rel_error, rel_error_overlap = (None, None) if not config.check else _check_output(
        config, x, stages, chunks, rank=rank, world_size=world_size, device=device, dtype=dtype, torch=torch, dist=dist)
    serial, chosen = _time_variants(config, x, stages, chunks, device=device, torch=torch, dist=dist)
    per_rank: list = [None] * world_size
    dist.all_gather_object(per_rank, _breakdown(config, x, stages, device=device, torch=torch, dist=dist))
    return _result_record(config, meta, world_size=world_size, dtype_name=dtype_name, chunks=chunks,
                          num_stages=len(stages), serial=serial, chosen=chosen, per_rank=per_rank,
                          rel_error=rel_error, rel_error_overlap=rel_error_overlap)


def _check_output(config: TPLayerConfig, x, stages, chunks: int, *, rank, world_size, device, dtype, torch,
                  dist) -> tuple[float, float | None]:
    """The TP output (blocking, and chunked with async all_reduces) against one rank's: the relative errors, max over ranks."""
    with torch.no_grad():
        out = _layer(x, stages, chunks=1, comm="blocking", dist=dist)
        out_chunked = torch.cat(_layer(x, stages, chunks=chunks, comm="async", dist=dist)) if chunks > 1 else None
        harness.synchronize(device)
        errors = [0.0, 0.0]
        if rank == 0:
            full, ref_dtype = _reference(config, world_size, x, device, torch)
            fw = {k: v.to(device=device, dtype=dtype).to(ref_dtype) for k, v in full.items()}
            ref = _layer(x.to(ref_dtype), _stages(config, fw, torch), chunks=1, comm="none", dist=dist)
            errors = [_rel_error(out, ref, torch),
                      _rel_error(out_chunked, ref, torch) if out_chunked is not None else 0.0]
    rel_error = harness.max_over_ranks(errors[0], device)
    rel_error_overlap = harness.max_over_ranks(errors[1], device) if chunks > 1 else None
    return rel_error, rel_error_overlap


def _variant(x, stages, prefix: str, n_chunks: int, comm: str, dist) -> dict:
    """The three timed functions of one variant, keyed ``<prefix>compute_s``, ``<prefix>comm_s``, ``<prefix>layer_s``."""
    sample = _layer(x, stages, chunks=n_chunks, comm="none", dist=dist)
    buffers = [p.clone() for p in ([sample] if n_chunks == 1 else sample) for _ in stages]
    return {f"{prefix}compute_s": lambda: _layer(x, stages, chunks=n_chunks, comm="none", dist=dist),
            f"{prefix}comm_s": lambda: _comm_only(buffers, dist),
            f"{prefix}layer_s": lambda: _layer(x, stages, chunks=n_chunks, comm=comm, dist=dist)}


def _time_variants(config: TPLayerConfig, x, stages, chunks: int, *, device, torch, dist) -> tuple[dict, dict]:
    """Times of the blocking layer and, with ``overlap``, the chunked one: ``(serial, chosen)``, each by ``*_s`` key."""
    with torch.no_grad():
        # Blocking and overlapped variants in one interleaved set of blocks: a change of load on a
        # shared machine during the run affects both alike, so their ratio stays meaningful.
        fns = _variant(x, stages, "serial_", 1, "blocking", dist)
        if config.overlap:
            fns.update(_variant(x, stages, "", chunks, "async", dist))
        t = harness.timed_blocks_s(fns, iters=config.iters, warmup_iters=config.warmup_iters, blocks=config.blocks,
                                   device=device, across_ranks=True)
    serial = {k: t[f"serial_{k}"] for k in ("compute_s", "comm_s", "layer_s")}
    chosen = {k: t[k] for k in ("compute_s", "comm_s", "layer_s")} if config.overlap else serial
    return serial, chosen


def _breakdown(config: TPLayerConfig, x, stages, *, device, torch, dist) -> tuple[float, float]:
    """Inside the blocking layer: this rank's time in compute and in all_reduce, median over iterations.

    The all_reduce time includes waiting for the slowest rank to arrive, so the ranks' lists show load imbalance.
    """
    comp, comm = [], []
    with torch.no_grad():
        for _ in range(config.iters * config.blocks):
            harness.barrier(device)
            c = a = 0.0
            cur = x
            for stage in stages:
                harness.synchronize(device)
                t0 = time.perf_counter()
                partial = stage(cur)
                harness.synchronize(device)
                t1 = time.perf_counter()
                dist.all_reduce(partial)
                harness.synchronize(device)
                t2 = time.perf_counter()
                c, a = c + (t1 - t0), a + (t2 - t1)
                cur = cur + partial
            comp.append(c)
            comm.append(a)
    return statistics.median(comp), statistics.median(comm)


def _result_record(config: TPLayerConfig, meta: dict, *, world_size: int, dtype_name: str, chunks: int, num_stages: int,
                   serial: dict, chosen: dict, per_rank: list, rel_error: float | None,
                   rel_error_overlap: float | None) -> dict:
    """The ``"record": "tp_layer"`` result from the times, the check and the metadata (rates from the model's formulas)."""
    layer_bytes = tp_layer_all_reduce_bytes(config.hidden, config.tokens, dtype=dtype_name)
    flops = tp_layer_flops_per_rank(config.hidden, config.ffn, config.tokens, num_ranks=world_size,
                                    attention=config.attention, seq_len=config.sequence_tokens if config.attention else None)
    factor = busbw_factor("all_reduce", world_size)
    tolerance = CHECK_TOLERANCE[dtype_name]
    result = {
        "record": "tp_layer",
        "num_ranks": world_size,
        "backend": meta["backend"],
        "backend_note": meta["backend_note"],
        "dtype": dtype_name,
        "hidden": config.hidden,
        "ffn": config.ffn,
        "tokens": config.tokens,
        "seq_len": config.sequence_tokens if config.attention else None,
        "heads": config.num_heads if config.attention else None,
        "blocks_in_layer": ["attention", "mlp"] if config.attention else ["mlp"],
        "overlap": config.overlap,
        "chunks": chunks,
        "iters": config.iters,
        "warmup_iters": config.warmup_iters,
        "blocks": config.blocks,
        "all_reduces": num_stages * chunks,
        "msg_bytes": layer_bytes // chunks,
        "layer_all_reduce_bytes": num_stages * layer_bytes,
        "flops_per_rank": flops,
        **chosen,
        "exposed_comm_s": max(0.0, chosen["layer_s"] - chosen["compute_s"]),
        "compute_flops_per_s": flops / chosen["compute_s"],
        "comm_busbw_bytes_per_s": factor * num_stages * layer_bytes / chosen["comm_s"] if factor else 0.0,
        "serial_compute_s": serial["compute_s"],
        "serial_comm_s": serial["comm_s"],
        "serial_layer_s": serial["layer_s"],
        "serial_compute_flops_per_s": flops / serial["compute_s"],
        "serial_comm_busbw_bytes_per_s": factor * num_stages * layer_bytes / serial["comm_s"] if factor else 0.0,
        "overlap_gain": 1.0 - chosen["layer_s"] / serial["layer_s"] if config.overlap else 0.0,
        "rank_compute_s": [c for c, _ in per_rank],
        "rank_all_reduce_s": [a for _, a in per_rank],
        "rel_error": rel_error,
        "rel_error_overlap": rel_error_overlap,
        "tolerance": tolerance,
        "check_ok": (None if rel_error is None else
                     rel_error <= tolerance and (rel_error_overlap is None or rel_error_overlap <= tolerance)),
        "hosts": meta["hosts"],
        "devices": meta["devices"],
        "launcher": meta["launcher"],
        "torch_version": meta["torch_version"],
        "python_version": meta["python_version"],
        "config": asdict(config),
    }
    comm = chosen["comm_s"]
    result["hidden_comm_fraction"] = (1.0 - result["exposed_comm_s"] / comm) if comm > 0 else 0.0
    result["hidden_comm_fraction"] = min(1.0, max(0.0, result["hidden_comm_fraction"]))
    return result


# ----------------------------------------------------------------------------------- launching

def _tp_worker(rank: int, world_size: int, port: int, send, config: TPLayerConfig,
               out: str | None = None, argv: Sequence[str] = ()) -> dict | None:
    """One TP-layer rank under :func:`~gpucomm.measure.launch.launch_workers` (module-level for spawn).

    Every rank computes the same result; only rank 0's is sent back.
    """
    result = _tp_rank(config, rank=rank, world_size=world_size, local_rank=rank, local_world_size=world_size,
                      init_method=f"tcp://127.0.0.1:{port}", launcher="local", out=out, argv=argv)
    return result if rank == 0 else None


def _launch(config: TPLayerConfig, num_ranks: int, *, out: str | None = None, argv: Sequence[str] = (),
            poll_s: float = 0.1) -> dict:
    """Start ``num_ranks`` local ranks with :func:`~gpucomm.measure.launch.launch_workers`; return rank 0's result."""
    return launch_workers(_tp_worker, num_ranks, (config, out, tuple(argv)), name="gpucomm-tp-rank",
                          poll_s=poll_s)[0]


def run_tp_layer(num_ranks: int = 2, hidden: int = 1024, ffn: int = 4096, tokens: int = 256, iters: int = 5,
                 overlap: bool = False, backend: str = "auto", *, attention: bool = False, seq_len: int | None = None,
                 head_dim: int = 64, chunks: int = 4, warmup_iters: int = 2, blocks: int = 3, dtype: str = "auto",
                 check: bool = True, rng_seed: int = 0, timeout_s: float = DEFAULT_TIMEOUT_S,
                 out: str | os.PathLike | None = None) -> dict:
    """Measure a Megatron-style TP layer forward on ``num_ranks`` local ranks: compute vs all_reduce.

    The ranks are separate processes started here (spawn: the rank code lives in this module,
    so notebooks can call it), one per GPU with NCCL, else on the CPU with gloo.

    Parameters
    ----------
    num_ranks : int
        Tensor-parallel degree ``N`` (>= 1); on NCCL at most the number of GPUs.
    hidden, ffn, tokens : int
        Width ``h``, MLP inner width ``f`` (a multiple of ``N``), tokens in the batch.
    iters : int
        Layers per timed block.
    overlap : bool
        Also run the chunked layer whose all_reduces overlap the next chunk's compute.
    backend : str
        ``auto``, ``nccl`` or ``gloo``.
    attention : bool
        Add the attention block (heads ``hidden / head_dim``, a multiple of ``N``).
    seq_len, head_dim, chunks, warmup_iters, blocks, dtype, check, rng_seed, timeout_s
        See :class:`TPLayerConfig`.
    out : str or Path or None
        JSON-lines results file, as the collective sweep's (:mod:`gpucomm.measure.results`):
        the metadata record (``"tool": "gpucomm.bench.tp_layer"``), then the result record;
        :func:`gpucomm.measure.results.read_results` reads it back.

    Returns
    -------
    dict
        The same on every rank; times are seconds, the slowest rank, median over blocks:
        ``compute_s`` (no communication), ``comm_s`` (all_reduces alone), ``layer_s`` (both),
        ``exposed_comm_s = layer_s - compute_s`` and ``hidden_comm_fraction`` (1 -
        exposed / comm), for the overlapped layer when ``overlap`` is set; the blocking,
        unchunked layer as ``serial_compute_s``, ``serial_comm_s``, ``serial_layer_s`` and
        ``overlap_gain = 1 - layer_s / serial_layer_s``; per rank inside the blocking layer,
        ``rank_compute_s`` and ``rank_all_reduce_s`` (lists). Also ``all_reduces`` per layer,
        ``msg_bytes`` per all_reduce, ``flops_per_rank``, ``compute_flops_per_s``,
        ``comm_busbw_bytes_per_s`` (of the measured variant; ``serial_compute_flops_per_s`` and
        ``serial_comm_busbw_bytes_per_s`` of the blocking one), the check (``rel_error``, ``rel_error_overlap``,
        ``tolerance``, ``check_ok``), ``backend``, ``dtype``, ``devices`` and the ``config``.

    Raises
    ------
    GpucommError
        Bad dimensions for ``num_ranks``, a backend or dtype that cannot run here, or a rank
        that failed (its one-line message, with its rank).

    Examples
    --------
    >>> r = run_tp_layer(num_ranks=2, hidden=256, ffn=1024, tokens=64)  # doctest: +SKIP
    >>> r["check_ok"], r["all_reduces"], r["msg_bytes"]  # doctest: +SKIP
    (True, 1, 65536)
    """
    config = TPLayerConfig(hidden=hidden, ffn=ffn, tokens=tokens, seq_len=seq_len, head_dim=head_dim,
                           attention=attention, overlap=overlap, chunks=chunks, iters=iters,
                           warmup_iters=warmup_iters, blocks=blocks, dtype=dtype, backend=backend, check=check,
                           rng_seed=rng_seed, timeout_s=timeout_s).validate(num_ranks)
    # Fail here, before any process starts (no GPUs for nccl, bfloat16 on gloo...).
    requested = "float32" if config.dtype == "auto" else check_dtype(config.dtype)
    harness.resolve_backend(config.backend, num_ranks, requested)
    # The metadata's "argv" records the call, as the sweep's does.
    out = None if out is None else os.fspath(out)
    argv = harness.call_argv("run_tp_layer", num_ranks=num_ranks, **asdict(config), out=out)
    return _launch(config, num_ranks, out=out, argv=argv)
