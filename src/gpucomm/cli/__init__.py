"""The ``gpucomm`` command: cost calculator, TP breakdown, and (with torch) benchmarks.

Examples::

    gpucomm cost all_reduce --link nvlink3 --gpus 4 --size 64MiB
    gpucomm cost all_reduce --link pcie4 --no-p2p --gpus 4 --size 64MiB --json
    gpucomm tp --model llama-3-70b --tp 4 --tokens 4096 --link nvlink3
    gpucomm bench --ranks 2 -b 8 -e 64M
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from gpucomm import GpucommError, __version__
from gpucomm.cli.common import OneLineErrorParser, int_arg, size_arg
from gpucomm.model.collectives import COLLECTIVES
from gpucomm.model.cost import ALGORITHMS, collective_cost
from gpucomm.model.hardware import INTER_SOCKET_LINKS, get_gpu, get_inter_socket_link, link_keys
from gpucomm.model.tp import MODELS, link_for_gpu, tp_forward_comm, tp_step
from gpucomm.model.units import format_size, format_time


def _print_table(title: str, rows: list[tuple[str, str]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_header=True, header_style="bold")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for key, value in rows:
        table.add_row(key, value)
    Console(width=100).print(table)


def _mesh_size(args) -> int:
    """``--mesh-size``, refused where no mesh is asked for (it would be silently ignored)."""
    if args.mesh_size is None:
        return 8
    if args.topology != "mesh":
        raise GpucommError(f"--mesh-size {args.mesh_size} only applies to a point-to-point mesh: expected --topology mesh")
    return args.mesh_size


def _cmd_cost(args) -> int:
    args.mesh_size = _mesh_size(args)
    if args.pcie_link is not None and args.topology != "pairs":
        raise GpucommError(f"--pcie-link {args.pcie_link} only applies to bridged pairs: expected --topology pairs")
    cost = collective_cost(args.collective, args.size, num_ranks=args.gpus, link=args.link, p2p=not args.no_p2p,
                           protocol=args.protocol, algorithm=args.algo, topology=args.topology,
                           mesh_size=args.mesh_size, num_nodes=args.nodes, network=args.network,
                           nics_per_node=args.nics_per_node, gpus_per_uplink=args.gpus_per_uplink,
                           pcie_link=args.pcie_link or "pcie4", inter_socket=args.inter_socket)
    if args.json:
        fabric = dict(topology=args.topology, mesh_size=args.mesh_size if args.topology == "mesh" else None,
                      gpus_per_uplink=args.gpus_per_uplink,
                      inter_socket=args.inter_socket and get_inter_socket_link(args.inter_socket).key)
        print(json.dumps({**cost.as_dict(), **fabric}))
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
    _print_table(f"{args.collective} of {format_size(cost.msg_bytes)} on {where}", [
        ("time", format_time(cost.time_s)),
        ("  latency part (alpha)", format_time(cost.latency_s)),
        ("  bandwidth part", format_time(cost.transfer_s)),
        ("algbw", f"{cost.algbw_bytes_per_s / 1e9:.2f} GB/s"),
        ("busbw", f"{cost.busbw_bytes_per_s / 1e9:.2f} GB/s"),
        ("algorithm", cost.algorithm),
        ("protocol", cost.protocol),
    ])
    return 0


def _cmd_tp(args) -> int:
    args.mesh_size = _mesh_size(args)
    if args.gpu:  # a bridged card's NVLink is its bridge: the same link for the table and the step
        args.link = link_for_gpu(args.gpu, args.link, tp_size=args.tp, topology=args.topology)
    if args.context is not None and args.phase != "decode":
        raise GpucommError(f"--context {args.context} only applies to decode (the KV cache read per token): "
                           f"expected --phase decode, or --tokens for the prompt length")
    fabric = dict(p2p=not args.no_p2p, topology=args.topology, mesh_size=args.mesh_size, inter_socket=args.inter_socket)
    comm = tp_forward_comm(args.model, tp_size=args.tp, num_tokens=args.tokens * (args.batch if args.phase == "prefill" else 1),
                           link=args.link, dtype=args.dtype, **fabric)
    step = None
    if args.phase == "decode":
        comm = tp_forward_comm(args.model, tp_size=args.tp, num_tokens=args.batch, link=args.link, dtype=args.dtype, **fabric)
    roofline = args.gpu and get_gpu(args.gpu).has_roofline
    if roofline:
        step = tp_step(args.model, gpu=args.gpu, tp_size=args.tp, link=args.link, phase=args.phase, batch=args.batch,
                       prompt_len=args.tokens, context_len=args.context, dtype=args.dtype, **fabric)
    if args.json:
        out = {"model": comm.model, "tp_size": comm.tp_size, "phase": args.phase, "num_tokens": comm.num_tokens,
               "msg_bytes": comm.msg_bytes, "all_reduces": comm.all_reduces, "all_reduce_time_s": comm.per_all_reduce.time_s,
               "all_reduce_algorithm": comm.per_all_reduce.algorithm, "all_reduce_protocol": comm.per_all_reduce.protocol,
               "all_reduce_busbw_bytes_per_s": comm.per_all_reduce.busbw_bytes_per_s,
               "all_reduce_latency_s": comm.per_all_reduce.latency_s, "all_reduce_transfer_s": comm.per_all_reduce.transfer_s,
               "comm_time_s": comm.total_time_s,
               "time_s": comm.total_time_s, "link": comm.per_all_reduce.link, "p2p": comm.per_all_reduce.p2p}
        if step:
            out.update(gpu=step.gpu, compute_time_s=step.compute_s * comm.all_reduces / 2, step_time_s=step.step_s,
                       time_s=step.step_s, comm_share=step.comm_share, memory_bound=step.memory_bound,
                       tokens_per_s_per_user=step.tokens_per_s_per_user, tokens_per_s_per_gpu=step.tokens_per_s_per_gpu,
                       mem_bytes_per_gpu=step.mem_bytes_per_gpu, fits_memory=step.fits_memory)
        print(json.dumps(out))
        return 0
    rows = [
        ("tokens in the pass", str(comm.num_tokens)),
        ("message per all_reduce", format_size(comm.msg_bytes)),
        ("all_reduces per forward", str(comm.all_reduces)),
        ("time per all_reduce", f"{format_time(comm.per_all_reduce.time_s)} ({comm.per_all_reduce.algorithm}, "
                                f"{comm.per_all_reduce.protocol})"),
        ("  latency part (alpha)", format_time(comm.per_all_reduce.latency_s)),
        ("  bandwidth part", format_time(comm.per_all_reduce.transfer_s)),
        ("all_reduce time per forward", format_time(comm.total_time_s)),
        ("busbw", f"{comm.per_all_reduce.busbw_bytes_per_s / 1e9:.2f} GB/s"),
    ]
    if step:
        rows += [
            ("compute per forward (roofline)", format_time(step.compute_s * comm.all_reduces / 2)
             + (" memory-bound" if step.memory_bound else " compute-bound")),
            ("forward pass total", format_time(step.step_s)),
            ("communication share", f"{100 * step.comm_share:.1f} %"),
            ("tokens/s per user", f"{step.tokens_per_s_per_user:.1f}"),
            ("tokens/s per GPU", f"{step.tokens_per_s_per_gpu:.1f}"),
            ("weights + KV cache per GPU", format_size(step.mem_bytes_per_gpu)
             + ("" if step.fits_memory else " - does NOT fit this GPU's memory")),
        ]
    else:
        rows.append(("compute", f"the catalog has no FLOP/s or memory bandwidth for {args.gpu}: communication only"
                     if args.gpu else "add --gpu (e.g. a100_sxm4_80gb) for the roofline compute time"))
    _print_table(f"TP={args.tp} {args.phase} of {args.model} over {comm.per_all_reduce.link}", rows)
    return 0


def _percent(error: float) -> str:
    """``+12 %``, ``-3 %``, and ``0 %`` (never ``-0 %``) for a relative error."""
    pct = round(100 * error)
    return f"{pct:+d} %" if pct else "0 %"


def _cmd_validate(args) -> int:
    import shutil

    from rich.console import Console
    from rich.table import Table

    from gpucomm.model.validation import summarize, validate

    results = validate()
    if args.json:
        print(json.dumps({"results": [dict(r.__dict__, error=r.error) for r in results],
                          "summary": [dict(s.__dict__, target=s.target) for s in summarize(results)]}))
        return 0
    width = shutil.get_terminal_size((200, 24)).columns  # the terminal's width, or $COLUMNS; 200 when piped
    narrow = width < 150
    shown = [r for r in results if args.all or not r.label.endswith(" sweep")]
    table = Table(title="all_reduce: model vs published measurements", header_style="bold")
    columns = ("case", "what", "measured", "model", "error", "note") if narrow else \
        ("case", "group", "what", "measured", "model", "error", "algorithm", "note")
    for col in columns:
        table.add_column(col, justify="right" if col in ("measured", "model", "error") else "left")

    def value(x: float, metric: str) -> str:
        return f"{x:.3g} GB/s" if metric == "busbw" else format_time(x * 1e-6)

    for r in shown:
        cells = dict(case=r.case_id, group=r.group, what=r.label, measured=value(r.measured, r.metric),
                     model=value(r.predicted, r.metric), error=_percent(r.error),
                     algorithm=r.algorithm, note=("fitted here; " if r.in_sample else "") + r.why)
        table.add_row(*(cells[c] for c in columns))
    console = Console(width=width)
    console.print(table)
    hidden = len(results) - len(shown)
    if hidden:
        console.print(f"{hidden} sizes of the two full sweeps (Azure A100x8, H200x8) are counted in the summary; "
                      "--all lists them")
    summary = Table(title="summary (out-of-sample only)", header_style="bold")
    for col in ("group", "cases", "median |error|", "worst |error|", "median factor", "worst factor", "target", "meet it"):
        summary.add_column(col)
    for s in summarize(results):
        summary.add_row(s.group, str(s.count), f"{100 * s.median_abs_error:.1f} %", f"{100 * s.worst_abs_error:.0f} %",
                        f"{s.median_factor:.2f}x", f"{s.worst_factor:.2f}x", s.target,
                        "" if s.within_target is None else f"{s.within_target} of {s.count}")
    console.print(summary)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``gpucomm`` command."""
    parser = OneLineErrorParser(prog="gpucomm", description="How GPUs talk to each other: collective cost, TP communication, benchmarks.")
    parser.add_argument("--version", action="version", version=f"gpucomm {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineErrorParser)

    cost = sub.add_parser("cost", help="predict time, algbw and busbw of one collective")
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
    cost.set_defaults(func=_cmd_cost)

    tp = sub.add_parser("tp", help="TP all_reduce communication of one forward pass")
    tp.add_argument("--model", required=True, help=f"one of {', '.join(MODELS)}")
    tp.add_argument("--tp", type=int_arg("TP degree", 1), required=True, help="tensor-parallel degree (>= 1)")
    tp.add_argument("--tokens", type=int_arg("number of tokens", 1), required=True,
                    help="prompt tokens per sequence; in decode, the prompt already in the KV cache (see --context)")
    tp.add_argument("--phase", choices=("prefill", "decode"), default="prefill", help="prefill (default) or decode")
    tp.add_argument("--batch", type=int_arg("batch", 1), default=1, help="sequences in flight (default 1)")
    tp.add_argument("--context", type=int_arg("context length", 1), default=None,
                    help="decode with --gpu: tokens in the KV cache each step reads (default --tokens)")
    tp.add_argument("--gpu", default=None, help="GPU catalog key for the roofline compute time, e.g. h100_sxm5")
    tp.add_argument("--topology", default="switch",
                    help="switch (default), mesh (point-to-point) or pairs (NVLink bridges, PCIe 4.0 between pairs)")
    tp.add_argument("--mesh-size", type=int_arg("mesh size", 2), default=None,
                    help="with --topology mesh: GPUs wired in the mesh (default 8)")
    tp.add_argument("--link", required=True, help=f"interconnect: one of {', '.join(link_keys())}")
    tp.add_argument("--dtype", default="fp16", help="activation dtype: fp16 (default), bf16, fp32, fp8")
    tp.add_argument("--no-p2p", action="store_true", help="P2P disabled: stage through host memory (PCIe links)")
    tp.add_argument("--inter-socket", default=None,
                    help=f"TP GPUs under both sockets (SYS): the socket link, one of {', '.join(INTER_SOCKET_LINKS)}")
    tp.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    tp.set_defaults(func=_cmd_tp)

    val = sub.add_parser("validate", help="the model against every bundled published measurement")
    val.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    val.add_argument("--all", action="store_true", help="also list every size of the two full sweeps")
    val.set_defaults(func=_cmd_validate)

    from gpucomm.measure.copy_bandwidth import register_copy_cli
    from gpucomm.cli.fit import register_fit_cli
    from gpucomm.cli.parse import register_parse_cli

    register_parse_cli(sub)
    register_fit_cli(sub)
    register_copy_cli(sub)

    try:  # the benchmark runner needs torch; register it only where torch is installed
        from gpucomm.cli.bench import register_cli
    except ImportError:
        bench = sub.add_parser("bench", help="run a collective sweep (needs torch)")
        bench.set_defaults(func=lambda args: _missing_torch())
    else:
        register_cli(sub)
    return parser


def _missing_torch() -> int:
    print("gpucomm bench: error: 'gpucomm bench' needs PyTorch: pip install torch", file=sys.stderr)
    return 2


def _attach_negative_values(argv: list[str]) -> list[str]:
    """Turn ``--size -5MiB`` into ``--size=-5MiB`` so the value reaches validation.

    argparse takes ``-5MiB`` for an option and answers "expected one argument";
    the user should instead hear that the size must be positive.
    """
    out: list[str] = []
    for token in argv:
        if out and out[-1].startswith("--") and "=" not in out[-1] and re.match(r"^-[0-9.]", token):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gpucomm`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(_attach_negative_values(sys.argv[1:] if argv is None else list(argv)))
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `gpucomm ... | head`: the reader left, nothing to report
        return 0
    except GpucommError as exc:
        print(f"gpucomm {args.command}: error: {exc}", file=sys.stderr)  # as argparse and the other verbs say it
        return 2


if __name__ == "__main__":
    sys.exit(main())
