"""Copy bandwidth: host to device and back (pinned, pageable), device memory, GPU to GPU; host memory on a CPU.

What a single copy reaches bounds every transfer built on it: a host-to-device copy from pinned
memory runs at the PCIe link's rate (``gpucomm.model.hardware.pcie``), one from pageable memory is
staged by the driver through a pinned buffer and is slower; a device-to-device copy reads and
writes every byte in HBM, so it runs at about half the memory bandwidth
(``gpucomm.model.hardware.gpus``); a peer copy between two GPUs runs over NVLink or PCIe when CUDA
peer access is possible (``torch.cuda.can_device_access_peer``), and is staged through host
memory otherwise.

Without a GPU the same measurement times host memory copies (``torch.Tensor.copy_`` and
``numpy.copyto``), so the lab runs everywhere.

Method
------
For each kind and size: allocate and touch both buffers, run ``warmup_iters`` untimed copies,
then ``blocks`` timed blocks of ``iters`` back-to-back copies and keep the median block's time
divided by ``iters``. On GPUs a block is timed with CUDA events recorded on the stream the
copies run on (the source GPU's current stream for a peer copy); on the CPU with the host
clock. ``bw_bytes_per_s = bytes / time_s``: bytes *copied* per second, one direction. (CUDA's
``bandwidthTest`` sample reports device-to-device as ``2 * bytes / time``, the memory traffic;
here that factor lives in :func:`expected_copy_bw_bytes_per_s`, not in the measurement.)

Importing this module does not import torch: :func:`register_copy_cli` only declares the
``copybw`` arguments, and torch is loaded when a measurement runs.

Examples
--------
>>> from gpucomm.measure.copy_bandwidth import measure_copy_bandwidth      # doctest: +SKIP
>>> results = measure_copy_bandwidth(max_bytes="64MiB")          # doctest: +SKIP
>>> results.peak("h2d_pinned") / 1e9                              # doctest: +SKIP
55.1
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import re
import socket
import statistics
import sys
import time
from typing import IO, Iterable

from gpucomm import GpucommError
from gpucomm.cli.common import int_arg
from gpucomm.model.units import format_size, parse_size, to_gb_per_s

#: Every kind of copy, with what it measures.
COPY_KINDS: dict[str, str] = {
    "h2d_pinned": "host to device from pinned (page-locked) host memory: the PCIe link",
    "h2d_pageable": "host to device from pageable host memory: staged by the driver through a pinned buffer",
    "d2h_pinned": "device to host into pinned host memory: the PCIe link",
    "d2h_pageable": "device to host into pageable host memory: staged through a pinned buffer",
    "d2d": "device to device on one GPU: every byte read and written in HBM",
    "peer_0_to_1": "GPU 0 to GPU 1: NVLink or PCIe with peer access, else staged through host memory",
    "peer_1_to_0": "GPU 1 to GPU 0: NVLink or PCIe with peer access, else staged through host memory",
    "host_torch": "host memory to host memory with torch Tensor.copy_ (may use several threads)",
    "host_numpy": "host memory to host memory with numpy.copyto (one thread)",
}
GPU_KINDS = ("h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable", "d2d")
PEER_KINDS = ("peer_0_to_1", "peer_1_to_0")
HOST_KINDS = ("host_torch", "host_numpy")

DEFAULT_MIN_BYTES = 4 * 2**10
DEFAULT_MAX_BYTES = 64 * 2**20


# --- the catalog side (no torch) ------------------------------------------------------------

_GPU_NAME_RULES = (  # (regex on the lower-cased CUDA device name, catalog key); first match wins
    (r"h200.*nvl", "h200_nvl"), (r"h200", "h200_sxm"),
    (r"h100.*nvl", "h100_nvl"), (r"h100.*pcie", "h100_pcie"), (r"h100", "h100_sxm5"),
    (r"h800", "h800_sxm"), (r"\bh20\b", "h20"),
    (r"a100.*pcie", "a100_pcie_80gb"), (r"a100.*40gb", "a100_sxm4_40gb"), (r"a100", "a100_sxm4_80gb"),
    (r"b200", "b200_hgx"), (r"v100", "v100_sxm2"), (r"\ba40\b", "a40"),
    (r"rtx 5090", "rtx_5090"), (r"rtx 4090", "rtx_4090"), (r"rtx 3090", "rtx_3090"), (r"2080 ti", "rtx_2080_ti"),
)


def catalog_gpu_key(device_name: str) -> str | None:
    """The catalog key (:data:`gpucomm.model.hardware.GPUS`) that a CUDA device name most likely is, or None.

    A guess from the name alone: ``torch.cuda.get_device_name`` says "NVIDIA H100 80GB HBM3"
    for the SXM5 part and "NVIDIA H100 PCIe" for the card, but not, for example, which A100
    variant sits in a cloud instance. Check it against ``nvidia-smi -q``.

    Examples
    --------
    >>> catalog_gpu_key("NVIDIA H100 80GB HBM3"), catalog_gpu_key("NVIDIA H200"), catalog_gpu_key("NVIDIA A100-SXM4-40GB")
    ('h100_sxm5', 'h200_sxm', 'a100_sxm4_40gb')
    >>> catalog_gpu_key("NVIDIA GeForce RTX 4090"), catalog_gpu_key("cpu") is None
    ('rtx_4090', True)
    """
    name = str(device_name).lower()
    for pattern, key in _GPU_NAME_RULES:
        if re.search(pattern, name):
            return key
    return None


def expected_copy_bw_bytes_per_s(gpu) -> dict[str, tuple[float | None, str]]:
    """What the catalog says each GPU copy kind can reach on ``gpu``, in bytes/s, with the basis.

    Parameters
    ----------
    gpu : str or gpucomm.model.hardware.GPU
        Catalog key or entry (see :func:`catalog_gpu_key`).

    Returns
    -------
    dict
        ``kind -> (bw_bytes_per_s or None, basis)`` for the kinds of :data:`GPU_KINDS` and
        :data:`PEER_KINDS`: host copies at the PCIe link's per-direction rate, ``d2d`` at half
        the memory bandwidth (a copy reads and writes every byte), peer copies at the NVLink
        per-direction rate (or PCIe's without NVLink). None where the catalog lacks the value.

    Notes
    -----
    These are nominal rates. Measured pinned host copies reach about 80-90 % of PCIe's (packet
    headers; the PCIe 5.0 entry's notes cite 55.4 GB/s of 63.0 on H200), and pageable copies
    less. Peer copies assume the two GPUs are linked directly (``nvidia-smi topo -m``).

    Examples
    --------
    >>> exp = expected_copy_bw_bytes_per_s("h100_sxm5")
    >>> round(exp["h2d_pinned"][0] / 1e9, 1), round(exp["d2d"][0] / 1e9), round(exp["peer_0_to_1"][0] / 1e9)
    (63.0, 1675, 450)
    """
    from gpucomm.model.hardware import get_gpu, pcie_bw_bytes_per_s

    gpu = get_gpu(gpu)
    if gpu.pcie_gen:
        pcie = pcie_bw_bytes_per_s(gpu.pcie_gen, gpu.pcie_lanes or 16)
        pcie_basis = f"PCIe {gpu.pcie_gen}.0 x{gpu.pcie_lanes or 16}, per direction"
    else:
        pcie, pcie_basis = None, f"the catalog has no PCIe generation for {gpu.name}"
    out: dict[str, tuple[float | None, str]] = {}
    for kind in ("h2d_pinned", "d2h_pinned"):
        out[kind] = (pcie, pcie_basis)
    for kind in ("h2d_pageable", "d2h_pageable"):
        out[kind] = (pcie, pcie_basis + " (an upper bound: the staging copy in host memory comes on top)")
    if gpu.mem_bw_bytes_per_s:
        out["d2d"] = (gpu.mem_bw_bytes_per_s / 2, f"{gpu.mem_type or 'memory'} bandwidth / 2 "
                                                   "(a copy reads and writes every byte)")
    else:
        out["d2d"] = (None, f"the catalog has no memory bandwidth for {gpu.name}")
    if gpu.nvlink_gen:
        peer = (gpu.nvlink_bw_bytes_per_s, f"NVLink {gpu.nvlink_gen}.0, per direction per GPU"
                + (" (if the bridge is fitted)" if gpu.nvlink_bridge else ""))
    elif gpu.pcie_p2p is False:
        peer = (None, f"{gpu.name} has no CUDA peer access: staged through host memory")
    else:
        peer = (pcie, pcie_basis + " (peer access over PCIe)")
    for kind in PEER_KINDS:
        out[kind] = peer
    return out


def copy_sizes(min_bytes: int | str = DEFAULT_MIN_BYTES, max_bytes: int | str = DEFAULT_MAX_BYTES,
               step_factor: int = 4) -> list[int]:
    """Sizes in bytes from ``min_bytes`` to ``max_bytes``, multiplying by ``step_factor`` (as ``-b -e -f``).

    Examples
    --------
    >>> copy_sizes("1KiB", "16KiB", 2)
    [1024, 2048, 4096, 8192, 16384]
    """
    from gpucomm.measure.config import sweep_sizes

    return [size for size, _ in sweep_sizes(parse_size(min_bytes), parse_size(max_bytes), step_factor, 1)]


# --- results and the table (no torch) -------------------------------------------------------

class CopyResults(list):
    """A list of copy records (dicts: ``kind``, ``bytes``, ``iters``, ``time_s``, ``bw_bytes_per_s``), with :attr:`meta`."""

    def __init__(self, records: Iterable[dict] = (), meta: dict | None = None):
        super().__init__(records)
        self.meta = dict(meta or {})

    @property
    def kinds(self) -> list[str]:
        """The kinds measured, in order."""
        return list(dict.fromkeys(r["kind"] for r in self))

    def of_kind(self, kind: str) -> list[dict]:
        """The records of one kind, by size."""
        return sorted((r for r in self if r["kind"] == kind), key=lambda r: r["bytes"])

    def peak(self, kind: str) -> float:
        """The highest bandwidth measured for ``kind``, bytes/s (raises if it was not measured)."""
        rows = self.of_kind(kind)
        if not rows:
            raise GpucommError(f"copy kind {kind!r} was not measured: expected one of {', '.join(self.kinds)}")
        return max(r["bw_bytes_per_s"] for r in rows)

    def at(self, kind: str, size_bytes: int) -> dict:
        """The record of ``kind`` at ``size_bytes`` (raises if there is none)."""
        for r in self.of_kind(kind):
            if r["bytes"] == size_bytes:
                return r
        raise GpucommError(f"no {kind} record at {size_bytes} B: measured sizes are "
                           f"{[r['bytes'] for r in self.of_kind(kind)]}")

    def __repr__(self) -> str:
        return f"CopyResults({len(self)} records, kinds={self.kinds})"


_COLS = [("kind", "", 14), ("size", "(B)", 12), ("time", "(us)", 11), ("bw", "(GB/s)", 9)]


def _fmt_us(time_s: float) -> str:
    us = time_s * 1e6
    return f"{us:.2f}" if us < 1e4 else f"{us:.0f}"


def format_copy_header(meta: dict) -> str:
    """Comment lines and column titles printed before the first row."""
    m = meta.get
    lines = [f"# gpucomm copybw on {m('host', '?')}: {', '.join(m('devices', [])) or '?'}",
             f"# timing: {m('timing', '?')}; iters {m('iters', '?')} x {m('blocks', '?')} blocks (median block), "
             f"warm-up {m('warmup_iters', '?')}"]
    for pair, ok in (m("peer_access") or {}).items():
        lines.append(f"# peer access GPU {pair}: {'yes' if ok else 'no (copies staged through host memory)'}")
    lines.append("# bw = bytes copied / time, one direction; GB/s = 1e9 B/s; sizes in bytes")
    lines.append("#" + "".join(f"{t:>{w}}" for t, _, w in _COLS)[1:])
    lines.append("#" + "".join(f"{u:>{w}}" for _, u, w in _COLS)[1:])
    return "\n".join(lines)


def format_copy_row(record: dict) -> str:
    """One table row."""
    cells = [record["kind"], str(record["bytes"]), _fmt_us(record["time_s"]),
             f"{to_gb_per_s(record['bw_bytes_per_s']):.2f}"]
    return "".join(f"{c:>{w}}" for c, (_, _, w) in zip(cells, _COLS))


def format_copy_footer(results: CopyResults | list[dict]) -> str:
    """The peak bandwidth of each kind, and at which size."""
    results = results if isinstance(results, CopyResults) else CopyResults(results)
    lines = []
    for kind in results.kinds:
        best = max(results.of_kind(kind), key=lambda r: r["bw_bytes_per_s"])
        lines.append(f"# peak {kind:<13}: {to_gb_per_s(best['bw_bytes_per_s']):8.2f} GB/s at "
                     f"{format_size(best['bytes'])}")
    return "\n".join(lines)


def format_copy_table(results: CopyResults | list[dict], meta: dict | None = None) -> str:
    """The whole table (header, rows, footer)."""
    meta = meta if meta is not None else getattr(results, "meta", {})
    return "\n".join([format_copy_header(meta)] + [format_copy_row(r) for r in results]
                     + [format_copy_footer(list(results))])


# --- measuring (torch imported here) ---------------------------------------------------------

def available_copy_kinds() -> tuple[str, ...]:
    """The kinds this machine can measure: GPU kinds (and peer kinds with >= 2 GPUs), else host kinds."""
    import torch

    if not torch.cuda.is_available():
        return HOST_KINDS
    return GPU_KINDS + (PEER_KINDS if torch.cuda.device_count() >= 2 else ())


def _check_kinds(kinds, gpus: int) -> tuple[str, ...]:
    if isinstance(kinds, str):
        kinds = [k.strip() for k in kinds.split(",") if k.strip()]
    kinds = tuple(kinds)
    if not kinds:
        raise GpucommError("no copy kinds given: expected one or more of " + ", ".join(COPY_KINDS))
    for kind in kinds:
        if kind not in COPY_KINDS:
            raise GpucommError(f"copy kind {kind!r} is not valid: expected one of {', '.join(COPY_KINDS)}")
        if kind in GPU_KINDS and gpus < 1:
            raise GpucommError(f"copy kind {kind} needs a CUDA GPU, and none is available: expected "
                               f"{' or '.join(HOST_KINDS)} on this machine")
        if kind in PEER_KINDS and gpus < 2:
            raise GpucommError(f"copy kind {kind} needs 2 CUDA GPUs, and {gpus} is available: expected "
                               "one of " + ", ".join(GPU_KINDS if gpus else HOST_KINDS))
    return tuple(dict.fromkeys(kinds))


def _check_count(value, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise GpucommError(f"{what} {value!r} is not valid: expected an integer >= {minimum}")
    return value


def _cpu_name() -> str:
    from gpucomm.measure.runner import cpu_model_name

    return cpu_model_name()


def _buffers(kind: str, size: int, device: int):
    """(destination, source) of one kind: uint8 tensors (numpy arrays for host_numpy), touched."""
    import numpy as np
    import torch

    if kind == "host_numpy":
        src, dst = np.ones(size, dtype=np.uint8), np.zeros(size, dtype=np.uint8)
        dst[:] = 0  # write every page once, so the timed copies never fault pages in
        return dst, src
    if kind == "host_torch":
        return torch.zeros(size, dtype=torch.uint8), torch.ones(size, dtype=torch.uint8)
    gpu = torch.device("cuda", device)
    host = lambda pinned: torch.ones(size, dtype=torch.uint8, pin_memory=pinned)  # noqa: E731
    if kind == "h2d_pinned":
        return torch.zeros(size, dtype=torch.uint8, device=gpu), host(True)
    if kind == "h2d_pageable":
        return torch.zeros(size, dtype=torch.uint8, device=gpu), host(False)
    if kind == "d2h_pinned":
        return host(True).zero_(), torch.ones(size, dtype=torch.uint8, device=gpu)
    if kind == "d2h_pageable":
        return host(False).zero_(), torch.ones(size, dtype=torch.uint8, device=gpu)
    if kind == "d2d":
        return torch.zeros(size, dtype=torch.uint8, device=gpu), torch.ones(size, dtype=torch.uint8, device=gpu)
    src_dev, dst_dev = (0, 1) if kind == "peer_0_to_1" else (1, 0)
    return (torch.zeros(size, dtype=torch.uint8, device=torch.device("cuda", dst_dev)),
            torch.ones(size, dtype=torch.uint8, device=torch.device("cuda", src_dev)))


def _time_block_s(kind: str, dst, src, iters: int) -> float:
    """Seconds per copy of one block of ``iters`` copies."""
    if kind in HOST_KINDS:
        import numpy as np

        copy = (lambda: np.copyto(dst, src)) if kind == "host_numpy" else (lambda: dst.copy_(src))
        start = time.perf_counter()
        for _ in range(iters):
            copy()
        return (time.perf_counter() - start) / iters
    import torch

    stream_device = src.device if src.device.type == "cuda" else dst.device  # where the copy is queued
    with torch.cuda.device(stream_device):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            dst.copy_(src, non_blocking=True)  # pageable memory makes it synchronous anyway
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / iters  # elapsed_time is in ms


def _sync_all() -> None:
    import torch

    if torch.cuda.is_available():
        for d in range(torch.cuda.device_count()):
            torch.cuda.synchronize(d)


def measure_copy(kind: str, size_bytes: int, *, iters: int = 20, warmup_iters: int = 5, blocks: int = 3,
                 device: int = 0) -> dict:
    """Time one kind of copy at one size; returns its record.

    Parameters
    ----------
    kind : str
        One of :data:`COPY_KINDS`.
    size_bytes : int
        Bytes per copy (>= 1).
    iters, warmup_iters, blocks : int
        Copies per timed block, untimed copies first, and timed blocks (median kept).
    device : int
        The GPU for host and device copies (peer copies use GPUs 0 and 1).

    Returns
    -------
    dict
        ``{"record": "copy", "kind", "bytes", "iters", "blocks", "time_s", "bw_bytes_per_s"}``:
        ``time_s`` is seconds per copy (median block), ``bw_bytes_per_s = bytes / time_s``.
    """
    dst, src = _buffers(kind, size_bytes, device)
    if warmup_iters:
        _time_block_s(kind, dst, src, warmup_iters)
    times = [_time_block_s(kind, dst, src, iters) for _ in range(blocks)]
    time_s = max(statistics.median(times), 1e-12)
    del dst, src
    return {"record": "copy", "kind": kind, "bytes": size_bytes, "iters": iters, "blocks": blocks,
            "time_s": time_s, "bw_bytes_per_s": size_bytes / time_s}


def copy_metadata(kinds: Iterable[str], *, iters: int, warmup_iters: int, blocks: int, device: int) -> dict:
    """The metadata record: host, devices, peer access, versions, timing method."""
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    kinds = list(kinds)
    uses_gpu = any(k not in HOST_KINDS for k in kinds)
    devices = []
    if uses_gpu:
        used = sorted({device} | ({0, 1} if any(k in PEER_KINDS for k in kinds) else set()))
        devices = [f"cuda:{d} {torch.cuda.get_device_name(d)}" for d in used]
    if any(k in HOST_KINDS for k in kinds):
        devices.append(f"cpu {_cpu_name()} ({torch.get_num_threads()} torch threads)")
    peer = {}
    if gpus >= 2 and any(k in PEER_KINDS for k in kinds):
        peer = {"0->1": bool(torch.cuda.can_device_access_peer(0, 1)),
                "1->0": bool(torch.cuda.can_device_access_peer(1, 0))}
    timing = ("CUDA events on the copy's stream" if uses_gpu else "host clock") + (
        "; host clock for host kinds" if uses_gpu and any(k in HOST_KINDS for k in kinds) else "")
    return {
        "record": "meta", "schema": 1, "tool": "gpucomm.bench.copy",
        "date": _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(timespec="seconds"),
        "host": socket.gethostname(), "devices": devices, "num_gpus": gpus,
        "catalog_gpu": catalog_gpu_key(torch.cuda.get_device_name(device)) if uses_gpu else None,
        "peer_access": peer, "kinds": kinds, "iters": iters, "warmup_iters": warmup_iters, "blocks": blocks,
        "timing": timing, "torch_threads": torch.get_num_threads(), "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda, "python_version": platform.python_version(),
        "platform": platform.platform(),
    }


def measure_copy_bandwidth(kinds: Iterable[str] | str | None = None, *, min_bytes: int | str = DEFAULT_MIN_BYTES,
                           max_bytes: int | str = DEFAULT_MAX_BYTES, step_factor: int = 4, iters: int = 20,
                           warmup_iters: int = 5, blocks: int = 3, device: int = 0,
                           out: str | os.PathLike | None = None, print_table: bool = True,
                           stream: IO[str] | None = None) -> CopyResults:
    """Measure copy bandwidth for several kinds of copy over a range of sizes.

    Parameters
    ----------
    kinds : iterable of str, or str, or None
        Kinds from :data:`COPY_KINDS` (a comma-separated string is accepted); None: every kind
        this machine can run (:func:`available_copy_kinds`): host/device kinds on a GPU, peer
        kinds with two GPUs or more, host memory kinds without a GPU.
    min_bytes, max_bytes : int or str
        Size range in bytes, or strings such as ``"64MiB"``.
    step_factor : int
        Integer factor between sizes (>= 2).
    iters, warmup_iters, blocks : int
        Copies per timed block (>= 1), untimed copies before them (>= 0), timed blocks (>= 1,
        the median is kept).
    device : int
        The GPU for host/device and device copies.
    out : str or Path or None
        JSON-lines file: the metadata record, then one record per kind and size.
    print_table : bool
        Print the table to ``stream`` (default stdout) as rows finish.

    Returns
    -------
    CopyResults
        Records ``kind``, ``bytes``, ``time_s`` (seconds per copy), ``bw_bytes_per_s``
        (bytes/s, one direction), with the metadata in ``.meta`` (devices, peer access).

    Raises
    ------
    GpucommError
        Unknown kinds, GPU kinds without a GPU, peer kinds with fewer than 2 GPUs, bad sizes
        or counts, a size that does not fit in memory.
    """
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    kinds = available_copy_kinds() if kinds is None else _check_kinds(kinds, gpus)
    _check_count(iters, "iterations -n", 1)
    _check_count(warmup_iters, "warm-up iterations -w", 0)
    _check_count(blocks, "timed blocks --blocks", 1)
    _check_count(device, "device", 0)
    if gpus and device >= gpus:
        raise GpucommError(f"device {device} is not valid: expected 0 to {gpus - 1}")
    sizes = copy_sizes(min_bytes, max_bytes, step_factor)
    from gpucomm.measure.resources import available_device_bytes, available_host_bytes, check_fits_memory

    largest = max(sizes)
    check_fits_memory(2 * largest, where="host memory", available_bytes=available_host_bytes(), flag="-e",
                      max_bytes=largest, copies=2)  # source and destination
    if gpus:
        check_fits_memory(2 * largest, where=f"GPU {device}", available_bytes=available_device_bytes(device), flag="-e",
                          max_bytes=largest, copies=2)
    meta = copy_metadata(kinds, iters=iters, warmup_iters=warmup_iters, blocks=blocks, device=device)
    results = CopyResults(meta=meta)
    stream = stream if stream is not None else sys.stdout
    writer = None
    if out is not None:
        from gpucomm.measure.results import ResultsWriter

        writer = ResultsWriter(out)
        writer.write(meta)
    try:
        if print_table:
            print(format_copy_header(meta), file=stream, flush=True)
        for kind in kinds:
            for size in sizes:
                try:
                    record = measure_copy(kind, size, iters=iters, warmup_iters=warmup_iters, blocks=blocks,
                                          device=device)
                except (torch.cuda.OutOfMemoryError, MemoryError) as exc:
                    raise GpucommError(f"{kind} at {size} B ({format_size(size)}) does not fit in memory "
                                       f"({type(exc).__name__}): expected a smaller -e") from None
                results.append(record)
                if writer:
                    writer.write(record)
                if print_table:
                    print(format_copy_row(record), file=stream, flush=True)
            _sync_all()
        if print_table:
            print(format_copy_footer(results) + (f"\n# Results file       : {out}" if out else ""),
                  file=stream, flush=True)
    finally:
        if writer:
            writer.close()
    return results


def read_copy_results(path: str | os.PathLike) -> CopyResults:
    """Read a file written by ``gpucomm copybw --out`` (or ``measure_copy_bandwidth(out=...)``)."""
    from gpucomm.measure.results import read_results

    saved = read_results(path)
    return CopyResults([r for r in saved if r.get("record") == "copy"], saved.meta)


# --- the copybw command ---------------------------------------------------------------------

DESCRIPTION = """Measure copy bandwidth: host to device and back (pinned and pageable memory), device to
device (HBM), GPU to GPU (peer copies, with 2 GPUs), or host memory copies on a machine without a GPU.
Prints kind, size, time per copy (us) and bandwidth (GB/s = 1e9 B/s, bytes copied per second)."""
EPILOG = """examples:
  gpucomm copybw                                   every kind this machine can run, 4 KiB to 64 MiB
  gpucomm copybw -b 1MiB -e 1GiB -f 2 --kinds h2d_pinned,h2d_pageable --out copy.jsonl
  gpucomm copybw --kinds host_torch,host_numpy     host memory only"""


def add_copy_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``copybw`` flags to ``parser``."""
    parser.add_argument("-b", "--min-bytes", default="4KiB", metavar="SIZE",
                        help="smallest copy: bytes or with a unit, e.g. 4096, 4KiB, 1M (default 4KiB)")
    parser.add_argument("-e", "--max-bytes", default="64MiB", metavar="SIZE", help="largest copy (default 64MiB)")
    parser.add_argument("-f", "--step-factor", type=int_arg("step factor -f", 2), default=4, metavar="INT",
                        help="integer factor between sizes, >= 2 (default 4)")
    parser.add_argument("-n", "--iters", type=int_arg("iterations -n", 1), default=20, metavar="INT",
                        help="timed copies per block (default 20)")
    parser.add_argument("-w", "--warmup-iters", type=int_arg("warm-up iterations -w", 0), default=5, metavar="INT",
                        help="untimed copies per size (default 5)")
    parser.add_argument("--blocks", type=int_arg("timed blocks --blocks", 1), default=3, metavar="INT",
                        help="timed blocks per size; the median block is reported (default 3)")
    parser.add_argument("--kinds", default=None, metavar="LIST",
                        help="comma-separated kinds: " + ", ".join(COPY_KINDS)
                             + " (default: every kind this machine can run)")
    parser.add_argument("--device", type=int_arg("device", 0), default=0, metavar="INT",
                        help="GPU for host/device copies (default 0)")
    parser.add_argument("--out", default=None, metavar="FILE", help="JSON-lines results file (default: none)")
    return parser


def copy_main(args: argparse.Namespace) -> int:
    """Run ``gpucomm copybw``; exit status 0, 2 on bad input or without torch, 130 on Ctrl-C."""
    import importlib

    try:  # the measurement needs torch: say so in one line rather than a traceback
        importlib.import_module("torch")
    except ImportError:
        print("gpucomm copybw: error: copy bandwidth needs PyTorch: pip install torch", file=sys.stderr, flush=True)
        return 2
    try:
        measure_copy_bandwidth(args.kinds, min_bytes=args.min_bytes, max_bytes=args.max_bytes,
                               step_factor=args.step_factor, iters=args.iters, warmup_iters=args.warmup_iters,
                               blocks=args.blocks, device=args.device, out=args.out)
    except GpucommError as exc:
        print(f"gpucomm copybw: error: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        kept = f"; finished rows are in {args.out}" if args.out else ""
        print(f"gpucomm copybw: error: interrupted{kept}", file=sys.stderr, flush=True)
        return 130
    return 0


def register_copy_cli(subparsers) -> argparse.ArgumentParser:
    """Add the ``copybw`` subcommand to an argparse ``subparsers`` object (torch is not imported).

    The subparser's ``func`` default is :func:`copy_main` (parsed arguments -> exit status).
    """
    parser = subparsers.add_parser("copybw", help="measure copy bandwidth: host<->device, HBM, GPU to GPU (needs torch)",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_copy_arguments(parser)
    parser.set_defaults(func=copy_main)
    return parser


__all__ = ["COPY_KINDS", "GPU_KINDS", "PEER_KINDS", "HOST_KINDS", "CopyResults", "measure_copy_bandwidth",
           "measure_copy", "available_copy_kinds", "expected_copy_bw_bytes_per_s", "catalog_gpu_key", "copy_sizes",
           "format_copy_table", "read_copy_results", "register_copy_cli", "copy_main"]
