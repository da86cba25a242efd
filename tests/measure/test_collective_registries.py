"""The benchmark's and the log parser's registries derive from the collective and element-type files (no torch)."""

from __future__ import annotations

from pathlib import Path

import gpucomm.measure.collectives as measure_pkg
from gpucomm.measure import config
from gpucomm.measure.logs.nccl_tests import PERF_BINARY_TO_COLLECTIVE, TYPE_BYTES
from gpucomm.model.collectives import COLLECTIVES, REGISTRY
from gpucomm.model.dtypes import BY_SPELLING

SPEC_FILES = {p.stem for p in Path(measure_pkg.__file__).parent.glob("*.py") if not p.stem.startswith("_")}


def test_bench_collectives_are_the_spec_files_in_model_order():
    assert config.BENCH_COLLECTIVES == tuple(c for c in COLLECTIVES if c in SPEC_FILES)
    assert SPEC_FILES <= set(COLLECTIVES)
    assert config.BENCH_COLLECTIVES == ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all",
                                        "send_recv")


def test_bench_registries_derive_from_the_model():
    bench = config.BENCH_COLLECTIVES
    assert config.CHUNKED_COLLECTIVES == tuple(c for c in bench if REGISTRY[c].chunked)
    assert config.REDUCING_COLLECTIVES == tuple(c for c in bench if REGISTRY[c].reduces)
    assert config.MIN_RANKS == {c: REGISTRY[c].min_ranks for c in bench if REGISTRY[c].min_ranks > 1}
    # The values the runner has always used.
    assert config.CHUNKED_COLLECTIVES == ("all_gather", "reduce_scatter", "all_to_all")
    assert config.REDUCING_COLLECTIVES == ("all_reduce", "reduce_scatter")
    assert config.MIN_RANKS == {"send_recv": 2}


def test_bench_dtypes_unchanged():
    assert list(config.DTYPE_BYTES.items()) == [("float32", 4), ("float64", 8), ("float16", 2), ("bfloat16", 2)]
    assert config.DTYPE_ALIASES == {"float": "float32", "double": "float64", "half": "float16", "bf16": "bfloat16",
                                    "fp32": "float32", "fp16": "float16", "fp64": "float64"}
    assert [config.check_dtype(d) for d in ("FLOAT", "bf16", "fp64")] == ["float32", "bfloat16", "float64"]


def test_log_parser_tables_derive_from_the_model():
    assert PERF_BINARY_TO_COLLECTIVE == {REGISTRY[c].nccl_tests_binary.removesuffix("_perf"): c for c in COLLECTIVES}
    assert PERF_BINARY_TO_COLLECTIVE["alltoall"] == "all_to_all" and PERF_BINARY_TO_COLLECTIVE["sendrecv"] == "send_recv"
    assert TYPE_BYTES == {s: t.size_bytes for s, t in BY_SPELLING.items()}
    # Every type name the parser read before the shared table, with the same size.
    before = {"int8": 1, "char": 1, "uint8": 1, "int32": 4, "int": 4, "uint32": 4, "int64": 8, "uint64": 8,
              "half": 2, "float16": 2, "fp16": 2, "float": 4, "float32": 4, "double": 8, "float64": 8,
              "bfloat16": 2, "bf16": 2, "f8e4m3": 1, "f8e5m2": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}
    assert {k: TYPE_BYTES[k] for k in before} == before
