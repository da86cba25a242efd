"""Interconnect links: nominal per-GPU bandwidth per direction, each with its source.

Vendors quote bidirectional ("both directions added") figures: NVIDIA's "600 GB/s
NVLink" for A100 is 300 GB/s each way, and PCI-SIG's "64 GB/s PCIe 4.0 x16" is 31.5 GB/s
each way after 128b/130b encoding. The catalog stores the per-direction value in
``bw_bytes_per_s`` (the only one any formula uses) and keeps the marketing figure in
``bidir_marketing_bytes_per_s`` for reference (for PCIe, PCI-SIG's figure at the raw bit
rate: 128 GB/s for PCIe 5.0 x16, 126 GB/s both ways after the line code).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucomm.model.catalog import lookup
from gpucomm.model.units import GB


@dataclass(frozen=True)
class Link:
    """One interconnect as seen by one GPU.

    Attributes
    ----------
    key : str
        Short identifier used by the CLI and pages (``"nvlink3"``).
    name : str
        Human name (``"NVLink 3.0 (A100 SXM4, 12 links)"``).
    kind : str
        ``"nvlink"``, ``"pcie"`` or ``"network"``.
    bw_bytes_per_s : float
        Nominal bandwidth per GPU, per direction, in bytes/s (after line encoding,
        before packet/protocol overhead).
    bidir_marketing_bytes_per_s : float
        The vendor's both-directions figure, in bytes/s. Never used in a formula.
    year : int
        Year of the first product or specification.
    source : str
        URL of the primary (or best available) source for the numbers.
    notes : str
        How the number is derived (lanes x rate x encoding, links x per-link rate).
    """

    key: str
    name: str
    kind: str
    bw_bytes_per_s: float
    bidir_marketing_bytes_per_s: float
    year: int
    source: str
    notes: str


def _pcie_x16(gen: str, gt_per_s: float, encoding: float, year: int, source: str, extra: str = "") -> Link:
    # usable rate per lane per direction = GT/s x encoding efficiency / 8 bits; x16 lanes
    per_dir = gt_per_s * 1e9 * encoding / 8 * 16
    # PCI-SIG quotes PCIe 3.0 and later at the raw bit rate, both directions (PCIe 5.0: "32 GT/s raw bit rate
    # and up to 128 GB/s via x16"; see gpucomm.model.hardware.pcie._PCISIG_RELEASES)
    marketed = 2 * gt_per_s * 1e9 / 8 * 16
    return Link(
        key=f"pcie{gen.split('.')[0]}",
        name=f"PCIe {gen} x16",
        kind="pcie",
        bw_bytes_per_s=per_dir,
        bidir_marketing_bytes_per_s=marketed,
        year=year,
        source=source,
        notes=f"{gt_per_s:g} GT/s per lane x {encoding:.4g} line-code efficiency / 8 bits x 16 lanes, per direction. {extra}".strip(),
    )


_KERNEL_PCI_H = "https://github.com/torvalds/linux/blob/master/drivers/pci/pci.h"  # PCIE_SPEED2MBS_ENC: line codes per rate

_LINK_LIST = (
    _pcie_x16("3.0", 8.0, 128 / 130, 2010, _KERNEL_PCI_H, "128b/130b encoding (Linux PCIE_SPEED2MBS_ENC); 15.75 GB/s."),
    _pcie_x16("4.0", 16.0, 128 / 130, 2017, _KERNEL_PCI_H, "128b/130b encoding (Linux PCIE_SPEED2MBS_ENC); 31.5 GB/s. Ada GeForce (RTX 4090) and A100 PCIe use it."),  # noqa: E501
    _pcie_x16("5.0", 32.0, 128 / 130, 2019, _KERNEL_PCI_H,
              "128b/130b encoding; 63 GB/s. NVIDIA H100/H200 datasheets quote 'PCIe Gen5: 128GB/s', PCI-SIG's figure: "
              "both directions added, at the raw bit rate."),
    _pcie_x16("6.0", 64.0, 1.0, 2022, "https://lore.kernel.org/r/20240102172701.65501-1-ilpo.jarvinen@linux.intel.com",
              "FLIT mode, no 128b/130b (PCIe r6.1 sec 1.2, Table 1-1, as fixed in Linux commit ac4f1897); 128 GB/s raw, ~118 GB/s of TLP bytes, headers included (236 of 256 flit bytes)."),  # noqa: E501
    Link("nvlink1", "NVLink 1.0 (P100 SXM2, 4 links)", "nvlink", 80 * GB, 160 * GB, 2016,
         "https://images.nvidia.com/content/pdf/tesla/whitepaper/pascal-architecture-whitepaper.pdf",
         "4 links x 20 GB/s per direction (8 lanes x 20 Gb/s)."),
    Link("nvlink2", "NVLink 2.0 (V100 SXM2, 6 links)", "nvlink", 150 * GB, 300 * GB, 2017,
         "https://www.nvidia.com/en-us/data-center/nvlink/",
         "6 links x 25 GB/s per direction; NVIDIA: 'up to six NVLink connections and total bandwidth of 300 GB/sec' (both directions)."),
    Link("nvlink3", "NVLink 3.0 (A100 SXM4, 12 links)", "nvlink", 300 * GB, 600 * GB, 2020,
         "https://www.nvidia.com/de-de/data-center/nvlink/",
         "12 links x 25 GB/s per direction (4 lanes x 50 Gb/s); NVIDIA's '600 GB/s' adds both directions."),
    Link("nvlink4", "NVLink 4.0 (H100/H200 SXM5, 18 links)", "nvlink", 450 * GB, 900 * GB, 2022,
         "https://www.nvidia.com/en-sg/technologies/hopper-architecture/",
         "18 links x 25 GB/s per direction (2 lanes x ~100 Gb/s PAM4); NVIDIA: '900 gigabytes/second (GB/s) bi-directional per GPU'."),
    Link("nvlink5", "NVLink 5.0 (B200/GB200, 18 links)", "nvlink", 900 * GB, 1800 * GB, 2024,
         "https://www.nvidia.com/en-au/data-center/nvlink/",
         "18 links x 50 GB/s per direction; NVIDIA: '18 NVLink 100 gigabyte-per-second (GB/s) connections ... 1.8 terabytes per second' (both directions)."),  # noqa: E501
)

LINKS: dict[str, Link] = {link.key: link for link in _LINK_LIST}
"""All links by key."""


NVLINK_C2C = Link(
    "nvlink_c2c", "NVLink-C2C (Grace Hopper: Grace CPU to H100/H200)", "c2c", 450 * GB, 900 * GB, 2023,
    "https://developer.nvidia.com/blog/nvidia-grace-hopper-superchip-architecture-in-depth/",
    "Chip-to-chip link between the Grace CPU and its GPU: 'memory coherent NVLink-C2C', 900 GB/s total, 450 GB/s per "
    "direction (per-direction split [C] in a copy of the blog). It joins a GPU to its CPU, not GPUs to each other, so "
    "it is kept out of LINKS (the collective cost model's GPU-to-GPU links). Compare PCIe 5.0 x16: 63 GB/s per direction.")
"""The CPU-GPU link of Grace Hopper (hardware-coherent, unlike NVLink between GPUs)."""


def link_keys() -> tuple[str, ...]:
    """Keys of every link in the catalog, in catalog order.

    Returns
    -------
    tuple of str
        The keys of :data:`LINKS` (``"pcie3"`` ... ``"nvlink5"``).
    """
    return tuple(LINKS)


def get_link(key: str | Link) -> Link:
    """Look up a link by key (case-insensitive); a :class:`Link` is returned unchanged.

    Parameters
    ----------
    key : str or Link
        Key of :data:`LINKS` (``"nvlink3"``, ``"pcie4"``), or an entry.

    Returns
    -------
    Link
        The catalog entry (bandwidths per direction, in bytes/s).

    Raises
    ------
    GpucommError
        If the key is unknown; the message lists the accepted keys.

    Examples
    --------
    >>> get_link("nvlink3").bw_bytes_per_s / 1e9
    300.0
    >>> round(get_link("pcie4").bw_bytes_per_s / 1e9, 2)
    31.51
    """
    return lookup(LINKS, key, what='link', entry_type=Link)
