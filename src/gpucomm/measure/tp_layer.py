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
:func:`format_tp_layer_table` prints results with the same table printer
(:mod:`gpucomm.measure.results`, :data:`TP_LAYER_TABLE`).

gloo (CPU) runs float32 with small dimensions in seconds; NCCL (one GPU per rank) runs
bfloat16 by default. torch is imported only when a layer runs: importing this module for
:func:`tp_layer_flops_per_rank` or :func:`overlapped_time_s` loads neither torch nor plotly.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from gpucomm import GpucommError
from gpucomm.measure import harness
from gpucomm.measure.config import BACKENDS, DEFAULT_TIMEOUT_S, check_dtype
from gpucomm.measure.launch import launch_workers
from gpucomm.measure.results import Column, ResultsWriter, Table, format_time_us
from gpucomm.model.collectives import busbw_factor, check_num_ranks
from gpucomm.model.units import check_int

__all__ = ["TPLayerConfig", "run_tp_layer", "tp_layer_flops_per_rank", "tp_layer_all_reduce_bytes",
           "overlapped_time_s", "CHECK_TOLERANCE", "TP_LAYER_TABLE", "tp_layer_rows", "format_tp_layer_table"]

#: Relative Frobenius error ``|y_tp - y_ref| / |y_ref|`` accepted by the correctness pass, by dtype.
#: float32: reductions in a different order differ by a few ulps (about 1e-7 relative per
#: operation); 1e-4 leaves room for the layer's ~1e4 additions per output element.
#: bfloat16 has an 8-bit significand (ulp 2**-8 = 0.4 %): the TP output rounds partial sums
#: before adding them, which the float32 reference does not.
CHECK_TOLERANCE = {"float32": 1e-4, "float64": 1e-10, "bfloat16": 3e-2, "float16": 5e-3}

_ELEM_BYTES = {"float32": 4, "float64": 8, "bfloat16": 2, "float16": 2}


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


# ----------------------------------------------------------------------------------- model (no torch)

def tp_layer_flops_per_rank(hidden: int, ffn: int, tokens: int, *, num_ranks: int, attention: bool = False,
                            seq_len: int | None = None) -> float:
    """Floating-point operations of one rank's share of the layer's matrix products.

    Parameters
    ----------
    hidden, ffn, tokens : int
        Width ``h``, MLP inner width ``f`` and tokens ``T``.
    num_ranks : int
        Tensor-parallel degree ``N``.
    attention : bool
        Include the attention block.
    seq_len : int or None
        Tokens per sequence ``S`` for the attention scores (None: ``min(tokens, 64)``).

    Returns
    -------
    float
        FLOPs (one multiply-add = 2).

    Notes
    -----
    MLP: ``2 T h f / N`` per linear, two linears: ``4 T h f / N``. Attention: Q, K, V and the
    output projection ``8 T h^2 / N``, scores and weighted sum ``4 T S h / N`` (counted for the
    full ``S x S`` score matrix, as the math kernel computes it before the causal mask). Layer
    norms, GeLU, softmax and residuals are left out (a few FLOPs per element).

    Examples
    --------
    >>> tp_layer_flops_per_rank(1024, 4096, 256, num_ranks=2) / 1e9
    2.147483648
    """
    n = check_num_ranks(num_ranks)
    flops = 4.0 * tokens * hidden * ffn / n
    if attention:
        s = seq_len if seq_len is not None else min(tokens, 64)
        flops += 8.0 * tokens * hidden * hidden / n + 4.0 * tokens * s * hidden / n
    return flops


def tp_layer_all_reduce_bytes(hidden: int, tokens: int, *, dtype: str = "float32") -> int:
    """Bytes of one all_reduce of the layer: the activations ``tokens x hidden``.

    The same size as :func:`gpucomm.model.tp.tp_all_reduce_bytes`; dtypes as torch spells them.

    Examples
    --------
    >>> tp_layer_all_reduce_bytes(1024, 256) / 2**20
    1.0
    """
    name = check_dtype(dtype)
    return tokens * hidden * _ELEM_BYTES[name]


def overlapped_time_s(compute_s: float, comm_s: float, *, chunks: int) -> float:
    """Time of a layer whose all_reduces overlap compute over ``chunks`` equal chunks.

    Parameters
    ----------
    compute_s : float
        Compute of the whole layer (all chunks), seconds.
    comm_s : float
        All_reduces of the whole layer (all chunks), seconds.
    chunks : int
        Chunks ``C`` >= 1.

    Returns
    -------
    float
        ``max(compute, comm) + min(compute, comm) / C`` seconds.

    Notes
    -----
    A two-stage pipeline (compute a chunk, then all_reduce it) over ``C`` equal chunks: the
    slower stage runs back to back, and the faster stage's first (or last) chunk cannot be
    hidden, as in the fill-and-drain cost of a pipeline. ``C = 1`` gives the serial
    ``compute + comm``; large ``C`` approaches ``max(compute, comm)``, but each chunk pays the
    all_reduce's fixed cost ``alpha`` again, so ``comm_s`` itself grows with ``C``.

    Examples
    --------
    >>> overlapped_time_s(8.0, 2.0, chunks=4)
    8.5
    >>> overlapped_time_s(8.0, 2.0, chunks=1)
    10.0
    """
    check_int(chunks, "chunks", 1)
    if compute_s < 0 or comm_s < 0:
        raise GpucommError(f"times must be >= 0 s, got compute {compute_s!r} and comm {comm_s!r}")
    return max(compute_s, comm_s) + min(compute_s, comm_s) / chunks


# ----------------------------------------------------------------------------------- the table (no torch)

def _labelled(results: dict | Iterable[dict] | Mapping[str, dict]) -> list[tuple[str, dict]]:
    """``(label, result)`` pairs: the mapping's labels, or the layer's blocks (``"attention + mlp"``)."""
    if isinstance(results, Mapping) and "serial_layer_s" not in results:
        return list(results.items())
    items = [results] if isinstance(results, Mapping) else list(results)
    return [(" + ".join(r.get("blocks_in_layer") or ["mlp"]), r) for r in items]


def tp_layer_rows(results: dict | Iterable[dict] | Mapping[str, dict]) -> list[dict]:
    """One table row per measured variant: the blocking layer, and the chunked one with ``overlap``.

    Parameters
    ----------
    results : dict, iterable of dict, or mapping of str to dict
        Results of :func:`run_tp_layer`: one, several, or by label (``{"MLP": r, ...}``, the
        label names the rows; otherwise the layer's blocks do, ``"attention + mlp"``).

    Returns
    -------
    list of dict
        ``layer``, ``variant`` (``"blocking"`` or ``"4 chunks"``), ``compute_s``, ``comm_s``,
        ``layer_s``, ``waited_s = max(0, layer_s - compute_s)`` (the communication the layer
        waited for), ``rel_error``; the chunked row also ``overlap_gain`` and
        ``hidden_comm_fraction``; every row ``check_ok`` and ``tolerance``.

    Examples
    --------
    >>> r = {"serial_compute_s": 0.040, "serial_comm_s": 0.004, "serial_layer_s": 0.046, "overlap": False,
    ...      "rel_error": 2e-7, "check_ok": True, "tolerance": 1e-4}
    >>> [(row["variant"], round(row["waited_s"], 3)) for row in tp_layer_rows(r)]
    [('blocking', 0.006)]
    """
    return _rows(_labelled(results))


def _rows(labelled: list[tuple[str, dict]]) -> list[dict]:
    rows = []
    for label, r in labelled:
        common = {"layer": label, "check_ok": r.get("check_ok"), "tolerance": r.get("tolerance")}
        rows.append({**common, "variant": "blocking", "compute_s": r["serial_compute_s"],
                     "comm_s": r["serial_comm_s"], "layer_s": r["serial_layer_s"],
                     "waited_s": max(0.0, r["serial_layer_s"] - r["serial_compute_s"]),
                     "rel_error": r.get("rel_error")})
        if r.get("overlap"):
            rows.append({**common, "variant": f"{r['chunks']} chunks", "compute_s": r["compute_s"],
                         "comm_s": r["comm_s"], "layer_s": r["layer_s"], "waited_s": r["exposed_comm_s"],
                         "rel_error": r.get("rel_error_overlap"), "overlap_gain": r["overlap_gain"],
                         "hidden_comm_fraction": r["hidden_comm_fraction"]})
    return rows


def _tp_comments(meta: dict) -> list[str]:
    m = meta.get
    cfg = m("config") or {}
    shape = f"hidden {cfg.get('hidden', '?')}, ffn {cfg.get('ffn', '?')}, tokens {cfg.get('tokens', '?')}"
    lines = [f"# gpucomm tp_layer: {m('num_ranks', '?')} ranks, backend {m('backend', '?')}, {m('dtype', '?')}, "
             f"{shape}; iters {m('iters', '?')} x {m('blocks', '?')} blocks (median block), "
             f"warm-up {m('warmup_iters', '?')}"]
    if m("backend_note"):
        lines.append(f"# {m('backend_note')}")
    hosts = m("rank_hosts") or [None] * len(m("devices") or [])
    for rank, (host, device) in enumerate(zip(hosts, m("devices") or [])):
        lines.append(f"#  rank {rank:3d}{f' on {host}' if host else ''}: {device}")
    lines.append("# time: one layer forward, the maximum over ranks; all_reduce: the layer's all_reduces alone; "
                 "waited = layer - compute")
    return lines


def _tp_summary(rows: list[dict]) -> list[str]:
    lines = [f"# {row['layer']}: overlap gain {row['overlap_gain']:+.0%}, hidden: "
             f"{row['hidden_comm_fraction']:.0%} of the chunked all_reduces"
             for row in rows if row.get("overlap_gain") is not None]
    checked = [row for row in rows if row.get("check_ok") is not None]
    if not checked:
        status = "N/A (check off)"
    elif all(row["check_ok"] for row in checked):
        status = f"OK (relative error <= {checked[0]['tolerance']:g})"
    else:
        status = "FAILED"
    lines.append(f"# Check              : {status}")
    return lines


def _us_cell(key: str):
    return lambda row: format_time_us(row[key])


#: The TP layer's table: per layer and variant, compute, all_reduces alone, the layer, the wait.
TP_LAYER_TABLE = Table(
    columns=(
        Column("layer", "", 17, lambda row: row["layer"]),
        Column("variant", "", 11, lambda row: row["variant"]),
        Column("compute", "(us)", 11, _us_cell("compute_s")),
        Column("all_reduce", "(us)", 11, _us_cell("comm_s")),
        Column("layer", "(us)", 11, _us_cell("layer_s")),
        Column("waited", "(us)", 11, _us_cell("waited_s")),
        Column("error", "(rel)", 9, lambda row: "N/A" if row["rel_error"] is None else f"{row['rel_error']:.1e}"),
    ),
    comments=_tp_comments,
    summary=_tp_summary,
)


def format_tp_layer_table(results: dict | Iterable[dict] | Mapping[str, dict], meta: dict | None = None) -> str:
    """The TP layer's results as a table (:data:`TP_LAYER_TABLE`), one row per layer and variant.

    Parameters
    ----------
    results : dict, iterable of dict, or mapping of str to dict
        Results of :func:`run_tp_layer` (see :func:`tp_layer_rows`).
    meta : dict or None
        The metadata record for the header (from the results file); None: the first result,
        which carries the same fields (ranks, backend, dtype, devices, config).
    """
    labelled = _labelled(results)
    if meta is None:
        meta = labelled[0][1] if labelled else {}
    return TP_LAYER_TABLE.format(_rows(labelled), meta)


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

    # --- correctness: the TP output (blocking, and chunked with async all_reduces) vs one rank
    rel_error = rel_error_overlap = None
    if config.check:
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
        if chunks > 1:
            rel_error_overlap = harness.max_over_ranks(errors[1], device)

    # --- timing
    def variant(prefix: str, n_chunks: int, comm: str) -> dict:
        """The three timed functions of one variant, keyed ``<prefix>compute_s``..."""
        sample = _layer(x, stages, chunks=n_chunks, comm="none", dist=dist)
        buffers = [p.clone() for p in ([sample] if n_chunks == 1 else sample) for _ in stages]
        return {f"{prefix}compute_s": lambda: _layer(x, stages, chunks=n_chunks, comm="none", dist=dist),
                f"{prefix}comm_s": lambda: _comm_only(buffers, dist),
                f"{prefix}layer_s": lambda: _layer(x, stages, chunks=n_chunks, comm=comm, dist=dist)}

    with torch.no_grad():
        # Blocking and overlapped variants in one interleaved set of blocks: a change of load on a
        # shared machine during the run affects both alike, so their ratio stays meaningful.
        fns = variant("serial_", 1, "blocking")
        if config.overlap:
            fns.update(variant("", chunks, "async"))
        t = harness.timed_blocks_s(fns, iters=config.iters, warmup_iters=config.warmup_iters, blocks=config.blocks,
                                   device=device, across_ranks=True)
    serial = {k: t[f"serial_{k}"] for k in ("compute_s", "comm_s", "layer_s")}
    chosen = {k: t[k] for k in ("compute_s", "comm_s", "layer_s")} if config.overlap else serial

    # --- inside the blocking layer: each rank's time in compute and in all_reduce (which
    # includes waiting for the slowest rank to arrive), median over iterations
    def breakdown() -> tuple[float, float]:
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

    per_rank: list = [None] * world_size
    dist.all_gather_object(per_rank, breakdown())

    elem = _ELEM_BYTES[dtype_name]
    layer_bytes = config.tokens * config.hidden * elem
    num_stages = len(stages)
    flops = tp_layer_flops_per_rank(config.hidden, config.ffn, config.tokens, num_ranks=world_size,
                                    attention=config.attention, seq_len=config.sequence_tokens if config.attention else None)
    factor = busbw_factor("all_reduce", world_size)
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
        "tolerance": CHECK_TOLERANCE[dtype_name],
        "check_ok": (None if rel_error is None else
                     rel_error <= CHECK_TOLERANCE[dtype_name]
                     and (rel_error_overlap is None or rel_error_overlap <= CHECK_TOLERANCE[dtype_name])),
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
