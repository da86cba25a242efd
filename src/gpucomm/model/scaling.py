"""Why communication limits scaling: Amdahl's law and the compute-vs-link gap across GPU generations.

Two ideas, both as plain functions of catalog values:

* **Amdahl's law** (Amdahl, AFIPS 1967): if a fraction ``p`` of the work spreads over ``n``
  workers and the rest does not, the speed-up is ``1 / ((1 - p) + p / n)``, never more than
  ``1 / (1 - p)``. Communication that does not shrink with ``n`` plays the serial part
  (:func:`gpucomm.model.tp.tp_speedup` is the tensor-parallel case, where it even grows with ``n``).
* **Machine balance vs communication intensity** (the "conveyor belt"): a GPU with peak
  ``F`` FLOP/s behind a link of ``B`` bytes/s per direction does ``F / B`` FLOPs in the time
  one byte crosses the link. A workload that performs ``I`` FLOPs per byte it must send keeps
  the link busy a fraction ``(F / B) / I`` of its compute time: above 1, even perfect overlap
  leaves the GPU waiting. This is the roofline's ratio (Williams, Waterman, Patterson, CACM
  52(4), 2009) with the link in place of memory.

:data:`GENERATIONS` lists NVIDIA's flagship data-centre GPU of each generation from P100 (2016)
to B200 (2024) with its dense 16-bit FLOP/s, its NVLink and the PCIe generation of its host
interface, all from :mod:`gpucomm.model.hardware` except where the catalog has no value (then the
value is here with its source).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpucomm import GpucommError
from gpucomm.model.collectives import busbw_factor, check_num_ranks
from gpucomm.model.hardware import GPUS, get_gpu, get_link, get_pcie_gen
from gpucomm.model.hardware.calibration import Parameter
from gpucomm.model.tp import ALL_REDUCES_PER_LAYER_FORWARD, dtype_bytes, get_model, layer_params

P100_SXM2_FP16_FLOPS_PER_S = Parameter(
    "p100_sxm2_fp16_flops_per_s", 21.2e12, "FLOP/s",
    "https://images.nvidia.com/content/pdf/tesla/whitepaper/pascal-architecture-whitepaper.pdf",
    "Peak FP16 of Tesla P100 SXM2 (the NVLink module) at its 1480 MHz boost clock: 21.2 TFLOP/s, from paired FP16 "
    "(half2) arithmetic on the CUDA cores; Pascal has no tensor cores. Primary: Pascal whitepaper [U] (not re-read); "
    "copies [C] https://teckknow.com/nvidia-unveils-tesla-p100-hpc-board-based-pascal-gpu-architecture/ and "
    "https://hwsetup.it/news/reader.php?objid=24077 ('21.2 TFLOP/s ... FP16'). The '21 TFLOPS' of the CSDN article "
    "on communication, NVLink and nvcc (P100_B200_ARTICLE_SOURCE). Kept here because the catalog entry p100_sxm2 has no FLOP/s.")
"""P100's peak FP16 rate, which :mod:`gpucomm.model.hardware.gpus` does not carry."""


@dataclass(frozen=True)
class Generation:
    """One GPU generation as the compute-vs-link comparison sees it.

    Attributes
    ----------
    gpu_key : str
        Catalog key (:func:`gpucomm.model.hardware.get_gpu`).
    label : str
        ``"P100 (2016)"``.
    year : int
        Year of the architecture's first product.
    compute_flops_per_s : float
        Peak dense 16-bit rate in FLOP/s (BF16 tensor where the GPU has it, else FP16).
    compute_note : str
        Which rate that is.
    nvlink_key : str
        NVLink generation of the SXM part (:func:`gpucomm.model.hardware.get_link`).
    pcie_gen : int
        PCIe generation of the GPU's host interface.
    pcie_source : str
        Where the PCIe generation comes from.
    """

    gpu_key: str
    label: str
    year: int
    compute_flops_per_s: float
    compute_note: str
    nvlink_key: str
    pcie_gen: int
    pcie_source: str

    @property
    def nvlink_bw_bytes_per_s(self) -> float:
        """NVLink bandwidth per GPU, per direction, bytes/s (catalog)."""
        return get_link(self.nvlink_key).bw_bytes_per_s

    @property
    def pcie_bw_bytes_per_s(self) -> float:
        """PCIe x16 bandwidth per direction after the line code, bytes/s (catalog)."""
        return get_pcie_gen(self.pcie_gen).x16_bytes_per_s

    @property
    def nvlink_links(self) -> int:
        """NVLink links per GPU (catalog)."""
        return get_gpu(self.gpu_key).nvlink_links

    @property
    def nvlink_per_link_bw_bytes_per_s(self) -> float:
        """One NVLink link, per direction, bytes/s: per-GPU bandwidth / links."""
        return nvlink_per_link_bytes_per_s(self.gpu_key)

    @property
    def flops_per_nvlink_byte(self) -> float:
        """Machine balance over NVLink: FLOPs done while one byte crosses it (FLOP/s / bytes/s)."""
        return machine_balance_flops_per_byte(self.compute_flops_per_s, self.nvlink_bw_bytes_per_s)

    @property
    def flops_per_pcie_byte(self) -> float:
        """Machine balance over PCIe x16 (FLOP/s / bytes/s)."""
        return machine_balance_flops_per_byte(self.compute_flops_per_s, self.pcie_bw_bytes_per_s)


def _dense_16bit(gpu_key: str) -> tuple[float, str]:
    gpu = get_gpu(gpu_key)
    if gpu.dense_bf16_flops_per_s:
        return gpu.dense_bf16_flops_per_s, "dense BF16 tensor-core rate (catalog)"
    if gpu.dense_fp16_flops_per_s:
        return gpu.dense_fp16_flops_per_s, "dense FP16 tensor-core rate (catalog; no BF16 on this GPU)"
    raise AssertionError(gpu_key)  # every generation below has one, except P100 (handled by the caller)


def _generation(gpu_key: str, label: str, nvlink_key: str, pcie_gen: int | None, pcie_source: str) -> Generation:
    gpu = get_gpu(gpu_key)
    if gpu_key == "p100_sxm2":
        flops, note = P100_SXM2_FP16_FLOPS_PER_S.value, "FP16 on CUDA cores (no tensor cores): P100_SXM2_FP16_FLOPS_PER_S"
    else:
        flops, note = _dense_16bit(gpu_key)
    gen = gpu.pcie_gen if pcie_gen is None else pcie_gen
    return Generation(gpu_key, label, gpu.arch_year, flops, note, nvlink_key, gen, pcie_source)


GENERATIONS: tuple[Generation, ...] = (
    _generation("p100_sxm2", "P100 (2016)", "nvlink1", 3,
                "P100 data sheet: 'PCIe Gen3' [U]; P100 PCIe card 'PCIe 3.0 x16' [C] "
                "https://cputronic.com/gpu/nvidia-tesla-p100-pcie-16-gb ; the CSDN article (P100_B200_ARTICLE_SOURCE) "
                "pairs P100 with PCIe 3.0 x16."),
    _generation("v100_sxm2", "V100 (2017)", "nvlink2", 3,
                "V100 data sheet: 'PCIe 32 GB/s' (Gen3 x16, both directions) [U]; Dell EMC reference guide for V100-SXM2: "
                "'the theoretical peak bandwidth using PCIe is only 16*2=32GB/s' [C] "
                "http://www.manualshelf.com/manual/dell/high-performance-computing-solution-resources/reference-guide-english/page-17.html"),
    _generation("a100_sxm4_80gb", "A100 (2020)", "nvlink3", 4,
                "A100 is a PCIe 4.0 device: catalog note of link 'pcie4' ('A100 PCIe use it'); A100 data sheet "
                "'PCIe Gen4: 64GB/s' (both directions) [U]."),
    _generation("h100_sxm5", "H100 (2022)", "nvlink4", None, "Catalog: h100_sxm5.pcie_gen (H100 data sheet 'PCIe Gen5: 128GB/s')."),
    _generation("b200_hgx", "B200 (2024)", "nvlink5", 6,
                "B200: '2x 256 GB/s PCIe Gen6 (H2D)' [C] https://glennklockwood.com/garden/processors/B200 (the catalog has "
                "no B200 PCIe generation). The CSDN article instead pairs B200 with PCIe 5.0 x16, the generation of the x86 "
                "hosts."),
)
"""Flagship SXM GPU of each NVIDIA data-centre generation, P100 to B200."""


def get_generation(gpu_key: str) -> Generation:
    """Look up a :class:`Generation` by GPU catalog key.

    Parameters
    ----------
    gpu_key : str
        A GPU catalog key (``h100_sxm5``).

    Returns
    -------
    Generation
        The NVLink/PCIe generation entry whose GPU is ``gpu_key``.

    Raises
    ------
    GpucommError
        If no generation uses that GPU; the message lists the keys.

    Examples
    --------
    >>> get_generation("h100_sxm5").pcie_gen
    5
    """
    for gen in GENERATIONS:
        if gen.gpu_key == gpu_key:
            return gen
    raise GpucommError(f"no generation for GPU {gpu_key!r}: expected one of {', '.join(g.gpu_key for g in GENERATIONS)}")


def nvlink_per_link_bytes_per_s(gpu_key: str) -> float | None:
    """Bandwidth of one NVLink link of a GPU, per direction, in bytes/s (None if the link count is unknown).

    NVIDIA quotes NVLink per GPU with both directions added ("900 GB/s" for H100). One link
    carries the per-GPU, per-direction figure divided by the number of links.

    Parameters
    ----------
    gpu_key : str
        A GPU catalog key.

    Returns
    -------
    float or None
        Per-link, per-direction bandwidth in bytes/s; None if the catalog has no link count for the GPU.

    Raises
    ------
    GpucommError
        Unknown GPU, or a GPU without NVLink.

    Examples
    --------
    >>> nvlink_per_link_bytes_per_s("h100_sxm5") / 1e9
    25.0
    >>> nvlink_per_link_bytes_per_s("a40") / 1e9
    14.0625
    """
    gpu = get_gpu(gpu_key)
    if not gpu.nvlink_gen:
        raise GpucommError(f"GPU {gpu.key!r} has no NVLink: expected one of "
                           + ", ".join(k for k, g in GPUS.items() if g.nvlink_gen))
    if not gpu.nvlink_links:
        return None
    return gpu.nvlink_bw_bytes_per_s / gpu.nvlink_links


def hbm_over_nvlink(gpu_key: str) -> float:
    """How many times faster a GPU reads its own memory than it can send over all its NVLinks (per direction).

    Parameters
    ----------
    gpu_key : str
        A GPU catalog key.

    Returns
    -------
    float
        Memory bandwidth over the GPU's total per-direction NVLink bandwidth (dimensionless).

    Raises
    ------
    GpucommError
        Unknown GPU, a GPU without NVLink, or without a memory bandwidth in the catalog.

    Examples
    --------
    >>> round(hbm_over_nvlink("b200_hgx"), 1)
    8.6
    """
    gpu = get_gpu(gpu_key)
    if not gpu.nvlink_bw_bytes_per_s or not gpu.mem_bw_bytes_per_s:
        raise GpucommError(f"GPU {gpu.key!r} lacks NVLink or memory bandwidth in the catalog: expected one of "
                           + ", ".join(k for k, g in GPUS.items() if g.nvlink_bw_bytes_per_s and g.mem_bw_bytes_per_s))
    return gpu.mem_bw_bytes_per_s / gpu.nvlink_bw_bytes_per_s


P100_B200_ARTICLE_SOURCE = ("'分布式的训练和推理中通信、nvlink和nvcc是什么？' (Communication, NVLink and nvcc in distributed "
                            "training and inference), CSDN, weixin_51097521, 2026-06-02 (no URL recorded)")
"""The Chinese article whose P100-to-B200 comparison :data:`P100_B200_ARTICLE_CLAIMS` holds."""
P100_B200_ARTICLE_CLAIMS: dict[str, float] = {
    "p100_tflops": 21.0,
    "b200_tflops": 4000.0,
    "pcie3_x16_gb_per_s": 32.0,
    "pcie5_x16_gb_per_s": 128.0,
    "claimed_compute_growth": 190.0,
    "claimed_pcie_growth": 4.0,
    "nvlink5_per_gpu_gb_per_s": 1800.0,
    "claimed_nvlink5_over_pcie5": 14.0,
}
"""The article's headline numbers, as printed (TFLOPS and GB/s as the article writes them; see
:data:`P100_B200_ARTICLE_SOURCE`). P100 "21 TFLOPS" is FP16 without tensor cores; the B200 "4000 TFLOPS" matches
no dense figure in the catalog (dense BF16 2,250, dense FP8 4,500); the GB/s are both directions added."""


def p100_b200_article_ratios() -> dict[str, float]:
    """The growth ratios of :data:`P100_B200_ARTICLE_SOURCE` recomputed from its own numbers.

    Returns
    -------
    dict
        ``compute`` (B200 / P100 TFLOPS), ``pcie`` (PCIe 5.0 / 3.0 x16) and ``nvlink5_over_pcie5``
        (1.8 TB/s over 128 GB/s), each as the article's figures give it.

    Examples
    --------
    >>> r = p100_b200_article_ratios()
    >>> round(r["compute"], 1), r["pcie"], round(r["nvlink5_over_pcie5"], 2)
    (190.5, 4.0, 14.06)
    """
    c = P100_B200_ARTICLE_CLAIMS
    return {"compute": c["b200_tflops"] / c["p100_tflops"],
            "pcie": c["pcie5_x16_gb_per_s"] / c["pcie3_x16_gb_per_s"],
            "nvlink5_over_pcie5": c["nvlink5_per_gpu_gb_per_s"] / c["pcie5_x16_gb_per_s"]}


def machine_balance_flops_per_byte(flops_per_s: float, bw_bytes_per_s: float) -> float:
    """FLOPs a GPU performs while one byte crosses its link: ``flops_per_s / bw_bytes_per_s``.

    Parameters
    ----------
    flops_per_s : float
        Peak compute rate, FLOP/s (> 0).
    bw_bytes_per_s : float
        Link bandwidth per direction, bytes/s (> 0).

    Returns
    -------
    float
        FLOP per byte. The larger it is, the more work each transferred byte must "carry" for
        the link to keep up.

    Raises
    ------
    GpucommError
        If either rate is not positive.

    References
    ----------
    The roofline's ridge point (Williams, Waterman, Patterson, "Roofline", CACM 52(4), 2009),
    with the interconnect in place of DRAM.

    Examples
    --------
    >>> machine_balance_flops_per_byte(989.4e12, 450e9)
    2198.666...
    """
    for name, value in (("compute rate", flops_per_s), ("bandwidth", bw_bytes_per_s)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
            raise GpucommError(f"{name} {value!r} is not valid: expected a positive finite number")
    return flops_per_s / bw_bytes_per_s


def generation_growth(first: str = "p100_sxm2", last: str = "b200_hgx", *, last_pcie_gen: int | None = None) -> dict[str, float]:
    """How much compute, NVLink and PCIe grew between two generations (ratios, last / first).

    Parameters
    ----------
    first, last : str
        GPU catalog keys of two entries of :data:`GENERATIONS`.
    last_pcie_gen : int, optional
        Override the PCIe generation of ``last`` (the CSDN article of :data:`P100_B200_ARTICLE_SOURCE` pairs B200 with PCIe 5.0).

    Returns
    -------
    dict
        ``compute``, ``nvlink``, ``pcie``: growth factors; ``compute_over_pcie`` and
        ``compute_over_nvlink``: how much faster compute grew than each link.

    Raises
    ------
    GpucommError
        Unknown generation or PCIe generation.

    Examples
    --------
    >>> g = generation_growth("p100_sxm2", "b200_hgx", last_pcie_gen=5)
    >>> round(g["compute"]), round(g["pcie"]), round(g["nvlink"], 2)
    (106, 4, 11.25)
    """
    a, b = get_generation(first), get_generation(last)
    b_pcie = get_pcie_gen(last_pcie_gen).x16_bytes_per_s if last_pcie_gen is not None else b.pcie_bw_bytes_per_s
    compute = b.compute_flops_per_s / a.compute_flops_per_s
    pcie = b_pcie / a.pcie_bw_bytes_per_s
    nvlink = b.nvlink_bw_bytes_per_s / a.nvlink_bw_bytes_per_s
    return {"compute": compute, "pcie": pcie, "nvlink": nvlink,
            "compute_over_pcie": compute / pcie, "compute_over_nvlink": compute / nvlink}


def amdahl_speedup(parallel_fraction: float, num_workers: int) -> float:
    """Amdahl's law: speed-up of work whose ``parallel_fraction`` spreads over ``num_workers``.

    Parameters
    ----------
    parallel_fraction : float
        Share ``p`` of the single-worker time that divides perfectly, 0 to 1.
    num_workers : int
        Workers ``n`` (GPUs), >= 1.

    Returns
    -------
    float
        ``1 / ((1 - p) + p / n)``.

    Raises
    ------
    GpucommError
        If ``p`` is outside [0, 1] or ``n`` is not a positive integer.

    References
    ----------
    G. M. Amdahl, "Validity of the single processor approach to achieving large scale computing
    capabilities", AFIPS Spring Joint Computer Conference, 1967.

    Examples
    --------
    >>> round(amdahl_speedup(0.95, 8), 2)
    5.93
    >>> amdahl_speedup(1.0, 8)
    8.0
    """
    p = _check_fraction(parallel_fraction)
    n = check_num_ranks(num_workers)
    return 1.0 / ((1.0 - p) + p / n)


def amdahl_limit(parallel_fraction: float) -> float:
    """Largest speed-up Amdahl's law allows with unlimited workers: ``1 / (1 - p)`` (inf for p = 1).

    Parameters
    ----------
    parallel_fraction : float
        The fraction ``p`` of the work that parallelises, in [0, 1].

    Returns
    -------
    float
        ``1 / (1 - p)``; ``inf`` for ``p = 1``.

    Raises
    ------
    GpucommError
        If ``p`` is outside [0, 1].

    Examples
    --------
    >>> round(amdahl_limit(0.95), 6)
    20.0
    """
    p = _check_fraction(parallel_fraction)
    return math.inf if p == 1.0 else 1.0 / (1.0 - p)


def _check_fraction(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise GpucommError(f"parallel fraction {value!r} is not valid: expected a number from 0 to 1")
    return float(value)


def tp_flops_per_wire_byte(model: str, *, tp_size: int, dtype: str = "bf16") -> float:
    """Communication intensity of Megatron tensor parallelism: FLOPs per byte each GPU sends.

    Per token and layer, each of the ``t`` GPUs does ``2 x layer_params / t`` FLOPs (one
    multiply-add per weight) and, for the layer's two all_reduces of ``hidden x bytes``, sends
    ``2 x 2(t-1)/t x hidden x bytes`` over its link per direction (ring busbw factor). The
    ratio does not depend on the number of tokens.

    Parameters
    ----------
    model : str
        Model preset (:data:`gpucomm.model.tp.MODELS`).
    tp_size : int
        TP degree, >= 2.
    dtype : str
        Activation dtype (bf16, fp16, fp8, fp32).

    Returns
    -------
    float
        FLOP per byte on the wire. Weight FLOPs only: attention scores add FLOPs that grow with
        the context, so real prefill intensity is higher (this is a lower bound).

    Raises
    ------
    GpucommError
        Unknown model or dtype; ``tp_size`` below 2.

    References
    ----------
    Shoeybi et al., "Megatron-LM", arXiv:1909.08053, sec. 3 (two all_reduces per layer);
    nccl-tests ``doc/PERFORMANCE.md`` (ring all_reduce moves ``2(n-1)/n`` of the buffer per link).

    Examples
    --------
    >>> round(tp_flops_per_wire_byte("llama-3-70b", tp_size=8))
    3730
    """
    cfg = get_model(model)
    t = check_num_ranks(tp_size, minimum=2)
    flops = 2 * layer_params(cfg) / t
    wire = ALL_REDUCES_PER_LAYER_FORWARD * busbw_factor("all_reduce", t) * cfg.hidden_size * dtype_bytes(dtype)
    return flops / wire


def link_busy_fraction(model: str, *, tp_size: int, flops_per_s: float, bw_bytes_per_s: float,
                       dtype: str = "bf16") -> float:
    """Time to send a TP layer's all_reduce bytes over the link / time to compute the layer, both at peak.

    ``machine balance / communication intensity``. Below 1 the link can, in principle, keep up
    with compute if the two overlap; above 1 the GPU waits on the link however well the software
    overlaps them. Peak rates, no efficiency factors, no latency: a best case.

    Parameters
    ----------
    model : str
        Model preset.
    tp_size : int
        TP degree, >= 2.
    flops_per_s : float
        Peak compute, FLOP/s.
    bw_bytes_per_s : float
        Link bandwidth per direction, bytes/s.
    dtype : str
        Activation dtype.

    Returns
    -------
    float
        Dimensionless ratio.

    Raises
    ------
    GpucommError
        As :func:`machine_balance_flops_per_byte` and :func:`tp_flops_per_wire_byte`.

    Examples
    --------
    Llama-3-70B at TP=8 on H100 over NVLink 4.0 (450 GB/s per direction):

    >>> round(link_busy_fraction("llama-3-70b", tp_size=8, flops_per_s=989.4e12, bw_bytes_per_s=450e9), 2)
    0.59
    """
    return machine_balance_flops_per_byte(flops_per_s, bw_bytes_per_s) / tp_flops_per_wire_byte(
        model, tp_size=tp_size, dtype=dtype)


def link_ratio(faster: str, slower: str) -> float:
    """Ratio of two catalog links' per-direction bandwidths (``faster / slower``).

    Both directions added gives the same ratio, as long as both figures are counted the same way.

    Parameters
    ----------
    faster, slower : str
        Link catalog keys (``nvlink5``, ``pcie5``).

    Returns
    -------
    float
        ``faster``'s per-direction bandwidth over ``slower``'s (dimensionless).

    Raises
    ------
    GpucommError
        Unknown link key.

    Examples
    --------
    >>> round(link_ratio("nvlink5", "pcie5"), 1)
    14.3
    """
    return get_link(faster).bw_bytes_per_s / get_link(slower).bw_bytes_per_s
