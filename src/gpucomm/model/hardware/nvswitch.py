"""NVSwitch generations and whole systems (DGX/HGX, NVL72, PCIe boxes), with sources.

A system entry says how its GPUs reach each other inside the box (``fabric``), how many of
them share one NVLink domain, whether the switches can reduce in the network (NVLink SHARP,
"NVLS"), and how the box reaches other boxes (scale-out NICs). GPU keys refer to
:mod:`gpucomm.model.hardware.gpus`, NIC keys to :mod:`gpucomm.model.hardware.network`.

Per-GPU NVLink bandwidth is set by the GPU's own links, not by the number of switch chips
(18 x 25 GB/s per direction on H100 with 4 switches).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucomm import GpucommError
from gpucomm.model.catalog import lookup
from gpucomm.model.units import GB

FABRICS = ("nvswitch", "cube_mesh", "nvlink_mesh", "pcie", "pcie+bridge")
"""Accepted values of :attr:`System.fabric`."""

_NCCL_NVLS_DOC = "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/docs/userguide/source/env.rst"
_NVLS_NOTE = (f"NVLS: 'NVLink SHARP is available in third-generation NVSwitch systems (NVLink4) with Hopper and later' "
              f"[V] NCCL env.rst line 1678 {_NCCL_NVLS_DOC} .")
_NVSWITCH3_BLOG = ("https://developer.nvidia.com/blog/"
                   "upgrading-multi-gpu-interconnectivity-with-the-third-generation-nvidia-nvswitch/")
_NVLINK_AU = "https://www.nvidia.com/en-au/data-center/nvlink/"
_STAS00 = "https://github.com/stas00/ml-engineering/blob/master/network/README.md"


@dataclass(frozen=True)
class NVSwitchGen:
    """One NVSwitch chip generation.

    Attributes
    ----------
    key : str
        ``"nvswitch1"`` ... ``"nvswitch4"``.
    name : str
        Human name.
    nvlink_gen : int
        NVLink generation of its ports.
    year : int
        Year of the first system that used it (per the fact sheet's system table).
    ports_per_chip : int
        NVLink ports per switch chip.
    port_bw_bytes_per_s : float
        One port, one direction, in bytes/s (= one NVLink link of that generation).
    chip_bidir_marketing_bytes_per_s : float
        Whole chip, all ports, both directions added, bytes/s. Never used in a formula.
    chips_per_8gpu_board : int
        Switch chips on an 8-GPU baseboard.
    nvls : bool
        In-switch reduction and multicast (NVLink SHARP) available.
    used_in : str
        Systems built with it.
    source : str
        URL of the most primary source.
    notes : str
        Tags ([V]/[C]/[U]), secondary URLs, derivations.
    """

    key: str
    name: str
    nvlink_gen: int
    year: int
    ports_per_chip: int
    port_bw_bytes_per_s: float
    chip_bidir_marketing_bytes_per_s: float
    chips_per_8gpu_board: int
    nvls: bool
    used_in: str
    source: str
    notes: str


def _switch(gen: int, nvlink_gen: int, year: int, ports: int, port_dir_gb: float, chips: int, nvls: bool, used_in: str,
            source: str, notes: str) -> NVSwitchGen:
    return NVSwitchGen(
        key=f"nvswitch{gen}", name=f"NVSwitch gen {gen} (NVLink {nvlink_gen}.0)", nvlink_gen=nvlink_gen, year=year,
        ports_per_chip=ports, port_bw_bytes_per_s=float(port_dir_gb * GB),
        chip_bidir_marketing_bytes_per_s=float(2 * ports * port_dir_gb * GB),  # all ports, both directions
        chips_per_8gpu_board=chips, nvls=nvls, used_in=used_in, source=source, notes=notes)


_NVSWITCH_LIST = (
    _switch(1, 2, 2018, 18, 25, 6, False, "DGX-2 / HGX-2 (16 x V100)",
            "https://labs.anandtech.com/show/12581/nvidia-develops-nvlink-switch-nvswitch-18-ports-for-dgx2-more",
            ("18 ports, 900 GB/s aggregate (both directions) [C] AnandTech; 'each of the 18 ports runs at 50GB' (bidir) [C] "
             "https://www.gamersnexus.net/news-pc/3270-nvidia-tesla-v100-accelerator-32gb-hbm2 ; 6 per baseboard, 12 per "
             "DGX-2 [C] https://en.wikichip.org/w/index.php?diff=81834&oldid=77647&title=nvidia%2Fnvswitch (12 total: "
             "DGX-2 datasheet [U]). No SHARP.")),
    _switch(2, 3, 2020, 36, 25, 6, False, "DGX A100 / HGX A100",
            "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/src/common/nvswitch/kernel/inc/lr10/lr10.h",
            ("36 ports: NUM_NPORT_ENGINE_LR10 36 in NVIDIA's open kernel driver [V]. 1.8 TB/s per chip derived (36 x 50 GB/s "
             "bidir). Six per board, 600 GB/s GPU-to-GPU, 4.8 TB/s total [C] https://jingchaozhang.github.io/A100-white-paper/ "
             "(primary: NVIDIA Ampere architecture whitepaper [U]). No SHARP (NVLS needs NVLink4 + Hopper).")),
    _switch(3, 4, 2022, 64, 25, 4, True, "DGX H100, HGX H100/H200/H800, DGX GH200", _NVSWITCH3_BLOG,
            ("Multicast + SHARP, 256-GPU NVLink Switch System [V]. 64 ports: NUM_NPG_ENGINE_LS10 16 x 4 links [V] "
             "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/src/common/nvswitch/kernel/inc/ls10/ls10.h ; "
             "3.2 TB/s full-duplex per chip [U] same blog. DGX H100: four chips, 3.6 TB/s bisection, 450 GB/s reduction "
             f"bandwidth [C] {_STAS00} . {_NVLS_NOTE}")),
    _switch(4, 5, 2024, 72, 50, 2, True, "HGX/DGX B200, B300; GB200/GB300 NVL72 (18 chips in 9 trays)", _NVLINK_AU,
            ("'NVLink Switch features 144 NVLink ports with a non-blocking switching capacity of 14.4TB/s' per 2-chip "
             "tray, SHARP engines in each switch [V]; 72 ports and 7.2 TB/s per chip derived (half a tray). Two chips per "
             "HGX B200 baseboard [U] NVIDIA Fabric Manager guide sec. 1.6.4 "
             "https://docs.nvidia.com/datacenter/tesla/pdf/fabric-manager-user-guide.pdf (8 GPUs x 18 links = 144 = 2 x 72). "
             f"{_NVLS_NOTE}")),
)

NVSWITCHES: dict[str, NVSwitchGen] = {sw.key: sw for sw in _NVSWITCH_LIST}
"""NVSwitch generations by key."""


@dataclass(frozen=True)
class System:
    """A multi-GPU system: its GPUs, intra-node fabric, NVLink domain and scale-out NICs.

    Attributes
    ----------
    key : str
        Short identifier (``"dgx_h100"``).
    name : str
        Human name.
    year : int or None
        Year of introduction per the fact sheet; None for generic configurations and where no source gives it.
    num_gpus : int
        GPUs in the entry (72 for an NVL72 rack).
    gpu_key : str
        Key in :data:`gpucomm.model.hardware.gpus.GPUS`.
    fabric : str
        ``"nvswitch"`` (all-to-all through switches), ``"cube_mesh"`` (direct NVLink, not
        all-to-all), ``"nvlink_mesh"`` (direct NVLink between every pair, each GPU's links split evenly over its
        peers: four GH200), ``"pcie"`` (no NVLink) or ``"pcie+bridge"`` (NVLink bridges between pairs).
    nvswitch_key : str or None
        Key in :data:`NVSWITCHES`, None without switches.
    nvswitch_chips : int
        Switch chips in the entry (0 without switches).
    nvlink_domain_size : int
        GPUs reachable from one GPU over NVLink, itself included (1 without NVLink).
    nvlink_all_to_all : bool
        Every pair in the domain has an NVLink path of the same bandwidth (True with NVSwitch).
    p2p : bool
        CUDA peer-to-peer between GPUs is available (over NVLink or PCIe).
    nvls : bool
        NVLink SHARP (in-switch reduction) available.
    num_nics : int or None
        Scale-out (compute) NICs for the entry's ``num_gpus`` GPUs; storage/in-band NICs excluded.
    nic_key : str or None
        Key in :data:`gpucomm.model.hardware.network.NETWORKS`.
    gpus_per_nic : float or None
        ``num_gpus / num_nics``.
    inter_socket : str or None
        Key of :data:`gpucomm.model.hardware.pcie.INTER_SOCKET_LINKS` when the GPUs of a PCIe box sit under
        both sockets of a two-socket host, so that a ring over all of them crosses the socket link
        (``SYS`` in ``nvidia-smi topo -m``); None for one socket, and for NVSwitch systems, whose GPU
        traffic stays on NVLink.
    hosts : int
        Operating-system instances (compute nodes or trays) the entry's GPUs sit in: 1 for an HGX/DGX
        server, 18 compute trays of 4 GPUs for an NVL72 rack. An NVLink domain over several hosts is
        multi-node NVLink (MNNVL).
    switch_trays : int
        NVLink switch trays holding the switch chips when they sit outside the hosts (9 in an NVL72
        rack), 0 when the switches are on the GPU baseboard or absent.
    source : str
        URL of the most primary source.
    notes : str
        Tags ([V]/[C]/[U]), secondary URLs, caveats.
    """

    key: str
    name: str
    year: int | None
    num_gpus: int
    gpu_key: str
    fabric: str
    nvswitch_key: str | None
    nvswitch_chips: int
    nvlink_domain_size: int
    nvlink_all_to_all: bool
    p2p: bool
    nvls: bool
    num_nics: int | None
    nic_key: str | None
    gpus_per_nic: float | None
    inter_socket: str | None
    source: str
    notes: str
    hosts: int = 1
    switch_trays: int = 0


def _system(key, name, year, num_gpus, gpu_key, fabric, *, nvswitch=None, chips=0, domain, all_to_all, p2p=True,
            nics=None, nic=None, inter_socket=None, hosts=1, switch_trays=0, source, notes) -> System:
    if fabric not in FABRICS:
        raise GpucommError(f"fabric {fabric!r} is not valid: expected one of {', '.join(FABRICS)}")
    nvls = NVSWITCHES[nvswitch].nvls if nvswitch else False
    return System(key=key, name=name, year=year, num_gpus=num_gpus, gpu_key=gpu_key, fabric=fabric,
                  nvswitch_key=nvswitch, nvswitch_chips=chips, nvlink_domain_size=domain, nvlink_all_to_all=all_to_all,
                  p2p=p2p, nvls=nvls, num_nics=nics, nic_key=nic, gpus_per_nic=num_gpus / nics if nics else None,
                  inter_socket=inter_socket, source=source, notes=notes, hosts=hosts, switch_trays=switch_trays)


_CUBE_MESH_NOTE = ("Hybrid cube-mesh: GPUs at the corners of a cube, all 12 edges NVLink (some doubled), plus diagonals on two "
                   "faces; not every GPU reaches every other over NVLink (a NUMA setup) [C] https://www.iitr.ac.in/dgx , "
                   "AnandTech. nvidia-smi topo -m on a DGX-1V shows NV1/NV2 and SOC pairs [V] "
                   "https://gist.github.com/ashwin/e139748bdba15f5af63f0146d01ee4c3 .")
_HGX_NOTE = "The HGX baseboard has the same GPUs and NVSwitches; its NICs are chosen by the server maker."
_HGX_HOPPER_BOARD = ("HGX H100 8-GPU: 'eight H100 Tensor Core GPUs and four third-generation NVSwitch', every GPU "
                     "connected to all four [V] https://developer.nvidia.com/blog/introducing-nvidia-hgx-h100-an-"
                     "accelerated-server-platform-for-ai-and-high-performance-computing/ .")
_PAIRS_NOTE = ("A collective over the 2 GPUs of a pair runs on its bridge; over more GPUs the ring leaves each pair "
               "over PCIe (and, between the sockets, over the socket link), so PCIe sets its pace: "
               "system_fabric builds it as topology 'pairs'.")
_NO_P2P_GEFORCE = ("The stock GeForce driver exposes no CUDA P2P, so NCCL stages every transfer through host memory "
                   "(SHM)")

_SYSTEM_LIST = (
    _system("dgx1_p100", "DGX-1 (P100)", 2016, 8, "p100_sxm2", "cube_mesh", domain=8, all_to_all=False, nics=4,
            nic="ib_edr",
            source="https://labs.anandtech.com/show/12581/nvidia-develops-nvlink-switch-nvswitch-18-ports-for-dgx2-more",
            notes=(f"{_CUBE_MESH_NOTE} 4 x EDR 100 Gb/s InfiniBand, one per 2 GPUs [C] "
                   "http://iptronics.com/solutions/machine-learning/nvidia.php .")),
    _system("dgx1_v100", "DGX-1 (V100)", 2017, 8, "v100_sxm2", "cube_mesh", domain=8, all_to_all=False, nics=4,
            nic="ib_edr", source="https://images.nvidia.com/content/pdf/dgx1-v100-system-architecture-whitepaper.pdf",
            notes=(f"{_CUBE_MESH_NOTE} Some pairs have 2 links (NV2), others 1 (NV1), some none. 4 x EDR: DGX-1 V100 "
                   "whitepaper [U] (the fact sheet gives it with http://).")),
    _system("dgx2", "DGX-2 (16 x V100)", 2018, 16, "v100_sxm2", "nvswitch", nvswitch="nvswitch1", chips=12, domain=16,
            all_to_all=True, nics=8, nic="ib_edr",
            source="https://pcper.com/2018/03/nvidia-announces-dgx-2-with-16-gv100s-8-100gb-nics/",
            notes=("16 GPUs in one NVSwitch domain, 'all-to-all communication between 16 GPUs' [C] NVIDIA NVLink page 2018, "
                   "mirror http://www.langtun4.net.cn/en-us/data-center/nvlink/ ; 12 switch chips (6 per baseboard); "
                   "8 x EDR 100 Gb/s [C] pcper. gpu_key is the closest catalog entry: the DGX-2 V100 module variant "
                   "is not in the fact sheet (same NVLink: 6 links x 25 GB/s per direction).")),
    _system("dgx_a100", "DGX A100 / HGX A100", 2020, 8, "a100_sxm4_40gb", "nvswitch", nvswitch="nvswitch2", chips=6,
            domain=8, all_to_all=True, nics=8, nic="ib_hdr", source="https://docs.nvidia.com/dgx/dgxa100-user-guide/",
            notes=("8 x ConnectX-6 HDR 200 Gb/s, DGX A100 user guide [U]; six gen-2 NVSwitches, 600 GB/s (bidir) per GPU. "
                   f"Shipped with 40 GB GPUs, later 80 GB (a100_sxm4_80gb). {_HGX_NOTE}")),
    _system("dgx_h100", "DGX H100 / HGX H100", 2022, 8, "h100_sxm5", "nvswitch", nvswitch="nvswitch3", chips=4,
            domain=8, all_to_all=True, nics=8, nic="ib_ndr",
            source="https://docs.nvidia.com/dgx-basepod/deployment-guide-dgx-basepod/latest/sriov.html",
            notes=("BasePOD guide lists 8 IB compute devices per node [V]; 8 x ConnectX-7 400 Gb/s, one per GPU [C] "
                   f"{_STAS00} . Four gen-3 NVSwitches. NVLink domain 8, up to 256 GPUs with the external NVLink Switch "
                   f"System [V] {_NVSWITCH3_BLOG} . {_NVLS_NOTE} {_HGX_NOTE}")),
    _system("dgx_h200", "DGX H200", 2024, 8, "h200_sxm", "nvswitch", nvswitch="nvswitch3", chips=4, domain=8,
            all_to_all=True, nics=8, nic="ib_ndr",
            source="https://docs.nvidia.com/dgx-basepod/deployment-guide-dgx-basepod/latest/sriov.html",
            notes=("Same board design as DGX H100 with H200 GPUs: four gen-3 NVSwitches, 8 x ConnectX-7 400 Gb/s [C] "
                   f"{_STAS00} ; BasePOD guide [V] covers DGX H100/H200. {_NVLS_NOTE}")),
    _system("dgx_b200", "DGX B200 / HGX B200", 2024, 8, "b200_hgx", "nvswitch", nvswitch="nvswitch4", chips=2,
            domain=8, all_to_all=True, nics=8, nic="ib_ndr", source="https://www.nvidia.com/en-us/data-center/dgx-b200/",
            notes=("8 x ConnectX-7 400 Gb/s for compute (+2 BlueField-3 for storage/in-band, not counted) [U]; HGX B200 "
                   "'Networking bandwidth 0.8 TB/s' [C] https://fibermall.com/blog/?p=17161 . 2 switch chips [U] Fabric "
                   f"Manager guide. ConnectX-7 at 400 Gb/s may run NDR InfiniBand or 400GbE. {_NVLS_NOTE} {_HGX_NOTE}")),
    _system("gb200_nvl72", "GB200 NVL72 (rack)", 2024, 72, "b200_gb200", "nvswitch", nvswitch="nvswitch4", chips=18,
            domain=72, all_to_all=True, nics=72, nic="ib_ndr", hosts=18, switch_trays=9,
            source="https://docs.nvidia.com/base-command-manager/product-manuals/nvidia-mission-control/nvlink",
            notes=("72 B200 + 36 Grace; 9 NVLink switch trays [V] x 2 chips = 18. 18 compute trays (hosts, one OS "
                   "instance each) of 4 GPUs: 'an NVL72 rack with 18 compute trays (72 GPUs)' [V] "
                   "https://docs.nvidia.com/base-command-manager/product-manuals/nvidia-mission-control/nvlinksdn ; "
                   "an IMEX 'node' is 'an OS instance with at least one GPU' [V] "
                   "https://docs.nvidia.com/multi-node-nvlink-systems/imex-guide/overview.html . "
                   "NVLink domain 72 (NVIDIA: up to 576 "
                   f"multi-rack) [V] {_NVLINK_AU} ; its '130TB/s' is 72 x 1.8 TB/s bidir per GPU summed, not bisection. "
                   "Compute tray: 4 x ConnectX-7 400 Gb/s for 4 GPUs [C] stas00 citing "
                   "https://docs.nvidia.com/dgx/dgxgb200-user-guide/networking.html ; 72 NICs derived (one per GPU). "
                   f"{_NVLS_NOTE}")),
    _system("hgx_h800", "HGX H800 (8 x H800 SXM)", None, 8, "h800_sxm", "nvswitch", nvswitch="nvswitch3", chips=4,
            domain=8, all_to_all=True, nics=8, nic="ib_ndr", source="https://arxiv.org/abs/2505.09343",
            notes=("DeepSeek-AI, 'Insights into DeepSeek-V3: Scaling Challenges and Reflections on Hardware for AI "
                   "Architectures' (ISCA 2025, arXiv 2505.09343): H800 SXM nodes of 8 GPUs on NVLink/NVSwitch, NVLink "
                   "cut from H100's 900 GB/s to 400 GB/s (bidir), eight 400 Gb/s InfiniBand ConnectX-7 NICs per node, one "
                   f"per GPU [U]. {_HGX_HOPPER_BOARD} The H800 board is the same design (derived: H800 is an H100 with "
                   "fewer NVLinks); per GPU 8 links x 25 GB/s = 200 GB/s per direction (gpus.h800_sxm). "
                   f"{_NVLS_NOTE}")),
    _system("hgx_h20", "HGX H20 (8 x H20)", None, 8, "h20", "nvswitch", nvswitch="nvswitch3", chips=4, domain=8,
            all_to_all=True, source="https://www.tweaktown.com/news/95224/",
            notes=("H20 'keeps the 900GB/sec NVLink' of H100 [C] (gpus.h20); eight-GPU HGX board with four gen-3 "
                   f"NVSwitches as HGX H100 (derived, not read in an H20 source). {_HGX_HOPPER_BOARD} Scale-out NICs "
                   "not in a source read here: left None, so several nodes need --network. "
                   f"{_NVLS_NOTE}")),
    _system("dgx_b300", "DGX B300 / HGX B300", 2025, 8, "b300_hgx", "nvswitch", nvswitch="nvswitch4", chips=2, domain=8,
            all_to_all=True, nics=8, nic="ib_xdr", source="https://www.nvidia.com/en-us/data-center/hgx/",
            notes=("HGX B300: 8 Blackwell Ultra GPUs, 'NVSwitch GPU-to-GPU Bandwidth 1.8 TB/s', 'Networking Bandwidth "
                   "1.6 TB/s' (both directions) [C] https://fibermall.com/blog/?p=17161 ; 8 ConnectX-8 SuperNICs on the "
                   "baseboard, up to 800 Gb/s per GPU [C] https://acecloud.ai/blog/nvidia-hgx-b300 . Two gen-4 NVSwitch "
                   f"chips as HGX B200 (derived: 8 GPUs x 18 links = 144 ports). {_NVLS_NOTE} {_HGX_NOTE}")),
    _system("gb300_nvl72", "GB300 NVL72 (rack)", 2025, 72, "b300_gb300", "nvswitch", nvswitch="nvswitch4", chips=18,
            domain=72, all_to_all=True, nics=72, nic="ib_xdr", hosts=18, switch_trays=9,
            source="https://glennklockwood.com/garden/processors/B300",
            notes=("72 Blackwell Ultra GPUs + 36 Grace, '18 NVLink Switches at 130 TB/s', '72 ConnectX-8 NICs' (800 Gb/s "
                   "each) [C]; compute trays of 4 GPUs and 9 switch trays as GB200 NVL72 ('maintains compatibility with "
                   f"the GB200 NVL72 Oberon rack' [C]). {_NVLS_NOTE}")),
    _system("quad_gh200", "4 x GH200 node, NVLink all-to-all (JUPITER / Alps booster)", 2024, 4, "gh200", "nvlink_mesh",
            domain=4, all_to_all=True, nics=4, nic="ib_ndr200",
            source="https://www.fz-juelich.de/en/ias/jsc/systems/supercomputers/jupiter",
            notes=("Four GH200 superchips per node whose Hopper GPUs are joined pairwise by NVLink: 6 of each GPU's 18 links "
                   "to each of the 3 others (150 GB/s per direction per pair), no NVSwitch; four InfiniBand NDR200 NICs, one "
                   "per GPU [U] JUPITER page and CSCS Alps hardware docs https://docs.cscs.ch/alps/hardware/ (Alps uses "
                   "Slingshot-11 at 200 Gb/s instead). 'configuración de nodo con cuatro GH200' as JUPITER's building "
                   "block [C] https://geektopia.es/es/technology/2023/11/13/noticias/nvidia-anuncia-la-aceleradora-h200-tiene"
                   "-141-gb-de-hbm3e.html . No NVLS without a switch.")),
    _system("pcie_4x_l40s", "4 x L40S on PCIe 4.0, two Intel Sapphire Rapids sockets", None, 4, "l40s", "pcie", domain=1,
            all_to_all=False, inter_socket="upi_sapphire_rapids",
            source="https://www.nvidia.com/en-us/data-center/l40s/",
            notes=("Generic configuration, not a vendor product: four L40S (PCIe 4.0 x16, no NVLink: gpus.l40s) in a "
                   "two-socket server, two GPUs per socket, as in 2U four-GPU servers with 4th-generation Xeon (an "
                   "assumption, not read in a source). p2p=True is an assumption too: the data-centre driver is not known "
                   "to block P2P on L40S, and NCCL uses it up to PXB (measure.topology); use --no-p2p where it is off. "
                   "Across the sockets NCCL stages through host memory anyway (PATH_SYS > p2pLevel PXB). NICs not "
                   "specified.")),
    _system("pcie_8x_l4", "8 x L4 on PCIe 4.0 (GCP g2-standard-96)", 2023, 8, "l4", "pcie", domain=1, all_to_all=False,
            source="https://cloud.google.com/compute/docs/gpus#l4-gpus",
            notes=("Google Cloud G2 with 8 L4 GPUs per VM [U]. Socket layout not in a source read here: left one socket "
                   "(inter_socket None). p2p=True is an assumption (data-centre card; NCCL uses P2P up to PXB): use "
                   "--no-p2p where the VM exposes none. NICs not specified (a VM's network is TCP: --net-transport socket).")),
    _system("pcie_8x_rtx4090", "8 x RTX 4090 on PCIe 4.0, two Intel sockets (no P2P)", None, 8, "rtx_4090", "pcie",
            domain=1, all_to_all=False, p2p=False, inter_socket="upi_skylake",
            source="https://github.com/NVIDIA/nccl-tests/issues/307",
            notes=("Generic server configuration, not a vendor product, after the 8 x RTX 4090 node of nccl-tests#307 [V]: "
                   "NCCL 2.21.5 puts GPUs 4e-51 and ce-d1 under two CPUs, joins them with 'CPU/0-0 (3/10.0/SYS)' "
                   "(10 GB/s = SKL_QPI_BW: an Intel Skylake-to-Ice Lake Xeon) and the GPUs of one socket with "
                   "'24.0/PHB' (NCCL's PCIe Gen4 figure), and connects every GPU pair 'via SHM'. "
                   f"{_NO_P2P_GEFORCE}: NCCL runs hang unless P2P is disabled [C] "
                   "https://github.com/NVIDIA/nccl-tests/issues/117 , https://github.com/huggingface/accelerate/issues/2328 . "
                   "PCIe 4.0 x16 per GPU; four GPUs per socket (from the bus ids). NICs not specified.")),
    _system("pcie_8x_rtx5090", "8 x RTX 5090 on PCIe 5.0, two AMD EPYC Turin sockets (stock driver: no P2P)", None, 8,
            "rtx_5090", "pcie", domain=1, all_to_all=False, p2p=False, inter_socket="xgmi_zen5",
            source="https://github.com/aikitoria/open-gpu-kernel-modules/blob/08dc34555bf8cdacdd89237da42419e6ce5efdc4/README.md",
            notes=("Generic configuration after the bundled case P01: 8 x RTX 5090 under dual AMD EPYC 9575F (Turin) [C], "
                   "four per socket (bus ids 01-71 and 81-f1: inferred). "
                   f"{_NO_P2P_GEFORCE}; NCCL detects it and disables the P2P transport [V] "
                   "https://github.com/NVIDIA/nccl/issues/1637 . P2P over PCIe BAR1 needs the patched open kernel module "
                   "of the source (P01 measured with it): model that what-if with --link pcie5 --inter-socket xgmi_zen5. "
                   "PCIe 5.0 x16 per GPU (gpus.rtx_5090). NICs not specified.")),
    _system("pcie_8x_a40_bridged", "8 x A40 in NVLink-bridged pairs, PCIe 4.0, two AMD EPYC Rome sockets", None, 8,
            "a40", "pcie+bridge", domain=2, all_to_all=False, inter_socket="xgmi_zen2",
            source="https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf",
            notes=("Generic configuration, not a vendor product: four pairs, each joined by an NVLink bridge "
                   "(112.5 GB/s bidir, 56.25 GB/s per direction, 4 links) [C] A40 product brief "
                   "http://www.relationship-nepal.org/900-2g133-0000-000.html ; PCI Express 4.0 x16 per card (same brief). "
                   "Host after an A40 server with two AMD EPYC 7302 (Rome) sockets whose cross-socket P2P was its "
                   "weakest link [C] https://github.com/NVIDIA/nccl-tests/issues/74 ; the bundled 8 x A40 node (cases "
                   f"C01-C03) also spans two NUMA roots (SYS). {_PAIRS_NOTE} p2p=True: within a pair over NVLink; PCIe "
                   "P2P between pairs depends on the platform (ACS/IOMMU). NICs not specified.")),
    _system("pcie_8x_h100_bridged", "8 x H100 PCIe in NVLink-bridged pairs, PCIe 5.0, two Intel sockets", None, 8,
            "h100_pcie", "pcie+bridge", domain=2, all_to_all=False, inter_socket="upi_sapphire_rapids",
            source="https://manuals.plus/m/d4b5dc21484df3ba8fbe84918338461cc074a3fcebcc13423eadc2b10ac3bda4",
            notes=("Generic configuration, not a vendor product: four pairs of H100 PCIe cards, each pair joined by "
                   "NVLink bridges, '600 GB/s bidirectional' = 300 GB/s per direction over 12 NVLink 4 links "
                   "(gpus.h100_pcie); 'dual-slot 10.5 inch PCI Express Gen5 card' [C] product brief PB-11133-001 (copy "
                   "of NVIDIA's PDF). Host: two Intel Xeon (Sapphire Rapids, the first Xeon with PCIe 5.0), four GPUs "
                   f"per socket: an assumption, not read in a source. {_PAIRS_NOTE} NICs not specified.")),
)

SYSTEMS: dict[str, System] = {system.key: system for system in _SYSTEM_LIST}
"""All systems by key."""

_ALIASES = {"hgx_a100": "dgx_a100", "hgx_h100": "dgx_h100", "hgx_h200": "dgx_h200", "hgx_b200": "dgx_b200",
            "hgx_b300": "dgx_b300", "nvl72": "gb200_nvl72"}


def get_nvswitch(key: str | NVSwitchGen) -> NVSwitchGen:
    """Look up an NVSwitch generation by key (case-insensitive).

    Parameters
    ----------
    key : str or NVSwitchGen
        Key of :data:`NVSWITCHES` (``"nvswitch3"``), or an entry (returned unchanged).

    Returns
    -------
    NVSwitchGen
        The catalog entry.

    Raises
    ------
    GpucommError
        If the key is unknown; the message lists the accepted keys.

    Examples
    --------
    >>> get_nvswitch("nvswitch3").ports_per_chip
    64
    >>> get_nvswitch("nvswitch3").nvls
    True
    """
    return lookup(NVSWITCHES, key, what='NVSwitch generation', entry_type=NVSwitchGen)


def get_system(key: str | System) -> System:
    """Look up a system by key (case-insensitive; ``hgx_*`` names the matching DGX entry).

    Parameters
    ----------
    key : str or System
        Key of :data:`SYSTEMS` (``"dgx_h100"``, ``-`` or ``_``), an alias (``hgx_a100``, ``hgx_h100``,
        ``hgx_h200``, ``hgx_b200``, ``nvl72``), or an entry (returned unchanged).

    Returns
    -------
    System
        The catalog entry.

    Raises
    ------
    GpucommError
        If the key is unknown; the message lists the accepted keys.

    Examples
    --------
    >>> get_system("dgx_h100").nvls
    True
    >>> get_system("hgx_a100").nvlink_domain_size
    8
    >>> get_system("gb200_nvl72").gpus_per_nic
    1.0
    """
    return lookup(SYSTEMS, key, what='system', entry_type=System, aliases=_ALIASES, dashes_as_underscores=True)


@dataclass(frozen=True)
class SwitchBoard:
    """How the GPUs of one system reach the NVSwitch chips. Bandwidths in bytes/s.

    Attributes
    ----------
    system : str
        Catalog key.
    num_gpus, links_per_gpu : int
        GPUs in the entry and NVLink links per GPU.
    link_bw_bytes_per_s : float
        One NVLink link, one direction.
    gpu_bw_bytes_per_s : float
        One GPU, all its links, one direction.
    gpu_bidir_marketing_bytes_per_s : float
        NVIDIA's both-directions figure per GPU (never used in a formula).
    switch_chips, ports_per_chip, switch_ports, gpu_links : int
        Switch chips, NVLink ports per chip, ports in total, and GPU links that plug into them
        (``num_gpus x links_per_gpu``).
    chip_bidir_marketing_bytes_per_s : float
        One switch chip, all ports, both directions (NVIDIA's way of counting).
    aggregate_bidir_bytes_per_s : float
        All GPUs' NVLink bandwidth summed, both directions (how NVIDIA counts "130 TB/s" for NVL72).
    bisection_bytes_per_s : float
        Half of the GPUs sending to the other half at full rate, one direction:
        ``num_gpus / 2 x gpu_bw_bytes_per_s`` (a non-blocking switch delivers it).
    nvls : bool
        In-switch reduction (NVLink SHARP) available.
    """

    system: str
    num_gpus: int
    links_per_gpu: int
    link_bw_bytes_per_s: float
    gpu_bw_bytes_per_s: float
    gpu_bidir_marketing_bytes_per_s: float
    switch_chips: int
    ports_per_chip: int
    switch_ports: int
    gpu_links: int
    chip_bidir_marketing_bytes_per_s: float
    aggregate_bidir_bytes_per_s: float
    bisection_bytes_per_s: float
    nvls: bool


def switch_board(system: str | System) -> SwitchBoard:
    """Port and bandwidth arithmetic of an NVSwitch system, from the catalog.

    Parameters
    ----------
    system : str or System
        Key of :data:`SYSTEMS` (or an entry) whose fabric is NVSwitch.

    Returns
    -------
    SwitchBoard
        Counts from the system and switch entries; bandwidths from the GPU's NVLink
        (:mod:`gpucomm.model.hardware.gpus`) and the switch's port rate. Aggregate and bisection
        figures are sums of per-GPU rates, as NVIDIA states them (no efficiency factor).

    Raises
    ------
    GpucommError
        Unknown system, or a system without NVSwitch.

    Examples
    --------
    >>> b = switch_board("dgx_h100")
    >>> b.gpu_links, b.switch_ports, b.link_bw_bytes_per_s / 1e9, b.gpu_bw_bytes_per_s / 1e9
    (144, 256, 25.0, 450.0)
    >>> switch_board("gb200_nvl72").aggregate_bidir_bytes_per_s / 1e12
    129.6
    """
    from gpucomm.model.hardware.gpus import get_gpu

    sys_ = get_system(system)
    if sys_.nvswitch_key is None:
        raise GpucommError(f"system {sys_.key!r} has no NVSwitch (fabric {sys_.fabric!r}): expected one of "
                           + ", ".join(k for k, s in SYSTEMS.items() if s.nvswitch_key is not None))
    sw = get_nvswitch(sys_.nvswitch_key)
    gpu = get_gpu(sys_.gpu_key)
    links = gpu.nvlink_links or 0
    return SwitchBoard(
        system=sys_.key, num_gpus=sys_.num_gpus, links_per_gpu=links, link_bw_bytes_per_s=sw.port_bw_bytes_per_s,
        gpu_bw_bytes_per_s=gpu.nvlink_bw_bytes_per_s, gpu_bidir_marketing_bytes_per_s=gpu.nvlink_bidir_marketing_bytes_per_s,
        switch_chips=sys_.nvswitch_chips, ports_per_chip=sw.ports_per_chip,
        switch_ports=sys_.nvswitch_chips * sw.ports_per_chip, gpu_links=sys_.num_gpus * links,
        chip_bidir_marketing_bytes_per_s=sw.chip_bidir_marketing_bytes_per_s,
        aggregate_bidir_bytes_per_s=sys_.num_gpus * gpu.nvlink_bidir_marketing_bytes_per_s,
        bisection_bytes_per_s=sys_.num_gpus / 2 * gpu.nvlink_bw_bytes_per_s, nvls=sys_.nvls)
