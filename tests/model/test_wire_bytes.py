"""Steps and bytes on the wire per algorithm, the busbw factor table, and where Simple overtakes LL."""
from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.model.collectives import COLLECTIVES, busbw_factors_table
from gpucomm.model.cost import collective_cost, steps_and_wire_bytes, wire_bytes_per_link
from gpucomm.model.protocols import protocol_crossover_bytes


@pytest.mark.parametrize("algorithm, steps, factor", [("ring", 14, 1.75), ("tree", 6, 2.0), ("rhd", 6, 1.75),
                                                       ("one_shot", 2, 7.0), ("two_shot", 4, 1.75), ("nvls", 1, 1.125)])
def test_steps_and_wire_bytes_all_reduce_8(algorithm, steps, factor):
    assert steps_and_wire_bytes("all_reduce", 1024, num_ranks=8, algorithm=algorithm) == (steps, factor * 1024)


def test_steps_and_wire_bytes_errors():
    with pytest.raises(GpucommError, match="does not implement"):
        steps_and_wire_bytes("broadcast", 8, num_ranks=4, algorithm="nvls")
    with pytest.raises(GpucommError, match="power of two"):
        steps_and_wire_bytes("all_reduce", 8, num_ranks=6, algorithm="rhd")
    with pytest.raises(GpucommError, match="unknown collective"):
        wire_bytes_per_link("allreduce", 8, num_ranks=4, algorithm="ring")


def test_protocol_crossover():
    x = protocol_crossover_bytes("all_reduce", num_ranks=8, fabric="nvlink4")
    assert x & (x - 1) == 0
    def time_s(size, protocol):
        return collective_cost("all_reduce", size, num_ranks=8, fabric="nvlink4", algorithm="ring", protocol=protocol).time_s

    assert time_s(x, "Simple") < time_s(x, "LL")
    assert time_s(x // 2, "Simple") >= time_s(x // 2, "LL")


def test_busbw_factors_table():
    table = dict(busbw_factors_table(8))
    assert list(table) == list(COLLECTIVES) and table["all_reduce"] == 1.75 and table["send_recv"] == 1.0
