"""``gpucomm tp``: the tensor-parallel all_reduce communication of one forward pass.

The message size and count come from :func:`gpucomm.model.tp.tp_forward_comm`; with ``--gpu``
(a catalog GPU with FLOP/s and memory bandwidth), :func:`gpucomm.model.tp.tp_step` adds the
roofline compute time, the communication share and tokens/s. Pure Python: no torch, plotly or
pandas.

Examples::

    gpucomm tp --model llama-3-70b --tp 4 --tokens 4096 --link nvlink3
    gpucomm tp --model llama-3-70b --tp 8 --tokens 2048 --phase decode --batch 16 --link nvlink4 --gpu h100_sxm5
"""

from __future__ import annotations

import argparse

from gpucomm import GpucommError
from gpucomm.cli.common import add_connection_arguments, int_arg, mesh_size, print_json, print_table
from gpucomm.model.fabric import make_fabric
from gpucomm.model.hardware import get_gpu, link_keys
from gpucomm.model.tp import MODELS, tp_forward_comm, tp_step
from gpucomm.model.units import format_size, format_time

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Add the ``tp`` parser to ``subparsers`` (from ``ArgumentParser.add_subparsers``); its ``func`` is :func:`run`."""
    tp = subparsers.add_parser("tp", help="TP all_reduce communication of one forward pass")
    tp.add_argument("--model", required=True, help=f"one of {', '.join(MODELS)}")
    tp.add_argument("--tp", type=int_arg("TP degree", 1), required=True, help="tensor-parallel degree (>= 1)")
    tp.add_argument("--tokens", type=int_arg("number of tokens", 1), required=True,
                    help="prompt tokens per sequence; in decode, the prompt already in the KV cache (see --context)")
    tp.add_argument("--phase", choices=("prefill", "decode"), default="prefill", help="prefill (default) or decode")
    tp.add_argument("--batch", type=int_arg("batch", 1), default=1, help="sequences in flight (default 1)")
    tp.add_argument("--context", type=int_arg("context length", 1), default=None,
                    help="decode with --gpu: tokens in the KV cache each step reads (default --tokens)")
    tp.add_argument("--gpu", default=None, help="GPU catalog key for the roofline compute time, e.g. h100_sxm5")
    tp.add_argument("--link", required=True, help=f"interconnect: one of {', '.join(link_keys())}")
    tp.add_argument("--dtype", default="fp16", help="activation dtype: fp16 (default), bf16, fp32, fp8")
    add_connection_arguments(tp)
    tp.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    tp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the TP communication (and, with ``--gpu``, the roofline step) ``args`` describe; return 0.

    Raises
    ------
    GpucommError
        Unknown model, link or GPU, or a flag that does not apply (printed by ``gpucomm``'s main).
    """
    args.mesh_size = mesh_size(args)
    # with --gpu, a bridged card's NVLink is its bridge: the same fabric for the table and the step
    fabric = make_fabric(args.link, gpu=args.gpu, p2p=not args.no_p2p, topology=args.topology, mesh_size=args.mesh_size,
                         inter_socket=args.inter_socket)
    if args.context is not None and args.phase != "decode":
        raise GpucommError(f"--context {args.context} only applies to decode (the KV cache read per token): "
                           f"expected --phase decode, or --tokens for the prompt length")
    # prefill all-reduces every prompt token of every sequence at once; decode one new token per sequence
    num_tokens = args.tokens * args.batch if args.phase == "prefill" else args.batch
    comm = tp_forward_comm(args.model, tp_size=args.tp, num_tokens=num_tokens, fabric=fabric, dtype=args.dtype)
    step = None
    if args.gpu and get_gpu(args.gpu).has_roofline:
        step = tp_step(args.model, fabric=fabric, tp_size=args.tp, phase=args.phase, batch=args.batch,
                       prompt_len=args.tokens, context_len=args.context, dtype=args.dtype)
    ar = comm.per_all_reduce  # None at TP=1: one GPU, no all_reduce
    if args.json:  # the keys stay those of earlier releases; each value is per pass or per all_reduce as named
        out = {"model": comm.model, "tp_size": comm.tp_size, "phase": args.phase, "num_tokens": comm.num_tokens,
               "msg_bytes": comm.msg_bytes, "all_reduces": comm.all_reduces_per_pass,
               "all_reduce_time_s": ar.time_s if ar else 0.0,
               "all_reduce_algorithm": ar.algorithm if ar else None, "all_reduce_protocol": ar.protocol if ar else None,
               "all_reduce_busbw_bytes_per_s": ar.busbw_bytes_per_s if ar else 0.0,
               "all_reduce_latency_s": ar.latency_s if ar else 0.0, "all_reduce_transfer_s": ar.transfer_s if ar else 0.0,
               "all_reduce_launch_s": ar.launch_s if ar else 0.0,
               "comm_time_s": comm.comm_per_pass_s,
               "time_s": comm.comm_per_pass_s, "link": fabric.link.key, "p2p": fabric.p2p}
        if step:
            out.update(gpu=step.gpu, compute_time_s=step.compute_per_pass_s, step_time_s=step.time_per_pass_s,
                       time_s=step.time_per_pass_s, comm_share=step.comm_share, memory_bound=step.memory_bound,
                       tokens_per_s_per_user=step.tokens_per_s_per_user, tokens_per_s_per_gpu=step.tokens_per_s_per_gpu,
                       mem_bytes_per_gpu=step.mem_bytes_per_gpu, fits_memory=step.fits_memory)
        print_json(out)
        return 0
    rows = [("tokens in the pass", str(comm.num_tokens))]
    if ar:
        rows += [
            ("message per all_reduce", format_size(comm.msg_bytes)),
            ("all_reduces per forward", str(comm.all_reduces_per_pass)),
            ("time per all_reduce", f"{format_time(ar.time_s)} ({ar.algorithm}, {ar.protocol})"),
            ("  latency part (alpha)", format_time(ar.latency_s)),
            ("  bandwidth part", format_time(ar.transfer_s)),
            ("  launch part", format_time(ar.launch_s)),
            ("all_reduce time per forward", format_time(comm.comm_per_pass_s)),
            ("busbw", f"{ar.busbw_bytes_per_s / 1e9:.2f} GB/s"),
        ]
    else:
        rows += [("all_reduces per forward", "0 (TP=1: one GPU holds every layer, nothing to exchange)"),
                 ("all_reduce time per forward", format_time(comm.comm_per_pass_s))]
    if step:
        rows += [
            ("compute per forward (roofline)", format_time(step.compute_per_pass_s)
             + (" memory-bound" if step.memory_bound else " compute-bound")),
            ("forward pass total", format_time(step.time_per_pass_s)),
            ("communication share", f"{100 * step.comm_share:.1f} %"),
            ("tokens/s per user", f"{step.tokens_per_s_per_user:.1f}"),
            ("tokens/s per GPU", f"{step.tokens_per_s_per_gpu:.1f}"),
            ("weights + KV cache per GPU", format_size(step.mem_bytes_per_gpu)
             + ("" if step.fits_memory else " - does NOT fit this GPU's memory")),
        ]
    else:
        rows.append(("compute", f"the catalog has no FLOP/s or memory bandwidth for {args.gpu}: communication only"
                     if args.gpu else "add --gpu (e.g. a100_sxm4_80gb) for the roofline compute time"))
    print_table(f"TP={args.tp} {args.phase} of {args.model} over {fabric.link.key}", ("quantity", "value"), rows,
                right_aligned=("value",))
    return 0
