"""Leaf-spine (fat-tree) scale-out networks: oversubscription, rails, and what they leave each NIC.

A two-tier fat tree has leaf switches, whose *down* ports go to NICs, and spine switches joined to every
leaf by the leaf's *up* ports. A leaf is **oversubscribed** ``k:1`` when its down ports carry ``k`` times
the bandwidth of its up ports. Al-Fares, Loukissas and Vahdat define oversubscription as "the ratio of the
worst-case achievable aggregate bandwidth among the end hosts to the total bisection bandwidth", so that
with 5:1 "only 20% of available host bandwidth is available for some communication patterns" (*A Scalable,
Commodity Data Center Network Architecture*, SIGCOMM 2008, sec. 2.1, https://doi.org/10.1145/1402958.1402967).
Which patterns: only traffic that leaves its leaf shares the up ports; traffic between NICs on the same
leaf never reaches a spine.

A **rail-optimised** network wires NIC *i* of every node to leaf *i* (rail *i*), so one leaf holds one port of
each of many nodes, and GPU *i* of those nodes reach each other through that leaf alone (NVIDIA, *InfiniBand
cluster bring-up: rail-optimized topology*,
https://docs.nvidia.com/networking/display/ibclusterbringupprocedure/setting+the+infiniband+cluster+topology).
NCCL keeps a ring or tree on the same NIC index across nodes for that reason (``NCCL_CROSS_NIC``, NCCL
``env.rst`` at v2.30.7-1).

The cost model (:mod:`gpucomm.model.cost`) knows a port's rate and how many NICs a node has, not the
switches. :func:`oversubscribed_fabric` expresses the worst case of an oversubscribed leaf as that node's
share of its NICs, so that the same model prices it.

Examples
--------
>>> spine_share(2)
0.5
>>> spine_share(2, cross_leaf_fraction=0.25)
1.0
>>> nodes_per_leaf(64, 8, rail_optimized=True), nodes_per_leaf(64, 8, rail_optimized=False)
(32, 4)
"""

from __future__ import annotations

import math

from gpucomm import GpucommError
from gpucomm.model.fabric import Fabric

__all__ = ["spine_share", "nodes_per_leaf", "oversubscribed_fabric"]

MAX_OVERSUBSCRIPTION = 64
"""Largest oversubscription accepted: anything above is a typo, not a network."""


def _check_ratio(oversubscription) -> float:
    if isinstance(oversubscription, bool) or not isinstance(oversubscription, (int, float)) \
            or not math.isfinite(oversubscription) or not 1 <= oversubscription <= MAX_OVERSUBSCRIPTION:
        raise GpucommError(f"oversubscription {oversubscription!r} is not valid: expected a number from 1 (1:1, "
                           f"non-blocking) to {MAX_OVERSUBSCRIPTION}")
    return float(oversubscription)


def spine_share(oversubscription: float, *, cross_leaf_fraction: float = 1.0) -> float:
    """Fraction of its NIC rate each NIC of a leaf can sustain when part of the leaf's traffic crosses the spine.

    Parameters
    ----------
    oversubscription : float
        ``k`` of a ``k:1`` leaf: bandwidth of its down ports over that of its up ports, 1 to 64.
    cross_leaf_fraction : float
        Fraction ``f`` of the traffic the leaf's NICs send that must leave the leaf, 0 to 1 (1: every byte
        crosses the spine, as when every node of a job sits under another leaf).

    Returns
    -------
    float
        ``min(1, 1 / (k f))``: with every NIC sending at rate ``r``, the up ports carry ``f r d`` for ``d`` down
        ports and hold ``r_port d / k``, so ``r <= r_port / (k f)``. 1 when nothing crosses (``f = 0``).
        Oversubscription as defined by Al-Fares et al., SIGCOMM 2008 (module docstring); spines assumed
        non-blocking and the load spread evenly over the up ports (ECMP or adaptive routing).

    Raises
    ------
    GpucommError
        ``oversubscription`` outside 1 to 64, or ``cross_leaf_fraction`` outside 0 to 1.

    Examples
    --------
    >>> spine_share(4), spine_share(1)
    (0.25, 1.0)
    """
    k = _check_ratio(oversubscription)
    if isinstance(cross_leaf_fraction, bool) or not isinstance(cross_leaf_fraction, (int, float)) \
            or not 0 <= cross_leaf_fraction <= 1:
        raise GpucommError(f"cross-leaf fraction {cross_leaf_fraction!r} is not valid: expected a number from 0 to 1")
    if cross_leaf_fraction == 0:
        return 1.0
    return min(1.0, 1.0 / (k * cross_leaf_fraction))


def nodes_per_leaf(leaf_ports: int, nics_per_node: int, *, rail_optimized: bool, oversubscription: float = 1) -> int:
    """Nodes whose GPU *i* reach each other through one leaf switch, without a spine hop.

    Parameters
    ----------
    leaf_ports : int
        Ports of the leaf switch at the NIC rate, 2 to 4096 (64 for an NDR InfiniBand QM9700 leaf).
    nics_per_node : int
        Scale-out NICs per node, 1 to 64.
    rail_optimized : bool
        True: NIC *i* of every node goes to leaf *i* (one leaf per rail, one port per node on it). False: all
        NICs of a node go to the same leaf (a top-of-rack leaf).
    oversubscription : float
        ``k`` of a ``k:1`` leaf: of its ports, ``k / (k + 1)`` face the NICs, the rest the spines (1 to 64).

    Returns
    -------
    int
        Rail-optimised: the leaf's down ports, one node each; top-of-rack: down ports // NICs per node.
        Down ports are ``floor(leaf_ports x k / (k + 1))`` (half of them for a non-blocking 1:1 leaf).

    Raises
    ------
    GpucommError
        A count or ratio out of range, or a leaf too small for one node.

    Examples
    --------
    >>> nodes_per_leaf(64, 8, rail_optimized=True, oversubscription=3)
    48
    """
    for name, value, top in (("leaf ports", leaf_ports, 4096), ("NICs per node", nics_per_node, 64)):
        if isinstance(value, bool) or not isinstance(value, int) or not (2 if name == "leaf ports" else 1) <= value <= top:
            raise GpucommError(f"{name} {value!r} is not valid: expected an integer from "
                               f"{2 if name == 'leaf ports' else 1} to {top}")
    if not isinstance(rail_optimized, bool):
        raise GpucommError(f"rail_optimized {rail_optimized!r} is not valid: expected True or False")
    k = _check_ratio(oversubscription)
    down = math.floor(leaf_ports * k / (k + 1))
    nodes = down if rail_optimized else down // nics_per_node
    if nodes < 1:
        raise GpucommError(f"a leaf with {down} down ports cannot hold the {nics_per_node} NICs of one node: expected "
                           "a larger leaf, fewer NICs per node, or rail_optimized=True")
    return nodes


def oversubscribed_fabric(fabric: Fabric, oversubscription: int, *, cross_leaf_fraction: float = 1.0) -> Fabric:
    """The fabric whose nodes get only their share of an oversubscribed leaf: fewer NICs at the same rate.

    Parameters
    ----------
    fabric : Fabric
        A fabric of 2 or more nodes (:func:`gpucomm.model.fabric.make_fabric` with ``network``).
    oversubscription : int
        ``k`` of a ``k:1`` leaf, 1 to 64.
    cross_leaf_fraction : float
        Fraction of the traffic that leaves the leaf, 0 to 1 (see :func:`spine_share`).

    Returns
    -------
    Fabric
        ``fabric`` with ``nics_per_node`` = NICs per node x :func:`spine_share`, named after the ratio. The cost
        model then prices the node's reduced network bandwidth; with NCCL's tuner, ``m`` NICs at the full rate
        plan like ``2m`` NICs at half the rate to within a few percent (one channel per NIC), which is why the
        share is taken in NICs rather than in port rate (the model knows catalog port rates only).

    Raises
    ------
    GpucommError
        A single-node fabric; a ratio or fraction out of range; a share that is not a whole number of the
        node's NICs (e.g. 3:1 on 8 NICs).

    Examples
    --------
    >>> from gpucomm.model.fabric import make_fabric
    >>> oversubscribed_fabric(make_fabric("nvlink4", num_nodes=4, network="ib_ndr", gpus_per_node=8), 2).nics_per_node
    4
    """
    if not isinstance(fabric, Fabric) or fabric.num_nodes < 2:
        raise GpucommError(f"fabric {getattr(fabric, 'label', fabric)!r} is not valid: expected a Fabric of 2 or more "
                           "nodes (make_fabric(link, num_nodes=2, network=...))")
    share = spine_share(oversubscription, cross_leaf_fraction=cross_leaf_fraction)
    nics = fabric.nics_per_node or fabric.gpus_per_node
    if nics is None:
        raise GpucommError(f"fabric {fabric.label!r} gives neither NICs per node nor GPUs per node: expected one of them "
                           "to count the node's NICs")
    kept = nics * share
    if abs(kept - round(kept)) > 1e-9 or round(kept) < 1:
        raise GpucommError(f"oversubscription {oversubscription!r} leaves {kept:g} of the node's {nics} NICs: expected a "
                           "ratio whose share is a whole number of NICs (1, 2, 4, 8 on 8 NICs)")
    ratio = f"{oversubscription:g}:1"
    where = "" if cross_leaf_fraction == 1 else f", {cross_leaf_fraction:g} of traffic across the spine"
    return fabric.replace(nics_per_node=round(kept), name=f"{fabric.label} ({ratio} leaf{where})")
