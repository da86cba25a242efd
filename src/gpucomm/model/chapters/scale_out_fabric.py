"""The numbers of ``book/scale_out_fabric.md``: rail-optimised leaves, and what an oversubscribed leaf costs.

Every value comes from the fat-tree arithmetic (:mod:`gpucomm.model.fat_tree`), the catalog (DGX H100 and its NDR
NICs), the cost model with NCCL's tuner (:mod:`gpucomm.model.cost`) and the validation results. The two NCCL INFO
logs the page reads (NCCL issues #1412 and #1453) need :mod:`gpucomm.measure`'s parser and stay in the page.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model.cost import collective_cost
from gpucomm.model.course import checked_on
from gpucomm.model.fabric import system_fabric
from gpucomm.model.fat_tree import nodes_per_leaf, oversubscribed_fabric, spine_share
from gpucomm.model.hardware import get_network, get_system
from gpucomm.model.units import GiB
from gpucomm.model.validation import CASES, SWEEPS, validate

__all__ = ["LEAF_PORTS", "OVERSUB_NODES", "numbers"]

LEAF_PORTS = 64
"""Ports of the page's leaf switch, all at the NIC rate (a 64-port NDR switch)."""

OVERSUB_NODES = 4
"""DGX H100 nodes of the page's oversubscription table."""

_RATIOS = (1, 2, 4)


def _rails() -> dict:
    """Nodes per leaf, rail-optimised and top of rack, and what a k:1 leaf leaves each NIC."""
    h100 = get_system("dgx_h100")
    ndr = get_network(h100.nic_key)
    rail = nodes_per_leaf(LEAF_PORTS, h100.num_nics, rail_optimized=True)
    out: dict = {"leaf_ports": LEAF_PORTS, "nics": h100.num_nics, "rail_nodes": rail,
                 "tor_nodes": nodes_per_leaf(LEAF_PORTS, h100.num_nics, rail_optimized=False),
                 "rail_gpus": rail * h100.num_gpus, "ndr_gbps": ndr.bw_bytes_per_s / 1e9,
                 "share_2_half": spine_share(2, cross_leaf_fraction=0.5)}
    out.update(share_2=spine_share(2), gpu_net_2=ndr.bw_bytes_per_s * spine_share(2) / 1e9)
    out["quiz_gpu_net_2"] = out["gpu_net_2"]
    out["quiz_rail_nodes"] = rail
    return out


def _oversubscription() -> dict:
    """A 1 GiB all_reduce on 4 (and 2) DGX H100 behind 1:1, 2:1 and 4:1 leaves, every byte across the spine."""
    base = system_fabric("dgx_h100", num_nodes=OVERSUB_NODES)
    costs = {k: collective_cost("all_reduce", GiB, num_ranks=OVERSUB_NODES * 8, fabric=oversubscribed_fabric(base, k))
             for k in _RATIOS}
    out: dict = {"os_nodes": OVERSUB_NODES}
    for k, c in costs.items():
        claims.require(c.algorithm == c.nccl_algorithm, "the time shown is that of NCCL's own pick")
        out.update({f"os{k}_busbw": c.busbw_bytes_per_s / 1e9, f"os{k}_ms": c.time_s * 1e3,
                    f"os{k}_algo": c.nccl_algorithm})
    out.update(os2_slow=costs[2].time_s / costs[1].time_s, os4_slow=costs[4].time_s / costs[1].time_s)
    claims.require(all(abs(costs[k].time_s / costs[1].time_s / k - 1) < 0.1 for k in (2, 4)),
                   "the network-bound all_reduce loses the ratio almost one for one from 4 nodes on")
    two = system_fabric("dgx_h100", num_nodes=2)
    two_costs = {k: collective_cost("all_reduce", GiB, num_ranks=16, fabric=oversubscribed_fabric(two, k))
                 for k in _RATIOS}
    claims.require(all(two_costs[k].time_s / two_costs[1].time_s < 0.97 * k for k in (2, 4)),
                   "at 2 nodes the all_reduce loses somewhat less than the ratio")
    claims.require(two_costs[1].nccl_algorithm != two_costs[2].nccl_algorithm,
                   "at 2 nodes NCCL's pick changes between 1:1 and 2:1")
    for nodes in (2, 4, 8, 16):  # the figure's hover names the model's fastest pair: it must be NCCL's own pick
        for k in _RATIOS:
            c = collective_cost("all_reduce", GiB, num_ranks=nodes * 8,
                                fabric=oversubscribed_fabric(system_fabric("dgx_h100", num_nodes=nodes), k))
            claims.require(c.algorithm == c.nccl_algorithm, "the figure's hover shows NCCL's own pick")
    small = [collective_cost("all_reduce", 64 * 2**10, num_ranks=OVERSUB_NODES * 8,
                             fabric=oversubscribed_fabric(base, k)).time_s for k in _RATIOS]
    claims.require(max(small) / min(small) < 1.01,
                   "a 64 KiB all_reduce on 4 nodes takes the same time at 1:1, 2:1 and 4:1")
    out["checked_network"] = checked_on(validate(), (*SWEEPS, *CASES), transport="network").sentence
    return out


def numbers() -> dict[str, object]:
    """Every value ``book/scale_out_fabric.md`` glues from the model, by glue key, after checking its claims.

    Returns
    -------
    dict
        Glue key -> value.

        - Rails: ``leaf_ports``, ``nics``, ``rail_nodes``, ``tor_nodes``, ``rail_gpus`` (counts), ``ndr_gbps``
          (GB/s per direction), ``share_2``, ``share_2_half`` (fractions of a NIC's rate left by a 2:1 leaf),
          ``gpu_net_2`` (GB/s per direction); the self-checks' ``quiz_gpu_net_2``,
          ``quiz_rail_nodes``.
        - Oversubscription (1 GiB all_reduce, ``os_nodes`` DGX H100): ``os{k}_busbw`` (GB/s per rank), ``os{k}_ms``,
          ``os{k}_algo`` (NCCL's pick) for k = 1, 2, 4; ``os2_slow``, ``os4_slow`` (time ratios to 1:1);
          ``checked_network`` (where the model was checked on networks, a sentence).

    Raises
    ------
    ClaimError
        If the model no longer supports a sentence of the page (the message quotes it).

    Notes
    -----
    Sources: :func:`gpucomm.model.fat_tree.nodes_per_leaf`, :func:`~gpucomm.model.fat_tree.spine_share` and
    :func:`~gpucomm.model.fat_tree.oversubscribed_fabric` (the worst case of Al-Fares et al., SIGCOMM 2008: every
    byte crosses the spine), the DGX H100 catalog entry, and NCCL 2.30.7's tuner as the cost model reproduces it.

    Examples
    --------
    >>> values = numbers()
    >>> values["rail_nodes"], values["tor_nodes"]
    (32, 4)
    """
    return {**_rails(), **_oversubscription()}
