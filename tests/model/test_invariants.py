"""Physical invariants of the cost model, over every catalog system, collective, algorithm, protocol, GPU and node count.

A time never falls as the message grows; one byte more moves it by at most 5 % for a fixed algorithm and protocol and
10 % under ``auto``; a faster link never gives a slower time; the terms sum to the time. Every combination the model
refuses (an algorithm that does not apply, a protocol NCCL does not run there) must be refused with a GpucommError,
never another exception. Each hypothesis example is one scenario priced at :data:`SIZES_PER_SCENARIO` sizes (drawing a
scenario costs hypothesis about 100 times what pricing it does, so each drawn scenario is used for several sizes). The
fast tier runs its hypothesis profile's few scenarios per property; ``make test`` (``HYPOTHESIS_PROFILE=full``) runs
:data:`FULL_EXAMPLES` per property: 10,000 (scenario, size) cases over the two, as before.
"""

from __future__ import annotations

import dataclasses
import math
import os

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpucomm import GpucommError
from gpucomm.model.collectives import COLLECTIVES
from gpucomm.model.cost import ALGORITHMS, PROTOCOLS, collective_cost
from gpucomm.model.fabric import make_fabric, system_fabric
from gpucomm.model.hardware import SYSTEMS, get_link

MAX_BYTES = 16 * 2**30
SYSTEM_KEYS = tuple(k for k, s in SYSTEMS.items() if s.fabric != "cube_mesh")
WHAT_IF_LINKS = ("nvlink2", "nvlink3", "nvlink4", "nvlink5", "pcie3", "pcie4", "pcie5")
VERSIONS = ("2.30.7", "2.27.7", "2.19.3", "2.12.12")

SIZES_PER_SCENARIO = 5
"""Sizes each property prices per drawn scenario."""
FULL_EXAMPLES = 1000
"""Scenarios per property in ``make test``: with :data:`SIZES_PER_SCENARIO`, 10,000 cases over the two properties."""
_EXAMPLES = {"max_examples": FULL_EXAMPLES} if os.environ.get("HYPOTHESIS_PROFILE") == "full" else {}


@st.composite
def sizes(draw, low: int = 1) -> int:
    """A message size from ``low`` to 16 GiB, spread evenly over the powers of two."""
    exponent = draw(st.integers(0, 34))
    return min(MAX_BYTES, max(low, (1 << exponent) + draw(st.integers(0, (1 << exponent) - 1))))


@st.composite
def scenarios(draw, what_if_nvlink: bool = False) -> dict:
    """A fabric (a catalog system, or a what-if link; only a what-if NVLink with ``what_if_nvlink``), GPU and node
    counts, collective, algorithm, protocol, release."""
    nodes = draw(st.sampled_from((1, 1, 1, 2, 4)))
    if not what_if_nvlink and draw(st.booleans()):
        key = draw(st.sampled_from(SYSTEM_KEYS))
        system = SYSTEMS[key]
        network = None if system.nic_key else "ib_ndr"
        fabric = system_fabric(key, num_nodes=nodes, network=network if nodes > 1 else None)
        per_node = draw(st.integers(1 if nodes > 1 else 2, system.num_gpus))
    else:
        link = draw(st.sampled_from([k for k in WHAT_IF_LINKS if k.startswith("nvlink") or not what_if_nvlink]))
        p2p = True if link.startswith("nvlink") else draw(st.booleans())
        fabric = make_fabric(link, p2p=p2p, num_nodes=nodes, network="ib_ndr" if nodes > 1 else None)
        per_node = draw(st.integers(1 if nodes > 1 else 2, 16))
    return dict(collective=draw(st.sampled_from(COLLECTIVES)), num_ranks=per_node * nodes, fabric=fabric,
                algorithm=draw(st.sampled_from(("auto",) * 4 + ALGORITHMS)),
                protocol=draw(st.sampled_from(("auto",) * 2 + PROTOCOLS)),
                launch=draw(st.sampled_from(("eager", "graph", "sync"))),
                nccl_version=draw(st.sampled_from(VERSIONS)),
                gpus_per_thread=draw(st.sampled_from((1, 1, per_node))))


def _cost(scenario: dict, size: int):
    """The cost, or None where the model refuses the combination (with a GpucommError, never another exception)."""
    try:
        return collective_cost(scenario["collective"], size, **{k: v for k, v in scenario.items() if k != "collective"})
    except GpucommError:
        return None


@settings(deadline=None, **_EXAMPLES)
@given(scenarios(), st.lists(sizes(), min_size=SIZES_PER_SCENARIO, max_size=SIZES_PER_SCENARIO))
def test_time_never_falls_as_the_message_grows_and_terms_sum_to_it(scenario, drawn):
    costs = [c for c in (_cost(scenario, size) for size in sorted(drawn)) if c is not None]
    assume(costs)
    for small, large in zip(costs, costs[1:]):
        assert large.time_s >= small.time_s * (1 - 1e-12), (small.algorithm, small.protocol, large.algorithm,
                                                              large.protocol)
    for c in costs:
        assert c.time_s > 0
        assert math.isclose(sum(t for _, t in c.terms), c.time_s, rel_tol=1e-9)
        assert math.isclose(c.latency_s + c.transfer_s + c.launch_s + dict(c.terms)["host_floor"], c.time_s, rel_tol=1e-9)


@settings(deadline=None, **_EXAMPLES)
@given(scenarios(), st.lists(sizes(), min_size=SIZES_PER_SCENARIO, max_size=SIZES_PER_SCENARIO))
def test_one_byte_more_moves_the_time_by_at_most_5_percent_fixed_or_10_percent_auto(scenario, drawn):
    fixed = scenario["algorithm"] != "auto" and scenario["protocol"] != "auto"
    priced = 0
    for size in (min(size, MAX_BYTES - 1) for size in drawn):
        before, after = _cost(scenario, size), _cost(scenario, size + 1)
        if before is None or after is None:
            continue
        priced += 1
        assert after.time_s / before.time_s - 1 <= (0.05 if fixed else 0.10), size
        assert after.time_s >= before.time_s * (1 - 1e-12), size
    assume(priced)


def test_known_violation_a_faster_nvlink_is_slower_on_one_channel():
    # NOT YET an invariant: the channel ramp, the ring's pipeline fill and LL's cut-through are priced at NCCL's planned
    # rate per channel, and a faster link gives NCCL's search more channels, each quantised slower (its speed array),
    # so a faster NVLink can come out slower (hypothesis found +5 % for ring/LL on 2 GPUs of a 1.5x NVLink 2). Left to
    # fix (a channel's rate is its SM's, not the link count's); this test fails once it is, and then the property
    # "a faster link never gives a slower time" over scenarios(what_if_nvlink=True) belongs here.
    base = get_link("nvlink2")
    times = [collective_cost("all_reduce", 1, num_ranks=2, protocol="LL128",
                             fabric=make_fabric(dataclasses.replace(base, bw_bytes_per_s=base.bw_bytes_per_s * k))).time_s
             for k in (1.0, 1.5)]
    assert times[1] > times[0]


@pytest.mark.parametrize("size", [1, 7, 4095, 65535, 65536, 2**20 + 1, 48 * 2**20, 49 * 2**20])
def test_every_collective_on_every_system_prices_or_refuses_awkward_sizes(size):
    # sizes that are not a whole number of elements per rank (7 B over 8 GPUs used to divide by zero)
    for key in SYSTEM_KEYS:
        for collective in COLLECTIVES:
            cost = _cost(dict(collective=collective, num_ranks=SYSTEMS[key].num_gpus, fabric=system_fabric(key)), size)
            assert cost is not None and cost.time_s > 0, (key, collective)
