"""``gpucomm cost``: the predicted time, algbw and busbw of one collective.

The numbers come from :func:`gpucomm.model.cost.collective_cost` (the alpha-beta model with
NCCL's algorithm and protocol choice); this module only reads the flags and prints a table or,
with ``--json``, one JSON object. Pure Python: no torch, plotly or pandas.

Examples::

    gpucomm cost all_reduce --link nvlink3 --gpus 4 --size 64MiB
    gpucomm cost all_reduce --link pcie4 --no-p2p --gpus 4 --size 64MiB --json
"""

from __future__ import annotations

import argparse

from gpucomm import GpucommError
from gpucomm.cli.common import int_arg, mesh_size, print_json, print_table, size_arg
from gpucomm.model.collectives import COLLECTIVES
from gpucomm.model.cost import ALGORITHMS, collective_cost
from gpucomm.model.fabric import make_fabric
from gpucomm.model.hardware import INTER_SOCKET_LINKS, get_inter_socket_link, link_keys
from gpucomm.model.units import format_size, format_time

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Add the ``cost`` parser to ``subparsers`` (from ``ArgumentParser.add_subparsers``); its ``func`` is :func:`run`."""
    cost = subparsers.add_parser("cost", help="predict time, algbw and busbw of one collective")
    cost.add_argument("collective", help=f"one of {', '.join(COLLECTIVES)}")
    cost.add_argument("--link", required=True, help=f"interconnect: one of {', '.join(link_keys())}")
    cost.add_argument("--gpus", type=int_arg("number of GPUs", 2), required=True,
                      help="GPUs taking part, all nodes together (>= 2: one GPU has nothing to exchange)")
    cost.add_argument("--size", type=size_arg, required=True, help="message size, e.g. 64MiB, 1GB, 8 (bytes)")
    cost.add_argument("--no-p2p", action="store_true", help="P2P disabled: stage through host memory (PCIe links)")
    cost.add_argument("--algo", default="auto", help=f"algorithm: one of {', '.join(ALGORITHMS)} (default auto, as NCCL)")
    cost.add_argument("--protocol", default="auto", help="auto (default), LL or Simple")
    cost.add_argument("--topology", default="switch",
                      help="switch (NVSwitch or PCIe tree, default), mesh (point-to-point) or pairs (NVLink bridges)")
    cost.add_argument("--pcie-link", default=None, help="with --topology pairs: the PCIe link between pairs (default pcie4)")
    cost.add_argument("--mesh-size", type=int_arg("mesh size", 2), default=None,
                      help="with --topology mesh: GPUs wired in the mesh (default 8)")
    cost.add_argument("--gpus-per-uplink", type=int_arg("GPUs per uplink", 1), default=1,
                      help="with --no-p2p: GPUs sharing one PCIe uplink to the host (2 in a DGX A100)")
    cost.add_argument("--inter-socket", default=None,
                      help=f"GPUs under both sockets (SYS in nvidia-smi topo -m): the socket link, one of "
                           f"{', '.join(INTER_SOCKET_LINKS)}")
    cost.add_argument("--nodes", type=int_arg("number of nodes", 1), default=1, help="nodes (default 1); --gpus counts all")
    cost.add_argument("--network", default=None, help="scale-out link between nodes, e.g. ib_ndr or eth_400g (needs --nodes > 1)")
    cost.add_argument("--nics-per-node", type=int_arg("NICs per node", 1), default=None, help="default: one per GPU")
    cost.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    cost.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the cost of the collective ``args`` describe; return 0.

    Raises
    ------
    GpucommError
        Unknown collective, link or algorithm, or a flag that does not apply (printed by ``gpucomm``'s main).
    """
    args.mesh_size = mesh_size(args)
    if args.pcie_link is not None and args.topology != "pairs":
        raise GpucommError(f"--pcie-link {args.pcie_link} only applies to bridged pairs: expected --topology pairs")
    fabric = make_fabric(args.link, p2p=not args.no_p2p, topology=args.topology, mesh_size=args.mesh_size,
                         num_nodes=args.nodes, network=args.network, nics_per_node=args.nics_per_node,
                         gpus_per_uplink=args.gpus_per_uplink, pcie_link=args.pcie_link or "pcie4",
                         inter_socket=args.inter_socket)
    cost = collective_cost(args.collective, args.size, num_ranks=args.gpus, fabric=fabric, protocol=args.protocol,
                           algorithm=args.algo)
    if args.json:
        fabric = dict(topology=args.topology, mesh_size=args.mesh_size if args.topology == "mesh" else None,
                      gpus_per_uplink=args.gpus_per_uplink,
                      inter_socket=args.inter_socket and get_inter_socket_link(args.inter_socket).key)
        print_json({**cost.as_dict(), **fabric})
        return 0
    where = f"{args.gpus} GPUs over {cost.link}" + (" (no P2P: staged through host memory)" if args.no_p2p else "")
    if args.topology == "mesh":
        where += f" (point-to-point mesh of {args.mesh_size})"
    if args.topology == "pairs":
        where += f" (NVLink-bridged pairs, {args.pcie_link or 'pcie4'} between them)"
    if args.gpus_per_uplink > 1:
        where += f", {args.gpus_per_uplink} GPUs per PCIe uplink"
    if args.inter_socket:
        where += f", across two sockets ({get_inter_socket_link(args.inter_socket).key})"
    if args.nodes > 1:
        where += f", {args.nodes} nodes over {args.network}"
    print_table(f"{args.collective} of {format_size(cost.msg_bytes)} on {where}", ("quantity", "value"), [
        ("time", format_time(cost.time_s)),
        ("  latency part (alpha)", format_time(cost.latency_s)),
        ("  bandwidth part", format_time(cost.transfer_s)),
        ("algbw", f"{cost.algbw_bytes_per_s / 1e9:.2f} GB/s"),
        ("busbw", f"{cost.busbw_bytes_per_s / 1e9:.2f} GB/s"),
        ("algorithm", cost.algorithm),
        ("protocol", cost.protocol),
    ], right_aligned=("value",))
    return 0
