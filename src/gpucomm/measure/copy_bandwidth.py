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

The timing is the harness the collective sweep and the TP layer use
(:func:`gpucomm.measure.harness.timed_blocks_s`), and so are the metadata record, the JSON-lines
results file and the table printer (:mod:`gpucomm.measure.results`, :data:`COPY_TABLE`).

Importing this module does not import torch (``gpucomm copybw``, :mod:`gpucomm.cli.copybw`, declares
its flags from it): torch is loaded when a measurement runs.

Examples
--------
>>> from gpucomm.measure.copy_bandwidth import measure_copy_bandwidth      # doctest: +SKIP
>>> results = measure_copy_bandwidth(max_bytes="64MiB")          # doctest: +SKIP
>>> results.peak("h2d_pinned") / 1e9                              # doctest: +SKIP
55.1
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import IO

from gpucomm import GpucommError
from gpucomm.measure.harness import (
    call_argv,
    device_name,
    metadata_record,
    synchronize,
    timed_blocks_s,
)
from gpucomm.measure.resources import available_device_bytes, available_host_bytes, check_fits_memory
from gpucomm.measure.results import Column, Results, ResultsWriter, Table, TableReporter, format_time_us, read_results
from gpucomm.model.units import check_int, format_size, parse_size, to_gb_per_s

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

class CopyResults(Results):
    """A list of copy records (dicts: ``kind``, ``bytes``, ``iters``, ``time_s``, ``bw_bytes_per_s``), with :attr:`meta`."""

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


def _copy_comments(meta: dict) -> list[str]:
    m = meta.get
    lines = [f"# gpucomm copybw on {m('host', '?')}: {', '.join(m('devices', [])) or '?'}",
             f"# timing: {m('timing', '?')}; iters {m('iters', '?')} x {m('blocks', '?')} blocks (median block), "
             f"warm-up {m('warmup_iters', '?')}"]
    for pair, ok in (m("peer_access") or {}).items():
        lines.append(f"# peer access GPU {pair}: {'yes' if ok else 'no (copies staged through host memory)'}")
    lines.append("# bw = bytes copied / time, one direction; GB/s = 1e9 B/s; sizes in bytes")
    return lines


def _copy_summary(records: list[dict]) -> list[str]:
    """The peak bandwidth of each kind, and at which size."""
    results = CopyResults(records)
    lines = []
    for kind in results.kinds:
        best = max(results.of_kind(kind), key=lambda r: r["bw_bytes_per_s"])
        lines.append(f"# peak {kind:<13}: {to_gb_per_s(best['bw_bytes_per_s']):8.2f} GB/s at "
                     f"{format_size(best['bytes'])}")
    return lines


#: The copy bandwidth table: kind, size, time per copy, bandwidth; the peak of each kind after the rows.
COPY_TABLE = Table(
    columns=(
        Column("kind", "", 14, lambda r: r["kind"]),
        Column("size", "(B)", 12, lambda r: str(r["bytes"])),
        Column("time", "(us)", 11, lambda r: format_time_us(r["time_s"])),
        Column("bw", "(GB/s)", 9, lambda r: f"{to_gb_per_s(r['bw_bytes_per_s']):.2f}"),
    ),
    comments=_copy_comments,
    summary=_copy_summary,
)


def format_copy_table(results: CopyResults | list[dict], meta: dict | None = None) -> str:
    """The whole table (header, rows, footer) as ``gpucomm copybw`` prints it (:data:`COPY_TABLE`)."""
    return COPY_TABLE.format(results, meta)


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


def _copy_and_clock(kind: str, dst, src):
    """One copy of ``kind`` as a call, where it is timed, and with which clock of :func:`~gpucomm.measure.harness.time_block_s`.

    Host copies: the host clock (they run on the calling thread). GPU copies: CUDA events on
    the current stream of the GPU the copy is queued on (the source's for a copy out of a GPU).
    """
    import torch

    if kind == "host_numpy":
        import numpy as np

        return (lambda: np.copyto(dst, src)), torch.device("cpu"), "host"
    if kind == "host_torch":
        return (lambda: dst.copy_(src)), torch.device("cpu"), "host"
    stream_device = src.device if src.device.type == "cuda" else dst.device
    # non_blocking: queued on the stream; a copy from or to pageable memory is synchronous anyway
    return (lambda: dst.copy_(src, non_blocking=True)), stream_device, "cuda_events"


def _sync_all() -> None:
    import torch

    if torch.cuda.is_available():
        for d in range(torch.cuda.device_count()):
            synchronize(torch.device("cuda", d))


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
    copy, where, clock = _copy_and_clock(kind, dst, src)
    time_s = timed_blocks_s({kind: copy}, iters=iters, warmup_iters=warmup_iters, blocks=blocks, device=where,
                            clock=clock)[kind]
    time_s = max(time_s, 1e-12)  # a copy too fast for the clock still gets a finite bandwidth
    del copy, dst, src
    return {"record": "copy", "kind": kind, "bytes": size_bytes, "iters": iters, "blocks": blocks,
            "time_s": time_s, "bw_bytes_per_s": size_bytes / time_s}


def copy_metadata(kinds: Iterable[str], *, iters: int, warmup_iters: int, blocks: int, device: int,
                  argv: Sequence[str] = ()) -> dict:
    """The metadata record (``"tool": "gpucomm.bench.copy"``): devices, peer access, timing method.

    The fields of :func:`gpucomm.measure.harness.metadata_record`, with the GPU count, the
    catalog's guess of the GPU, peer access, the kinds and the timing schedule after ``devices``.
    """
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    kinds = list(kinds)
    uses_gpu = any(k not in HOST_KINDS for k in kinds)
    devices = []
    if uses_gpu:
        used = sorted({device} | ({0, 1} if any(k in PEER_KINDS for k in kinds) else set()))
        devices = [device_name(d) for d in used]
    if any(k in HOST_KINDS for k in kinds):
        devices.append(device_name(torch.device("cpu"), threads_label="torch thread"))
    peer = {}
    if gpus >= 2 and any(k in PEER_KINDS for k in kinds):
        peer = {"0->1": bool(torch.cuda.can_device_access_peer(0, 1)),
                "1->0": bool(torch.cuda.can_device_access_peer(1, 0))}
    timing = ("CUDA events on the copy's stream" if uses_gpu else "host clock") + (
        "; host clock for host kinds" if uses_gpu and any(k in HOST_KINDS for k in kinds) else "")
    return metadata_record(
        "gpucomm.bench.copy", devices=devices, argv=argv, num_gpus=gpus,
        catalog_gpu=catalog_gpu_key(torch.cuda.get_device_name(device)) if uses_gpu else None,
        peer_access=peer, kinds=kinds, iters=iters, warmup_iters=warmup_iters, blocks=blocks, timing=timing,
        torch_threads=torch.get_num_threads())


def measure_copy_bandwidth(kinds: Iterable[str] | str | None = None, *, min_bytes: int | str = DEFAULT_MIN_BYTES,
                           max_bytes: int | str = DEFAULT_MAX_BYTES, step_factor: int = 4, iters: int = 20,
                           warmup_iters: int = 5, blocks: int = 3, device: int = 0,
                           out: str | os.PathLike | None = None, print_table: bool = True,
                           stream: IO[str] | None = None, argv: Sequence[str] | None = None) -> CopyResults:
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
        JSON-lines file: the metadata record, then one record per kind and size, each synced to
        disk as it finishes (:class:`~gpucomm.measure.results.ResultsWriter`).
    print_table : bool
        Print the table (:data:`COPY_TABLE`) to ``stream`` (default stdout) as rows finish.
    argv : sequence of str or None
        The command line to record in the metadata (``gpucomm copybw`` passes its own); None
        records this call and its parameters.

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
    check_int(iters, "iterations -n", 1)
    check_int(warmup_iters, "warm-up iterations -w", 0)
    check_int(blocks, "timed blocks --blocks", 1)
    check_int(device, "device", 0)
    if gpus and device >= gpus:
        raise GpucommError(f"device {device} is not valid: expected 0 to {gpus - 1}")
    sizes = copy_sizes(min_bytes, max_bytes, step_factor)
    largest = max(sizes)
    check_fits_memory(2 * largest, where="host memory", available_bytes=available_host_bytes(), flag="-e",
                      max_bytes=largest, copies=2)  # source and destination
    if gpus:
        check_fits_memory(2 * largest, where=f"GPU {device}", available_bytes=available_device_bytes(device), flag="-e",
                          max_bytes=largest, copies=2)
    if argv is None:
        argv = call_argv("measure_copy_bandwidth", kinds=list(kinds), min_bytes=min_bytes, max_bytes=max_bytes,
                         step_factor=step_factor, iters=iters, warmup_iters=warmup_iters, blocks=blocks,
                         device=device, out=None if out is None else os.fspath(out))
    meta = copy_metadata(kinds, iters=iters, warmup_iters=warmup_iters, blocks=blocks, device=device, argv=argv)
    results = CopyResults(meta=meta)
    reporter = TableReporter(table=COPY_TABLE, stream=stream, progress=False) if print_table else None
    writer = ResultsWriter(out) if out is not None else None
    try:
        if writer:
            writer.write(meta)
        if reporter:
            reporter.start(meta, len(kinds) * len(sizes))
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
                if reporter:
                    reporter.row(record)
            _sync_all()
        if reporter:
            reporter.finish(results, out=out)
    finally:
        if writer:
            writer.close()
    return results


def read_copy_results(path: str | os.PathLike) -> CopyResults:
    """Read a file written by ``gpucomm copybw --out`` (or ``measure_copy_bandwidth(out=...)``)."""
    saved = read_results(path)
    return CopyResults([r for r in saved if r.get("record") == "copy"], saved.meta)


__all__ = ["COPY_KINDS", "GPU_KINDS", "PEER_KINDS", "HOST_KINDS", "CopyResults", "measure_copy_bandwidth",
           "measure_copy", "available_copy_kinds", "expected_copy_bw_bytes_per_s", "catalog_gpu_key", "copy_sizes",
           "COPY_TABLE", "format_copy_table", "copy_metadata", "read_copy_results"]
