"""Golden comparison of :func:`gpucomm.model.cost.collective_cost`: every answer on a broad grid, bit for bit.

A speed change of the cost model must not change any answer. This script evaluates a broad grid (every catalog
system and every link as a fabric, on one node and across nodes; every collective; every algorithm including
``auto``, every protocol including ``auto``; several rank counts; sizes from 1 B to 16 GiB; the launch modes,
several NCCL releases and ``gpus_per_thread``) and records, for each call, a SHA-256 of ``repr()`` of the whole
:class:`~gpucomm.model.cost.CollectiveCost` (every field, ``terms``, ``alternatives``, ``time_low_s`` and
``time_high_s``; ``repr`` of a float is exact) or of the error it raises. Run it before a change with ``--write``
and after it with ``--check``: the check fails on the first call whose answer differs, or on a call missing from
either run.

Prints figures; it is not a test. Run::

    python benchmarks/golden_cost.py --write /tmp/golden.pickle    # before the change
    python benchmarks/golden_cost.py --check /tmp/golden.pickle    # after it
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import sys
import time

from gpucomm import GpucommError
from gpucomm.model.collectives import REGISTRY
from gpucomm.model.cost import ALGORITHMS, PROTOCOLS, collective_cost
from gpucomm.model.fabric import make_fabric, system_fabric
from gpucomm.model.hardware import links, nvswitch

SIZES_ALL = sorted({1, 2, 3, 7, 100, 1000, 4095, 4097, 65_537, 999_999, 3 * 2**20, 5 * 2**20 + 3, 3 * 2**30}
                   | {2**k for k in range(35)} | {3 * 2**k for k in range(1, 33, 3)})
"""1 B to 16 GiB: every power of two, some threes times one, some odd sizes (for ``auto``/``auto``)."""
SIZES_NAMED = sorted({1, 3, 1000, 65_537, 3 * 2**20 + 1} | {2**k for k in range(0, 35, 3)} | {2**34})
"""A thinner grid for each named algorithm and protocol."""
SIZES_OPTIONS = (1, 4096, 2**20, 2**26, 2**32)
"""Sizes for the launch modes, releases and ``gpus_per_thread``."""


def fabrics() -> list[tuple[str, object, tuple]]:
    """(name, fabric, rank counts) for every catalog system and link, one node and across nodes."""
    out = []
    for key in nvswitch.SYSTEMS:
        for nodes in (1, 2, 4):
            try:
                fab = system_fabric(key, num_nodes=nodes)
            except GpucommError:
                try:
                    fab = system_fabric(key, num_nodes=nodes, network="ib_ndr")
                except GpucommError as exc:
                    out.append((f"{key} x{nodes}", exc, ()))
                    continue
            per_node = fab.gpus_per_node or 8
            ranks = sorted({nodes * g for g in (1, 2, 3, 4, 8, per_node) if g <= per_node})
            out.append((f"{key} x{nodes}", fab, tuple(ranks)))
        try:
            out.append((f"{key} 4 ranks", system_fabric(key, num_ranks=4), (2, 4)))
        except GpucommError as exc:
            out.append((f"{key} 4 ranks", exc, ()))
    for key in links.LINKS:
        variants = [("", {})]
        if key.startswith("pcie"):
            variants += [(" no p2p", {"p2p": False}), (" no p2p uplink 2", {"p2p": False, "gpus_per_uplink": 2}),
                         (" 2 sockets", {"inter_socket": "upi_skylake"})]
        else:
            variants += [(" mesh", {"topology": "mesh", "mesh_size": 8})]
        variants += [(" x2 ib_ndr", {"num_nodes": 2, "network": "ib_ndr"}),
                     (" x4 eth_100g socket", {"num_nodes": 4, "network": "eth_100g", "net_transport": "socket"}),
                     (" x2 eth_400g", {"num_nodes": 2, "network": "eth_400g", "nics_per_node": 4}),
                     (" x8 ib_hdr nogdr", {"num_nodes": 8, "network": "ib_hdr", "gdr": False})]
        for suffix, opts in variants:
            try:
                fab = make_fabric(key, **opts)
            except GpucommError as exc:
                out.append((key + suffix, exc, ()))
                continue
            nodes = fab.num_nodes
            ranks = sorted({nodes * g for g in (1, 2, 3, 4, 8, 16)})
            out.append((key + suffix, fab, tuple(ranks)))
    return out


def _answer(collective, size, n, fab, **kw) -> str:
    try:
        text = repr(collective_cost(collective, size, num_ranks=n, fabric=fab, **kw))
    except Exception as exc:  # noqa: BLE001 (an unexpected exception is an answer too, to keep)
        text = f"error: {type(exc).__name__}: {exc}"
    return hashlib.sha256(text.encode()).hexdigest()


def grid(only: str = ""):
    """Yield (key, answer digest) for every call of the grid (of the fabrics whose name holds ``only``)."""
    for name, fab, ranks in fabrics():
        if only not in name:
            continue
        if isinstance(fab, GpucommError):
            yield (name,), hashlib.sha256(str(fab).encode()).hexdigest()
            continue
        for n in ranks:
            for collective in REGISTRY:
                for algorithm in ALGORITHMS:
                    for protocol in ("auto", *PROTOCOLS):
                        sizes = SIZES_ALL if (algorithm, protocol) == ("auto", "auto") else SIZES_NAMED
                        first = _answer(collective, sizes[0], n, fab, algorithm=algorithm, protocol=protocol)
                        yield (name, n, collective, algorithm, protocol, sizes[0]), first
                        try:  # an error that does not depend on the size: the other sizes say the same
                            collective_cost(collective, sizes[0], num_ranks=n, fabric=fab, algorithm=algorithm,
                                            protocol=protocol)
                        except Exception:  # noqa: BLE001
                            continue
                        for size in sizes[1:]:
                            yield ((name, n, collective, algorithm, protocol, size),
                                   _answer(collective, size, n, fab, algorithm=algorithm, protocol=protocol))
                if n > 1 and collective in ("all_reduce", "all_gather", "all_to_all"):
                    for launch in ("eager", "graph", "sync"):
                        for version in ("2.12.12", "2.19.3", "2.27.3"):
                            for gpt in sorted({1, n // fab.num_nodes}):
                                for size in SIZES_OPTIONS:
                                    yield ((name, n, collective, launch, version, gpt, size),
                                           _answer(collective, size, n, fab, launch=launch, nccl_version=version,
                                                   gpus_per_thread=gpt))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="PATH", help="record every answer's digest")
    mode.add_argument("--check", metavar="PATH", help="compare every answer with a recorded run")
    parser.add_argument("--only", default="", metavar="TEXT",
                        help="only the fabrics whose name holds TEXT (a quicker check; the digests of the others are "
                             "not compared)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    answers = dict(grid(args.only))
    elapsed = time.perf_counter() - start
    print(f"{len(answers):,} calls in {elapsed:.1f} s")
    if args.write:
        if args.only:
            parser.error("--write records the whole grid: drop --only")
        with open(args.write, "xb") as f:
            pickle.dump(answers, f)
        print(f"written to {args.write}")
        return 0
    with open(args.check, "rb") as f:
        golden = pickle.load(f)
    golden = {k: v for k, v in golden.items() if args.only in k[0]}
    missing = golden.keys() - answers.keys()
    extra = answers.keys() - golden.keys()
    differ = [k for k in golden.keys() & answers.keys() if golden[k] != answers[k]]
    print(f"golden {len(golden):,}, now {len(answers):,}: {len(differ)} differ, {len(missing)} missing, {len(extra)} new")
    for k in (differ + sorted(missing, key=repr) + sorted(extra, key=repr))[:20]:
        print("  ", k)
    return 0 if not (differ or missing or extra) else 1


if __name__ == "__main__":
    sys.exit(main())
