"""``gpucomm cost``: the predicted time, algbw and busbw of one collective.

The numbers come from :func:`gpucomm.model.cost.collective_cost`: what NCCL's tuner would pick at
this size (:mod:`gpucomm.model.nccl_tuner`, the release of ``--nccl-version``) with its time, every
alternative NCCL considers with NCCL's own estimate, and the terms outside NCCL (launch, ramp).
This module only reads the flags and prints tables or, with ``--json``, one JSON object. Pure
Python: no torch, plotly or pandas.

Examples::

    gpucomm cost all_reduce --link nvlink3 --gpus 4 --size 64MiB
    gpucomm cost all_reduce --system dgx_h100 --gpus 8 --size 1GiB --nccl-version 2.27.7
    gpucomm cost all_reduce --link pcie4 --no-p2p --gpus 4 --size 64MiB --json
    gpucomm cost all_reduce --topo topo.txt --gpu l40s --inter-socket upi_sapphire_rapids --gpus 4 --size 1GiB
    gpucomm cost all_reduce --link pcie4 --gpu l4 --gpus 16 --nodes 2 --network eth_25g --net-transport socket --size 1GiB
"""

from __future__ import annotations

import argparse

from gpucomm import GpucommError
from gpucomm.cli.common import add_connection_arguments, int_arg, mesh_size, print_json, print_table, size_arg
from gpucomm.model.collectives import COLLECTIVES
from gpucomm.model.cost import ALGORITHMS, LAUNCH_MODES, PROTOCOLS, collective_cost
from gpucomm.model.fabric import NET_TRANSPORTS, make_fabric, system_fabric
from gpucomm.model.hardware import GPUS, SYSTEMS, get_inter_socket_link, link_keys
from gpucomm.model.nccl_fabric import DEFAULT_NCCL_VERSION
from gpucomm.model.units import format_size, format_time

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Add the ``cost`` parser to ``subparsers`` (from ``ArgumentParser.add_subparsers``); its ``func`` is :func:`run`."""
    cost = subparsers.add_parser("cost", help="predict time, algbw and busbw of one collective")
    cost.add_argument("collective", help=f"one of {', '.join(COLLECTIVES)}")
    cost.add_argument("--link", default=None,
                      help=f"interconnect (what-if): one of {', '.join(link_keys())}; or use --system")
    cost.add_argument("--system", default=None,
                      help=f"a catalog system (its GPU, NVLink or PCIe path, P2P, sockets, NICs): one of "
                           f"{', '.join(SYSTEMS)} (hgx_* names the DGX entry; DGX-1 cube-meshes are listed, not modelled)")
    cost.add_argument("--gpu", default=None, help=f"with --link: the GPU (compute capability, NVLink count): one of "
                                                  f"{', '.join(GPUS)}")
    cost.add_argument("--gpus", type=int_arg("number of GPUs", 2), required=True,
                      help="GPUs taking part, all nodes together (>= 2: one GPU has nothing to exchange)")
    cost.add_argument("--size", type=size_arg, required=True, help="message size, e.g. 64MiB, 1GB, 8 (bytes)")
    cost.add_argument("--algo", default="auto", help=f"algorithm: one of {', '.join(ALGORITHMS)} (default auto, as NCCL)")
    cost.add_argument("--protocol", default="auto", help=f"auto (default) or one of {', '.join(PROTOCOLS)}")
    cost.add_argument("--launch", default="eager", choices=LAUNCH_MODES,
                      help="eager (default: back-to-back launches, as nccl-tests without -G), graph (CUDA graph), "
                           "or sync (one torch.distributed call at a time, timed from before its dispatch)")
    cost.add_argument("--gpus-per-thread", type=int_arg("GPUs per host thread", 1), default=1,
                      help="GPUs one host thread launches on per call: 1 (default: one process per GPU, as torchrun "
                           "and mpirun ... -g 1) or N as nccl-tests -g N in one process, whose launches then set a "
                           "floor on the time with eager launch")
    cost.add_argument("--nccl-version", default=".".join(map(str, DEFAULT_NCCL_VERSION)),
                      help="the NCCL release whose tuner to follow (default %(default)s): NVLS from 2.17, PAT from "
                           "2.23, LL128 per architecture")
    add_connection_arguments(cost)
    cost.add_argument("--pcie-link", default=None, help="with --topology pairs: the PCIe link between pairs (default pcie4)")
    cost.add_argument("--gpus-per-uplink", type=int_arg("GPUs per uplink", 1), default=None,
                      help="with --no-p2p: GPUs sharing one PCIe uplink to the host (2 in a DGX A100; default 1)")
    # None tells a flag the user gave from one left at its default: with --system each is honoured or refused
    cost.set_defaults(topology=None)
    cost.add_argument("--nodes", type=int_arg("number of nodes", 1), default=1, help="nodes (default 1); --gpus counts all")
    cost.add_argument("--network", default=None, help="scale-out link between nodes, e.g. ib_ndr or eth_400g (needs --nodes > 1)")
    cost.add_argument("--nics-per-node", type=int_arg("NICs per node", 1), default=None,
                      help="default: one per GPU (with --topo: the NICs the file lists)")
    cost.add_argument("--net-transport", default=None,
                      help=f"NCCL's transport between nodes: one of {', '.join(NET_TRANSPORTS)} (default rdma: InfiniBand "
                           "or RoCE verbs; socket: TCP sockets, NCCL's NET/Socket, host memory only)")
    cost.add_argument("--no-gdr", action="store_true",
                      help="GPUDirect RDMA off (NCCL_NET_GDR_LEVEL=LOC, or not supported): the NIC traffic is staged "
                           "through host memory")
    cost.add_argument("--topo", default=None, metavar="FILE",
                      help="build the node from a file: `nvidia-smi topo -m` output or NCCL's topology dump "
                           "(NCCL_TOPO_DUMP_FILE XML); needs --gpu, and --inter-socket where GPU pairs are SYS")
    cost.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    cost.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the cost of the collective ``args`` describe; return 0.

    Raises
    ------
    GpucommError
        Unknown collective, link or algorithm, or a flag that does not apply (printed by ``gpucomm``'s main).
    """
    given = [flag for flag, value in (("--link", args.link), ("--system", args.system), ("--topo", args.topo)) if value]
    if len(given) != 1:
        raise GpucommError(f"{' and '.join(given) or 'no connection'} given: expected one of --link (what-if), "
                           "--system (a catalog system) or --topo FILE (a node's topology)")
    if args.net_transport is not None and args.net_transport not in NET_TRANSPORTS:
        raise GpucommError(f"--net-transport {args.net_transport}: expected one of {', '.join(NET_TRANSPORTS)}")
    fabric = (_system_fabric(args) if args.system is not None else _topo_fabric(args) if args.topo is not None
              else _what_if_fabric(args))
    args.link, args.no_p2p = fabric.link.key, not fabric.p2p
    cost = collective_cost(args.collective, args.size, num_ranks=args.gpus, fabric=fabric, protocol=args.protocol,
                           algorithm=args.algo, launch=args.launch, nccl_version=args.nccl_version,
                           gpus_per_thread=args.gpus_per_thread)
    if args.json:
        extra = dict(topology=fabric.topology, mesh_size=fabric.mesh_size if fabric.topology == "mesh" else None,
                     gpus_per_uplink=fabric.gpus_per_uplink,
                     inter_socket=fabric.inter_socket and get_inter_socket_link(fabric.inter_socket).key,
                     system=fabric.system, gpu=fabric.gpu, route=fabric.route(args.gpus),
                     net_transport=fabric.net_transport if fabric.num_nodes > 1 else None,
                     gdr=fabric.gdr if fabric.num_nodes > 1 else None, gpus_per_node=fabric.gpus_per_node,
                     nics_per_node=fabric.nics_per_node)
        print_json({**cost.as_dict(), **extra})
        return 0
    # one description of the connection: the fabric says what it is (link, P2P, topology, sockets, nodes)
    where = f"{args.gpus} GPUs of {fabric.label}"
    rows = [
        ("time", format_time(cost.time_s)),
        ("  10-90 % band (cross-validated)", f"{format_time(cost.time_low_s)} - {format_time(cost.time_high_s)}"),
        ("  latency part (alpha)", format_time(cost.latency_s)),
        ("  bandwidth part", format_time(cost.transfer_s)),
        (f"  launch part ({cost.launch})", format_time(cost.launch_s)),
    ]
    if cost.host_floor_s:
        bound = "sets the time" if cost.host_floor_s >= cost.time_s else "below the GPUs' time"
        rows.append((f"  host thread floor ({args.gpus_per_thread} GPUs, {bound})", format_time(cost.host_floor_s)))
    rows += [
        ("algbw", f"{cost.algbw_bytes_per_s / 1e9:.2f} GB/s"),
        ("busbw", f"{cost.busbw_bytes_per_s / 1e9:.2f} GB/s"),
        ("algorithm", cost.algorithm),
        ("protocol", cost.protocol),
    ]
    if cost.nccl_time_s is not None:
        rows += [("NCCL's own estimate", format_time(cost.nccl_time_s)), ("channels", str(cost.num_channels))]
    rows.append(("path", fabric.route(args.gpus)))
    rows.append(("where it comes from", cost.note))
    if cost.nccl_algorithm and (cost.nccl_algorithm, cost.nccl_protocol) != (cost.algorithm, cost.protocol):
        rows.append(("NCCL's own pick", f"{cost.nccl_algorithm}/{cost.nccl_protocol} (its estimate; the model's terms "
                                        f"make {cost.algorithm}/{cost.protocol} faster)"))
    print_table(f"{args.collective} of {format_size(cost.msg_bytes)} on {where}", ("quantity", "value"), rows,
                right_aligned=("value",))
    print_table("why this number: the terms of the time (they sum to it)", ("term", "time", "what it is"),
                [(name, format_time(t) if t >= 0 else "-" + format_time(-t), TERM_MEANINGS.get(name, ""))
                 for name, t in cost.terms if t], right_aligned=("time",))
    if cost.alternatives:
        print_table(f"what NCCL {cost.nccl_version} considers at this size (its own estimates; * = its pick)",
                    ("algorithm", "protocol", "NCCL's estimate", ""),
                    [(a, p, format_time(t), "*" if (a, p) == (cost.algorithm, cost.protocol) else "")
                     for a, p, t in cost.alternatives], right_aligned=("NCCL's estimate",))
    return 0


TERM_MEANINGS = {
    "nccl_latency": "NCCL's tuner latency (tuning.cc)",
    "nccl_bandwidth": "NCCL's tuner bytes / bandwidth (tuning.cc)",
    "transport_latency": "fitted latency scale of the hops' transport, beyond NCCL's",
    "delivered_bandwidth": "links deliver nominal x measured efficiency, not NCCL's planned rate",
    "channel_ramp": "fewer channels for a small message than NCCL's estimate assumes",
    "pipeline_fill": "the first chunks cross the hops before every GPU is busy",
    "cut_through": "LL moves a ring step's data while its latency elapses",
    "alpha_beta_latency": "alpha: fitted latency of this algorithm (not NCCL's)",
    "alpha_beta_bandwidth": "beta: bytes on the busiest link / delivered bandwidth",
    "p2p_latency": "NCCL's Ring row for one step (point-to-point)",
    "p2p_transfer": "bytes / the link share of the channels NCCL gives the sends",
    "launch": "host launch of one call",
    "host_floor": "one host thread launching on several GPUs, above the GPUs' time",
}
"""One line per term of :attr:`gpucomm.model.cost.CollectiveCost.terms` for the text output."""


def _what_if_fabric(args: argparse.Namespace):
    """The fabric of ``--link`` and the connection flags (a what-if)."""
    topology = args.topology or "switch"
    args.topology = topology
    args.mesh_size = mesh_size(args)
    if args.pcie_link is not None and topology != "pairs":
        raise GpucommError(f"--pcie-link {args.pcie_link} only applies to bridged pairs: expected --topology pairs")
    return make_fabric(args.link, p2p=not args.no_p2p, topology=topology, mesh_size=args.mesh_size,
                       num_nodes=args.nodes, network=args.network, nics_per_node=args.nics_per_node,
                       gpus_per_uplink=args.gpus_per_uplink or 1, pcie_link=args.pcie_link or "pcie4",
                       inter_socket=args.inter_socket, gpu=args.gpu, **_net_options(args))


def _net_options(args: argparse.Namespace) -> dict:
    """``--net-transport`` and ``--no-gdr`` as :func:`~gpucomm.model.fabric.make_fabric` keywords (only those given)."""
    options = {}
    if args.net_transport is not None:
        # the transport's own default (sockets: no GPUDirect RDMA), not the one a system's fabric carried
        options.update(net_transport=args.net_transport, gdr=None)
    if args.no_gdr:
        options["gdr"] = False
    return options


def _host_flags(args: argparse.Namespace, fabric):
    """``--no-p2p``, ``--gpus-per-uplink`` and ``--inter-socket`` applied to a fabric the catalog or a file gave."""
    if args.no_p2p:
        fabric = fabric.without_p2p()  # staged through host memory over each GPU's PCIe link (NCCL's SHM transport)
    changes = {}
    if args.gpus_per_uplink is not None:
        changes["gpus_per_uplink"] = args.gpus_per_uplink
    if args.inter_socket is not None and fabric.inter_socket != args.inter_socket:
        changes["inter_socket"] = args.inter_socket
    return fabric.replace(**changes) if changes else fabric


def _topo_fabric(args: argparse.Namespace):
    """The fabric of ``--topo FILE`` (:func:`gpucomm.model.topo_fabric.topo_fabric`) with the GPU of ``--gpu``; the
    wiring flags are the file's, so they are refused; the host flags and the network are applied."""
    from gpucomm.model.topo_fabric import topo_fabric

    for flag, value in (("--topology", args.topology), ("--mesh-size", args.mesh_size), ("--pcie-link", args.pcie_link)):
        if value is not None:
            raise GpucommError(f"{flag} {value} with --topo {args.topo}: the file gives the node's wiring; drop {flag}")
    if args.gpu is None:
        raise GpucommError(f"--topo {args.topo} needs --gpu: the topology does not name the GPU; expected one of "
                           f"{', '.join(GPUS)}")
    try:
        with open(args.topo, encoding="utf-8", errors="replace") as handle:
            text = handle.read(4_000_000)
    except OSError as exc:
        raise GpucommError(f"--topo {args.topo}: cannot read it ({exc.strerror}): expected a readable file with "
                           "`nvidia-smi topo -m` output or NCCL's topology dump") from None
    fabric = topo_fabric(text, args.gpu, inter_socket=args.inter_socket, num_nodes=args.nodes, network=args.network,
                         nics_per_node=args.nics_per_node, **_net_options(args))
    return _host_flags(args, fabric)


def _system_fabric(args: argparse.Namespace):
    """The fabric of ``--system``, with the connection flags applied to it or refused: ``--no-p2p`` stages the
    system's traffic through host memory over its GPUs' PCIe (as ``NCCL_P2P_DISABLE=1`` does on an NVLink system),
    ``--gpus-per-uplink`` and ``--inter-socket`` describe that host path; ``--topology``, ``--mesh-size`` and
    ``--pcie-link`` are the system's own wiring, so they are refused."""
    for flag, value in (("--gpu", args.gpu), ("--topology", args.topology), ("--mesh-size", args.mesh_size),
                        ("--pcie-link", args.pcie_link)):
        if value is not None:
            raise GpucommError(f"{flag} {value} with --system {args.system}: the system's catalog entry fixes its GPU "
                               f"and wiring; drop {flag}, or describe a what-if with --link")
    fabric = system_fabric(args.system, num_nodes=args.nodes, network=args.network, num_ranks=args.gpus)
    changes = _net_options(args)
    if args.nics_per_node is not None:
        changes["nics_per_node"] = args.nics_per_node
    if changes:
        fabric = fabric.replace(**changes)
    return _host_flags(args, fabric)
