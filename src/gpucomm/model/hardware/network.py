"""Scale-out network ports: InfiniBand EDR-XDR and Ethernet (RoCE) 100-800 GbE, with sources.

Network rates are quoted in bits per second per port and direction: a "400 Gb/s" NDR port moves
400e9 / 8 = 50e9 bytes/s each way, at the same time. ``bw_bytes_per_s`` is that per-direction
value, the only one a formula should use. Line rates with coding overhead (e.g. 106.25 Gb/s per
NDR lane) are kept in notes. Roadmap speeds (InfiniBand GDR/LDR, 1.6/3.2 Tb/s) are left out:
the fact sheet has them only from an unchecked roadmap page.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucomm.model.catalog import lookup
from gpucomm.model.hardware.calibration import NET_PLUGIN_LATENCY_S

_WINOF2 = ("https://docs.nvidia.com/networking/display/NVIDIAWinOF2Documentationv25750000/"
           "Supported+Network+Adapter+Cards+and+MFT+Tools")
_CX8_FW = ("https://docs.nvidia.com/networking/display/connectx8firmwarev40441036/"
           "changes+and+new+feature+history")
_ETH_MIRROR = "https://hyperlinked.wiki/wiki.php?slug=Terabit_Ethernet"
_NIC_NOTE = f"NIC speed support (CX-5 EDR/100GbE, CX-6 HDR/200GbE, CX-7 NDR/400GbE, CX-8 XDR/800GbE) [V] {_WINOF2} ."


@dataclass(frozen=True)
class NetworkLink:
    """One scale-out port type (a NIC port and the switch port it plugs into).

    Attributes
    ----------
    key : str
        Short identifier (``"ib_ndr"``, ``"eth_400g"``).
    name : str
        Human name.
    kind : str
        ``"infiniband"`` or ``"ethernet"`` (RDMA over Ethernet is RoCE).
    port_bits_per_s : float
        Data rate of the port, per direction, in bits/s (400e9 for NDR).
    bw_bytes_per_s : float
        The same per direction in bytes/s (``port_bits_per_s / 8``).
    lanes : int or None
        Lanes per port (4 for an InfiniBand 4x port); None where the fact sheet does not fix it.
    lane_bits_per_s : float or None
        Data rate per lane, bits/s.
    typical_nic : str
        The NVIDIA ConnectX generation usually paired with this speed.
    year : int or None
        Year of the standard; None where the fact sheet gives none.
    standard : str
        Name of the specification.
    source : str
        URL of the most primary source for the rate.
    notes : str
        Tags ([V]/[C]/[U]), secondary URLs, line rates, caveats.
    latency_s : float
        Extra latency per network step that the transport's NCCL net plugin reports (``ncclNetProperties.latency``,
        NCCL's ``latencyInter``): 0 for the InfiniBand/RoCE verbs and socket transports, which leave it unset
        (``props->latency = 0`` in ``src/transport/net_ib.cc`` at v2.30.7-1). A fit where a transport is slower: the
        model then reads the calibration's value (:data:`~gpucomm.model.hardware.calibration.NET_PLUGIN_LATENCY_S`).
    net_device : str
        ``"host"``, or ``"unpack"`` for GPUDirect-TCPX/TCPXO (NCCL doubles the channels below 16, ``connect.cc``).
    """

    key: str
    name: str
    kind: str
    port_bits_per_s: float
    bw_bytes_per_s: float
    lanes: int | None
    lane_bits_per_s: float | None
    typical_nic: str
    year: int | None
    standard: str
    source: str
    notes: str
    latency_s: float = 0.0
    net_device: str = "host"

    @property
    def roce(self) -> bool:
        """RDMA verbs over Ethernet (RoCE): an Ethernet port whose transport adds no latency of its own (GPUDirect-TCPXO,
        a TCP stack on the host, does)."""
        return self.kind == "ethernet" and self.latency_s == 0 and self.net_device == "host"


def _port(key, name, kind, port_gbit, *, lanes=None, typical_nic, year=None, standard, source, notes, latency_s=0.0,
          net_device="host") -> NetworkLink:
    bits = port_gbit * 1e9
    return NetworkLink(key=key, name=name, kind=kind, port_bits_per_s=bits, bw_bytes_per_s=bits / 8,  # bits -> bytes
                       lanes=lanes, lane_bits_per_s=bits / lanes if lanes else None, typical_nic=typical_nic,
                       year=year, standard=standard, source=source, notes=notes, latency_s=latency_s,
                       net_device=net_device)


_NETWORK_LIST = (
    _port("ib_edr", "InfiniBand EDR 4x (100 Gb/s)", "infiniband", 100, lanes=4, typical_nic="ConnectX-4 / ConnectX-5",
          standard="InfiniBand EDR", source="https://infiniband.jp/2022/06/01/infiband-%E8%A6%8F%E6%A0%BC/",
          notes=("25 Gb/s data per lane, 25.78125 Gb/s line rate with 64b/66b [C] (secondary summary of the IBTA "
                 f"spec; no primary URL in the fact sheet). 12.5 GB/s per direction. {_NIC_NOTE} "
                 "Year not in the fact sheet.")),
    _port("ib_hdr", "InfiniBand HDR 4x (200 Gb/s)", "infiniband", 200, lanes=4, typical_nic="ConnectX-6",
          standard="InfiniBand HDR",
          source="https://www.infinibandta.org/infiniband-roadmap-reflects-industry-demand-for-increased-speed-flexibility/",
          notes=("IBTA: 'HDR running nominally at 50Gb/s per lane' [V]; 53.125 Gb/s lane line rate [C] "
                 f"https://infiniband.jp/2022/06/01/infiband-%E8%A6%8F%E6%A0%BC/ . 25 GB/s per direction. {_NIC_NOTE} "
                 "DGX A100 uses 8 x ConnectX-6 HDR. Year not in the fact sheet.")),
    _port("ib_ndr", "InfiniBand NDR 4x (400 Gb/s)", "infiniband", 400, lanes=4, typical_nic="ConnectX-7",
          standard="InfiniBand NDR", source="https://docs.nvidia.com/networking/display/800GMMA4Z00NS/Overview",
          notes=("NVIDIA: '400Gb/s for both 400GbE Ethernet and NDR InfiniBand based on the 100G-PAM4 modulation' [V]; "
                 "106.25 Gb/s lane line rate. 400 Gb/s = 50 GB/s per direction. ConnectX-7 is PCIe Gen5 x16 [V] "
                 f"https://docs.nvidia.com/networking/display/connectx7vpiocp3/supported+interfaces . {_NIC_NOTE} "
                 "Year not in the fact sheet.")),
    _port("ib_xdr", "InfiniBand XDR (800 Gb/s)", "infiniband", 800, lanes=4, typical_nic="ConnectX-8 SuperNIC",
          standard="InfiniBand XDR (IBTA Vol. 1 Rel. 1.7)", source=_CX8_FW,
          notes=("ConnectX-8 'supports 800Gb/s or XDR IB or 2 x 400GbE' [V]; 200 Gb/s per lane, 1.6 Tb/s "
                 "switch-to-switch, IBTA Vol.1 Rel.1.7 as reported [C] "
                 "https://www.fibermall.com/pt/news/ibta-launches-xdr-800g-infiniband-spec.htm . 100 GB/s per direction. "
                 "Lane line rate, coding and year not in the fact sheet.")),
    _port("ib_ndr200", "InfiniBand NDR200 (2x NDR lanes, 200 Gb/s)", "infiniband", 200, lanes=2,
          typical_nic="ConnectX-7 (NDR200)", standard="InfiniBand NDR", source="https://docs.nvidia.com/networking/display/800GMMA4Z00NS/Overview",
          notes=("An NDR port split in two: 2 lanes x 100 Gb/s (100G-PAM4, as NDR's 400 Gb/s on 4 lanes [V]) = 200 Gb/s, "
                 "25 GB/s per direction. JUPITER's booster nodes (4 x GH200) have four NDR200 links [U] "
                 "https://www.fz-juelich.de/en/ias/jsc/systems/supercomputers/jupiter . Year not in the fact sheet.")),
    _port("eth_10g", "10 Gigabit Ethernet", "ethernet", 10, typical_nic="any server NIC", year=2002, standard="IEEE 802.3ae",
          source="https://www.ieee802.org/3/ae/",
          notes=("IEEE 802.3ae-2002 [U]. 1.25 GB/s per direction. The usual port for TCP sockets (NCCL's NET/Socket) on "
                 "servers without RDMA NICs.")),
    _port("eth_25g", "25 Gigabit Ethernet", "ethernet", 25, typical_nic="ConnectX-4 Lx and later", year=2016,
          standard="IEEE 802.3by", source="https://www.ieee802.org/3/by/",
          notes="IEEE 802.3by-2016 [U]. 3.125 GB/s per direction. Common on cloud VMs whose traffic runs over TCP sockets."),
    _port("eth_100g", "100 Gigabit Ethernet (RoCE)", "ethernet", 100, typical_nic="ConnectX-5", year=2010,
          standard="IEEE 802.3ba", source="https://www.ieee802.org/3/ba/",
          notes=(f"IEEE 802.3ba-2010 [U]. 12.5 GB/s per direction. {_NIC_NOTE} Lane count varies by PHY; not fixed here.")),
    _port("eth_200g", "200 Gigabit Ethernet (RoCE)", "ethernet", 200, typical_nic="ConnectX-6", year=2017,
          standard="IEEE 802.3bs", source=_ETH_MIRROR,
          notes=(f"IEEE 802.3bs, approved 6 Dec 2017 [C] (mirror of Wikipedia 'Terabit Ethernet'; no primary URL in "
                 f"the fact sheet). 25 GB/s per direction. {_NIC_NOTE}")),
    _port("eth_400g", "400 Gigabit Ethernet (RoCE)", "ethernet", 400, typical_nic="ConnectX-7", year=2017,
          standard="IEEE 802.3bs", source="https://docs.nvidia.com/networking/display/800GMMA4Z00NS/Overview",
          notes=("NVIDIA: '400Gb/s for both 400GbE Ethernet and NDR InfiniBand' [V]; IEEE 802.3bs approved 6 Dec 2017 "
                 f"[C] {_ETH_MIRROR} . 50 GB/s per direction. {_NIC_NOTE}")),
    _port("eth_800g", "800 Gigabit Ethernet (RoCE)", "ethernet", 800, typical_nic="ConnectX-8 (2 x 400GbE)", year=2024,
          standard="IEEE 802.3df (earlier ETC 800GBASE-R)", source=_ETH_MIRROR,
          notes=("IEEE 802.3df approved 16 Feb 2024 [C] (mirror); ETC 800GBASE-R 2020, two 400GbE PCS over 8 x 106G lanes "
                 "[C] https://m.hexus.net/tech/news/network/141508-ethernet-technology-consortium-announces-800gbe-standard . "
                 f"100 GB/s per direction. ConnectX-8 firmware notes: '800GbE link speed is not supported on a single "
                 f"port' (2 x 400GbE instead) [V] {_CX8_FW} ; WinOF-2 lists CX-8 as 800GbE-capable [V].")),
)

TCPXO_LATENCY_S = NET_PLUGIN_LATENCY_S["tcpxo_200g"].value
"""The extra latency per network step of GPUDirect-TCPXO, s: the calibration's value
(:data:`gpucomm.model.hardware.calibration.NET_PLUGIN_LATENCY_S`), read off the measured floor of the 2 nodes x 8
H100 all_reduce sweep C08 (its 10 sizes from 8 B to 4 KiB), outside the joint fit. The plugin moves data through a
host-side TCP stack, so each network step costs far more than over RDMA. The model reads the calibration's value;
this constant is its value at import, for the catalog's notes."""

_NETWORK_LIST += (
    _port(
        "tcpxo_200g", "GPUDirect-TCPXO over 200 Gigabit Ethernet (GCP A3 Mega)", "ethernet", 200,
        typical_nic="8 x 200 Gb/s per A3 Mega VM", year=2024, standard="Google GPUDirect-TCPXO (NCCL net plugin)",
        source="https://cloud.google.com/compute/docs/gpus/gpudirect",
        notes=("A3 Mega: 8 NICs of 200 Gb/s per VM for GPU traffic through the GPUDirect-TCPXO NCCL plugin [U]. Not RDMA: "
               "the payload moves GPU to NIC without host copies while a host TCP stack runs the protocol, which adds "
               f"latency: {TCPXO_LATENCY_S * 1e6:.0f} us per network step, read off the floor (8 B to 4 KiB) of the C08 "
               "sweep (calibration.NET_PLUGIN_LATENCY_S). "
               "25 GB/s per direction per NIC."),
        latency_s=TCPXO_LATENCY_S, net_device="unpack"),
)

NETWORKS: dict[str, NetworkLink] = {net.key: net for net in _NETWORK_LIST}
"""All scale-out port types by key."""


def get_network(key: str | NetworkLink) -> NetworkLink:
    """Look up a scale-out port type by key (case-insensitive); a :class:`NetworkLink` is returned unchanged.

    Parameters
    ----------
    key : str or NetworkLink
        Key of :data:`NETWORKS` (``"ib_ndr"``, ``"eth_400g"``...), or an entry.

    Returns
    -------
    NetworkLink
        The catalog entry (``bw_bytes_per_s`` per direction, in bytes/s).

    Raises
    ------
    GpucommError
        If the key is unknown; the message lists the accepted keys.

    Examples
    --------
    >>> get_network("ib_ndr").bw_bytes_per_s / 1e9
    50.0
    >>> get_network("eth_800g").port_bits_per_s / 1e9
    800.0
    """
    return lookup(NETWORKS, key, what="network", entry_type=NetworkLink, dashes_as_underscores=True)
