"""collective_cost's less travelled paths: one GPU, one GPU per node, send_recv across nodes, the JSON form, every
refusal of its inputs, and NCCL's NVLS Tree correction on Blackwell x86 hosts."""

import pytest

from gpucomm import GpucommError
from gpucomm.model import cost_terms as ct
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.cost import all_reduce_time_s, alpha_beta_time_s, collective_cost, per_gpu_bw_bytes_per_s
from gpucomm.model.fabric import make_fabric, system_fabric
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.hardware import get_network
from gpucomm.model.nccl_fabric import comm_and_table

GiB = 2**30
TWO_NODES = make_fabric("nvlink4", num_nodes=2, network="ib_ndr")


def _nic_rate() -> float:
    return get_network("ib_ndr").bw_bytes_per_s * cal.NET_EFFICIENCY.value


def test_one_gpu_moves_nothing_and_costs_its_launch():
    c = collective_cost("all_reduce", 2**20, num_ranks=1, fabric="nvlink4")
    assert c.transfer_s == c.latency_s == 0.0 and c.busbw_bytes_per_s == 0.0
    assert c.time_s == pytest.approx(cal.LAUNCH_S["eager"].value) == pytest.approx(sum(dict(c.terms).values()))


def test_hierarchical_with_one_gpu_per_node_is_the_ring_between_the_nodes():
    # no intra-node stage: the bandwidth term is the inter-node ring's 2 (N - 1) / N S over the NIC's delivered rate
    c = collective_cost("all_reduce", GiB, num_ranks=2, fabric=TWO_NODES, algorithm="hierarchical")
    assert dict(c.terms)["alpha_beta_bandwidth"] == pytest.approx(GiB / _nic_rate())
    assert c.time_s == pytest.approx(sum(dict(c.terms).values()))


def test_send_recv_across_nodes_runs_at_the_nic_rate():
    c = collective_cost("send_recv", GiB, num_ranks=16, fabric=TWO_NODES)
    assert c.transfer_s == pytest.approx(GiB / _nic_rate())
    # LL forced: half the rate (4 bytes of flag in every 8)
    ll = collective_cost("send_recv", GiB, num_ranks=16, fabric=TWO_NODES, protocol="LL")
    assert ll.protocol == "LL" and ll.transfer_s == pytest.approx(GiB / (_nic_rate() * cal.LL_BW_FRACTION.value))


def test_as_dict_carries_the_terms_the_band_and_the_rates():
    c = collective_cost("all_reduce", 64 * 2**20, num_ranks=8, fabric="nvlink4")
    d = c.as_dict()
    assert sum(d["terms"].values()) == pytest.approx(d["time_s"])
    assert d["time_low_s"] < d["time_s"] < d["time_high_s"]
    assert d["busbw_gb_per_s"] == pytest.approx(c.busbw_bytes_per_s / 1e9)
    assert d["algbw_gb_per_s"] == pytest.approx(c.algbw_bytes_per_s / 1e9)
    assert [a["algorithm"] for a in d["alternatives"]] == [a for a, _, _ in c.alternatives]


@pytest.mark.parametrize("kwargs, message", [
    (dict(protocol="LL64"), "unknown protocol 'LL64'"),
    (dict(launch="lazy"), "unknown launch mode 'lazy'"),
    (dict(gpus_per_thread=True), "gpus_per_thread True"),
    (dict(num_ranks=9, fabric=TWO_NODES), "9 GPUs over 2 nodes"),
    (dict(num_ranks=8, gpus_per_thread=8, fabric=TWO_NODES), "one host thread drives GPUs of its own node"),
    (dict(num_ranks=2, fabric=make_fabric("nvlink3", gpu="a40", topology="pairs", inter_socket="upi_skylake")),
     "their traffic stays on the NVLink bridge"),
    (dict(algorithm="hierarchical"), "needs several nodes"),
    (dict(num_ranks=8, fabric=make_fabric("nvlink4", topology="mesh", mesh_size=4)), "do not fit a mesh of 4"),
    (dict(algorithm="one_shot", num_ranks=4, fabric=make_fabric("pcie4", p2p=False)), "reads peers' memory directly"),
    (dict(algorithm="one_shot", protocol="LL128", num_ranks=4, fabric="nvlink4"), "know LL and Simple"),
    (dict(algorithm="collnet_direct"), "collnet_direct"),
    (dict(num_ranks=16, fabric=system_fabric("dgx_h100")), "16 GPUs per node do not fit"),
    (dict(num_ranks=32, fabric="nvlink3"), "32 GPUs in one NVLink 3"),
])
def test_every_refusal_names_the_bad_value(kwargs, message):
    args = dict(num_ranks=8, fabric="nvlink4") | kwargs
    with pytest.raises(GpucommError, match=message):
        collective_cost("all_reduce", 2**20, **args)


def test_send_recv_inside_a_node_refuses_ll128():
    with pytest.raises(GpucommError, match="NCCL's send/recv run LL or Simple"):
        collective_cost("send_recv", 2**20, num_ranks=8, fabric="nvlink4", protocol="LL128")


def test_all_reduce_time_is_collective_cost_s_time():
    fabric = make_fabric("pcie4", p2p=False)
    assert all_reduce_time_s(64 * 2**20, 4, fabric=fabric) == \
        collective_cost("all_reduce", 64 * 2**20, num_ranks=4, fabric=fabric).time_s


def test_per_gpu_bandwidth_refuses_more_gpus_than_the_mesh():
    with pytest.raises(GpucommError, match="do not fit a mesh of 4"):
        per_gpu_bw_bytes_per_s(make_fabric("nvlink4", topology="mesh", mesh_size=4), 8)


def test_alpha_beta_refuses_a_negative_alpha_and_no_bandwidth():
    with pytest.raises(GpucommError, match="alpha"):
        alpha_beta_time_s(1e6, alpha_s=-1e-6, bw_bytes_per_s=1e9, num_ranks=2)
    with pytest.raises(GpucommError, match="bandwidth"):
        alpha_beta_time_s(1e6, alpha_s=0.0, bw_bytes_per_s=0.0, num_ranks=2)


def test_nvls_tree_on_blackwell_x86_takes_nccls_tree_correction():
    # tuning.cc applies the Tree all_reduce correction to NVLS Tree too on Blackwell with an x86 host (last index 23)
    comm, table = comm_and_table(make_fabric("nvlink5", num_nodes=2, network="ib_ndr"), 16, (2, 30, 7))
    key = ("all_reduce", "nvls_tree", "Simple")
    if comm.compute_capability < 100 or comm.cpu_arch != "x86" or key not in table.bw_bytes_per_s:
        pytest.skip("no NVLS Tree on this communicator")
    size = 2**20
    factor = ct.tree_correction_factor("Simple", size, last_index=23)
    assert factor != 1.0
    assert ct.nccl_bandwidth_s(comm, table, *key, size) == pytest.approx(size / (table.bw_bytes_per_s[key] * factor))
    assert nt.compcap_index(comm.compute_capability) == nt.ARCHS.index("blackwell")
