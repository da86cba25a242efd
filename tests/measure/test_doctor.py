"""gpucomm.measure.doctor: every check's verdicts with a fake NVML module, recorded topologies and logs; the whole
GPU path of run_doctor with a fake machine; the real machine's CUDA path under ``make gpu-check`` (marked gpu)."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import pytest

from gpucomm import GpucommError
from gpucomm.measure import doctor as d
from gpucomm.measure.logs.nccl_info import bundled_info_log_text, parse_nccl_info_log, read_bundled_info_log
from gpucomm.measure.topology import parse_topo_matrix
from gpucomm.measure.topology_examples import example_topology_text, read_example_topology
from gpucomm.model.machine import model_band
from gpucomm.model.units import MiB

# ------------------------------------------------------------------------------------------------ a fake NVML


class FakeNvmlError(Exception):
    def __init__(self, value: int = 3):
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return {3: "Not Supported", 12: "NVML Shared Library Not Found"}.get(self.value, f"error {self.value}")


class FabricInfo(ctypes.Structure):  # the layout of pynvml's c_nvmlGpuFabricInfo_t
    _fields_ = [("clusterUuid", ctypes.c_uint8 * 16), ("status", ctypes.c_uint), ("cliqueId", ctypes.c_uint32),
                ("state", ctypes.c_uint)]


class FakeNvml:
    """The pynvml functions the doctor calls, answering from a list of GPU descriptions.

    Each GPU: ``name``, ``pcie`` (curr_gen, max_gen, gpu_max_gen, curr_width, max_width, pstate),
    ``nvlink`` (list of link states, None: no NVLink), ``fabric`` ((state, status) or None);
    ``p2p`` maps (i, j) to an NVML P2P status code. ``loaded_gen`` (GPU -> generation) is what the
    current generation reads after the first read (the sampler sees the link speed up under load).
    """

    NVMLError = FakeNvmlError
    NVML_NVLINK_MAX_LINKS = 18
    NVML_P2P_CAPS_INDEX_READ = (0,)  # pynvml really writes "= 0," (a tuple)
    c_nvmlGpuFabricInfo_t = FabricInfo

    def __init__(self, gpus: list[dict], *, p2p: dict | None = None, init_error: int | None = None,
                 loaded_gen: dict | None = None):
        self.gpus, self.p2p, self.init_error, self.loaded_gen = gpus, p2p or {}, init_error, loaded_gen or {}
        self.reads: dict[int, int] = {}
        self.calls: list[str] = []

    def nvmlInit(self):
        self.calls.append("init")
        if self.init_error is not None:
            raise FakeNvmlError(self.init_error)

    def nvmlShutdown(self):
        self.calls.append("shutdown")

    def nvmlSystemGetDriverVersion(self):
        return b"550.54.15"

    def nvmlSystemGetCudaDriverVersion(self):
        return 12040

    def nvmlDeviceGetCount(self):
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetName(self, h):
        return self.gpus[h]["name"]

    def nvmlDeviceGetPciInfo(self, h):
        return type("Pci", (), {"busId": f"00000000:{0x18 + h:02X}:00.0".encode()})()

    def _pcie(self, h, key):
        value = self.gpus[h].get("pcie", {}).get(key)
        if value is None:
            raise FakeNvmlError(3)
        return value

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h):
        self.reads[h] = self.reads.get(h, 0) + 1
        if h in self.loaded_gen and self.reads[h] > 1:
            return self.loaded_gen[h]
        return self._pcie(h, "curr_gen")

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h):
        return self._pcie(h, "max_gen")

    def nvmlDeviceGetGpuMaxPcieLinkGeneration(self, h):
        return self._pcie(h, "gpu_max_gen")

    def nvmlDeviceGetCurrPcieLinkWidth(self, h):
        return self._pcie(h, "curr_width")

    def nvmlDeviceGetMaxPcieLinkWidth(self, h):
        return self._pcie(h, "max_width")

    def nvmlDeviceGetPerformanceState(self, h):
        return self._pcie(h, "pstate")

    def nvmlDeviceGetNvLinkState(self, h, link):
        links = self.gpus[h].get("nvlink")
        if links is None or link >= len(links):
            raise FakeNvmlError(3)
        return links[link]

    def nvmlDeviceGetGpuFabricInfo(self, h, ref):
        fabric = self.gpus[h].get("fabric")
        if fabric is None:
            raise FakeNvmlError(3)
        ref._obj.state, ref._obj.status = fabric
        return 0  # NVML_SUCCESS, as pynvml returns

    def nvmlDeviceGetP2PStatus(self, a, b, index):
        assert index == 0
        return self.p2p.get((a, b), 0)


PCIE5_OK = {"curr_gen": 5, "max_gen": 5, "gpu_max_gen": 5, "curr_width": 16, "max_width": 16, "pstate": 0}


def h100(**overrides) -> dict:
    gpu = {"name": "NVIDIA H100 80GB HBM3", "pcie": dict(PCIE5_OK), "nvlink": [1] * 18, "fabric": (3, 0)}
    gpu.update(overrides)
    return gpu


def snapshot(*gpus, **kwargs) -> dict:
    with d.NvmlReader(FakeNvml(list(gpus), **kwargs)) as reader:
        return reader.snapshot()


# ------------------------------------------------------------------------------------------------ NVML reading

def test_nvml_reader_reads_driver_pcie_nvlink_fabric_and_p2p():
    fake = FakeNvml([h100(), h100(nvlink=[1] * 16 + [0, 0], fabric=(1, 0))], p2p={(0, 1): 4})
    with d.NvmlReader(fake) as reader:
        snap = reader.snapshot()
    assert fake.calls == ["init", "shutdown"]
    assert snap["driver_version"] == "550.54.15" and snap["cuda_driver_version"] == "12.4"
    g0, g1 = snap["gpus"]
    assert g0["name"] == "NVIDIA H100 80GB HBM3" and g0["bus_id"] == "00000000:18:00.0"
    assert g0["pcie"] == PCIE5_OK
    assert g0["nvlink"] == {"present": 18, "active": 18} and g1["nvlink"] == {"present": 18, "active": 16}
    assert g0["fabric"] == {"state": 3, "status": 0} and g1["fabric"] == {"state": 1, "status": 0}
    assert snap["p2p_status"] == {"0-1": 4, "1-0": 0}


def test_nvml_reader_gives_none_for_what_the_driver_does_not_support():
    snap = snapshot({"name": "NVIDIA GeForce RTX 4090", "pcie": {"curr_gen": 4}, "nvlink": None, "fabric": None})
    gpu = snap["gpus"][0]
    assert gpu["pcie"]["curr_gen"] == 4 and gpu["pcie"]["max_width"] is None
    assert gpu["nvlink"] is None and gpu["fabric"] is None


def test_nvml_unavailable_is_one_line():
    with pytest.raises(d.NvmlUnavailable, match="^NVML not available: NVML Shared Library Not Found$"):
        d.NvmlReader(FakeNvml([], init_error=12)).__enter__()


def test_pcie_sampler_keeps_the_highest_generation_seen_under_load():
    fake = FakeNvml([h100(pcie=dict(PCIE5_OK, curr_gen=1, pstate=8))], loaded_gen={0: 5})
    with d.NvmlReader(fake) as reader:
        sampler = d.PcieSampler(reader)
        sampler.sample()
        sampler.sample()
    assert sampler.best == {0: {"gen": 5, "width": 16, "samples": 2}}
    with d.PcieSampler(None) as idle:
        pass
    assert idle.best == {}


# ------------------------------------------------------------------------------------------------ the checks

def gpus_of(*gpus) -> list[dict]:
    return snapshot(*gpus)["gpus"]


def test_pcie_link_ok_and_each_pathology():
    ok = d.check_pcie_links(gpus_of(h100(), h100()))
    assert ok.status == "ok" and "GPU0 Gen5 x16, GPU1 Gen5 x16" in ok.measured

    narrow = d.check_pcie_links(gpus_of(h100(), h100(pcie=dict(PCIE5_OK, curr_width=8))))
    assert narrow.status == "pathology" and "GPU1 runs at x8 of x16" in narrow.measured and "x16" in narrow.fix

    slot = d.check_pcie_links(gpus_of(h100(pcie=dict(PCIE5_OK, curr_gen=3, max_gen=3))))
    assert slot.status == "below" and "GPU0's slot allows Gen3, the GPU Gen5" in slot.measured
    assert "the GPU's own: Gen5" in slot.expected and "BIOS" in slot.fix

    idle = d.check_pcie_links(gpus_of(h100(pcie=dict(PCIE5_OK, curr_gen=1, pstate=8))))
    assert idle.status == "ok" and "idle" in idle.measured and "not judged" in idle.measured

    loaded = d.check_pcie_links(gpus_of(h100(pcie=dict(PCIE5_OK, curr_gen=1))), {0: {"gen": 4, "width": 16, "samples": 9}})
    assert loaded.status == "pathology" and "trained at Gen4 of Gen5 under load" in loaded.measured

    speeds_up = d.check_pcie_links(gpus_of(h100(pcie=dict(PCIE5_OK, curr_gen=1))), {0: {"gen": 5, "width": 16, "samples": 9}})
    assert speeds_up.status == "ok" and "(under load)" in speeds_up.measured

    skipped = d.check_pcie_links([], reason="NVML not available: x")
    assert skipped.status == "skipped" and skipped.measured == "NVML not available: x"


def test_nvlink_links_down_missing_bridge_and_pcie_only():
    assert d.check_nvlink(gpus_of(h100(), h100())).status == "ok"
    down = d.check_nvlink(gpus_of(h100(), h100(nvlink=[1] * 15 + [0] * 3)))
    assert down.status == "pathology" and "GPU1: 3 of 18 links down" in down.measured
    assert "every link active (18 per GPU in the catalog)" == down.expected
    fewer = d.check_nvlink(gpus_of(h100(nvlink=[1] * 12)))
    assert fewer.status == "pathology" and "the catalog lists 18" in fewer.measured
    no_bridge = d.check_nvlink(gpus_of({"name": "NVIDIA A40", "nvlink": [0] * 4}))
    assert no_bridge.status == "ok" and "no NVLink bridge fitted" in no_bridge.measured
    pcie = d.check_nvlink(gpus_of({"name": "NVIDIA GeForce RTX 4090", "nvlink": None}))
    assert pcie.status == "skipped" and "no NVLink" in pcie.measured


def test_nvls_fabric_manager_and_nccl_log():
    assert d.check_nvls(gpus_of(h100(), h100())).status == "ok"
    not_started = d.check_nvls(gpus_of(h100(fabric=(1, 0)), h100(fabric=(1, 0))))
    assert not_started.status == "pathology" and "GPU0 fabric not started" in not_started.measured
    assert "nvidia-fabricmanager" in not_started.fix and not_started.source == d.SRC_FABRIC_MANAGER
    failed = d.check_nvls(gpus_of(h100(fabric=(3, 12))))
    assert failed.status == "pathology" and "registration failed" in failed.measured
    log = read_bundled_info_log("nccl_952")  # "NVLS multicast support is not available on dev 4"
    from_log = d.check_nvls(gpus_of(h100(fabric=None)), log)
    assert from_log.status == "pathology" and "NCCL: NVLS multicast support is not available" in from_log.measured
    a100 = d.check_nvls(gpus_of({"name": "NVIDIA A100-SXM4-80GB", "fabric": None}))
    assert a100.status == "skipped" and "NVLink 4+" in a100.measured


@pytest.mark.parametrize("name, status, words", [
    ("dgx_h100", "ok", "GPU pairs: NV18 x 28"),
    ("pcie_4gpu_two_sockets", "pathology", "across CPU sockets: GPU0-GPU2"),
    ("dgx1_v100", "pathology", "across CPU sockets"),
])
def test_topology_of_recorded_machines(name, status, words):
    check = d.check_topology(read_example_topology(name), example_topology_text(name))
    assert check.status == status and words in check.measured
    if status == "pathology":
        assert "CUDA_VISIBLE_DEVICES" in check.fix and check.source == d.SRC_TOPO


def test_topology_host_bridge_pairs_are_noted_and_a_missing_nvidia_smi_skips():
    matrix = parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \tPHB\nGPU1\tPHB\t X \n")
    check = d.check_topology(matrix)
    assert check.status == "ok" and "host bridge (PHB/NODE)" in check.measured
    assert d.check_topology(None, reason="nvidia-smi not found").status == "skipped"


def test_p2p_matrix_against_the_topology():
    two_sockets = read_example_topology("pcie_4gpu_two_sockets")  # GPU0-GPU1 PXB, GPU2-GPU3 PIX, the rest SYS
    full = [[True] * 4 for _ in range(4)]
    assert d.check_p2p(full, two_sockets).status == "ok"
    across = [[i == j or (i < 2) == (j < 2) for j in range(4)] for i in range(4)]  # P2P within each socket only
    noted = d.check_p2p(across, two_sockets)
    assert noted.status == "ok" and "4 of 12 ordered pairs" in noted.measured and "0->2 (SYS)" in noted.measured
    off = [[i == j for j in range(4)] for i in range(4)]
    bad = d.check_p2p(off, two_sockets, {"0-1": 3})
    assert bad.status == "pathology" and "0->1 (PXB): the PCIe topology does not support it" in bad.measured
    assert "ACS" in bad.fix and bad.source == d.SRC_ACS
    regkey = d.check_p2p([[True, False], [True, True]], None, {"0-1": 4})
    assert regkey.status == "pathology" and "registry key" in regkey.measured
    assert d.check_p2p([[True]]).status == "skipped"
    assert d.check_p2p(None, reason="no CUDA GPU").measured == "no CUDA GPU"


def fake_tree(tmp_path: Path, files: dict[str, str], dirs: tuple[str, ...] = ()) -> d.SystemProbe:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    for rel in dirs:
        (tmp_path / rel).mkdir(parents=True, exist_ok=True)
    return d.SystemProbe(root=str(tmp_path))


def test_iommu_translating_passthrough_off_and_unreadable(tmp_path):
    dma = fake_tree(tmp_path / "dma", {"proc/cmdline": "ro intel_iommu=on quiet", "sys/kernel/iommu_groups/0/type": "DMA\n",
                                       "sys/kernel/iommu_groups/1/type": "DMA-FQ\n"}, ("sys/class/iommu/dmar0",))
    state = d.read_iommu_state(dma)
    assert state == {"cmdline": "ro intel_iommu=on quiet", "iommu_devices": ["dmar0"],
                     "group_types": {"DMA": 1, "DMA-FQ": 1}}
    bad = d.check_iommu(state, has_gpu=True)
    assert bad.status == "pathology" and "kernel flags: intel_iommu=on" in bad.measured and "iommu=pt" in bad.fix
    assert d.check_iommu(state, has_gpu=False).status == "ok"
    pt = fake_tree(tmp_path / "pt", {"sys/kernel/iommu_groups/0/type": "identity\n"})
    assert d.check_iommu(d.read_iommu_state(pt), has_gpu=True).status == "ok"
    off = fake_tree(tmp_path / "off", {}, ("sys/kernel/iommu_groups", "sys/class/iommu"))
    assert d.check_iommu(d.read_iommu_state(off), has_gpu=True).measured == "IOMMU off (no IOMMU groups)"
    assert d.check_iommu(d.read_iommu_state(d.SystemProbe(root=str(tmp_path / "none"))), has_gpu=True).status == "skipped"


LSPCI = """\
0000:00:01.0 PCI bridge: Intel Corporation Sky Lake-E PCI Express Root Port A (rev 07) (prog-if 00 [Normal decode])
\tCapabilities: [110 v1] Access Control Services
\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
0000:03:00.0 PCI bridge: PLX Technology, Inc. PEX 8747 48-Lane, 5-Port PCI Express Gen 3 (8.0 GT/s) Switch (rev ca)
\t\tACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-
0000:04:00.0 3D controller: NVIDIA Corporation GV100GL [Tesla V100 PCIe 32GB] (rev a1)
"""


def test_acs_redirection_from_lspci():
    acs = d.parse_acs(LSPCI)
    assert len(acs["with_acs"]) == 2 and acs["redirecting"] == [LSPCI.splitlines()[0]]
    bad = d.check_acs(LSPCI, has_gpu=True)
    assert bad.status == "pathology" and bad.measured.startswith("1 of 2 devices") and "setpci" in bad.fix
    assert d.check_acs(LSPCI, has_gpu=False).status == "ok"
    assert d.check_acs(LSPCI.replace("ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n0000:03",
                                     "ReqRedir- CmpltRedir- UpstreamFwd+ EgressCtrl- DirectTrans-\n0000:03"),
                       has_gpu=True).status == "ok"
    denied = d.check_acs("0000:00:01.0 PCI bridge: x\n\tCapabilities: <access denied>\n", has_gpu=True)
    assert denied.status == "skipped" and "root" in denied.measured
    assert d.check_acs(None, has_gpu=True, reason="lspci not found").measured == "lspci not found"


def test_gpudirect_rdma(tmp_path):
    none = d.read_rdma_state(fake_tree(tmp_path / "a", {}))
    assert none == {"devices": [], "peer_modules": []} and d.check_gdr(none, has_gpu=True).status == "skipped"
    nic = d.read_rdma_state(fake_tree(tmp_path / "b", {}, ("sys/class/infiniband/mlx5_0",)))
    bad = d.check_gdr(nic, has_gpu=True)
    assert bad.status == "pathology" and "module: none loaded" in bad.measured and "nvidia-peermem" in bad.fix
    assert d.check_gdr(nic, has_gpu=False).status == "skipped"
    loaded = d.read_rdma_state(fake_tree(tmp_path / "c", {}, ("sys/class/infiniband/mlx5_0", "sys/module/nvidia_peermem")))
    assert loaded["peer_modules"] == ["nvidia_peermem"] and d.check_gdr(loaded, has_gpu=True).status == "ok"
    log = read_bundled_info_log("nccl_1412")  # IB connections without /GDRDMA
    staged = d.check_gdr(loaded, has_gpu=True, log=log)
    assert staged.status == "pathology" and "0 of 4 IB connection lines with GDRDMA" in staged.measured


def copy_rec(kind: str, gb_per_s: float, size: int = 64 * MiB) -> dict:
    return {"record": "copy", "kind": kind, "bytes": size, "time_s": size / (gb_per_s * 1e9), "bw_bytes_per_s": gb_per_s * 1e9}


def test_copy_bandwidth_against_the_catalog():
    from gpucomm.measure.copy_bandwidth import expected_copy_bw_bytes_per_s

    expected = expected_copy_bw_bytes_per_s("h100_sxm5")  # PCIe 5.0 x16: 63 GB/s per direction
    checks = {c.name: c for c in d.check_copy_bandwidth(
        [copy_rec("h2d_pinned", 55), copy_rec("d2h_pinned", 26), copy_rec("h2d_pageable", 12), copy_rec("d2d", 1400),
         copy_rec("peer_0_to_1", 380)], expected)}
    assert checks["copy:h2d_pinned"].status == "ok" and "(87% of the catalog)" in checks["copy:h2d_pinned"].measured
    low = checks["copy:d2h_pinned"]
    assert low.status == "below" and "(41% of the catalog)" in low.measured and "pcie_link" in low.fix
    assert checks["copy:h2d_pageable"].status == "ok" and "not judged" in checks["copy:h2d_pageable"].expected
    assert checks["copy:d2d"].status == "ok" and checks["copy:peer_0_to_1"].status == "ok"
    host = d.check_copy_bandwidth([copy_rec("host_numpy", 9, MiB), copy_rec("host_numpy", 12)])
    assert [(c.name, c.status) for c in host] == [("copy:host_numpy", "ok")]
    assert "peak 12 GB/s at 64 MiB" == host[0].measured and "no catalog value" in host[0].expected


def test_node_fabric_reads_names_and_topology_for_the_model():
    # what the doctor read (device names, nvidia-smi topo -m, the P2P matrix) handed to gpucomm.model.machine;
    # the mapping itself is tested in tests/model/test_machine.py
    two = parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n")
    fabric, label = d.node_fabric(["NVIDIA H100 80GB HBM3"] * 2, two, [[True, True], [True, True]], "x")
    assert fabric.link.key == "nvlink4" and fabric.topology == "switch" and fabric.gpu == "h100_sxm5", label
    fabric, _ = d.node_fabric(["NVIDIA H100 80GB HBM3"] * 8, None, None, "x")
    assert fabric.link.key == "nvlink4"
    sockets = read_example_topology("pcie_4gpu_two_sockets")
    fabric, label = d.node_fabric(["NVIDIA GeForce RTX 4090"] * 4, sockets, [[True] * 4] * 4, "AMD EPYC 9654 96-Core")
    assert (fabric.link.key, fabric.p2p, fabric.inter_socket) == ("pcie4", True, "xgmi_zen4"), label
    no_p2p = [[i == j for j in range(4)] for i in range(4)]
    assert d.node_fabric(["NVIDIA GeForce RTX 4090"] * 4, sockets, no_p2p, "Intel(R) Xeon(R) Gold 6248")[0].p2p is False
    assert d.node_fabric(["NVIDIA GeForce RTX 4090"] * 4, sockets, None, "Apple M2") == (
        None, "GPUs across sockets, and the CPU 'Apple M2' is not one the model knows")
    assert "mixed NVLink" in d.node_fabric(["Tesla V100-SXM2-16GB"] * 8, read_example_topology("dgx1_v100"), None, "")[1]
    assert d.node_fabric(["Fancy GPU"], None, None, "") == (None, "GPU Fancy GPU is not in the catalog")
    assert d.node_fabric(["NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 4090"], None, None, "") == (
        None, "mixed GPUs h100_sxm5, rtx_4090: not modelled")


def sweep_rec(size: int, time_s: float, ranks: int = 8, num_wrong: int = 0) -> dict:
    algbw = size / time_s
    return {"record": "result", "collective": "all_reduce", "msg_bytes": size, "num_ranks": ranks, "time_s": time_s,
            "algbw_bytes_per_s": algbw, "busbw_bytes_per_s": algbw * 2 * (ranks - 1) / ranks, "num_wrong": num_wrong}


def test_all_reduce_against_the_model_band():
    from gpucomm.model.fabric import make_fabric

    sizes = [8, 64 * 2**10, 256 * MiB]
    band = model_band(sizes, 8, make_fabric("nvlink4", gpu="h100_sxm5"))  # its band: tests/model/test_machine.py
    big = band[-1]
    healthy = [sweep_rec(b["msg_bytes"], b["time_s"]) for b in band]
    ok = d.check_all_reduce(healthy, backend="nccl", band=band)
    assert ok.status == "ok" and "model" in ok.expected and ok.source == d.SRC_VALIDATION
    slow = healthy[:-1] + [sweep_rec(big["msg_bytes"], big["time_s"] * 2)]
    below = d.check_all_reduce(slow, backend="nccl", band=band)
    assert below.status == "below" and "large-message busbw 50% of the model" in below.measured
    laggy = [sweep_rec(8, band[0]["time_s"] * 3)] + healthy[1:]
    assert "small-message time 3.0x the model" in d.check_all_reduce(laggy, backend="nccl", band=band).measured
    wrong = d.check_all_reduce(healthy, backend="nccl", band=band, num_wrong=5)
    assert wrong.status == "pathology" and "5 wrong element(s)" in wrong.measured
    cpu = d.check_all_reduce([sweep_rec(8, 1e-4, ranks=2)], backend="gloo", model_reason="no model for gloo on CPU")
    assert cpu.status == "ok" and cpu.expected == "no model for gloo on CPU" and "every element correct" in cpu.measured
    assert d.check_all_reduce([], backend="gloo", model_reason="--no-sweep").status == "skipped"


def test_nccl_log_findings_become_checks():
    checks = d.check_nccl_log(read_bundled_info_log("nccl_1817"))  # SHM between GPUs of one node
    assert [(c.name, c.status) for c in checks] == [("nccl_log", "pathology"), ("nccl:p2p_not_used", "pathology")]
    assert checks[1].fix and checks[1].source.startswith("https://")
    info_only = d.check_nccl_log(parse_nccl_info_log("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read"))
    assert [(c.name, c.status) for c in info_only] == [("nccl_log", "ok")] and "P2P/IPC x 1" in info_only[0].measured
    assert d.check_nccl_log(None, reason="gloo").pop().status == "skipped"


def test_inventory_flags_a_cpu_build_of_torch_on_a_gpu_node():
    nvml = snapshot(h100(), h100())
    cpu_torch = {"torch_version": "2.4.0+cpu", "torch_cuda": None, "nccl_version": None, "cuda_gpus": []}
    bad = d.check_inventory(cpu_torch, nvml, cpu="Xeon", host="n1")
    assert bad.status == "pathology" and "CUDA build of torch" in bad.fix
    gpu_torch = dict(cpu_torch, torch_version="2.4.0", torch_cuda="12.4", nccl_version="2.21.5",
                     cuda_gpus=["NVIDIA H100 80GB HBM3"] * 2)
    ok = d.check_inventory(gpu_torch, nvml, cpu="Xeon", host="n1")
    assert ok.status == "ok" and ok.measured.startswith("NVIDIA H100 80GB HBM3 x 2; driver 550.54.15 (CUDA 12.4)")
    assert "NCCL 2.21.5" in ok.measured and ok.data["catalog_gpus"] == ["h100_sxm5"]
    with pytest.raises(GpucommError, match="status 'bad'"):
        d.Check("x", "x", "bad", "")


# ------------------------------------------------------------------------------------------------ run_doctor with a fake machine

NV18_PAIR = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV18\t0-55\t0\nGPU1\tNV18\t X \t0-55\t0\n"


class FakeProbe(d.SystemProbe):
    """A machine: GPUs and NVML from a FakeNvml, canned copies and sweeps, NCCL's log written as NCCL would."""

    def __init__(self, root: str, *, gpus: list[dict] | None = None, topology: str | None = None, fail: str = "",
                 log_name: str = "nccl_tests_185", peer: bool = True, nvml: FakeNvml | None = None):
        super().__init__(root=root)
        self.gpus = gpus or []
        self.fake_nvml = nvml if nvml is not None else (FakeNvml(self.gpus) if self.gpus else None)
        self.topology, self.fail, self.log_name, self.peer = topology, fail, log_name, peer
        self.sweeps: list[dict] = []

    def torch_info(self) -> dict:
        names = [g["name"] for g in self.gpus]
        return {"torch_version": "2.4.0", "torch_cuda": "12.4" if names else None,
                "nccl_version": "2.21.5" if names else None, "cuda_gpus": names}

    def nvml(self):
        if self.fake_nvml is None:
            raise d.NvmlUnavailable("NVML not available: the nvidia-ml-py package is not installed")
        return self.fake_nvml

    def peer_access(self, i, j):
        return self.peer

    def topology_text(self):
        return self.topology

    def cpu_name(self):
        return "Intel(R) Xeon(R) Platinum 8480+"

    def lspci_text(self):
        return None, "lspci not found (Debian/Ubuntu package pciutils)"

    def _maybe_fail(self, step):
        if self.fail == f"{step}:interrupt":
            raise KeyboardInterrupt
        if self.fail == f"{step}:error":
            raise GpucommError(f"{step} does not fit in memory: expected a smaller -e")

    def copy_bandwidth(self, **kw):
        self._maybe_fail("copy")
        kinds = ("h2d_pinned", "d2h_pinned", "d2d", "peer_0_to_1") if self.gpus else ("host_torch", "host_numpy")
        rate = {"h2d_pinned": 55, "d2h_pinned": 54, "d2d": 1500, "peer_0_to_1": 380}
        return [copy_rec(k, rate.get(k, 10), s) for k in kinds for s in (kw["min_bytes"], kw["max_bytes"])]

    def sweep(self, **kw):
        self._maybe_fail("sweep")
        self.sweeps.append(kw)
        n = kw["num_ranks"]
        if kw["backend"] == "nccl":
            pattern = kw["env"]["NCCL_DEBUG_FILE"]
            Path(pattern.replace("%h", "node").replace("%p", "123")).write_text(bundled_info_log_text(self.log_name))
            from gpucomm.model.fabric import make_fabric

            band = model_band([8, 64 * 2**10, kw["max_bytes"]], n, make_fabric("nvlink4", gpu="h100_sxm5"))
            return [sweep_rec(b["msg_bytes"], b["time_s"] * 1.05, ranks=n) for b in band]
        return [sweep_rec(s, 1e-4 + s / 1e9, ranks=n) for s in (8, 1024, kw["max_bytes"])]


def test_run_doctor_gpu_path_on_a_fake_two_gpu_nvlink_node(tmp_path):
    probe = FakeProbe(str(tmp_path / "root"), gpus=[h100(), h100()], topology=NV18_PAIR)
    steps = []
    report = d.run_doctor(d.DoctorReport(), out_dir=tmp_path, quick=True, probe=probe,
                          progress=lambda i, n, t: steps.append((i, n)))
    assert steps == [(i, 8) for i in range(1, 9)] and report.steps_done == 8 and not report.interrupted
    assert report.mode == "gpu"
    statuses = {c.name: c.status for c in report.checks}
    assert statuses == {"inventory": "ok", "topology": "ok", "nvlink": "ok", "p2p": "ok", "iommu": "skipped",
                        "acs": "skipped", "copy:h2d_pinned": "ok", "copy:d2h_pinned": "ok", "copy:d2d": "ok",
                        "copy:peer_0_to_1": "ok", "pcie_link": "ok", "all_reduce": "ok", "nccl_log": "ok",
                        "nvls": "ok", "gdr": "skipped"}
    sweep = probe.sweeps[0]
    assert sweep["backend"] == "nccl" and sweep["num_ranks"] == 2 and sweep["env"]["NCCL_DEBUG"] == "INFO"
    assert report.nccl["files"] == ["nccl_debug.node.123.log"] and report.nccl["facts"]["num_ranks"] == 2
    assert report.sweep["model_label"].startswith("NVLink 4.0") and len(report.sweep["band"]) == 3
    data = json.loads(json.dumps(report.as_dict()))
    assert data["status"] == "ok" and data["counts"] == {"ok": 12, "below": 0, "pathology": 0, "skipped": 3}
    assert [c["name"] for c in data["checks"]][:6] == ["inventory", "topology", "pcie_link", "nvlink", "nvls", "p2p"]


def test_run_doctor_finds_the_pathologies_of_a_sick_node(tmp_path):
    sick = [h100(pcie=dict(PCIE5_OK, curr_width=8), fabric=(1, 0)), h100(nvlink=[1] * 9 + [0] * 9, fabric=(1, 0))]
    root = tmp_path / "root"
    probe = FakeProbe(str(root), gpus=sick, topology=NV18_PAIR, peer=False, log_name="nccl_1817")
    fake_tree(root, {"sys/kernel/iommu_groups/7/type": "DMA\n"}, ("sys/class/infiniband/mlx5_0",))
    report = d.run_doctor(d.DoctorReport(), out_dir=tmp_path, probe=probe)
    statuses = {c.name: c.status for c in report.checks}
    for name in ("pcie_link", "nvlink", "nvls", "p2p", "iommu", "gdr", "nccl_log", "nccl:p2p_not_used"):
        assert statuses[name] == "pathology", name
    assert report.status == "pathology"
    # the sweep itself ran at 95 % of the model: within the band, whatever else is wrong
    assert report.sweep["band"] and statuses["all_reduce"] == "ok"


def test_run_doctor_cpu_path_without_nvml(tmp_path):
    probe = FakeProbe(str(tmp_path / "root"))
    report = d.run_doctor(d.DoctorReport(), out_dir=tmp_path, probe=probe)
    assert report.mode == "cpu" and probe.sweeps[0]["backend"] == "gloo" and probe.sweeps[0]["num_ranks"] == 2
    by_name = {c.name: c for c in report.checks}
    assert by_name["all_reduce"].expected == "no model for gloo on CPU: correctness only"
    assert by_name["nccl_log"].measured == "gloo (CPU) writes no NCCL log"
    assert {c.name for c in report.skipped()} >= {"topology", "pcie_link", "nvlink", "nvls", "p2p", "nccl_log"}
    assert by_name["pcie_link"].measured == "no CUDA GPU"
    no_sweep = d.run_doctor(d.DoctorReport(), out_dir=tmp_path, probe=FakeProbe(str(tmp_path)), sweep=False)
    assert {c.name: c.measured for c in no_sweep.skipped()}["all_reduce"] == "--no-sweep: not run"


def test_run_doctor_keeps_what_finished_on_ctrl_c_and_goes_on_after_a_failed_step(tmp_path):
    report = d.DoctorReport()
    with pytest.raises(KeyboardInterrupt):
        d.run_doctor(report, out_dir=tmp_path, probe=FakeProbe(str(tmp_path), fail="sweep:interrupt"))
    assert report.interrupted and report.steps_done == 6 and report.steps_total == 8
    assert "copy:host_torch" in {c.name for c in report.checks} and "all_reduce" not in {c.name for c in report.checks}
    failed = d.run_doctor(d.DoctorReport(), out_dir=tmp_path, probe=FakeProbe(str(tmp_path), fail="copy:error"))
    step = {c.name: c for c in failed.checks}["step:copy"]
    assert step.status == "pathology" and "does not fit in memory" in step.measured and failed.steps_done == 8


# ------------------------------------------------------------------------------------------------ the real machine (GPU)

def _cuda_gpus() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


needs_cuda = pytest.mark.skipif(_cuda_gpus() == 0, reason="needs a CUDA GPU (runs under make gpu-check)")


@pytest.mark.gpu
@needs_cuda
def test_real_nvml_snapshot_lists_the_cuda_gpus():
    pynvml = pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed")
    with d.NvmlReader(pynvml) as reader:
        snap = reader.snapshot()
        gen, width = reader.pcie_now(0)
    assert len(snap["gpus"]) >= _cuda_gpus() and snap["driver_version"]
    assert gen and width and snap["gpus"][0]["pcie"]["max_width"] >= 1


@pytest.mark.gpu
@needs_cuda
def test_real_doctor_on_this_gpu_node(tmp_path):
    report = d.run_doctor(d.DoctorReport(), out_dir=tmp_path, quick=True)
    by_name = {c.name: c for c in report.checks}
    assert report.mode == "gpu" and not [n for n in by_name if n.startswith("step:")], report.as_dict()["checks"]
    assert by_name["all_reduce"].status in ("ok", "below") and by_name["all_reduce"].data["backend"] == "nccl"
    assert by_name["nccl_log"].status != "skipped", by_name["nccl_log"].measured
    assert report.nccl["files"] and "copy:h2d_pinned" in by_name and "copy:d2d" in by_name
    assert len(report.p2p["matrix"]) == _cuda_gpus()
    json.dumps(report.as_dict())
