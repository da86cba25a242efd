"""A node's fabric from ``nvidia-smi topo -m`` or NCCL's topology dump (gpucomm.model.topo_fabric)."""

from __future__ import annotations

from importlib import resources

import pytest

from gpucomm import GpucommError
from gpucomm.model.topo_fabric import matrix_fabric, nccl_xml_fabric, topo_fabric


def _bundled(name: str) -> str:
    return resources.files("gpucomm.model.data").joinpath(f"topologies/{name}.txt").read_text()


def _matrix(cells: list[list[str]], nics: int = 0) -> str:
    n = len(cells)
    names = [f"GPU{i}" for i in range(n)] + [f"NIC{i}" for i in range(nics)]
    rows = ["\t" + "\t".join(names)]
    for i, name in enumerate(names):
        row = [("X" if i == j else cells[i][j] if i < n and j < n else "PIX") for j in range(len(names))]
        rows.append(name + "\t" + "\t".join(row))
    return "\n".join(rows) + "\n"


def _uniform(n: int, code: str) -> list[list[str]]:
    return [[code] * n for _ in range(n)]


def test_dgx_h100_is_nvlink_through_a_switch_with_its_gpus():
    f = topo_fabric(_bundled("dgx_h100"), "h100_sxm5")
    assert (f.link.key, f.topology, f.gpus_per_node, f.p2p, f.gpu) == ("nvlink4", "switch", 8, True, "h100_sxm5")


def test_nv6_between_four_gh200_is_a_mesh_of_their_18_links():
    f = matrix_fabric(_matrix(_uniform(4, "NV6")), "gh200")
    assert (f.topology, f.mesh_size) == ("mesh", 4)


@pytest.mark.parametrize("code,p2p", [("PIX", True), ("PXB", True), ("PHB", False), ("NODE", False)])
def test_pcie_p2p_follows_nccls_default_level(code, p2p):
    # NCCL uses P2P up to PATH_PXB and stages through host memory beyond (p2pLevel, src/graph/paths.cc)
    f = matrix_fabric(_matrix(_uniform(4, code)), "l40s")
    assert (f.link.key, f.p2p, f.inter_socket) == ("pcie4", p2p, None)


def test_a_geforce_card_never_gets_p2p_from_the_topology():
    assert matrix_fabric(_matrix(_uniform(4, "PIX")), "rtx_4090").p2p is False


def test_two_sockets_need_the_socket_link_and_one_socket_refuses_it():
    text = _bundled("pcie_4gpu_two_sockets")
    with pytest.raises(GpucommError, match="--inter-socket with one of"):
        topo_fabric(text, "l40s")
    assert topo_fabric(text, "l40s", inter_socket="upi_skylake").inter_socket == "upi_skylake"
    with pytest.raises(GpucommError, match="under one socket"):
        topo_fabric(_bundled("dgx_h100"), "h100_sxm5", inter_socket="upi_skylake")


def test_bridged_pairs_and_a_cube_mesh():
    cells = [["PIX", "NV4", "SYS", "SYS"], ["NV4", "PIX", "SYS", "SYS"],
             ["SYS", "SYS", "PIX", "NV4"], ["SYS", "SYS", "NV4", "PIX"]]
    f = matrix_fabric(_matrix(cells), "a40", inter_socket="xgmi_zen2")
    assert (f.topology, f.pcie_link, f.link.bw_bytes_per_s) == ("pairs", "pcie4", 56.25e9)
    with pytest.raises(GpucommError, match="cube-mesh"):
        topo_fabric(_bundled("dgx1_v100"), "v100_sxm2")


def test_nics_of_the_file_are_the_nodes_nics_unless_given():
    text = _matrix(_uniform(4, "PIX"), nics=2)
    assert matrix_fabric(text, "l4", num_nodes=2, network="eth_100g").nics_per_node == 2
    assert matrix_fabric(text, "l4", num_nodes=2, network="eth_100g", nics_per_node=4).nics_per_node == 4
    assert matrix_fabric(text, "l4").nics_per_node is None  # one node: no network


def test_one_gpu_per_node():
    f = matrix_fabric("\tGPU0\nGPU0\tX\n", "gh200", num_nodes=4, network="ib_ndr200")
    assert (f.gpus_per_node, f.link.kind, f.num_nodes) == (1, "nvlink", 4)


@pytest.mark.parametrize("text,gpu,match", [
    (_matrix(_uniform(2, "NV12")), "l40s", "has none"),
    ("\tNIC0\nNIC0\tX\n", "l4", "no GPU row"),
    ("<system><cpu></cpu></system>", "l4", "no <gpu>"),
    ("<system><gpu sm='90'/>", "l4", "well-formed"),
    ("<system><cpu><pci link_speed='16.0 GT/s PCIe'><gpu sm='90'/></pci></cpu></system>", "l4", "compute capability 89"),
])
def test_bad_topologies_give_one_line_naming_the_problem(text, gpu, match):
    with pytest.raises(GpucommError, match=match) as err:
        topo_fabric(text, gpu)
    assert "\n" not in str(err.value)


DUMP = """<system version="2">
  <cpu numaid="0" arch="x86_64" vendor="AuthenticAMD">
    <pci busid="0000:01:00.0" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="89" rank="0" gdr="1"/></pci>
    <pci busid="0000:02:00.0" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="1" sm="89" rank="1" gdr="1"/></pci>
    <nic><net name="eth0" dev="0" speed="100000" gdr="0"/></nic>
  </cpu>
  <cpu numaid="1" arch="x86_64" vendor="AuthenticAMD">
    <pci busid="0000:81:00.0" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="2" sm="89" rank="2" gdr="1"/></pci>
    <pci busid="0000:82:00.0" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="3" sm="89" rank="3" gdr="1"/></pci>
  </cpu>
</system>"""


def test_nccl_dump_gives_pcie_generation_sockets_nics_and_gdr():
    with pytest.raises(GpucommError, match="two sockets"):
        nccl_xml_fabric(DUMP, "l40s")
    f = topo_fabric(DUMP, "l40s", inter_socket="xgmi_zen4", num_nodes=2, network="eth_100g")
    assert (f.link.key, f.inter_socket, f.gpus_per_node, f.nics_per_node, f.gdr) == ("pcie4", "xgmi_zen4", 4, 1, False)


def test_nccl_dump_nvlink_mesh_without_switch():
    gpus = "".join(
        f'<pci link_speed="32.0 GT/s PCIe"><gpu dev="{i}" sm="90" rank="{i}">'
        + "".join(f'<nvlink target="0000:0{j}:00.0" count="6" tclass="0x030200"/>' for j in range(4) if j != i)
        + "</gpu></pci>" for i in range(4))
    f = nccl_xml_fabric(f'<system version="2"><cpu numaid="0">{gpus}</cpu></system>', "gh200")
    assert (f.topology, f.mesh_size) == ("mesh", 4)
