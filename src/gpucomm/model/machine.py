"""The model of one node as ``gpucomm doctor`` reads it: its fabric, and the band a healthy all_reduce falls in.

The doctor (:mod:`gpucomm.measure.doctor`) reads the machine: the GPUs' names (which it maps to
catalog keys), how each GPU pair connects (``nvidia-smi topo -m``), the P2P access matrix and the
CPU's model name. This module turns those plain facts into the model's
:class:`~gpucomm.model.fabric.Fabric` (:func:`machine_fabric`, with :func:`inter_socket_key` for
the link between CPU sockets) and the all_reduce busbw a healthy node shows at each size, with
its band (:func:`model_band`). Standard library only, like the rest of the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import Fabric, make_fabric
from gpucomm.model.hardware import get_gpu

__all__ = ["ACROSS_SOCKETS", "inter_socket_key", "machine_fabric", "model_band"]

ACROSS_SOCKETS = ("SYS", "SOC")
"""``nvidia-smi topo -m`` legend codes of a path across CPU sockets (``SOC``: drivers of 2016-2017)."""

_EPYC_GENERATION = {"1": "xgmi_zen2", "2": "xgmi_zen2", "3": "xgmi_zen4", "4": "xgmi_zen4", "5": "xgmi_zen5"}
"""AMD EPYC model number's last digit (its generation: 1-2 Zen 1-2, 3-4 Zen 3-4, 5 Zen 5) -> inter-socket link."""

_XEON_SCALABLE_GENERATION = {"1": "upi_skylake", "2": "upi_skylake", "3": "upi_skylake", "4": "upi_sapphire_rapids",
                             "5": "upi_emerald_rapids"}
"""Intel Xeon Scalable model number's second digit (1-3 Skylake to Ice Lake, 4 Sapphire Rapids, 5 Emerald Rapids)
-> inter-socket link."""


def inter_socket_key(cpu_name: str) -> str | None:
    """The inter-socket link of :data:`gpucomm.model.hardware.INTER_SOCKET_LINKS` a CPU model name most likely has.

    A guess from the model number, as NCCL's ``ncclTopoGetInterCpuBw`` guesses from CPUID: AMD EPYC's
    last digit is its generation (1-2: Zen 1-2, 3-4: Zen 3-4, 5: Zen 5); Intel Xeon Scalable's second
    digit is its generation (1-3: Skylake to Ice Lake, 4: Sapphire Rapids, 5: Emerald Rapids); Xeon E5/E7
    are Broadwell or older.

    Parameters
    ----------
    cpu_name : str
        The CPU's model name as ``/proc/cpuinfo`` prints it (``"AMD EPYC 9654 96-Core Processor"``).

    Returns
    -------
    str or None
        A key of ``INTER_SOCKET_LINKS``, or None for a CPU the rules above do not cover.

    Examples
    --------
    >>> inter_socket_key("AMD EPYC 9654 96-Core Processor"), inter_socket_key("Intel(R) Xeon(R) Platinum 8480+")
    ('xgmi_zen4', 'upi_sapphire_rapids')
    >>> inter_socket_key("Intel(R) Xeon(R) CPU E5-2698 v4 @ 2.20GHz"), inter_socket_key("Apple M2") is None
    ('qpi_broadwell', True)
    """
    m = re.search(r"EPYC\s+\d{3}(\d)", cpu_name)
    if m:
        return _EPYC_GENERATION.get(m[1])
    m = re.search(r"Xeon.*?\b(?:Platinum|Gold|Silver|Bronze)\s+\d(\d)\d\d", cpu_name)
    if m:
        return _XEON_SCALABLE_GENERATION.get(m[1])
    if re.search(r"Xeon.*\bE[57]-\d{4}", cpu_name):
        return "qpi_broadwell"
    return None


def _all_p2p(p2p: Sequence[Sequence[bool]] | None) -> bool:
    """Whether every ordered pair of distinct GPUs has P2P access (None: not known, taken as yes)."""
    return p2p is None or all(p2p[i][j] for i in range(len(p2p)) for j in range(len(p2p)) if i != j)


def machine_fabric(gpus: Sequence[str], pair_kinds: Mapping[str, str] | None, p2p: Sequence[Sequence[bool]] | None,
                   cpu_name: str) -> tuple[Fabric | None, str]:
    """The model's :class:`~gpucomm.model.fabric.Fabric` for a node's GPUs, or why there is none.

    NVLink everywhere (every GPU pair ``NV#`` with one link count, or no topology on an NVLink SXM
    part): that NVLink generation through a switch; bridged cards: ``pairs`` over the GPUs' PCIe;
    otherwise the GPUs' PCIe generation (catalog), P2P as the access matrix says, and the CPU's
    inter-socket link (:func:`inter_socket_key`) where GPU pairs cross sockets (``SYS``/``SOC``).

    Parameters
    ----------
    gpus : sequence of str
        The catalog key of each GPU (:data:`gpucomm.model.hardware.GPUS`), one per GPU.
    pair_kinds : mapping of str to str, or None
        Each distinct ``nvidia-smi topo -m`` cell between two GPUs as printed (``"NV18"``, ``"PIX"``,
        ``"SYS"``) -> its legend code (``"NV#"``, ``"PIX"``, ``"SYS"``...); None where no topology was read.
    p2p : sequence of sequence of bool, or None
        ``p2p[i][j]``: GPU ``i`` can access GPU ``j`` (``torch.cuda.can_device_access_peer``); None: not known.
    cpu_name : str
        The CPU's model name (for the inter-socket link).

    Returns
    -------
    (Fabric or None, str)
        The fabric and its label, or None and the reason (no GPU, mixed GPUs, a mixed NVLink mesh
        such as DGX-1's hybrid cube-mesh, no PCIe generation in the catalog, an unknown CPU across
        sockets, a fabric :func:`~gpucomm.model.fabric.make_fabric` refuses).

    Raises
    ------
    GpucommError
        If a key is not in the GPU catalog.

    Examples
    --------
    >>> fabric, label = machine_fabric(["h100_sxm5"] * 2, {"NV18": "NV#"}, None, "")
    >>> fabric.link.key, fabric.topology
    ('nvlink4', 'switch')
    """
    keys = set(gpus)
    if not keys:
        return None, "no GPU"
    if len(keys) > 1:
        return None, f"mixed GPUs {', '.join(sorted(keys))}: not modelled"
    spec = get_gpu(keys.pop())
    codes = set(pair_kinds or {})
    kinds = set((pair_kinds or {}).values())
    try:
        if spec.nvlink_gen and (kinds == {"NV#"} and len(codes) == 1 or (pair_kinds is None and not spec.nvlink_bridge)):
            if spec.nvlink_bridge:
                fabric = make_fabric(f"nvlink{spec.nvlink_gen}", gpu=spec.key, topology="pairs",
                                     pcie_link=f"pcie{spec.pcie_gen or 4}")
            else:
                fabric = make_fabric(f"nvlink{spec.nvlink_gen}", gpu=spec.key)
        elif "NV#" in kinds:
            return None, f"a mixed NVLink topology ({', '.join(sorted(codes))}): not modelled"
        elif not spec.pcie_gen:
            return None, f"the catalog has no PCIe generation for {spec.name}"
        else:
            socket_link = None
            if kinds & set(ACROSS_SOCKETS):
                socket_link = inter_socket_key(cpu_name)
                if socket_link is None:
                    return None, f"GPUs across sockets, and the CPU {cpu_name!r} is not one the model knows"
            fabric = make_fabric(f"pcie{spec.pcie_gen}", gpu=spec.key, p2p=_all_p2p(p2p), inter_socket=socket_link)
    except GpucommError as exc:
        return None, f"not modelled: {exc}"
    return fabric, fabric.label


def model_band(sizes: Sequence[int], num_ranks: int, fabric: Fabric) -> list[dict]:
    """The model's all_reduce busbw at each size, with the band a healthy node falls in.

    The band is the model's 10-90 % prediction band (:attr:`~gpucomm.model.cost.CollectiveCost.time_low_s`,
    :attr:`~gpucomm.model.cost.CollectiveCost.time_high_s`): the spread of its leave-one-out errors against the bundled
    published measurements of that transport and size band
    (:func:`~gpucomm.model.hardware.calibration.prediction_band`), so a tenth of healthy measured nodes fall below it
    and a tenth above.

    Parameters
    ----------
    sizes : sequence of int
        Message sizes, bytes (the all_reduce's buffer, as nccl-tests counts it).
    num_ranks : int
        Ranks of the all_reduce (GPUs on the node).
    fabric : Fabric
        How the GPUs connect (:func:`machine_fabric`).

    Returns
    -------
    list of dict
        Per size: ``msg_bytes``, ``time_s``, ``busbw_bytes_per_s`` (model), ``low``, ``high``
        (busbw bytes/s), ``algorithm``, ``protocol``.

    Raises
    ------
    GpucommError
        From :func:`~gpucomm.model.cost.collective_cost` (a size or rank count it refuses).

    Examples
    --------
    >>> band = model_band([2**30], 8, make_fabric("nvlink4", gpu="h100_sxm5"))
    >>> round(band[0]["low"] / band[0]["busbw_bytes_per_s"], 2)
    0.9
    """
    out = []
    for size in sizes:
        cost = collective_cost("all_reduce", size, num_ranks=num_ranks, fabric=fabric)
        busbw = cost.busbw_bytes_per_s
        # busbw is inversely proportional to the time: the band's slow end is its low busbw
        lo, hi = busbw * cost.time_s / cost.time_high_s, busbw * cost.time_s / cost.time_low_s
        out.append({"msg_bytes": size, "time_s": cost.time_s, "busbw_bytes_per_s": busbw, "low": lo, "high": hi,
                    "algorithm": cost.algorithm, "protocol": cost.protocol})
    return out
