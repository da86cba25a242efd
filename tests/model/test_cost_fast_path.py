"""collective_cost prices each (algorithm, protocol) NCCL enables with its size-dependent arithmetic inline
(``cost._nccl_cost``, the size-independent inputs computed once per communicator by ``cost._nccl_plan``). This test
prices the same calls the reference way, one function of :mod:`gpucomm.model.cost_terms` and
:mod:`gpucomm.model.nccl_tuner` per term, and asks for the same numbers to the bit: every term, the pair reported,
NCCL's pick and estimate, the channels, the alternatives in order and the host floor."""

import pytest

from gpucomm.model import cost
from gpucomm.model import cost_terms as ct
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.fabric import make_fabric, system_fabric
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.nccl_fabric import comm_and_table, parse_nccl_version

SIZES = sorted({1, 31, 32, 33, 64, 100, 4095, 65_537, 999_999, 3 * 2**20 + 1, 2**34}
               | {2**k for k in range(0, 35, 2)} | {3 * 2**k for k in range(4, 32, 5)})


def _reference(collective, size, n, fabric, algorithm, protocol, nccl_version, launch, gpus_per_thread):
    """``_nccl_cost`` written with the reference functions, one per term (the form before the inline one)."""
    comm, table = comm_and_table(fabric, n, nccl_version)
    candidates = tuple(nt.cost_table_s(comm, table, collective, 1 << 20))
    ratios = {a: cost._delivered_bw_ratio(fabric, n, comm, table, collective, a) for a, _ in candidates}
    times = {k: nt.algo_time_s(comm, table, collective, k[0], k[1], size) for k in candidates}
    pick = [k for k in times if (algorithm == "auto" or k[0] == algorithm) and (protocol == "auto" or k[1] == protocol)]
    alternatives = tuple(sorted(((a, p, t) for (a, p), t in times.items()), key=lambda x: x[2]))

    def order(k):
        return nt.ALGORITHMS.index(k[0]), nt.PROTOCOLS.index(k[1])

    nccl_pick = min(pick, key=lambda k: (times[k], *order(k)))
    launch_s = cal.LAUNCH_S[launch].value
    priced = {}
    for a, p in pick:
        nccl_lat = ct.nccl_latency_s(comm, table, collective, a, p, size)
        nccl_bw = ct.nccl_bandwidth_s(comm, table, collective, a, p, size)
        scale = cal.TUNER_LATENCY_SCALE[cost._latency_transport(fabric, comm.graph(a))].value
        delivered = nccl_bw / ratios[a]
        channels, _ = nt.channels_and_threads(comm, table, a, p, size)
        ramp, fill, cont_channels = 0.0, 0.0, float(channels)
        if a in ("ring", "tree"):
            cont_channels = ct.continuous_channels(comm, table, a, p, size)
            ramp = delivered * (comm.num_channels / cont_channels - 1)
        if a == "ring" and p == "Simple" and fabric.num_nodes == 1 and fabric.link.key == "nvlink3":
            steps = 2 * (n - 1) if collective == "all_reduce" else n - 1
            fill = ct.ring_fill_s(size, steps, n, comm.num_channels,
                                  cost.per_gpu_bw_bytes_per_s(fabric, n) / comm.num_channels)
        if a in ("nvls", "nvls_tree"):
            fill = ct.nvls_fill_s(size, channels, table.bw_bytes_per_s[(collective, a, p)] * ratios[a] / channels)
        cut = 0.0
        if a == "ring" and p in cost.CUT_THROUGH_PROTOCOLS:
            steps_latency = (nccl_lat - nt.BASE_LATENCY_US["ring"][nt.PROTOCOLS.index(p)] * 1e-6) * scale
            cut = -min(delivered + ramp + fill, steps_latency)
        terms = {"nccl_latency": nccl_lat, "nccl_bandwidth": nccl_bw, "transport_latency": nccl_lat * (scale - 1),
                 "delivered_bandwidth": delivered - nccl_bw, "channel_ramp": ramp, "pipeline_fill": fill,
                 "cut_through": cut}
        floor = ct.host_floor_s(gpus_per_thread, launch, cont_channels, nccl_version)
        priced[(a, p)] = (cost._with_launch(terms, launch_s, floor), channels, floor)
    best = min(priced, key=lambda k: (sum(priced[k][0].values()), *order(k)))
    terms, channels, floor = priced[best]
    return (*best, terms, times[nccl_pick], channels, alternatives, nccl_pick, floor)


CASES = [
    ("nvlink3 8", make_fabric("nvlink3"), 8),
    ("dgx_a100 4 (the ring's fill over NVLink 3)", system_fabric("dgx_a100"), 4),
    ("dgx_h100 8 (NVLS)", system_fabric("dgx_h100"), 8),
    ("dgx_b200 8 (NVLS Tree on x86)", system_fabric("dgx_b200"), 8),
    ("dgx_b200 x2 (NVLS Tree across nodes)", system_fabric("dgx_b200", num_nodes=2), 16),
    ("gb200_nvl72 x2", system_fabric("gb200_nvl72", num_nodes=2), 144),
    ("nvlink4 x4 ib_ndr (the plateau)", make_fabric("nvlink4", num_nodes=4, network="ib_ndr"), 32),
    ("dgx1_v100-like x2 (pre-Ampere plateau)", make_fabric("nvlink2", num_nodes=2, network="ib_edr"), 16),
    ("nvlink4 x8 one GPU per node (PAT)", make_fabric("nvlink4", num_nodes=8, network="ib_ndr"), 8),
    ("pcie4 no P2P 4", make_fabric("pcie4", p2p=False), 4),
    ("pcie_8x_rtx4090 6", system_fabric("pcie_8x_rtx4090"), 6),
    ("pcie_8x_h100_bridged 8 (pairs)", system_fabric("pcie_8x_h100_bridged"), 8),
    ("eth_100g sockets x4", make_fabric("nvlink3", num_nodes=4, network="eth_100g", net_transport="socket"), 16),
]


@pytest.mark.parametrize("name, fabric, n", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("collective", nt.COLLECTIVES)
def test_inline_pricing_is_the_reference_to_the_bit(name, fabric, n, collective):
    checked = 0
    for version, launch, gpus_per_thread in (("2.30.7", "eager", 1), ("2.12.12", "eager", n // fabric.num_nodes),
                                             ("2.19.3", "graph", 1), ("2.27.3", "eager", 2)):
        version = parse_nccl_version(version)
        comm, table = comm_and_table(fabric, n, version)
        for algorithm, protocol in {("auto", "auto"), *((a, "auto") for a, _ in table.enabled(collective)),
                                    *table.enabled(collective)}:
            for size in SIZES:
                args = (collective, size, n, fabric, algorithm, protocol, version, launch, gpus_per_thread)
                try:
                    expected = _reference(*args)
                except ValueError:  # min() of no pair: NCCL's cost table skips it (NVLS across nodes...)
                    with pytest.raises(cost.GpucommError, match="does not run"):
                        cost._nccl_cost(*args)
                    continue
                assert repr(cost._nccl_cost(*args)) == repr(expected), args
                checked += 1
    assert checked > 0


def test_the_check_tells_a_one_ulp_change():
    # the comparison above is on repr(): one unit in the last place of one term is a difference
    fabric, args = make_fabric("nvlink4"), ("all_reduce", 2**20, 8)
    version = parse_nccl_version("2.30.7")
    got = cost._nccl_cost(*args, fabric, "auto", "auto", version, "eager", 1)
    terms = dict(got[2])
    terms["nccl_bandwidth"] = terms["nccl_bandwidth"] * (1 + 2**-52)
    assert repr((*got[:2], terms, *got[3:])) != repr(_reference(*args, fabric, "auto", "auto", version, "eager", 1))
