"""PCI Express generations 1.0-7.0, and the host-side hops GPU traffic takes over PCIe.

Usable rate per lane and direction = transfer rate x line-code efficiency / 8 bits. That is
*before* packet (TLP/DLLP) overhead, which costs a further ~10-15 % in practice (see
:data:`gpucomm.model.hardware.calibration.PCIE_P2P_EFFICIENCY`). PCI-SIG and NVIDIA quote x16 links
with both directions added and, from PCIe 3.0 on, at the raw bit rate before the 128b/130b line
code ("PCIe 5.0 x16 = 128 GB/s", 63.0 GB/s each way after it); here that figure only lives in
``x16_bidir_marketing_bytes_per_s``.

The x16 values agree with the ``pcie3``...``pcie6`` entries of :mod:`gpucomm.model.hardware.links`
(checked by ``tests/model/test_catalog.py``).

The inter-socket link (Intel QPI/UPI, AMD Infinity Fabric/xGMI) that a ``SYS`` path crosses is
in :data:`INTER_SOCKET_LINKS`: per CPU family, the per-direction figure NCCL's topology code
assigns to it, and a published GPU-to-GPU measurement across the sockets where one exists (no
vendor publishes a sustained GPU-traffic rate for it).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucomm import GpucommError
from gpucomm.model.catalog import lookup
from gpucomm.model.hardware.links import Link

LANE_COUNTS = (1, 2, 4, 8, 16)
"""Link widths accepted by :func:`pcie_bw_bytes_per_s`."""

# Linux PCIE_SPEED2MBS_ENC gives the line code for every rate, 2.5 to 128 GT/s:
# x 8/10 (2.5, 5 GT/s), x 128/130 (8, 16, 32 GT/s), x 1/1 (64, 128 GT/s, flit mode).
_KERNEL_PCI_H = "https://github.com/torvalds/linux/blob/master/drivers/pci/pci.h"
_KERNEL_FLIT_FIX = "https://lore.kernel.org/r/20240102172701.65501-1-ilpo.jarvinen@linux.intel.com"
_NCCL_TOPO_H = "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.h"
_NCCL_TOPO_CC = "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc"
# NCCL's per-generation AMD figures: on the dev branch only, in no release up to v2.30.7-1
_NCCL_DEV_AMD = "https://github.com/NVIDIA/nccl/commit/2f1c174c4bdf12383b4e1ad01bd62d429d1301dc"
_NCCL_GPU_TROUBLESHOOTING = (
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/docs/userguide/source/troubleshooting/gpu_troubleshooting.rst")


@dataclass(frozen=True)
class PCIeGen:
    """One PCI Express generation.

    Attributes
    ----------
    gen : int
        Major version, 1 to 7.
    name : str
        ``"PCIe 5.0"``.
    lane_transfers_per_s : float
        Raw transfer rate per lane, in transfers/s (32e9 for 32 GT/s).
    encoding : str
        Line code: ``"8b/10b"``, ``"128b/130b"`` or ``"flit (1b/1b)"``.
    encoding_efficiency : float
        Fraction of transferred bits that carry data after the line code (0.8, 128/130, 1).
    signalling : str
        ``"NRZ"`` or ``"PAM4"``.
    lane_bw_bytes_per_s : float
        Usable bandwidth per lane, per direction, in bytes/s (after the line code, before
        packet overhead).
    flit_tlp_fraction : float or None
        For flit-mode generations, the share of flit bytes that carries TLPs, headers included
        (236 of 256 for PCIe 6.0; the rest is data-link payload, CRC and FEC): an upper bound on the
        payload share, which TLP headers reduce further. None where not applicable or not sourced.
    year : int
        Year the specification was released.
    source : str
        URL of the most primary source for the rate and the line code.
    notes : str
        Derivation, source tags ([V]/[C]/[U], see the project's fact sheet) and caveats.
    """

    gen: int
    name: str
    lane_transfers_per_s: float
    encoding: str
    encoding_efficiency: float
    signalling: str
    lane_bw_bytes_per_s: float
    flit_tlp_fraction: float | None
    year: int
    source: str
    notes: str

    def bw_bytes_per_s(self, lanes: int) -> float:
        """Usable bandwidth of a link with ``lanes`` lanes, per direction, in bytes/s.

        Parameters
        ----------
        lanes : int
            Link width, one of :data:`LANE_COUNTS` (1, 2, 4, 8, 16).

        Returns
        -------
        float
            ``lanes x lane_bw_bytes_per_s`` (after the line code, before packet overhead; line codes
            from Linux ``drivers/pci/pci.h``, ``PCIE_SPEED2MBS_ENC``).

        Raises
        ------
        GpucommError
            If ``lanes`` is not an int in :data:`LANE_COUNTS` (a bool is refused).
        """
        return self.lane_bw_bytes_per_s * _check_lanes(lanes)

    @property
    def x1_bytes_per_s(self) -> float:
        """x1 bandwidth per direction, bytes/s."""
        return self.bw_bytes_per_s(1)

    @property
    def x4_bytes_per_s(self) -> float:
        """x4 bandwidth per direction, bytes/s."""
        return self.bw_bytes_per_s(4)

    @property
    def x8_bytes_per_s(self) -> float:
        """x8 bandwidth per direction, bytes/s."""
        return self.bw_bytes_per_s(8)

    @property
    def x16_bytes_per_s(self) -> float:
        """x16 bandwidth per direction, bytes/s."""
        return self.bw_bytes_per_s(16)

    @property
    def x16_bidir_marketing_bytes_per_s(self) -> float:
        """x16 with both directions added, as PCI-SIG markets it, bytes/s: 8, 16, 32, 64, 128, 256, 512 GB/s.

        PCI-SIG counts the 8b/10b generations after the line code (x16 = 4 GB/s per direction for
        PCIe 1.0, "numbers double for duplex", :data:`_INTEL_FPGA`) and the later ones at the raw bit
        rate: "32 GT/s raw bit rate and up to 128 GB/s via x16" (PCIe 5.0), "128.0 GT/s raw bit rate
        and up to 512 GB/s bi-directionally via x16" (PCIe 7.0) (:data:`_PCISIG_RELEASES`). For
        128b/130b generations it is therefore 130/128 of twice :attr:`x16_bytes_per_s`. Never use in
        a formula.

        Examples
        --------
        >>> [round(get_pcie_gen(g).x16_bidir_marketing_bytes_per_s / 1e9, 1) for g in (1, 3, 5, 6)]
        [8.0, 32.0, 128.0, 256.0]
        >>> round(2 * get_pcie_gen(5).x16_bytes_per_s / 1e9, 1)  # both directions after the line code
        126.0
        """
        marketed_efficiency = self.encoding_efficiency if self.encoding == "8b/10b" else 1.0
        return 2 * 16 * self.lane_transfers_per_s * marketed_efficiency / 8  # bits -> bytes, 16 lanes, 2 directions


def _gen(gen: int, gt_per_s: float, encoding: str, efficiency: float, signalling: str, year: int,
         source: str, notes: str, flit_tlp_fraction: float | None = None) -> PCIeGen:
    transfers = gt_per_s * 1e9
    return PCIeGen(gen=gen, name=f"PCIe {gen}.0", lane_transfers_per_s=transfers, encoding=encoding,
                   encoding_efficiency=efficiency, signalling=signalling,
                   lane_bw_bytes_per_s=transfers * efficiency / 8,  # bits -> bytes, per direction
                   flit_tlp_fraction=flit_tlp_fraction, year=year, source=source, notes=notes)


_YEAR_NOTE = "Spec year [U] https://pcisig.com/specifications (not re-read)."
_PCISIG_RELEASES = (
    "PCI-SIG's own figures for x16, both directions added, at the raw bit rate: PCIe 5.0 'Delivers 32 GT/s raw bit "
    "rate and up to 128 GB/s via x16 configuration' (PCI-SIG release of May 2019 [C], copy "
    "https://firmwaresecurity.com/2019/05/31/pcie-5-0-spec-released/); PCIe 7.0 '128.0 GT/s raw bit rate and up to "
    "512 GB/s bi-directionally via x16' [C] https://en.memorys.com/news/view?id=14461 ; primary "
    "https://pcisig.com/specifications [U].")
"""Where PCI-SIG's x16 figures (:attr:`PCIeGen.x16_bidir_marketing_bytes_per_s`) come from."""
_INTEL_FPGA = "https://intel.com/content/www/us/en/docs/programmable/683111/23-4/avalon-st-interface-with-optional-sr.html"

PCIE_GENS: dict[int, PCIeGen] = {g.gen: g for g in (
    _gen(1, 2.5, "8b/10b", 8 / 10, "NRZ", 2003, _KERNEL_PCI_H,
         f"Line code [V] Linux PCIE_SPEED2MBS_ENC. x16 = 4 GB/s per direction ('32 Gbps', 'numbers double for duplex') "
         f"[V] {_INTEL_FPGA}. Year is the 1.0a revision. {_YEAR_NOTE}"),
    _gen(2, 5.0, "8b/10b", 8 / 10, "NRZ", 2007, _KERNEL_PCI_H,
         f"Line code [V] Linux PCIE_SPEED2MBS_ENC. x16 = 8 GB/s per direction [V] {_INTEL_FPGA}. {_YEAR_NOTE}"),
    _gen(3, 8.0, "128b/130b", 128 / 130, "NRZ", 2010, _KERNEL_PCI_H,
         f"Line code [V] Linux PCIE_SPEED2MBS_ENC. x16 = 15.75 GB/s per direction (Intel: '126 Gbps') [V] {_INTEL_FPGA}. "
         f"{_YEAR_NOTE}"),
    _gen(4, 16.0, "128b/130b", 128 / 130, "NRZ", 2017, _KERNEL_PCI_H,
         f"Line code [V] Linux PCIE_SPEED2MBS_ENC. x16 = 31.5 GB/s per direction, marketed as 64 GB/s "
         f"(both directions, raw bit rate). {_YEAR_NOTE}"),
    _gen(5, 32.0, "128b/130b", 128 / 130, "NRZ", 2019, _KERNEL_PCI_H,
         "Line code [V] Linux PCIE_SPEED2MBS_ENC. x16 = 63.0 GB/s per direction; NVIDIA H100/H200 datasheets say "
         "'PCIe Gen5: 128GB/s' (both directions, raw bit rate, as PCI-SIG counts it; 126 GB/s after the line code) [C] "
         "https://glennklockwood.com/garden/processors/h100 . Measured "
         "host-to-device on 8x H200: 55.4 GB/s = 88 % (packet overhead) [C] "
         f"https://github.com/stas00/ml-engineering/blob/master/network/README.md . {_YEAR_NOTE}"),
    _gen(6, 64.0, "flit (1b/1b)", 1.0, "PAM4", 2022, _KERNEL_FLIT_FIX,
         "Flit mode, no 128b/130b: Linux commit ac4f1897 fixed 64 GT/s to 1/1 citing 'PCIe r6.1 sec 1.2, Table 1-1' [V] "
         "(the kernel had 128/130 until 2024). x16 = 128 GB/s raw per direction, ~118 GB/s of TLP bytes (headers "
         "included, so less payload): a 256-byte flit carries 236 B TLP + 6 B DLP + 8 B CRC + 6 B FEC [C] https://glennklockwood.com/garden/PCIe-Gen6 . PCI-SIG's "  # noqa: E501
         "256 GB/s adds both directions. Finalised January 2022 [C] https://hi-tech.ua/en/pci-express-7-0-specs-already-published/",
         flit_tlp_fraction=236 / 256),
    _gen(7, 128.0, "flit (1b/1b)", 1.0, "PAM4", 2025, _KERNEL_PCI_H,
         "Line code [V] Linux PCIE_SPEED2MBS_ENC (128 GT/s x 1/1). PCI-SIG: '128.0 GT/s raw bit rate and up to 512 GB/s "
         "bi-directionally via x16' [C] primary https://pcisig.com/specifications , copies https://en.memorys.com/news/view?id=14461 "
         "and https://www.tweaktown.com/news/104110/ ; final spec June 2025 [C] "
         "https://hi-tech.ua/en/pci-express-7-0-specs-already-published/ . Flit TLP share not in the fact sheet: left None."),
)}
"""PCIe generations by major version (1 to 7)."""


def _check_lanes(lanes: int) -> int:
    if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes not in LANE_COUNTS:
        raise GpucommError(f"PCIe lane count {lanes!r} is not valid: expected one of {', '.join(map(str, LANE_COUNTS))}")
    return lanes


def get_pcie_gen(gen: int | str | PCIeGen) -> PCIeGen:
    """Look up a PCIe generation: ``5``, ``"5"``, ``"5.0"``, ``"gen5"`` or ``"pcie5"``.

    Parameters
    ----------
    gen : int or str or PCIeGen
        Generation 1 to 7 in any of those spellings, or an entry (returned unchanged).

    Returns
    -------
    PCIeGen
        The entry of :data:`PCIE_GENS`.

    Raises
    ------
    GpucommError
        If the generation is unknown; the message lists the accepted ones.

    Examples
    --------
    >>> get_pcie_gen("4.0").encoding
    '128b/130b'
    >>> get_pcie_gen(6).lane_bw_bytes_per_s / 1e9
    8.0
    """
    if isinstance(gen, PCIeGen):
        return gen
    text = str(gen).strip().lower().removeprefix("pcie").removeprefix("gen").strip()
    text = text[:-2] if text.endswith(".0") else text
    found = PCIE_GENS.get(int(text)) if text.isdigit() and not isinstance(gen, bool) else None
    if found is None:
        raise GpucommError(f"unknown PCIe generation {gen!r}: expected one of {', '.join(map(str, PCIE_GENS))}")
    return found


def pcie_bw_bytes_per_s(gen: int | str | PCIeGen, lanes: int = 16) -> float:
    """Usable PCIe bandwidth per direction, in bytes/s.

    Parameters
    ----------
    gen : int or str or PCIeGen
        Generation, 1 to 7 (``5``, ``"5.0"``, ``"gen5"``...).
    lanes : int
        Link width: 1, 2, 4, 8 or 16.

    Returns
    -------
    float
        Bandwidth per direction in bytes/s, after the line code and before packet overhead.

    Raises
    ------
    GpucommError
        If the generation or the lane count is not valid.

    Notes
    -----
    ``lanes x transfers/s x encoding efficiency / 8``. Both directions run at this rate at once.

    References
    ----------
    Linux ``drivers/pci/pci.h``, macro ``PCIE_SPEED2MBS_ENC`` (line code per rate).

    Examples
    --------
    >>> round(pcie_bw_bytes_per_s(5, 16) / 1e9, 2)
    63.02
    >>> round(pcie_bw_bytes_per_s("4.0", lanes=4) / 1e9, 2)
    7.88
    """
    return get_pcie_gen(gen).bw_bytes_per_s(lanes)


# --- host-path hops -------------------------------------------------------------------------

INTEL_P2P_OVERHEAD = 6 / 5
"""NCCL's factor for GPU-to-GPU P2P through an Intel CPU root complex: traffic becomes 64-byte
TLPs, so a transfer consumes ``bw * 6/5`` of the PCIe link (``INTEL_P2P_OVERHEAD`` in NCCL
``src/graph/topo.h``, applied on PATH_PHB paths through an x86 Intel CPU)."""


def _switch_hop(gen: PCIeGen) -> Link:
    x16 = gen.x16_bytes_per_s
    return Link(
        key=f"pcie{gen.gen}_switch", name=f"{gen.name} switch uplink (x16)", kind="pcie",
        bw_bytes_per_s=x16, bidir_marketing_bytes_per_s=gen.x16_bidir_marketing_bytes_per_s, year=gen.year,
        source=gen.source,
        notes=(f"GPU-to-GPU P2P behind a PCIe switch (nvidia-smi PIX/PXB) stays below the CPU: NCCL sends direct "
               f"peer-to-peer PCI messages and uses P2P up to PXB by default [V] {_NCCL_GPU_TROUBLESHOOTING} . "
               f"Rate = the x16 rate of {gen.name}, assuming an x16 uplink; for a narrower one use "
               f"pcie_bw_bytes_per_s(gen, lanes)."))


def _root_complex_hop(gen: PCIeGen) -> Link:
    x16 = gen.x16_bytes_per_s
    return Link(
        key=f"pcie{gen.gen}_cpu_p2p", name=f"{gen.name} x16 P2P through an Intel CPU root complex", kind="pcie",
        bw_bytes_per_s=x16 / INTEL_P2P_OVERHEAD, bidir_marketing_bytes_per_s=gen.x16_bidir_marketing_bytes_per_s,
        year=gen.year,
        source=_NCCL_TOPO_H,
        notes=(f"NCCL models P2P across an Intel x86 root complex (path PHB) as costing bw*6/5 of the PCIe link "
               f"(INTEL_P2P_OVERHEAD, 'Intel CPU convert GPU P2P traffic into 64B PCI TLPs') [V], so the usable rate "
               f"is the x16 rate / 1.2. The bidir field is PCI-SIG's figure for the physical x16 link "
               f"(both directions, raw bit rate), so here bw_bytes_per_s is 5/6 of the per-direction rate after the "
               f"line code. NCCL applies no such factor for other CPU vendors. With "
               f"ACS/IOMMU on, P2P is redirected to the root complex even behind a switch [V] "
               f"{_NCCL_GPU_TROUBLESHOOTING} ."))


HOST_HOPS: dict[str, Link] = {
    hop.key: hop
    for gen in (PCIE_GENS[3], PCIE_GENS[4], PCIE_GENS[5])
    for hop in (_switch_hop(gen), _root_complex_hop(gen))
}
"""Host-side PCIe hops as :class:`~gpucomm.model.hardware.links.Link` entries, by key
(``"pcie4_switch"``, ``"pcie4_cpu_p2p"``...), for PCIe generations 3 to 5."""


def get_host_hop(key: str | Link) -> Link:
    """Look up a host-path hop by key (case-insensitive); a :class:`Link` is returned unchanged.

    Parameters
    ----------
    key : str or Link
        Key of :data:`HOST_HOPS` (``"pcie4_switch"``, ``"pcie4_cpu_p2p"``...), or a link.

    Returns
    -------
    Link
        The hop, bandwidth per direction in bytes/s.

    Raises
    ------
    GpucommError
        If the key is unknown; the message lists the accepted keys.

    Examples
    --------
    >>> round(get_host_hop("pcie5_switch").bw_bytes_per_s / 1e9, 2)
    63.02
    >>> round(get_host_hop("pcie5_cpu_p2p").bw_bytes_per_s / 1e9, 2)
    52.51
    """
    return lookup(HOST_HOPS, key, what='host hop', entry_type=Link)


# --- the inter-socket hop -------------------------------------------------------------------

_RTX6KPRO = ("https://github.com/voipmonitor/rtx6kpro/blob/070506ff96a20039f71a067adcb250e8fe3414f8/hardware/"
             "pcie-bandwidth.md")


@dataclass(frozen=True)
class InterSocketLink:
    """The link between the two CPU sockets of a server, as GPU traffic that crosses it sees it.

    Attributes
    ----------
    key : str
        ``"upi_skylake"``, ``"xgmi_zen5"``...
    name : str
        CPU family and link name.
    nccl_bw_bytes_per_s : float
        NCCL's figure for this CPU family, per direction, in bytes/s: the weight its topology
        search gives the link between two CPU (NUMA) nodes (``src/graph/topo.h``, chosen in
        ``ncclTopoGetInterCpuBw``). A planning figure, not a datasheet rate.
    measured_bw_bytes_per_s : float or None
        Published GPU-to-GPU P2P bandwidth across the two sockets of such a host, per direction
        while both directions run (a ring sends both ways at once), in bytes/s; None where no
        measurement is public.
    source : str
        URL of the measurement if there is one, else of NCCL's ``topo.h``.
    notes : str
        Where each figure comes from.
    """

    key: str
    name: str
    nccl_bw_bytes_per_s: float
    measured_bw_bytes_per_s: float | None
    source: str
    notes: str

    @property
    def bw_bytes_per_s(self) -> float:
        """The figure the cost model bounds a ring with: the measurement where one exists, else NCCL's."""
        return self.measured_bw_bytes_per_s or self.nccl_bw_bytes_per_s


def _socket_link(key: str, name: str, macro: str, gb_per_s: float, cpus: str = "",
                 measured_gb_per_s: float | None = None, measured_source: str = "", measured: str = "") -> InterSocketLink:
    nccl = (f"NCCL v2.30.7-1: #define {macro} {gb_per_s} (GB/s) in {_NCCL_TOPO_H} [V], chosen by CPU vendor and "
            f"model in ncclTopoGetInterCpuBw ({_NCCL_TOPO_CC}) [V]; NCCL joins every pair of CPU (NUMA) nodes with a "
            f"LINK_SYS of this bandwidth. {cpus}")
    return InterSocketLink(
        key=key, name=name, nccl_bw_bytes_per_s=gb_per_s * 1e9,
        measured_bw_bytes_per_s=None if measured_gb_per_s is None else measured_gb_per_s * 1e9,
        source=measured_source or _NCCL_TOPO_H,
        notes=(f"Measured: {measured} " if measured else "No public GPU-to-GPU measurement across the sockets: "
               "the model uses NCCL's planning figure. ") + nccl)


_ROME_P2P = ("https://github.com/charlie0129/blog/blob/88e88783559e54d7a24c8301002de1e5cae66002/content/post/"
             "rtx4090-p2p-unlocked/index.md")

_AMD_NOTE = ("Every released NCCL, up to v2.30.7-1, gives all AMD CPUs the same AMD_BW; per-generation values "
             f"(AMD_ZEN12_BW 16, AMD_ZEN34_BW 24, AMD_ZEN5_BW 32 GB/s) exist only on NCCL's dev branch ({_NCCL_DEV_AMD}, "
             "2026-03-31) [V].")

INTER_SOCKET_LINKS: dict[str, InterSocketLink] = {link.key: link for link in (
    _socket_link("qpi_broadwell", "Intel QPI (Broadwell and older Xeon)", "BDW_QPI_BW", 6.0,
                 "Used for every Intel x86 model NCCL does not recognise as Skylake, Sapphire or Emerald Rapids."),
    _socket_link("upi_skylake", "Intel UPI (Skylake to Ice Lake Xeon)", "SKL_QPI_BW", 10.0,
                 "What NCCL prints for a SYS path on such hosts, e.g. 'CPU/0-0 (3/10.0/SYS)' in "
                 "https://github.com/NVIDIA/nccl-tests/issues/307 ."),
    _socket_link("upi_sapphire_rapids", "Intel UPI 2.0 (Sapphire Rapids Xeon)", "SRP_QPI_BW", 22.0),
    _socket_link("upi_emerald_rapids", "Intel UPI 2.0 (Emerald Rapids Xeon)", "ERP_QPI_BW", 40.0),
    _socket_link("xgmi_zen2", "AMD Infinity Fabric / xGMI (EPYC Naples, Rome: Zen 1-2)", "AMD_BW", 16.0,
                 "DGX A100 has two EPYC 7742 (Rome) sockets. " + _AMD_NOTE,
                 measured_gb_per_s=21.0, measured_source=_ROME_P2P,
                 measured="dual EPYC 7542 (Rome), 8x RTX 4090 with a P2P-enabled driver: cudaMemcpyPeer across the "
                          "sockets 20-22 GB/s each way (25 GB/s within a socket), so at least 21 GB/s [C] "
                          "(charlie0129, 'RTX4090 GPUDirect P2P Unlocked!', 2025-02-07); a PCIe 4.0 GPU may be the "
                          "limit there rather than the socket link."),
    _socket_link("xgmi_zen4", "AMD Infinity Fabric / xGMI (EPYC Milan, Genoa: Zen 3-4)", "AMD_BW", 16.0, _AMD_NOTE,
                 measured_gb_per_s=32.0, measured_source=_RTX6KPRO,
                 measured="dual EPYC 9374F (Genoa), RTX PRO 6000: cross-NUMA P2P ~64 GB/s bidirectional, so 32 GB/s "
                          "each way (~39 GB/s one way alone) [C]."),
    _socket_link("xgmi_zen5", "AMD Infinity Fabric / xGMI (EPYC Turin: Zen 5)", "AMD_BW", 16.0, _AMD_NOTE,
                 measured_gb_per_s=47.5, measured_source=_RTX6KPRO,
                 measured="dual EPYC Turin hosts with RTX PRO 6000: cross-NUMA P2P ~95-99 GB/s bidirectional (ASUS "
                          "ESC8000A-E13P ~95, another dual Turin ~99), so at least 47.5 GB/s each way [C]; on a dual "
                          "EPYC 9575F host every cross-socket pair of RTX 5090 reaches ~111 GB/s bidirectional "
                          "(https://github.com/aikitoria/open-gpu-kernel-modules/blob/"
                          "08dc34555bf8cdacdd89237da42419e6ce5efdc4/README.md). NCCL's figure is well below both."),
)}
"""The link between the two sockets of a server, by key (``"upi_skylake"``, ``"xgmi_zen5"``...)."""


def get_inter_socket_link(key: str | InterSocketLink) -> InterSocketLink:
    """Look up an inter-socket link by key (case-insensitive); an entry is returned unchanged.

    Parameters
    ----------
    key : str or InterSocketLink
        Key of :data:`INTER_SOCKET_LINKS` (``"upi_skylake"``...), or an entry.

    Returns
    -------
    InterSocketLink
        The entry (bandwidths per direction, in bytes/s).

    Raises
    ------
    GpucommError
        If the key is unknown; the message lists the accepted keys.

    Examples
    --------
    >>> get_inter_socket_link("upi_skylake").bw_bytes_per_s / 1e9
    10.0
    >>> link = get_inter_socket_link("xgmi_zen5")
    >>> link.nccl_bw_bytes_per_s / 1e9, link.bw_bytes_per_s / 1e9
    (16.0, 47.5)
    """
    return lookup(INTER_SOCKET_LINKS, key, what="inter-socket link", entry_type=InterSocketLink)
