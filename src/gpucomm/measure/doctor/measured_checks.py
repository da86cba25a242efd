"""The checks of what the doctor measured: copy bandwidth against the catalog, the all_reduce sweep against the
model's band, and NCCL's own report (its ``NCCL_DEBUG=INFO`` log).

Thresholds are named with their source: :data:`COPY_TOLERANCES` (published copy rates), the model's band
(:func:`gpucomm.model.machine.model_band`, the model's cross-validated 10-90 % prediction band)
and :data:`LATENCY_FACTOR` for the smallest message's time.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpucomm.measure.copy_bandwidth import HOST_KINDS, PEER_KINDS
from gpucomm.measure.doctor.report import Check, skip, worst_status
from gpucomm.measure.logs.nccl_info import NcclInfoLog
from gpucomm.model.units import format_size, format_time, to_gb_per_s
from gpucomm.model.validation import TARGETS

__all__ = ["check_copy_bandwidth", "check_all_reduce", "check_nccl_log", "COPY_TOLERANCES", "LATENCY_FACTOR",
           "SRC_VALIDATION"]

SRC_VALIDATION = ("the model's 10-90 % prediction band (its leave-one-out errors against published measurements: "
                  "gpucomm validate)")

LATENCY_FACTOR = TARGETS["small_latency"][1]
"""How many times the model's time the sweep's smallest message may take (2: the small-message target of
:data:`gpucomm.model.validation.TARGETS`)."""


COPY_TOLERANCES = {"h2d_pinned": 0.70, "d2h_pinned": 0.70, "d2d": 0.60, "peer_0_to_1": 0.60, "peer_1_to_0": 0.60}
"""Fraction of the catalog rate under which a copy kind is ``below`` expected. Published pinned host copies
reach 80-90 % of the PCIe rate (55.4 of 63.0 GB/s on H200, the PCIe 5.0 entry's notes), device copies and
NVLink peer copies about 80-90 % of theirs; these tolerances leave room for a busy host and still catch a
link at half its rate (x8, one generation down). Pageable copies are staged through a pinned buffer and
depend on host memory, so they are shown, not judged."""


def check_copy_bandwidth(records: Sequence[dict], expected: dict[str, tuple[float | None, str]] | None = None) -> list[Check]:
    """One check per copy kind: its peak bandwidth against the catalog.

    The catalog's rates are :func:`gpucomm.measure.copy_bandwidth.expected_copy_bw_bytes_per_s`'s.

    ``below`` where the peak is under :data:`COPY_TOLERANCES` of the catalog rate; ``ok`` otherwise,
    and for kinds with nothing to compare (host memory copies, pageable copies, a GPU not in the catalog).
    """
    out = []
    kinds = list(dict.fromkeys(r["kind"] for r in records))
    for kind in kinds:
        rows = [r for r in records if r["kind"] == kind]
        best = max(rows, key=lambda r: r["bw_bytes_per_s"])
        bw, basis = (expected or {}).get(kind, (None, ""))
        measured = f"peak {to_gb_per_s(best['bw_bytes_per_s']):.3g} GB/s at {format_size(best['bytes'])}"
        data = {"kind": kind, "peak_bw_bytes_per_s": best["bw_bytes_per_s"], "peak_at_bytes": best["bytes"],
                "expected_bw_bytes_per_s": bw, "basis": basis, "tolerance": COPY_TOLERANCES.get(kind)}
        title = f"copy bandwidth: {kind}"
        if kind in HOST_KINDS:
            out.append(Check(f"copy:{kind}", title, "ok", measured, "no catalog value for host memory copies (CPU only)",
                             data=data))
            continue
        if not bw:
            out.append(Check(f"copy:{kind}", title, "ok", measured, basis or "no catalog value for this GPU", data=data))
            continue
        tol = COPY_TOLERANCES.get(kind)
        expected_text = f"{to_gb_per_s(bw):.3g} GB/s: {basis}" + (f"; below {tol:.0%} of it is flagged" if tol else
                                                                   " (shown, not judged)")
        data["fraction"] = best["bw_bytes_per_s"] / bw
        measured += f" ({data['fraction']:.0%} of the catalog)"
        if tol and best["bw_bytes_per_s"] < tol * bw:
            fix = ("a PCIe link trained down (see pcie_link: width and generation under load), a GPU under another "
                   "CPU socket than the process's memory (numactl --cpunodebind/--membind to the GPU's NUMA node), "
                   "or IOMMU translation (see iommu)") if kind in ("h2d_pinned", "d2h_pinned") else (
                   "NVLinks down (see nvlink) or no P2P between the GPUs (see p2p)" if kind in PEER_KINDS else
                   "GPU clocks held low (nvidia-smi -q -d PERFORMANCE: thermal or power limits) or other work on the GPU")
            out.append(Check(f"copy:{kind}", title, "below", measured, expected_text, fix,
                             "gpucomm.measure.copy_bandwidth.expected_copy_bw_bytes_per_s", data))
        else:
            out.append(Check(f"copy:{kind}", title, "ok", measured, expected_text,
                             source="gpucomm.measure.copy_bandwidth.expected_copy_bw_bytes_per_s", data=data))
    return out


def check_all_reduce(records: Sequence[dict], *, backend: str, band: Sequence[dict] | None = None,
                     model_reason: str = "", num_wrong: int = 0) -> Check:
    """The all_reduce sweep: correct results, and the measured busbw against the model's band.

    ``pathology`` when any element came back wrong; ``below`` when the largest size's busbw is
    under the band (bandwidth) or the smallest size's time is more than the band allows
    (latency); ``ok`` otherwise. Without a band (gloo on the CPU, one GPU, a machine the model does
    not cover) only correctness is judged, and ``model_reason`` says why.
    """
    title = "all_reduce sweep against the model"
    if not records:
        return skip("all_reduce", title, model_reason or "no sweep ran")
    rows = sorted(records, key=lambda r: r["msg_bytes"])
    first, last = rows[0], rows[-1]
    ranks = last["num_ranks"]
    measured = (f"{ranks} ranks, {backend}: busbw {to_gb_per_s(last['busbw_bytes_per_s']):.3g} GB/s at "
                f"{format_size(last['msg_bytes'])}, {format_time(first['time_s'])} at {format_size(first['msg_bytes'])}")
    data = {"backend": backend, "num_ranks": ranks, "num_wrong": num_wrong}
    if num_wrong:
        return Check("all_reduce", title, "pathology", measured + f"; {num_wrong} wrong element(s)",
                     "every element correct",
                     "wrong results point at the hardware or the driver: check 'nvidia-smi -q -d ECC' and dmesg for Xid "
                     "errors, and rerun with NCCL_PROTO=Simple and NCCL_ALGO=Ring to isolate a protocol",
                     "https://docs.nvidia.com/deploy/xid-errors/index.html", data)
    if not band:
        return Check("all_reduce", title, "ok", measured + "; every element correct",
                     model_reason or "no model for this machine", data=data)
    by_size = {b["msg_bytes"]: b for b in band}
    hi_band, lo_band = by_size.get(last["msg_bytes"]), by_size.get(first["msg_bytes"])
    data.update(model_busbw_bytes_per_s=hi_band and hi_band["busbw_bytes_per_s"])
    expected = (f"busbw {to_gb_per_s(hi_band['low']):.3g}-{to_gb_per_s(hi_band['high']):.3g} GB/s at "
                f"{format_size(last['msg_bytes'])} (model {to_gb_per_s(hi_band['busbw_bytes_per_s']):.3g}, "
                f"{hi_band['algorithm']}/{hi_band['protocol']}); at most {format_time(LATENCY_FACTOR * lo_band['time_s'])} at "
                f"{format_size(first['msg_bytes'])}")
    problems = []
    if last["busbw_bytes_per_s"] < hi_band["low"]:
        problems.append(f"large-message busbw {last['busbw_bytes_per_s'] / hi_band['busbw_bytes_per_s']:.0%} of the model")
    if first["time_s"] > LATENCY_FACTOR * lo_band["time_s"]:
        problems.append(f"small-message time {first['time_s'] / lo_band['time_s']:.1f}x the model")
    if problems:
        return Check("all_reduce", title, "below", measured + ": " + "; ".join(problems), expected,
                     "read the NCCL log findings below (transports, channels, P2P), the P2P and link checks above, "
                     "and make sure nothing else runs on the GPUs (nvidia-smi)", SRC_VALIDATION, data)
    return Check("all_reduce", title, "ok", measured, expected, source=SRC_VALIDATION, data=data)


def check_nccl_log(log: NcclInfoLog | None, *, reason: str = "") -> list[Check]:
    """The sweep's ``NCCL_DEBUG=INFO`` log as read by :mod:`gpucomm.measure.logs.nccl_info`: a summary, then each finding.

    A finding of severity ``error`` or ``warning`` is a ``pathology`` with the reader's fix and
    source; ``info`` findings are ``ok``.
    """
    title = "NCCL's own report (NCCL_DEBUG=INFO during the sweep)"
    if log is None:
        return [skip("nccl_log", title, reason or "no NCCL log")]
    transports = ", ".join(f"{k} x {v}" for k, v in log.transports.items()) or "no connection line"
    measured = (f"NCCL {log.nccl_version or ', '.join(log.nccl_versions) or '?'}, {log.num_ranks or '?'} rank(s), "
                f"{log.coll_channels or '?'} channel(s); transports: {transports}")
    out = [Check("nccl_log", title, worst_status([Check("x", "x", "pathology" if f.severity != "info" else "ok", "")
                                                  for f in log.findings]),
                 measured + f"; {len(log.findings)} finding(s)", "no error or warning finding",
                 data={"transports": log.transports, "findings": [f.code for f in log.findings]})]
    for f in log.findings:
        status = "ok" if f.severity == "info" else "pathology"
        out.append(Check(f"nccl:{f.code}", f"NCCL log: {f.title}", status, f"{f.evidence} (lines {', '.join(map(str, f.lines))})",
                         "", f.fix, f.source, {"severity": f.severity, "lines": list(f.lines)}))
    return out

