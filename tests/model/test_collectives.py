"""One collective, one file: every field set, every registry derived from the files, busbw as nccl-tests defines it."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

import gpucomm.model.collectives as collectives_pkg
from gpucomm import GpucommError
from gpucomm.model.collectives import COLLECTIVES, REGISTRY, Algorithm, Collective, busbw_factor, check_collective, get_collective
from gpucomm.model.cost import ALGORITHMS_FOR, HIERARCHICAL_COLLECTIVES, collective_cost, ring_steps, steps_and_wire_bytes

PACKAGE_DIR = Path(collectives_pkg.__file__).parent
FILES = sorted(p.stem for p in PACKAGE_DIR.glob("*.py") if not p.stem.startswith("_"))

# nccl-tests doc/PERFORMANCE.md (v2.19.6) and src/alltoall.cu, src/sendrecv.cu (*GetBw): busbw / algbw on n ranks.
PERFORMANCE_MD_FACTORS = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "send_recv": lambda n: 1.0,
}

# The cost model's table before the collectives had their own files, at n = 8 and n = 5 ranks:
# (steps, wire bytes / S). rhd needs a power of two, so it is pinned at 8 only.
ALGORITHM_TABLE = {
    ("all_reduce", "ring"): lambda n: (2 * (n - 1), 2 * (n - 1) / n),
    ("all_reduce", "tree"): lambda n: (2 * math.ceil(math.log2(n)), 2.0),
    ("all_reduce", "rhd"): lambda n: (2 * math.ceil(math.log2(n)), 2 * (n - 1) / n),
    ("all_reduce", "one_shot"): lambda n: (2, n - 1),
    ("all_reduce", "two_shot"): lambda n: (4, 2 * (n - 1) / n),
    ("all_reduce", "nvls"): lambda n: (1, 1 + 1 / n),
    ("all_gather", "ring"): lambda n: (n - 1, (n - 1) / n),
    ("all_gather", "rhd"): lambda n: (math.ceil(math.log2(n)), (n - 1) / n),
    ("all_gather", "nvls"): lambda n: (1, (n - 1) / n),
    ("reduce_scatter", "ring"): lambda n: (n - 1, (n - 1) / n),
    ("reduce_scatter", "rhd"): lambda n: (math.ceil(math.log2(n)), (n - 1) / n),
    ("reduce_scatter", "nvls"): lambda n: (1, (n - 1) / n),
    ("broadcast", "ring"): lambda n: (n - 1, 1.0),
    ("broadcast", "binary_tree"): lambda n: (math.ceil(math.log2(n)), 1.0),
    ("reduce", "ring"): lambda n: (n - 1, 1.0),
    ("reduce", "binary_tree"): lambda n: (math.ceil(math.log2(n)), 1.0),
    ("all_to_all", "ring"): lambda n: (n - 1, (n - 1) / n),
    ("send_recv", "ring"): lambda n: (1, 1.0),
}


# --- every file is complete -----------------------------------------------------------------

def test_every_field_of_the_records_is_required():
    # A file that leaves a field out fails when it is imported (power_of_two_ranks is the one option).
    assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
               for f in dataclasses.fields(Collective))
    assert [f.name for f in dataclasses.fields(Algorithm) if f.default is not dataclasses.MISSING] == ["power_of_two_ranks"]
    complete = {f.name: getattr(REGISTRY["broadcast"], f.name) for f in dataclasses.fields(Collective)}
    del complete["busbw_source"]
    with pytest.raises(TypeError, match="busbw_source"):
        Collective(**complete)


@pytest.mark.parametrize("name", FILES)
def test_each_file_defines_one_complete_collective(name):
    import importlib

    record = importlib.import_module(f"gpucomm.model.collectives.{name}").COLLECTIVE
    assert isinstance(record, Collective) and record.name == name
    for field in dataclasses.fields(Collective):
        value = getattr(record, field.name)
        assert value is not None and value != "" and value != (), f"{name}.{field.name} is empty"
    assert record.nccl_tests_binary.endswith("_perf")
    assert isinstance(record.chunked, bool) and isinstance(record.reduces, bool)
    assert isinstance(record.min_ranks, int) and record.min_ranks >= 1
    assert record.algorithms[0].name == "ring"  # every collective has a ring (ring_steps, the across-nodes model)
    assert len({a.name for a in record.algorithms}) == len(record.algorithms)
    for algo in record.algorithms:
        assert isinstance(algo, Algorithm) and algo.name and algo.title and algo.source
        for n in (2, 4, 8):
            steps, wire = algo.steps(n), algo.wire_bytes(1024, n)
            assert isinstance(steps, int) and steps >= 1 and isinstance(wire, float) and wire > 0


def test_orders_are_distinct_and_consecutive():
    assert sorted(c.order for c in REGISTRY.values()) == list(range(len(REGISTRY)))


# --- every registry derives from the files --------------------------------------------------

def test_collectives_are_the_files_in_their_order():
    assert set(COLLECTIVES) == set(FILES)
    assert list(COLLECTIVES) == sorted(FILES, key=lambda name: REGISTRY[name].order)
    # The order the command line's help has always printed.
    assert COLLECTIVES == ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all", "send_recv")


def test_cost_model_algorithms_are_the_files_algorithms():
    assert list(ALGORITHMS_FOR) == list(COLLECTIVES)
    for name, record in REGISTRY.items():
        across_nodes = ("hierarchical",) if name in HIERARCHICAL_COLLECTIVES else ()
        assert ALGORITHMS_FOR[name] == tuple(a.name for a in record.algorithms) + across_nodes


def test_algorithm_table_unchanged():
    assert set(ALGORITHM_TABLE) == {(c, a.name) for c, r in REGISTRY.items() for a in r.algorithms}
    for (collective, algorithm), expected in ALGORITHM_TABLE.items():
        for n in (8, 5) if algorithm != "rhd" else (8,):
            steps, wire = steps_and_wire_bytes(collective, 1000.0, num_ranks=n, algorithm=algorithm)
            assert (steps, wire / 1000.0) == pytest.approx(expected(n), rel=1e-12), (collective, algorithm, n)


def test_ring_steps_and_one_rank():
    assert [ring_steps(c, 8) for c in COLLECTIVES] == [14, 7, 7, 7, 7, 7, 1]
    assert steps_and_wire_bytes("all_reduce", 64.0, num_ranks=1, algorithm="ring") == (0, 0.0)


def test_power_of_two_error_names_the_algorithm():
    with pytest.raises(GpucommError, match=r"^algorithm 'rhd' \(recursive halving/doubling\) with 6 ranks: "
                                           r"expected a power of two$"):
        collective_cost("all_gather", 2**20, num_ranks=6, fabric="nvlink4", algorithm="rhd")


# --- busbw as nccl-tests defines it ---------------------------------------------------------

@pytest.mark.parametrize("collective", sorted(PERFORMANCE_MD_FACTORS))
def test_busbw_factor_is_performance_md(collective):
    assert set(PERFORMANCE_MD_FACTORS) == set(COLLECTIVES)
    for n in range(1, 17):
        assert busbw_factor(collective, n) == PERFORMANCE_MD_FACTORS[collective](n)
    assert REGISTRY[collective].busbw_source.startswith("nccl-tests")


def test_unknown_collective_and_lookup():
    with pytest.raises(GpucommError, match="^unknown collective 'allreduce': expected one of all_reduce, all_gather"):
        get_collective("allreduce")
    assert check_collective("reduce") == "reduce"
    assert get_collective("send_recv").min_ranks == 2
    with pytest.raises(GpucommError, match="algorithm 'nvls' does not implement broadcast: expected one of ring, binary_tree"):
        get_collective("broadcast").algorithm("nvls")


def test_size_convention_and_binaries():
    assert [c for c in COLLECTIVES if REGISTRY[c].chunked] == ["all_gather", "reduce_scatter", "all_to_all"]
    assert [c for c in COLLECTIVES if REGISTRY[c].reduces] == ["all_reduce", "reduce_scatter", "reduce"]
    assert [REGISTRY[c].nccl_tests_binary for c in COLLECTIVES] == [
        "all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "broadcast_perf", "reduce_perf", "alltoall_perf",
        "sendrecv_perf"]
