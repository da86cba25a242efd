"""The tensor-parallel layer benchmark: sharding math in-process, gloo with 2 ranks, NCCL on GPUs.

The process-group tests use small dimensions (hidden 256): each takes a few seconds on 2 CPU cores.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from gpucomm import GpucommError  # noqa: E402
from gpucomm.measure import tp_layer  # noqa: E402
from gpucomm.measure.results import read_results  # noqa: E402
from gpucomm.measure.tp_layer import (  # noqa: E402
    CHECK_TOLERANCE,
    TPLayerConfig,
    overlapped_time_s,
    run_tp_layer,
    tp_layer_all_reduce_bytes,
    tp_layer_flops_per_rank,
)

NUM_GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0
needs_nccl = pytest.mark.skipif(NUM_GPUS < 1 or not torch.distributed.is_nccl_available(),
                                reason="NCCL tests need CUDA GPUs")
SMALL = dict(hidden=256, ffn=1024, tokens=64, iters=2, warmup_iters=1, blocks=1)


# --- model helpers and validation (no processes) ---------------------------------------------

def test_the_formulas_are_the_models():
    # one definition of each formula: the layer's module hands out the model's functions (gpucomm.model.tp),
    # whose tests are in tests/model/test_tp_layer_formulas.py
    from gpucomm.model import tp

    assert (tp_layer_flops_per_rank, tp_layer_all_reduce_bytes, overlapped_time_s) == (
        tp.tp_layer_flops_per_rank, tp.tp_layer_all_reduce_bytes, tp.overlapped_time_s)


@pytest.mark.parametrize("kwargs, ranks, match", [
    (dict(ffn=1000), 3, "ffn 1000 is not divisible by 3 ranks"),
    (dict(attention=True, hidden=192, head_dim=64), 2, "3 attention heads"),
    (dict(attention=True, hidden=100, head_dim=64), 2, "not a multiple of head_dim"),
    (dict(attention=True, tokens=100, seq_len=64), 2, "not a multiple of seq_len 64"),
    (dict(overlap=True, tokens=6, chunks=4), 2, "6 tokens cannot be split into 4 equal chunks"),
    (dict(overlap=True, attention=True, tokens=128, seq_len=64, chunks=4), 2, "2 sequences cannot be split"),
    (dict(overlap=True, chunks=1), 2, "chunks 1 is not valid: expected an integer >= 2"),
    (dict(iters=0), 2, "iters 0"),
    (dict(hidden=1.5), 2, "hidden 1.5"),
    (dict(backend="mpi"), 2, "backend 'mpi'"),
    (dict(dtype="int8"), 2, "dtype 'int8'"),
    (dict(timeout_s=0), 2, "timeout 0"),
    (dict(), 0, "number of ranks|num_ranks|ranks"),
])
def test_bad_config_is_one_clear_error(kwargs, ranks, match):
    with pytest.raises(GpucommError, match=match):
        TPLayerConfig(**kwargs).validate(ranks)


def test_bfloat16_on_gloo_fails_before_starting_ranks():
    with pytest.raises(GpucommError, match="bfloat16 is not supported on gloo"):
        run_tp_layer(num_ranks=2, backend="gloo", dtype="bfloat16", **SMALL)


@pytest.mark.skipif(NUM_GPUS > 0, reason="checks the error without GPUs")
def test_nccl_without_gpus_fails_before_starting_ranks():
    with pytest.raises(GpucommError, match="backend nccl needs CUDA GPUs"):
        run_tp_layer(num_ranks=2, backend="nccl", **SMALL)


# --- sharding math in one process: the sum of the ranks' partial sums is the full layer ------

class _NoDist:
    """Stand-in for torch.distributed when a layer runs with comm="none"."""


@pytest.mark.parametrize("attention", [False, True])
@pytest.mark.parametrize("num_ranks", [1, 2, 4])
def test_partial_sums_add_up_to_the_single_rank_layer(attention, num_ranks):
    config = TPLayerConfig(hidden=256, ffn=512, tokens=64, attention=attention, seq_len=16)
    x = tp_layer._input(config, torch).double()
    shards = [{k: v.double() for k, v in tp_layer._weights(config, r, num_ranks, torch).items()}
              for r in range(num_ranks)]
    full, _ = tp_layer._reference(config, num_ranks, x, torch.device("cpu"), torch)
    full = {k: v.double() for k, v in full.items()}
    ref = tp_layer._layer(x, tp_layer._stages(config, full, torch), chunks=1, comm="none", dist=_NoDist)
    # the TP layer by hand: every block's partial sums added (the all_reduce), then the residual
    cur = x
    per_rank_stages = [tp_layer._stages(config, w, torch) for w in shards]
    for s in range(len(per_rank_stages[0])):
        cur = cur + sum(stages[s](cur) for stages in per_rank_stages)
    assert tp_layer._rel_error(cur, ref, torch) < 1e-12
    # and the check notices a missing rank: dropping one partial sum is far outside the tolerance
    if num_ranks > 1:
        wrong = x + sum(stages[-1](x) for stages in per_rank_stages[1:]) if not attention else None
        if wrong is not None:
            assert tp_layer._rel_error(wrong, ref, torch) > 100 * CHECK_TOLERANCE["float32"]


def test_chunks_hold_whole_sequences():
    config = TPLayerConfig(hidden=128, ffn=256, tokens=64, attention=True, seq_len=16)
    x = tp_layer._input(config, torch).double()
    w = {k: v.double() for k, v in tp_layer._weights(config, 0, 1, torch).items()}
    stages = tp_layer._stages(config, w, torch)
    whole = tp_layer._layer(x, stages, chunks=1, comm="none", dist=_NoDist)
    chunked = torch.cat(tp_layer._layer(x, stages, chunks=4, comm="none", dist=_NoDist))
    assert tp_layer._rel_error(chunked, whole, torch) < 1e-12


# --- gloo, 2 ranks ------------------------------------------------------------------------------

RESULT_KEYS = {"compute_s", "comm_s", "layer_s", "exposed_comm_s", "hidden_comm_fraction", "serial_compute_s",
               "serial_comm_s", "serial_layer_s", "overlap_gain", "rank_compute_s", "rank_all_reduce_s", "all_reduces",
               "msg_bytes", "flops_per_rank", "compute_flops_per_s", "comm_busbw_bytes_per_s", "rel_error",
               "rel_error_overlap", "tolerance", "check_ok", "backend", "dtype", "devices", "config"}


def test_tp_mlp_on_two_gloo_ranks_matches_the_single_rank_reference(tmp_path):
    out = tmp_path / "tp.jsonl"
    r = run_tp_layer(num_ranks=2, backend="gloo", out=out, **SMALL)
    assert RESULT_KEYS <= set(r)
    assert r["backend"] == "gloo" and r["dtype"] == "float32" and r["num_ranks"] == 2
    assert r["check_ok"] is True and r["rel_error"] < 1e-5 and r["rel_error_overlap"] is None
    assert r["all_reduces"] == 1 and r["msg_bytes"] == 64 * 256 * 4
    assert r["flops_per_rank"] == tp_layer_flops_per_rank(256, 1024, 64, num_ranks=2)
    for key in ("compute_s", "comm_s", "layer_s", "serial_layer_s"):
        assert 0 < r[key] < 5, key
    assert len(r["rank_compute_s"]) == len(r["rank_all_reduce_s"]) == 2
    assert r["layer_s"] == r["serial_layer_s"] and r["overlap_gain"] == 0.0
    assert len(r["devices"]) == 2
    # the results file of every measurement: the metadata record, then the result record
    saved = read_results(out)
    assert list(saved) == [r]
    meta = saved.meta
    assert meta["tool"] == "gpucomm.bench.tp_layer" and meta["backend"] == "gloo" and meta["num_ranks"] == 2
    assert meta["devices"] == r["devices"] and meta["config"] == r["config"] and meta["argv"][0] == "run_tp_layer"
    assert "env" in meta and "gpucomm_version" in meta and len(meta["rank_hosts"]) == 2


def test_attention_and_overlap_on_two_gloo_ranks():
    r = run_tp_layer(num_ranks=2, backend="gloo", attention=True, seq_len=16, overlap=True, chunks=2, **SMALL)
    assert r["check_ok"] is True
    assert r["rel_error"] < 1e-5 and r["rel_error_overlap"] < 1e-5
    assert r["blocks_in_layer"] == ["attention", "mlp"] and r["heads"] == 4
    assert r["all_reduces"] == 4 and r["chunks"] == 2 and r["msg_bytes"] == 32 * 256 * 4
    assert r["overlap_gain"] == pytest.approx(1 - r["layer_s"] / r["serial_layer_s"])
    assert 0.0 <= r["hidden_comm_fraction"] <= 1.0


def test_one_rank_runs_without_communication_partners():
    r = run_tp_layer(num_ranks=1, backend="gloo", **SMALL)
    assert r["check_ok"] is True and r["comm_busbw_bytes_per_s"] == 0.0


# --- NCCL ----------------------------------------------------------------------------------------

@needs_nccl
def test_nccl_bfloat16_layer_matches_the_reference():
    n = min(2, NUM_GPUS)
    r = run_tp_layer(num_ranks=n, backend="nccl", attention=True, overlap=True, chunks=2, hidden=1024, ffn=4096,
                     tokens=512, seq_len=128, iters=5)
    assert r["backend"] == "nccl" and r["dtype"] == "bfloat16"
    assert r["check_ok"] is True, (r["rel_error"], r["rel_error_overlap"])
    assert all(d.startswith("cuda:") for d in r["devices"])
