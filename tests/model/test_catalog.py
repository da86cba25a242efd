"""The sourced hardware catalog: sources, per-direction rules, spot values from the fact sheet, lookups, layering."""

import dataclasses

import pytest

from gpucomm import GpucommError
from gpucomm.model.hardware import (
    GPUS,
    HOST_HOPS,
    INTER_SOCKET_LINKS,
    LINKS,
    NETWORKS,
    NVSWITCHES,
    PCIE_GENS,
    SYSTEMS,
    get_gpu,
    get_host_hop,
    get_inter_socket_link,
    get_link,
    get_network,
    get_nvswitch,
    get_pcie_gen,
    get_system,
    pcie_bw_bytes_per_s,
)
from gpucomm.model.hardware.nvswitch import FABRICS, switch_board
from gpucomm.model.hardware.pcie import INTEL_P2P_OVERHEAD

TABLES = {"GPUS": GPUS, "NETWORKS": NETWORKS, "NVSWITCHES": NVSWITCHES, "SYSTEMS": SYSTEMS,
          "PCIE_GENS": PCIE_GENS, "HOST_HOPS": HOST_HOPS, "INTER_SOCKET_LINKS": INTER_SOCKET_LINKS}
ENTRIES = [(name, key, entry) for name, table in TABLES.items() for key, entry in table.items()]


@pytest.mark.parametrize("table,key,entry", ENTRIES, ids=[f"{t}:{k}" for t, k, _ in ENTRIES])
def test_every_entry_has_an_https_source_and_notes(table, key, entry):
    assert entry.source.startswith("https://"), (table, key)
    assert entry.notes.strip(), (table, key)
    compute_source = getattr(entry, "compute_source", None)
    assert compute_source is None or compute_source.startswith("https://"), (table, key)


def test_entries_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_gpu("h100_sxm5").nvlink_bw_bytes_per_s = 0


def test_table_keys_match_entry_keys():
    for table in (GPUS, NETWORKS, NVSWITCHES, SYSTEMS, HOST_HOPS, INTER_SOCKET_LINKS):
        assert all(key == entry.key for key, entry in table.items())
    assert all(gen == entry.gen for gen, entry in PCIE_GENS.items())


# --- per direction vs the vendors' both-directions figures -------------------------------------

@pytest.mark.parametrize("key", list(GPUS))
def test_gpu_nvlink_per_direction_is_half_the_marketing_figure(key):
    gpu = GPUS[key]
    assert gpu.nvlink_bw_bytes_per_s == pytest.approx(gpu.nvlink_bidir_marketing_bytes_per_s / 2)
    if gpu.nvlink_gen is None:
        assert gpu.nvlink_bw_bytes_per_s == 0 and gpu.nvlink_links == 0 and not gpu.nvlink_bridge
    else:
        assert gpu.nvlink_bw_bytes_per_s > 0


def test_nvswitch_chip_figure_is_ports_times_both_directions():
    for sw in NVSWITCHES.values():
        assert sw.chip_bidir_marketing_bytes_per_s == pytest.approx(2 * sw.ports_per_chip * sw.port_bw_bytes_per_s)


def test_pcie_x16_bidir_is_pcisigs_figure_and_switch_hops_match():
    # PCI-SIG: 8b/10b generations after the line code, later ones at the raw bit rate ("32 GT/s raw bit rate and up
    # to 128 GB/s via x16", PCIe 5.0)
    marketed_gb = [gen.x16_bidir_marketing_bytes_per_s / 1e9 for gen in PCIE_GENS.values()]
    assert marketed_gb == pytest.approx([8, 16, 32, 64, 128, 256, 512])
    for key, link in LINKS.items():
        if link.kind == "pcie":
            assert link.bidir_marketing_bytes_per_s == pytest.approx(get_pcie_gen(key).x16_bidir_marketing_bytes_per_s)
    for hop in HOST_HOPS.values():
        gen = get_pcie_gen(hop.key.split("_")[0])
        assert hop.bidir_marketing_bytes_per_s == pytest.approx(gen.x16_bidir_marketing_bytes_per_s)
        factor = 1 if hop.key.endswith("_switch") else 1 / INTEL_P2P_OVERHEAD
        assert hop.bw_bytes_per_s == pytest.approx(gen.x16_bytes_per_s * factor), hop.key


def test_inter_socket_links_carry_nccls_figure_and_a_measurement_where_public():
    # NCCL v2.30.7-1 src/graph/topo.h: BDW_QPI_BW 6, SKL_QPI_BW 10, SRP_QPI_BW 22, ERP_QPI_BW 40, and AMD_BW 16 for every
    # AMD CPU (the per-generation AMD_ZEN*_BW values are on NCCL's dev branch only)
    nccl = {"qpi_broadwell": 6, "upi_skylake": 10, "upi_sapphire_rapids": 22, "upi_emerald_rapids": 40,
            "xgmi_zen2": 16, "xgmi_zen4": 16, "xgmi_zen5": 16}
    assert {k: link.nccl_bw_bytes_per_s / 1e9 for k, link in INTER_SOCKET_LINKS.items()} == nccl
    # measured cross-NUMA P2P, bidirectional / 2: Genoa ~64 GB/s, Turin ~95 GB/s (voipmonitor/rtx6kpro); Rome: 20-22 GB/s
    # each way with cudaMemcpyPeer (charlie0129's RTX 4090 P2P post)
    assert {k: link.bw_bytes_per_s / 1e9 for k, link in INTER_SOCKET_LINKS.items()} == \
        dict(nccl, xgmi_zen2=21, xgmi_zen4=32, xgmi_zen5=47.5)
    for link in INTER_SOCKET_LINKS.values():
        assert link.key not in LINKS  # never a GPU's own link
        assert ("topo.h" in link.source) == (link.measured_bw_bytes_per_s is None)
        assert "topo.h" in link.notes and "ncclTopoGetInterCpuBw" in link.notes


def test_network_bytes_are_bits_over_eight():
    for net in NETWORKS.values():
        assert net.bw_bytes_per_s == net.port_bits_per_s / 8
        assert net.kind in ("infiniband", "ethernet")


# --- spot values from the fact sheet -----------------------------------------------------------

def test_gpu_spot_values():
    assert get_gpu("h100_sxm5").nvlink_bw_bytes_per_s == 450e9          # 900 GB/s bidir
    assert get_gpu("h100_sxm5").nvlink_links == 18
    assert get_gpu("h800_sxm").nvlink_bw_bytes_per_s == 200e9
    assert get_gpu("a100_sxm4_80gb").nvlink_bw_bytes_per_s == 300e9
    assert get_gpu("b200_hgx").nvlink_bw_bytes_per_s == 900e9
    assert get_gpu("a40").nvlink_bw_bytes_per_s == pytest.approx(56.25e9)
    assert get_gpu("h100_sxm5").dense_bf16_flops_per_s == pytest.approx(989.4e12)
    assert get_gpu("h100_sxm5").dense_fp8_flops_per_s == pytest.approx(1978.9e12)
    assert get_gpu("b200_hgx").dense_bf16_flops_per_s == pytest.approx(2.25e15)
    assert get_gpu("b200_gb200").dense_fp8_flops_per_s == pytest.approx(5e15)
    assert get_gpu("a100_sxm4_40gb").dense_bf16_flops_per_s == pytest.approx(312e12)
    assert get_gpu("h200_sxm").mem_bytes == 141e9
    assert get_gpu("h200_sxm").mem_bw_bytes_per_s == pytest.approx(4.8e12)


def test_dense_never_sparse():
    # The sparse figures circulate as "dense" (fact sheet 8f): H200 FP8 3.94 PF, B200 FP8 9 PF.
    assert get_gpu("h200_sxm").dense_fp8_flops_per_s < 3.9e15
    assert get_gpu("b200_hgx").dense_fp8_flops_per_s < 9e15
    for gpu in GPUS.values():
        if gpu.dense_fp8_flops_per_s and gpu.dense_bf16_flops_per_s:
            # FP8 runs twice BF16's rate on every tensor core here; the L40S datasheet's 733 and 362.05 are 1.2 % off it
            assert gpu.dense_fp8_flops_per_s == pytest.approx(2 * gpu.dense_bf16_flops_per_s, rel=0.015), gpu.key


def test_consumer_cards():
    rtx4090, rtx5090 = get_gpu("rtx_4090"), get_gpu("rtx_5090")
    assert rtx4090.nvlink_gen is None and rtx4090.pcie_gen == 4 and rtx4090.pcie_p2p is False
    assert rtx5090.nvlink_gen is None and rtx5090.pcie_gen == 5
    assert get_gpu("v100_sxm2").dense_bf16_flops_per_s is None                  # Volta has no BF16
    assert get_gpu("a100_sxm4_40gb").dense_fp8_flops_per_s is None              # nor Ampere FP8


def test_pcie_spot_values():
    assert pcie_bw_bytes_per_s(5, 16) == pytest.approx(63.0e9, rel=1e-3)
    assert pcie_bw_bytes_per_s(4) == pytest.approx(31.5e9, rel=1e-3)
    assert pcie_bw_bytes_per_s("3.0", 16) == pytest.approx(15.75e9, rel=1e-3)
    assert pcie_bw_bytes_per_s(1, 16) == 4e9
    assert pcie_bw_bytes_per_s(6, 16) == 128e9
    assert pcie_bw_bytes_per_s(7, 16) == 256e9
    assert get_pcie_gen(6).flit_tlp_fraction == pytest.approx(236 / 256)
    assert get_pcie_gen("gen5").x8_bytes_per_s == pytest.approx(get_pcie_gen(5).x16_bytes_per_s / 2)
    assert get_host_hop("pcie5_cpu_p2p").bw_bytes_per_s == pytest.approx(63.0e9 * 5 / 6, rel=1e-3)


@pytest.mark.parametrize("gen", [3, 4, 5, 6])
def test_pcie_table_agrees_with_links(gen):
    assert get_link(f"pcie{gen}").bw_bytes_per_s == pytest.approx(PCIE_GENS[gen].x16_bytes_per_s)


@pytest.mark.parametrize("gen", [1, 2, 3, 4, 5])
def test_nvlink_links_agree_with_gpus(gen):
    first = {1: "p100_sxm2", 2: "v100_sxm2", 3: "a100_sxm4_40gb", 4: "h100_sxm5", 5: "b200_hgx"}[gen]
    assert get_gpu(first).nvlink_bw_bytes_per_s == get_link(f"nvlink{gen}").bw_bytes_per_s


def test_network_spot_values():
    assert get_network("ib_ndr").bw_bytes_per_s == 50e9                        # 400 Gb/s = 50 GB/s per direction
    assert get_network("ib_hdr").bw_bytes_per_s == 25e9
    assert get_network("ib_edr").bw_bytes_per_s == 12.5e9
    assert get_network("ib_xdr").bw_bytes_per_s == 100e9
    assert get_network("eth_400g").bw_bytes_per_s == get_network("ib_ndr").bw_bytes_per_s


def test_nvswitch_and_system_spot_values():
    assert [sw.ports_per_chip for sw in NVSWITCHES.values()] == [18, 36, 64, 72]
    assert [sw.nvls for sw in NVSWITCHES.values()] == [False, False, True, True]
    assert get_nvswitch("nvswitch3").chip_bidir_marketing_bytes_per_s == pytest.approx(3.2e12)
    assert get_system("dgx_h100").nvls and not get_system("dgx_a100").nvls
    assert get_system("dgx2").nvlink_domain_size == 16
    assert get_system("gb200_nvl72").nvlink_domain_size == 72 and get_system("gb200_nvl72").nvswitch_chips == 18
    assert get_system("dgx1_v100").fabric == "cube_mesh" and not get_system("dgx1_v100").nvlink_all_to_all
    assert get_system("dgx1_p100").gpus_per_nic == 2
    assert not get_system("pcie_8x_rtx4090").p2p and get_system("pcie_8x_rtx4090").nvlink_domain_size == 1
    assert get_system("hgx_b200") is get_system("dgx_b200")
    nvl72 = get_system("gb200_nvl72")
    assert (nvl72.hosts, nvl72.switch_trays, nvl72.num_gpus // nvl72.hosts) == (18, 9, 4)
    # 'NVLink Switch features 144 NVLink ports' per tray (NVIDIA NVLink page): 2 chips of 72 ports
    assert nvl72.nvswitch_chips // nvl72.switch_trays * get_nvswitch(nvl72.nvswitch_key).ports_per_chip == 144
    racks = ("gb200_nvl72", "gb300_nvl72")
    assert all(s.hosts == 1 and s.switch_trays == 0 for k, s in SYSTEMS.items() if k not in racks)
    assert (get_system("gb300_nvl72").hosts, get_system("gb300_nvl72").switch_trays) == (18, 9)


def test_added_systems_match_their_sources():
    # H800: NVLink 400 GB/s bidir (8 links), 8 x 400 Gb/s ConnectX-7 per node (DeepSeek, arXiv 2505.09343)
    h800 = get_system("hgx_h800")
    assert get_gpu(h800.gpu_key).nvlink_bidir_marketing_bytes_per_s == 400e9 and get_gpu(h800.gpu_key).nvlink_links == 8
    assert (h800.num_nics, h800.nic_key, h800.nvswitch_chips, h800.nvls) == (8, "ib_ndr", 4, True)
    # H20 keeps H100's 900 GB/s
    assert get_gpu(get_system("hgx_h20").gpu_key).nvlink_bidir_marketing_bytes_per_s == 900e9
    assert get_system("hgx_h20").num_nics is None
    # H100 PCIe: 600 GB/s bidir bridge between pairs, PCIe Gen5; A40: 112.5 GB/s bidir bridge, PCIe 4.0
    h100 = get_system("pcie_8x_h100_bridged")
    assert (h100.fabric, h100.nvlink_domain_size, get_gpu(h100.gpu_key).pcie_gen) == ("pcie+bridge", 2, 5)
    assert get_gpu(h100.gpu_key).nvlink_bidir_marketing_bytes_per_s == 600e9
    a40 = get_system("pcie_8x_a40_bridged")
    assert get_gpu(a40.gpu_key).nvlink_bidir_marketing_bytes_per_s == 112.5e9 and get_gpu(a40.gpu_key).pcie_gen == 4
    # GeForce boxes: no P2P with the stock driver; sockets as in their sources
    assert [(get_system(k).p2p, get_system(k).inter_socket, get_gpu(get_system(k).gpu_key).pcie_gen)
            for k in ("pcie_8x_rtx4090", "pcie_8x_rtx5090")] == [(False, "upi_skylake", 4), (False, "xgmi_zen5", 5)]
    assert get_system("hgx_h200") is get_system("dgx_h200")


@pytest.mark.parametrize("key", list(SYSTEMS))
def test_systems_refer_to_catalog_entries(key):
    system = SYSTEMS[key]
    gpu = get_gpu(system.gpu_key)
    assert system.fabric in FABRICS
    assert (system.nvswitch_key is None) == (system.nvswitch_chips == 0) == (system.fabric != "nvswitch")
    if system.nvswitch_key:
        assert get_nvswitch(system.nvswitch_key).nvlink_gen == gpu.nvlink_gen
        assert system.nvls == get_nvswitch(system.nvswitch_key).nvls
    if system.nic_key is not None:
        get_network(system.nic_key)
        assert system.gpus_per_nic == system.num_gpus / system.num_nics
    if system.fabric == "pcie":
        assert gpu.nvlink_gen is None and system.nvlink_domain_size == 1
    assert system.hosts >= 1 and system.num_gpus % system.hosts == 0
    assert system.switch_trays == 0 or system.nvswitch_chips % system.switch_trays == 0
    assert 1 <= system.nvlink_domain_size <= system.num_gpus
    if system.inter_socket is not None:
        get_inter_socket_link(system.inter_socket)
        assert system.fabric in ("pcie", "pcie+bridge")  # NVSwitch traffic does not cross the sockets
    if system.fabric == "pcie+bridge":
        assert gpu.nvlink_bridge and system.nvlink_domain_size == 2


# --- lookups -------------------------------------------------------------------------------------

@pytest.mark.parametrize("getter,table", [
    (get_gpu, GPUS), (get_network, NETWORKS), (get_nvswitch, NVSWITCHES), (get_system, SYSTEMS),
    (get_host_hop, HOST_HOPS), (get_pcie_gen, PCIE_GENS), (get_inter_socket_link, INTER_SOCKET_LINKS),
])
def test_unknown_keys_raise_naming_the_key_and_listing_accepted(getter, table):
    with pytest.raises(GpucommError) as err:
        getter("no_such_thing_42")
    message = str(err.value)
    assert "no_such_thing_42" in message
    assert all(str(key) in message for key in table)


def test_lookups_are_case_insensitive_and_pass_entries_through():
    assert get_gpu("H100-SXM5") is GPUS["h100_sxm5"]
    assert get_gpu(GPUS["a40"]) is GPUS["a40"]
    assert get_network("IB_NDR") is NETWORKS["ib_ndr"]
    assert get_pcie_gen("PCIe5") is get_pcie_gen(5.0) is PCIE_GENS[5]


@pytest.mark.parametrize("gen,lanes", [(5, 3), (5, 32), (5, 0), (5, True), (5, 16.0), (8, 16), (0, 16), ("x", 16)])
def test_pcie_bw_validates_its_inputs(gen, lanes):
    with pytest.raises(GpucommError) as err:
        pcie_bw_bytes_per_s(gen, lanes)
    assert "\n" not in str(err.value)


# --- layering ------------------------------------------------------------------------------------

def test_catalog_modules_import_only_the_standard_library_and_gpucomm(fresh_process):
    # a fresh interpreter imported every model module, the catalog's among them (tests/conftest.py FRESH_TARGETS)
    import sys

    ran = fresh_process["model"]
    modules = ["gpucomm.model.hardware.gpus", "gpucomm.model.hardware.network", "gpucomm.model.hardware.nvswitch",
               "gpucomm.model.hardware.pcie", "gpucomm.model.hardware"]
    assert set(modules) <= set(ran.modules)
    assert sorted({m.split(".")[0] for m in ran.modules} - set(sys.stdlib_module_names) - {"gpucomm"}) == []


def test_nvlink_c2c_is_a_cpu_gpu_link_kept_out_of_the_gpu_to_gpu_links():
    from gpucomm.model.hardware import LINKS, NVLINK_C2C

    assert NVLINK_C2C.bw_bytes_per_s == 450e9 and NVLINK_C2C.bidir_marketing_bytes_per_s == 900e9
    assert NVLINK_C2C.source.startswith("https://") and NVLINK_C2C.key not in LINKS


def test_no_model_formula_reads_a_both_directions_figure():
    # the vendors' "both directions added" figures live in *_bidir_marketing_* fields for reference only: the
    # modules that compute times and bandwidths must never read them
    import ast
    import importlib

    for name in ("cost", "tp", "training", "planning", "scaling", "collectives", "fit", "units"):
        module = importlib.import_module(f"gpucomm.model.{name}")
        tree = ast.parse(open(module.__file__).read())
        read = [node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute) and "bidir" in node.attr]
        assert not read, (name, read)


def test_switch_boards_port_arithmetic():
    h100, b200, nvl72, a100 = (switch_board(k) for k in ("dgx_h100", "dgx_b200", "gb200_nvl72", "dgx_a100"))
    for b in (h100, b200, nvl72, a100):
        assert b.gpu_links <= b.switch_ports  # enough ports for every GPU link: a precondition of non-blocking
        assert b.gpu_bw_bytes_per_s == pytest.approx(b.links_per_gpu * b.link_bw_bytes_per_s)
    assert b200.gpu_links == b200.switch_ports and nvl72.gpu_links == nvl72.switch_ports
    assert h100.chip_bidir_marketing_bytes_per_s * 8 / 1e12 == pytest.approx(25.6)  # NVIDIA's blog: "25.6 Tb/s" per chip
    assert nvl72.aggregate_bidir_bytes_per_s / 1e12 == pytest.approx(129.6)  # NVIDIA's "130 TB/s"
    assert nvl72.bisection_bytes_per_s / 1e12 == pytest.approx(32.4)
    assert h100.bisection_bytes_per_s * 2 / 1e12 == pytest.approx(3.6)  # DGX H100 "3.6 TB/s bisection" (both directions)
    assert a100.aggregate_bidir_bytes_per_s / 1e12 == pytest.approx(4.8)  # A100 whitepaper "4.8 TB/s total"
    assert not a100.nvls and h100.nvls
    with pytest.raises(GpucommError, match="has no NVSwitch"):
        switch_board("dgx1_v100")


def test_compute_capability_lives_in_the_gpu_catalog_and_matches_the_architecture():
    # NVIDIA's "CUDA GPUs - Compute Capability" page: majors by architecture (Blackwell data centre 10, GeForce 12)
    from gpucomm.model.fabric import make_fabric
    from gpucomm.model.hardware import GPUS
    from gpucomm.model.nccl_fabric import compute_capability

    majors = {"Pascal": {6}, "Volta": {7}, "Turing": {7}, "Ampere": {8}, "Ada": {8}, "Hopper": {9}, "Blackwell": {10, 12}}
    for gpu in GPUS.values():
        assert gpu.compute_capability // 10 in majors[gpu.architecture], gpu.key
    assert compute_capability(make_fabric("nvlink4", gpu="h100_sxm5")) == 90
    assert compute_capability(make_fabric("pcie4", gpu="rtx_4090")) == 89
