"""GPUs: NVLink and PCIe attachment, dense tensor FLOP/s and memory, each with its source.

Every value carries its own source (``source``: a URL, ``notes``: what was read where); where
there is no sourced value for a field the field is ``None`` and the entry's ``notes`` say so.
Conventions:

- NVLink bandwidth is per GPU and per direction (``nvlink_bw_bytes_per_s``, 0 without NVLink);
  NVIDIA's both-directions figure is kept in ``nvlink_bidir_marketing_bytes_per_s`` only.
- FLOP/s are *dense* tensor-core rates (no 2:4 sparsity). NVIDIA's product pages lead with the
  sparse figure, twice as large, marked "With sparsity".
- Memory sizes are the vendor's nominal "GB" taken as 1e9 bytes; the driver reports somewhat more.
- Tags in notes: [V] read in the source, [C] read in a copy (secondary URL given), [U] primary URL
  not re-read.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucomm.model.catalog import lookup
from gpucomm.model.units import GB

TB = 1000 * GB
TFLOPS = 1e12  # FLOP/s


@dataclass(frozen=True)
class GPU:
    """One GPU product (SKU) as the communication model sees it.

    Attributes
    ----------
    key : str
        Short identifier (``"h100_sxm5"``).
    name : str
        Human name.
    architecture : str
        ``"Pascal"``, ``"Volta"``, ``"Turing"``, ``"Ampere"``, ``"Ada"``, ``"Hopper"`` or ``"Blackwell"``.
    arch_year : int or None
        Year of the architecture's first product per the fact sheet (not necessarily this SKU's).
    form_factor : str or None
        ``"SXM2"``, ``"SXM4"``, ``"SXM5"``, ``"SXM"``, ``"PCIe"``, ``"GB200 superchip"``...
    nvlink_gen : int or None
        NVLink generation, None without NVLink.
    nvlink_links : int or None
        NVLink links per GPU; 0 without NVLink, None where the fact sheet does not give it.
    nvlink_bw_bytes_per_s : float
        NVLink bandwidth per GPU per direction in bytes/s, summed over its links; 0 without NVLink.
    nvlink_bidir_marketing_bytes_per_s : float
        NVIDIA's both-directions figure, bytes/s (0 without NVLink). Never used in a formula.
    nvlink_bridge : bool
        True when NVLink comes from a bridge between PCIe cards (2 or 4 GPUs), not an NVSwitch/board.
    pcie_gen : int or None
        Host PCIe generation; None where the fact sheet does not give it.
    pcie_lanes : int or None
        Host PCIe lanes.
    pcie_p2p : bool or None
        False where the fact sheet records that the driver exposes no CUDA P2P over PCIe
        (GeForce RTX 40 series); None where it says nothing.
    dense_fp16_flops_per_s : float or None
        Dense FP16 tensor-core rate, FLOP/s.
    dense_bf16_flops_per_s : float or None
        Dense BF16 tensor-core rate, FLOP/s (None on GPUs without BF16 or without a sourced value).
    dense_fp8_flops_per_s : float or None
        Dense FP8 tensor-core rate, FLOP/s (None where unsupported or unsourced; notes say which).
    mem_type : str or None
        ``"HBM3e"``, ``"GDDR6X"``...
    mem_bytes : float or None
        Memory capacity in bytes (vendor's nominal GB x 1e9).
    mem_bw_bytes_per_s : float or None
        Memory bandwidth in bytes/s.
    source : str
        URL of the most primary source for the interconnect values.
    compute_source : str or None
        URL of the most primary source for FLOP/s and memory; None when no such value is given.
    compute_capability : int
        CUDA compute capability as major*10+minor (90 for H100): NVIDIA, "CUDA GPUs - Compute Capability",
        https://developer.nvidia.com/cuda-gpus. NCCL's tuner picks its per-architecture rows by it.
    notes : str
        Tags, secondary URLs, derivations and what the fact sheet lacks.
    """

    key: str
    name: str
    architecture: str
    arch_year: int | None
    form_factor: str | None
    nvlink_gen: int | None
    nvlink_links: int | None
    nvlink_bw_bytes_per_s: float
    nvlink_bidir_marketing_bytes_per_s: float
    nvlink_bridge: bool
    pcie_gen: int | None
    pcie_lanes: int | None
    pcie_p2p: bool | None
    dense_fp16_flops_per_s: float | None
    dense_bf16_flops_per_s: float | None
    dense_fp8_flops_per_s: float | None
    mem_type: str | None
    mem_bytes: float | None
    mem_bw_bytes_per_s: float | None
    source: str
    compute_source: str | None
    notes: str
    compute_capability: int

    @property
    def peak_16bit_flops_per_s(self) -> float | None:
        """Dense BF16 tensor FLOP/s, else dense FP16: the roofline's compute peak; None if the catalog has neither."""
        return self.dense_bf16_flops_per_s or self.dense_fp16_flops_per_s

    @property
    def has_roofline(self) -> bool:
        """Whether the catalog has both a 16-bit compute peak and a memory bandwidth, as a roofline needs."""
        return bool(self.peak_16bit_flops_per_s and self.mem_bw_bytes_per_s)


def _gpu(key, name, architecture, arch_year, form_factor, *, nvlink=None, links=0, nvlink_dir_gb=0.0, bridge=False,
         pcie=None, p2p=None, fp16=None, bf16=None, fp8=None, mem=None, mem_gb=None, mem_bw=None,
         source, compute_source=None, cc, notes):
    """Build an entry from human units: GB/s per direction, TFLOP/s, GB; ``cc`` the compute capability as
    major*10+minor."""
    return GPU(
        key=key, name=name, architecture=architecture, arch_year=arch_year, form_factor=form_factor,
        nvlink_gen=nvlink, nvlink_links=links, nvlink_bw_bytes_per_s=float(nvlink_dir_gb * GB),
        nvlink_bidir_marketing_bytes_per_s=float(2 * nvlink_dir_gb * GB), nvlink_bridge=bridge,
        pcie_gen=pcie, pcie_lanes=16 if pcie else None, pcie_p2p=p2p,
        dense_fp16_flops_per_s=None if fp16 is None else fp16 * TFLOPS,
        dense_bf16_flops_per_s=None if bf16 is None else bf16 * TFLOPS,
        dense_fp8_flops_per_s=None if fp8 is None else fp8 * TFLOPS,
        mem_type=mem, mem_bytes=None if mem_gb is None else float(mem_gb * GB),
        mem_bw_bytes_per_s=None if mem_bw is None else float(mem_bw),
        source=source, compute_source=compute_source, notes=notes, compute_capability=cc)


_NVLINK_V100 = "https://www.nvidia.com/en-us/data-center/nvlink/?nvid=nv-int-nhrs-34977"
_NVLINK_A100 = "https://www.nvidia.com/de-de/data-center/nvlink/"
_HOPPER = "https://www.nvidia.com/en-sg/technologies/hopper-architecture/"
_NVLINK_B200 = "https://www.nvidia.com/en-au/data-center/nvlink/"
_A100_DATASHEET = ("https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
                   "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf")
_H100_PAGE = "https://www.nvidia.com/en-us/data-center/h100/"
_H200_PAGE = "https://www.nvidia.com/en-us/data-center/h200/"
_H200_MLPERF = ("https://raw.githubusercontent.com/mlcommons/inference_results_v4.1/main/closed/NVIDIA/systems/"
                "H200-SXM-141GBx8_TRT_MaxQ.json")
_HGX_PAGE = "https://www.nvidia.com/en-us/data-center/hgx/"
_GA102_WP = "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"
_ADA_WP = "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"
_KLOCKWOOD_H100 = "https://glennklockwood.com/garden/processors/h100"
_KLOCKWOOD_A100 = "https://glennklockwood.com/garden/processors/A100"
_KLOCKWOOD_B200 = "https://glennklockwood.com/garden/processors/B200"
_H100_GEN5 = (f"PCIe Gen5 x16: H100/H200 datasheets list 'PCIe Gen5: 128GB/s' (both directions of x16) [C] "
              f"{_KLOCKWOOD_H100} , https://hawkvelt.id.au/post/2024-08-04-nvidia-h100 .")
_NOT_IN_FACTS = "Not in the fact sheet, left None:"
_GH200_PAGE = "https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/"
_KLOCKWOOD_B300 = "https://glennklockwood.com/garden/processors/B300"
_L40S_PAGE = "https://www.nvidia.com/en-us/data-center/l40s/"
_L4_PAGE = "https://www.nvidia.com/en-us/data-center/l4/"
_A10_PAGE = "https://www.nvidia.com/en-us/data-center/products/a10-gpu/"

_GPU_LIST = (
    _gpu("p100_sxm2", "Tesla P100 SXM2", "Pascal", 2016, "SXM2", nvlink=1, links=4, nvlink_dir_gb=80,
         source="https://images.nvidia.com/content/pdf/tesla/whitepaper/pascal-architecture-whitepaper.pdf",
         cc=60, notes=("NVLink 1.0: 4 links x 20 GB/s per direction (8 lanes x 20 Gb/s) = 80 GB/s, '160 GB/s' bidir. "
                "[C] https://microway.com/hpc-tech-tips/nvidia-tesla-p100-nvlink-16gb-gpu-accelerator-pascal-gp100-sxm2-close "
                f"(primary: Pascal whitepaper [U]). {_NOT_IN_FACTS} PCIe generation, FLOP/s, memory.")),
    _gpu("v100_sxm2", "Tesla V100 SXM2 (32 GB)", "Volta", 2017, "SXM2", nvlink=2, links=6, nvlink_dir_gb=150,
         fp16=125, mem="HBM2", mem_gb=32, mem_bw=900 * GB, source=_NVLINK_V100,
         compute_source="https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf",
         cc=70, notes=("NVLink 2.0: 'up to six NVLink connections and total bandwidth of 300 GB/sec', 25 GB/s per link per "
                "direction [V]. FP16 tensor 125 TFLOP/s at 1530 MHz, datasheet [U], read in [C] "
                "https://maosong.website/p/nvidia-gpu-specs (pre-launch figure was 120 at 1455 MHz; V100 PCIe 112). "
                "No BF16 and no FP8 on Volta, no sparsity. Sold with 16 GB or 32 GB HBM2; this entry is the 32 GB one. "
                f"{_NOT_IN_FACTS} PCIe generation.")),
    _gpu("a100_sxm4_40gb", "A100 SXM4 40GB", "Ampere", 2020, "SXM4", nvlink=3, links=12, nvlink_dir_gb=300,
         fp16=312, bf16=312, mem="HBM2", mem_gb=40, mem_bw=1555 * GB, source=_NVLINK_A100,
         compute_source=_A100_DATASHEET,
         cc=80, notes=("NVLink 3.0: 12 links x 25 GB/s per direction (4 lanes x 50 Gb/s); NVIDIA's 600 GB/s is bidir [V]. "
                f"312 TFLOP/s dense (624 sparse), 40 GB, 1,555 GB/s: datasheet [C] {_KLOCKWOOD_A100} . FP8 not supported "
                f"on Ampere. {_NOT_IN_FACTS} PCIe generation.")),
    _gpu("a100_sxm4_80gb", "A100 SXM4 80GB", "Ampere", 2020, "SXM4", nvlink=3, links=12, nvlink_dir_gb=300,
         fp16=312, bf16=312, mem="HBM2e", mem_gb=80, mem_bw=2039 * GB, source=_NVLINK_A100,
         compute_source=_A100_DATASHEET,
         cc=80, notes=("NVLink 3.0 as the 40 GB SXM4 [V]. 312 TFLOP/s dense, 80 GB HBM2e, 2,039 GB/s [C] "
                f"{_KLOCKWOOD_A100} , https://www.thundercompute.com/blog/nvidia-a100-specs-full-guide . FP8 not supported "
                f"on Ampere. {_NOT_IN_FACTS} PCIe generation.")),
    _gpu("a100_pcie_80gb", "A100 PCIe 80GB (2-GPU NVLink bridge)", "Ampere", 2020, "PCIe", nvlink=3, links=None,
         nvlink_dir_gb=300, bridge=True, fp16=312, bf16=312, mem="HBM2e", mem_gb=80, mem_bw=1935 * GB,
         source=_NVLINK_A100, compute_source=_A100_DATASHEET,
         cc=80, notes=("NVLink on A100 PCIe only via a bridge for up to 2 GPUs [V] (NVIDIA DE NVLink page); 600 GB/s bidir = "
                "300 GB/s per direction: A100 datasheet [U], copy [C] https://xynio.com/nvidia-a100-tensor-core-gpu/ . "
                "312 TFLOP/s dense, 1,935 GB/s [C] https://www.thundercompute.com/blog/nvidia-a100-specs-full-guide . "
                f"FP8 not supported on Ampere. {_NOT_IN_FACTS} number of bridge links, PCIe generation.")),
    _gpu("h100_sxm5", "H100 SXM5 80GB", "Hopper", 2022, "SXM5", nvlink=4, links=18, nvlink_dir_gb=450, pcie=5,
         fp16=989.4, bf16=989.4, fp8=1978.9, mem="HBM3", mem_gb=80, mem_bw=3.35 * TB, source=_HOPPER,
         compute_source=_H100_PAGE,
         cc=90, notes=("NVLink 4.0: 18 links x 25 GB/s per direction; '900 gigabytes/second (GB/s) bi-directional per GPU' [V]. "
                f"Dense FP16/BF16 989.4 (datasheet '989'), FP8 1,978.9 TFLOP/s; sparse 1,979 / 3,958 [C] {_KLOCKWOOD_H100} "
                "(primary H100 page [U]). The preliminary Hopper blog said 1,000 / 2,000 [V] "
                "https://forums.developer.nvidia.com/t/theoretical-tflops-for-fp16-bf16-and-tf32-for-tensor-and-non-tensor/218102 . "
                f"{_H100_GEN5}")),
    _gpu("h100_pcie", "H100 PCIe 80GB (NVLink bridge)", "Hopper", 2022, "PCIe", nvlink=4, links=12,
         nvlink_dir_gb=300, bridge=True, pcie=5, fp16=756, bf16=756, fp8=1513, mem="HBM2e", mem_gb=80, mem_bw=2.0 * TB,
         source="https://blogs.nvidia.com/blog/what-is-nvidia-nvlink/",
         compute_source="https://forums.developer.nvidia.com/t/how-to-calculate-the-tensor-core-fp16-performance-of-h100/244727",
         cc=90, notes=("Two H100 PCIe cards bridged: '600 GB/s bidirectional' = 300 GB/s per direction [C] via "
                "https://themop.ru/fsepy3/nvidia-h100-nvlink.html . Dense FP16/BF16 756 TFLOP/s (whitepaper as cited) [C]; "
                "FP8 ~1,513 derived as 2x FP16 (sparse 1,513 / 3,026) [C]; preliminary figures were 800 / 1,600. "
                "Memory bandwidth 'greater than 2,000 GBps' [C] product brief PB-11133-001 "
                "https://manuals.plus/m/d4b5dc21484df3ba8fbe84918338461cc074a3fcebcc13423eadc2b10ac3bda4 . "
                f"{_H100_GEN5} 12 bridge links derived as 600 / 50 GB/s bidir per NVLink 4 link (the SXM5 part has 18).")),
    _gpu("h100_nvl", "H100 NVL (2-card PCIe product, 94 GB per GPU)", "Hopper", 2022, "PCIe", nvlink=4, links=None,
         nvlink_dir_gb=300, bridge=True, pcie=5, fp16=835.5, bf16=835.5, fp8=1670.5, mem="HBM3", mem_gb=94,
         mem_bw=3.9 * TB, source=_H100_PAGE, compute_source=_H100_PAGE,
         cc=90, notes=("NVLink bridge pair: 600 GB/s bidir = 300 GB/s per direction, primary H100 page [U], secondary [C] "
                f"https://www.clawkipedia.org/wiki/nvidia-h100 . {_H100_GEN5} H100 page table, H100 NVL column [U]: "
                "BF16/FP16 1,671 and FP8 3,341 TFLOP/s 'with sparsity', 94 GB, 3.9 TB/s; dense = half. 94 GB HBM3 per GPU, "
                "two GPUs bridged (188 GB) [C] https://itctshop.com/nvidia-h100-nvl-94gb-complete-guide . "
                f"{_NOT_IN_FACTS} number of bridge links.")),
    _gpu("h200_sxm", "H200 SXM 141GB", "Hopper", 2022, "SXM", nvlink=4, links=18, nvlink_dir_gb=450, pcie=5,
         fp16=989.4, bf16=989.4, fp8=1978.9, mem="HBM3e", mem_gb=141, mem_bw=4.8 * TB, source=_H200_MLPERF,
         compute_source=_H200_PAGE,
         cc=90, notes=("NVIDIA's MLPerf system file: '18x 4th Gen NVLink, 900GB/s' and 141 GB [V]. Compute same as H100 SXM "
                "(989 / 1,979 dense); '3.94 PFLOPS dense FP8' seen online is the sparse figure. 4.8 TB/s [C] "
                "https://geektopia.es/es/technology/2023/11/13/noticias/nvidia-anuncia-la-aceleradora-h200-tiene-141-gb-de-hbm3e.html "
                f"(primary H200 page [U]). arch_year is Hopper's; DGX H200 is from 2024. {_H100_GEN5}")),
    _gpu("h200_nvl", "H200 NVL (PCIe, 2- or 4-way NVLink bridge)", "Hopper", 2022, "PCIe", nvlink=4, links=None,
         nvlink_dir_gb=450, bridge=True, pcie=5, source=_H200_PAGE,
         cc=90, notes=("450 GB/s per direction, 900 GB/s per GPU bidir over a 2- or 4-way bridge: H200 page [U]. "
                f"{_H100_GEN5} {_NOT_IN_FACTS} number of bridge links, FLOP/s, memory.")),
    _gpu("h800_sxm", "H800 SXM (China SKU)", "Hopper", 2022, "SXM", nvlink=4, links=8, nvlink_dir_gb=200,
         source="https://github.com/NVIDIA/nccl/issues/1374",
         cc=90, notes=("NVLink cut to 400 GB/s bidir, 200 GB/s per direction: NVIDIA H800 datasheet [U] (no URL in the fact sheet); "
                "a user's 'unidirectional peak 200GB/s' [C] in the NCCL issue. 8 links derived as 400 / 50 GB/s per link. "
                f"{_NOT_IN_FACTS} PCIe generation, FLOP/s, memory.")),
    _gpu("h20", "H20 (China SKU)", "Hopper", 2022, None, nvlink=4, links=18, nvlink_dir_gb=450,
         fp16=148, bf16=148, mem="HBM3", mem_gb=96, mem_bw=4.0 * TB,
         source="https://www.tweaktown.com/news/95224/", compute_source="https://willitrunai.com/es/gpus/h20-96gb",
         cc=90, notes=("Reported NVIDIA spec 'keeps the 900GB/sec NVLink' [C]: 450 GB/s per direction, 18 links derived as "
                "900 / 50. 148 TFLOP/s dense FP16 (export-capped, ~15 % of H100), 96 GB HBM3, 4.0 TB/s [C] "
                "willitrunai.com; the same 148 dense FP16 in [C] https://zangshuxian.com/new/674733024499207168 . BF16 "
                "taken equal to FP16, as on every Hopper tensor core; FP8 not in these sources. "
                f"{_NOT_IN_FACTS} form factor, PCIe generation.")),
    _gpu("b200_hgx", "B200 (HGX, 1,000 W)", "Blackwell", 2024, "SXM", nvlink=5, links=18, nvlink_dir_gb=900,
         fp16=2250, bf16=2250, fp8=4500, mem="HBM3e", mem_gb=180, mem_bw=7.7 * TB, source=_NVLINK_B200,
         compute_source=_HGX_PAGE,
         cc=100, notes=("NVLink 5.0: '18 NVLink 100 gigabyte-per-second (GB/s) connections for a total bandwidth of 1.8 terabytes "
                "per second' (bidir) = 900 GB/s per direction [V]. HGX B200 table: FP16/BF16 36 PF and FP8 72 PF per 8 GPUs "
                "'With sparsity', 1.4 TB: dense 2,250 / 4,500 TFLOP/s per GPU [C] https://fibermall.com/blog/?p=17161 . "
                "'9,000 TFLOPS dense FP8' seen online is the sparse figure. 180 GB / 7.7 TB/s [C] "
                "https://verda.com/blog/gb300-nvl72-architecture and MLPerf 'B200-SXM-180GB' [V] "
                "https://raw.githubusercontent.com/mlcommons/inference_results_v6.0/main/closed/Nebius/systems/nebius_b200_n1.json ; "
                f"launch materials said 192 GB / 8 TB/s [C] {_KLOCKWOOD_B200} . {_NOT_IN_FACTS} PCIe generation.")),
    _gpu("b200_gb200", "B200 in GB200 (1,200 W)", "Blackwell", 2024, "GB200 superchip", nvlink=5, links=18,
         nvlink_dir_gb=900, fp16=2500, bf16=2500, fp8=5000, mem="HBM3e", mem_gb=186, mem_bw=8 * TB,
         source=_NVLINK_B200, compute_source=_KLOCKWOOD_B200,
         cc=100, notes=("NVLink 5.0 as B200 [V]. Dense 2,500 / 5,000 TFLOP/s (sparse 5,000 / 10,000) [C] Klockwood B200 page "
                "(GB200 table); NVL72 '720 PFLOPS FP8' per rack = 10 PF sparse per GPU [C] "
                "https://aiwiki.ai/wiki/nvidia_gb200_nvl72/raw . 186 GB as reported by a GB200 system [V] "
                "https://raw.githubusercontent.com/mlcommons/inference_results_v6.1/main/closed/Crusoe/systems/"
                "GB200-NVL72_GB200-186GB_aarch64x16_Dynamo.json ; 8 TB/s [C]. The GPU attaches to Grace, not to a PCIe "
                f"host. {_NOT_IN_FACTS} PCIe generation.")),
    _gpu("gh200", "GH200 Grace Hopper superchip (H100 96 GB)", "Hopper", 2022, "GH200 superchip", nvlink=4, links=18,
         nvlink_dir_gb=450, fp16=989.4, bf16=989.4, fp8=1978.9, mem="HBM3", mem_gb=96, mem_bw=4.0 * TB,
         source=_GH200_PAGE, compute_source=_GH200_PAGE,
         cc=90, notes=("Hopper GPU with 18 NVLink 4 links, 900 GB/s bidir = 450 GB/s per direction, for GH200 NVL32 or "
                "GPU-to-GPU links between superchips [U] GH200 page; the GPU reaches its Grace CPU over NVLink-C2C "
                "(links.NVLINK_C2C, 450 GB/s per direction), not over PCIe. 96 GB HBM3 beside 480 GB LPDDR5X [C] "
                "https://spheron.network/blog/nvidia-gh200-guide ; 4 TB/s and the 144 GB HBM3e / 4.9 TB/s variant: GH200 "
                "page [U]. Dense FLOP/s taken as H100 SXM's (989.4 / 1,978.9; the page gives 1,979 / 3,958 'with sparsity' "
                f"[U]). {_NOT_IN_FACTS} PCIe generation of its NIC lanes.")),
    _gpu("b300_hgx", "B300 (Blackwell Ultra, HGX)", "Blackwell", 2024, "SXM", nvlink=5, links=18, nvlink_dir_gb=900,
         pcie=6, fp16=2250, bf16=2250, fp8=4500, mem="HBM3e", mem_gb=288, mem_bw=8 * TB, source=_NVLINK_B200,
         compute_source=_KLOCKWOOD_B300,
         cc=103, notes=("NVLink 5.0 as B200: 18 links, 1.8 TB/s bidir per GPU [V] NVIDIA NVLink page; HGX B300 'NVSwitch "
                "GPU-to-GPU Bandwidth 1.8 TB/s', FP16/BF16 36 PF and FP8 72 PF per 8 GPUs 'with sparsity' [C] "
                "https://fibermall.com/blog/?p=17161 : dense 2,250 / 4,500 TFLOP/s per GPU, as the HGX-variant table "
                f"(dense BF16 2,250, FP8 4,500) [C] {_KLOCKWOOD_B300} ; the same page: 288 GB HBM3e (12-high), 8 TB/s, "
                "'Upgrade to PCIe Gen6' (host link). Compute capability 10.3 (sm_103) [U] https://developer.nvidia.com/cuda-gpus "
                ". arch_year is Blackwell's.")),
    _gpu("b300_gb300", "B300 in GB300 (Blackwell Ultra, NVL72)", "Blackwell", 2024, "GB300 superchip", nvlink=5, links=18,
         nvlink_dir_gb=900, fp16=2500, bf16=2500, fp8=5000, mem="HBM3e", mem_gb=288, mem_bw=8 * TB, source=_NVLINK_B200,
         compute_source=_KLOCKWOOD_B300,
         cc=103, notes=("NVLink 5.0 [V] NVIDIA NVLink page. GB300 NVL72 per rack: '360 PF FP8 for training' (dense), "
                f"'20 TB HBM at 576 TB/s', 72 ConnectX-8 NICs [C] {_KLOCKWOOD_B300} : 5,000 TFLOP/s dense FP8 and 8 TB/s "
                "per GPU; BF16 dense 2,500 taken as half of FP8 (GB300 NVL72 datasheet 'FP16/BF16 360 PF' with sparsity per "
                "rack [U]). 288 GB per GPU as B300 (the rack's 20 TB is 278 GB per GPU). The GPU attaches to Grace over "
                f"NVLink-C2C. Compute capability 10.3 [U] https://developer.nvidia.com/cuda-gpus . {_NOT_IN_FACTS} PCIe "
                "generation.")),
    _gpu("l40s", "L40S (Ada, PCIe, no NVLink)", "Ada", 2022, "PCIe", pcie=4, fp16=362.05, bf16=362.05, fp8=733,
         mem="GDDR6", mem_gb=48, mem_bw=864 * GB, source=_L40S_PAGE, compute_source=_L40S_PAGE,
         cc=89, notes=("L40S datasheet table (copy) [C] https://www.mullet.se/product.html?product_id=355414 : 'PCIe Gen4 x16: "
                "64GB/s bidirectional', 48 GB GDDR6 with ECC, 864 GB/s, BF16/FP16 362.05 | 733* and FP8 733 | 1,466* TFLOP/s "
                "(* with sparsity: the first figure is dense, FP32 accumulate). 'NVLink is not supported' [C] "
                "https://www.itcreations.com/nvidia-gpu/nvidia-l40s-gpu-accelerator . Primary L40S page and datasheet [U]. "
                f"arch_year is Ada's. {_NOT_IN_FACTS} P2P over PCIe with the stock data-centre driver (no source read).")),
    _gpu("l4", "L4 (Ada, PCIe, no NVLink)", "Ada", 2022, "PCIe", pcie=4, fp16=121, bf16=121, fp8=242.5, mem="GDDR6",
         mem_gb=24, mem_bw=300 * GB, source=_L4_PAGE, compute_source=_L4_PAGE,
         cc=89, notes=("L4 datasheet figures as copied [C] https://grokipedia.com/page/NVIDIA_L4_vs_L40S : 24 GB GDDR6, "
                "300 GB/s, FP16 tensor 242 TFLOP/s and FP8 485 'with sparsity', so 121 / 242.5 dense; 121 BF16 dense [C] "
                "https://www.yobitel.com/knowledge-base/nvidia-l4 . PCI Express 4.0 x16 [C] "
                "https://store.sourcecode.com/en-us/bg-bucket-compare/125/9820 . Single slot, 72 W, no NVLink (Ada has none). "
                f"Primary L4 page [U]. arch_year is Ada's. {_NOT_IN_FACTS} P2P over PCIe (no source read).")),
    _gpu("a10", "A10 (GA102, PCIe, no NVLink)", "Ampere", 2020, "PCIe", pcie=4, fp16=125, bf16=125, mem="GDDR6",
         mem_gb=24, mem_bw=600 * GB, source=_A10_PAGE, compute_source=_A10_PAGE,
         cc=86, notes=("A10 page [U]: 'PCIe Gen4 64GB/s', no NVLink; BF16/FP16 tensor 125 TFLOP/s dense (250 with sparsity), "
                "24 GB GDDR6, 600 GB/s; memory and PCIe 4.0 x16 read in copies [C] "
                "https://sysrqmts.com/ru/gpus/compare/nvidia-a10-pcie-vs-nvidia-quadro-rtx-4000 , "
                "https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/ . No FP8 on Ampere. arch_year is "
                f"Ampere's. {_NOT_IN_FACTS} P2P over PCIe (no source read).")),
    _gpu("a10g", "A10G (AWS G5, GA102, no NVLink)", "Ampere", 2020, "PCIe", pcie=4, mem="GDDR6", mem_gb=24,
         mem_bw=600 * GB, source="https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/",
         cc=86, notes=("AWS's variant of the A10 (G5 instances): the same 24 GB GDDR6 at 600 GB/s, different tensor rates [C] "
                "Baseten. GA102 like the A10, so compute capability 8.6 and PCIe 4.0 (derived from the A10; A10G is not on "
                f"NVIDIA's CUDA GPUs page). {_NOT_IN_FACTS} tensor FLOP/s (not read in a primary source), P2P.")),
    _gpu("rtx_6000_ada", "RTX 6000 Ada Generation (workstation, no NVLink)", "Ada", 2022, "PCIe", pcie=4, mem="GDDR6",
         mem_gb=48, mem_bw=960 * GB, source="https://www.nvidia.com/en-us/design-visualization/rtx-6000/",
         cc=89, notes=("AD102 with 142 SMs, 48 GB GDDR6 ECC at 960 GB/s, PCI Express 4.0 x16, 300 W [C] "
                "https://www.grafikkarten.com/de/news/nvidia-rtx-6000-grafikkarte-der-ada-generation , "
                "https://www.hardwareluxx.de/index.php/news/hardware/grafikkarten/59532-l40-und-rtx-6000-ada-generation-sind-"
                "die-ersten-profi-karten-der-neuen-generation.html (Ada has no NVLink: 'Die bisher verwendete "
                "NVLink-Schnittstelle kommt mit den Ada-Lovelace-Karten nicht mehr zum Einsatz'). Primary product page [U]. "
                f"{_NOT_IN_FACTS} dense tensor FLOP/s, P2P over PCIe (not sourced).")),
    _gpu("rtx_pro_6000_blackwell", "RTX PRO 6000 Blackwell (workstation/server, no NVLink)", "Blackwell", 2024, "PCIe",
         pcie=5, mem="GDDR7", mem_gb=96, mem_bw=1792 * GB,
         source="https://www.nvidia.com/en-us/products/workstations/professional-desktop-gpus/rtx-pro-6000/",
         cc=120, notes=("GB202 with 188 SMs, 96 GB GDDR7 (24 Gb chips, clamshell) on 512 bits at 28 Gbps = 1,792 GB/s, "
                "125 TFLOP/s FP32, '4,000 TOPS' FP4 (with sparsity), Workstation, Max-Q and Server editions [C] "
                "https://www.topcpu.net/es/news/nvidia-launches-96gb-rtx-5090-model-with-a-whopping-price-tag-of-10000 ; "
                "PCIe Gen 5 [C] https://gpu.name/posts/nvidia-unveils-rtx-pro-6000-blackwell-gpu-with-24-064-cores-and-96gb-"
                "memory . No NVLink (GB202, as RTX 5090). Compute capability 12.0 [U] https://developer.nvidia.com/cuda-gpus . "
                f"arch_year is Blackwell's. {_NOT_IN_FACTS} dense BF16/FP8 (not read), P2P over PCIe (not sourced).")),
    _gpu("a40", "A40 (GA102, NVLink bridge)", "Ampere", 2020, "PCIe", nvlink=3, links=4, nvlink_dir_gb=56.25,
         bridge=True, pcie=4, fp16=149.67, bf16=149.67, mem="GDDR6", mem_gb=48, mem_bw=696 * GB, source=_GA102_WP,
         compute_source="https://hmc-tech.com/gpu/nvidia-a100-vs-nvidia-a40",
         cc=86, notes=("GA102 NVLink 3: 4 x4 links, 14.0625 GB/s each per direction = 56.25 GB/s, 112.5 GB/s bidir; GA102 "
                "whitepaper [U] quoted in [C] https://hf-mirror.492719920.workers.dev/spaces/Ahmadzei/RAG/blame/"
                "9007c8ed72f6554e38e2bad98fbbba8e72e72f22/chunked/content_aware_chunking/_perf_hardware/chunk_10.txt ; "
                "A40 product brief 'NVIDIA NVLink 112.5 GB/s (bidirectional)' [C] "
                "http://www.relationship-nepal.org/900-2g133-0000-000.html ; the same brief: PCI Express 4.0 x16, 48 GB "
                "GDDR6, 696 GB/s. Tensor FP16/BF16 dense 149.67 TFLOP/s (FP32 accumulate), no FP8 on Ampere [C] "
                "hmc-tech.com. arch_year is Ampere's.")),
    _gpu("rtx_2080_ti", "GeForce RTX 2080 Ti (TU102)", "Turing", None, "PCIe", nvlink=2, links=2, nvlink_dir_gb=50,
         bridge=True, source="https://techpowerup.com/review/nvidia-geforce-turing-geforce-rtx-architecture/14.html",
         cc=75, notes=("TU102 NVLink 2: 2 x8 links x 25 GB/s per direction = 50 GB/s, 100 GB/s bidir (RTX 2080 / TU104: 1 link) [C] "
                "TechPowerUp and https://www.tomshardware.com/reviews/nvidia-turing-gpu-architecture-explored,5801-7.html . "
                f"{_NOT_IN_FACTS} year, PCIe generation, P2P, FLOP/s, memory.")),
    _gpu("rtx_3090", "GeForce RTX 3090 (GA102, NVLink bridge)", "Ampere", 2020, "PCIe", nvlink=3, links=4,
         nvlink_dir_gb=56.25, bridge=True, pcie=4, fp16=71, bf16=71, mem="GDDR6X", mem_gb=24, mem_bw=936 * GB,
         source=_GA102_WP, compute_source="https://holynerdvana.blogspot.com/2022/10/nvidia-geforce-rtx-3090-specifications.html",
         cc=86, notes=("GA102 NVLink 3: 4 x4 links x 14.0625 GB/s per direction = 56.25 GB/s, 112.5 GB/s bidir; whitepaper [U] "
                "quoted in [C] https://hf-mirror.492719920.workers.dev/spaces/Ahmadzei/RAG/blame/"
                "9007c8ed72f6554e38e2bad98fbbba8e72e72f22/chunked/content_aware_chunking/_perf_hardware/chunk_10.txt . "
                "24 GB GDDR6X, 936 GB/s, 'FP16 TFLOPS (Sparsity) 142 (285)' [C] holynerdvana.blogspot.com (a copy of "
                "Tom's Hardware's table): 142 dense with FP16 accumulate, so 71 with FP32 accumulate at GeForce's half "
                "rate (as in the RTX 4090 entry; derived). PCIe 4.0 x16 [C] https://cpu-gpu.alldbin.com/graphics-card-"
                f"comparison/GeForce-RTX-3090-and-Tesla-M40-comparison.html . arch_year is Ampere's. {_NOT_IN_FACTS} P2P.")),
    _gpu("rtx_4090", "GeForce RTX 4090 (no NVLink, no P2P)", "Ada", None, "PCIe", pcie=4, p2p=False,
         fp16=165.2, bf16=165.2, fp8=330.3, mem="GDDR6X", mem_gb=24, mem_bw=1008 * GB,
         source="https://www.tweaktown.com/news/88605/nvidia-kills-nvlink-support-for-ada-lovelace-silent-death-sli/index.html",
         compute_source=_ADA_WP,
         cc=89, notes=("No NVLink on Ada; NVIDIA clarified Ada is PCIe Gen 4, not Gen 5 (as said at launch) [C] TweakTown and "
                "https://techgit.net/nvidia-kills-off-nvlink-on-rtx-4090/ . No CUDA P2P: multi-4090 NCCL runs hang unless "
                "P2P is disabled [C] https://github.com/NVIDIA/nccl-tests/issues/117 , "
                "https://github.com/huggingface/accelerate/issues/2328 . Tensor FP16/BF16 dense 165.2 TFLOP/s with FP32 "
                "accumulate (330.3 with FP16 accumulate); FP8 330.3 (FP32 accumulate); 24 GB, 1,008 GB/s: third-party DB "
                "[C] https://waredb.com/processor/nvidia-geforce-rtx-4090 (primary Ada whitepaper [U], FP8 unchecked). "
                f"{_NOT_IN_FACTS} year.")),
    _gpu("rtx_5090", "GeForce RTX 5090 (no NVLink)", "Blackwell", 2024, "PCIe", pcie=5,
         fp16=209.5, bf16=209.5, fp8=419.2, mem="GDDR7", mem_gb=32,
         mem_bw=1792 * GB, source="https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/rtx-5090/",
         compute_source="https://www.codesota.com/hardware/rtx-5090",
         cc=120, notes=("No NVLink listed; PCIe 5.0 x16; 32 GB GDDR7, 1,792 GB/s: primary NVIDIA page [U], read in [C] "
                "https://www.elprocus.com/nvidia-geforce-rtx-5090/ , "
                "https://pocketmags.com/linux-format-magazine/may-2025/articles/nvidia-geforce-rtx-5090 . NCCL detects "
                "missing P2P and disables the transport itself [V] https://github.com/NVIDIA/nccl/issues/1637 ; the "
                "stock GeForce driver has no P2P, which a patched driver adds [C] "
                "https://github.com/aikitoria/open-gpu-kernel-modules/blob/08dc34555bf8cdacdd89237da42419e6ce5efdc4/"
                "README.md . Tensor FP16/BF16 dense 209.5 TFLOP/s (FP32 accumulate, as for the RTX 4090 entry) [C] "
                "codesota.com, which is 838.4 sparse FP16 [C] https://www.spheron.network/blog/nvidia-rtx-5090-specs/ "
                "/ 2 (dense) / 2 (FP32 accumulate at half rate on GeForce); FP8 419.2 dense with FP32 accumulate, derived "
                "the same way from 1,676.8 sparse (unchecked against the whitepaper). arch_year is Blackwell's.")),
)

GPUS: dict[str, GPU] = {gpu.key: gpu for gpu in _GPU_LIST}
"""All GPUs by key."""


def get_gpu(key: str | GPU) -> GPU:
    """Look up a GPU by key (case-insensitive, ``-`` or ``_``); a :class:`GPU` is returned unchanged.

    Parameters
    ----------
    key : str or GPU
        Key of :data:`GPUS` (``"h100_sxm5"`` or ``"h100-sxm5"``), or an entry.

    Returns
    -------
    GPU
        The catalog entry.

    Raises
    ------
    GpucommError
        If the key is unknown; the message lists the accepted keys.

    Examples
    --------
    >>> get_gpu("h100_sxm5").nvlink_bw_bytes_per_s / 1e9
    450.0
    >>> get_gpu("b200_hgx").dense_bf16_flops_per_s / 1e15
    2.25
    >>> get_gpu("rtx_4090").nvlink_gen is None
    True
    """
    return lookup(GPUS, key, what='GPU', entry_type=GPU, dashes_as_underscores=True)


def bridge_link(gpu: str | GPU):
    """The NVLink bridge of a PCIe card (A40, RTX 3090, H100 PCIe...) as a link for the cost model.

    Parameters
    ----------
    gpu : str or GPU
        Catalog key or entry of a card with ``nvlink_bridge`` set.

    Returns
    -------
    Link
        Kind ``"nvlink"``, with the card's own per-direction NVLink bandwidth (``nvlink_bw_bytes_per_s``,
        e.g. 56.25 GB/s for GA102's four x4 links), not the SXM part's of the same generation.

    Raises
    ------
    GpucommError
        If the key is unknown or the card has no NVLink bridge.

    Examples
    --------
    >>> bridge_link("a40").bw_bytes_per_s / 1e9
    56.25
    >>> bridge_link("h100_pcie").bw_bytes_per_s / 1e9  # 12 NVLink 4 links, not the SXM5 part's 18
    300.0
    """
    from gpucomm import GpucommError

    spec = get_gpu(gpu)
    if not spec.nvlink_bridge:
        raise GpucommError(f"GPU {spec.key!r} has no NVLink bridge: expected one of "
                           f"{', '.join(bridged_gpus())}")
    return _own_link(spec, f"{spec.key}_nvlink_bridge", f"{spec.name} NVLink bridge")


def bridged_gpus(nvlink_gen: int | None = None) -> tuple[str, ...]:
    """Keys of the PCIe cards joined by NVLink bridges, optionally of one NVLink generation.

    Parameters
    ----------
    nvlink_gen : int, optional
        Only cards of this NVLink generation (3: A40, RTX 3090, A100 PCIe).

    Returns
    -------
    tuple of str
        Keys of :data:`GPUS` with ``nvlink_bridge`` set, in catalog order.

    Examples
    --------
    >>> bridged_gpus(4)
    ('h100_pcie', 'h100_nvl', 'h200_nvl')
    """
    return tuple(k for k, g in GPUS.items() if g.nvlink_bridge and nvlink_gen in (None, g.nvlink_gen))


def gpu_nvlink_link(gpu: str | GPU):
    """A GPU's own NVLink as a link for the cost model: its bridge, its generation's catalog link, or its cut-down links.

    Parameters
    ----------
    gpu : str or GPU
        Catalog key or entry of a GPU with NVLink.

    Returns
    -------
    Link
        For a bridged PCIe card, :func:`bridge_link`; where the GPU's NVLink bandwidth is its generation's
        catalog entry (``nvlink4`` for H100/H200 SXM, H20), that entry; otherwise (H800 SXM: 8 of Hopper's 18
        links, 200 GB/s per direction) a link keyed ``<gpu>_nvlink`` with the GPU's own per-direction bandwidth.

    Raises
    ------
    GpucommError
        If the key is unknown or the GPU has no NVLink.

    Examples
    --------
    >>> gpu_nvlink_link("h100_sxm5").key, gpu_nvlink_link("h800_sxm").key
    ('nvlink4', 'h800_sxm_nvlink')
    >>> gpu_nvlink_link("h800_sxm").bw_bytes_per_s / 1e9
    200.0
    """
    from gpucomm import GpucommError
    from gpucomm.model.hardware.links import LINKS

    spec = get_gpu(gpu)
    if not spec.nvlink_gen:
        raise GpucommError(f"GPU {spec.key!r} has no NVLink: expected one of "
                           f"{', '.join(k for k, g in GPUS.items() if g.nvlink_gen)}")
    if spec.nvlink_bridge:
        return bridge_link(spec)
    generic = LINKS.get(f"nvlink{spec.nvlink_gen}")
    if generic is not None and generic.bw_bytes_per_s == spec.nvlink_bw_bytes_per_s:
        return generic
    links = f", {spec.nvlink_links} links" if spec.nvlink_links else ""
    return _own_link(spec, f"{spec.key}_nvlink", f"NVLink {spec.nvlink_gen}.0 ({spec.name}{links})")


def _own_link(spec: GPU, key: str, name: str):
    """The GPU's NVLink figures as a :class:`~gpucomm.model.hardware.links.Link` (per direction, bytes/s)."""
    from gpucomm.model.hardware.links import Link

    return Link(key, name, "nvlink", spec.nvlink_bw_bytes_per_s, spec.nvlink_bidir_marketing_bytes_per_s,
                spec.arch_year or 0, spec.source, spec.notes)
