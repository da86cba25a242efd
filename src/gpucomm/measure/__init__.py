"""Measurement: collective sweeps through torch.distributed, in the style of nccl-tests.

This is the only part of gpucomm that imports torch, and it does so lazily: importing
``gpucomm.measure`` (or ``gpucomm.cli.bench``, to register the ``gpucomm bench``
subcommand) loads neither torch nor plotly. torch is imported when a sweep runs.

Modules
-------
config
    :class:`SweepConfig`: the sweep's parameters, validated; the list of sizes. No torch.
results
    One results format and one table printer for every measurement: the JSON-lines results
    file (:class:`~gpucomm.measure.results.ResultsWriter`, :func:`read_results`), the
    nccl-tests-like tables (:class:`~gpucomm.measure.results.Table`). No torch.
harness
    The timing harness shared by sweeps, copy bandwidth and the TP layer: backend choice,
    process group, timed blocks (warm-up, MAX over ranks, median block), device names, the
    metadata record. torch only when a function runs.
spec, all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, send_recv
    The per-collective specification (nccl-tests keeps one small file per collective):
    buffers, the call, exact inputs for the correctness pass, the bus-bandwidth factor.
runner
    One rank's sweep: per size, out-of-place then in-place as nccl-tests, the harness's timed
    blocks (with per-iteration times), then the correctness pass.
launch
    :func:`run_sweep`: start N local ranks (spawn) and collect their records; also used by
    ``gpucomm bench --ranks N``; its ``launch_workers`` starts the TP layer's ranks too.
copy_bandwidth
    Copy bandwidth (host<->device pinned/pageable, device memory, GPU to GPU; host memory
    without a GPU), measured by ``gpucomm copybw``. No torch until a measurement runs.
tp_layer, tp_layer_table
    A Megatron-style tensor-parallel layer on N ranks: compute vs all_reduce, with overlap
    (its FLOPs and all_reduce size are :mod:`gpucomm.model.tp`'s); the table of its results.
doctor
    ``gpucomm doctor``, a package: report (checks and the report), probe (what reads the
    machine), checks and measured_checks (the verdicts), run (the steps in order).

Three ways to run a sweep::

    torchrun --nproc-per-node 8 -m gpucomm bench -b 8 -e 8G -f 2
    gpucomm bench --ranks 2 -b 8 -e 64MiB
    >>> from gpucomm.measure import run_sweep          # doctest: +SKIP
    >>> results = run_sweep(num_ranks=2, max_bytes=64 * 2**20)  # doctest: +SKIP
"""

from __future__ import annotations

__all__ = ["run_sweep", "run_sweeps", "read_results", "SweepConfig", "SweepResults", "format_table"]


def __getattr__(name: str):
    # Lazy re-exports keep `import gpucomm.measure` free of torch (PEP 562).
    if name in ("run_sweep", "run_sweeps"):
        from gpucomm.measure import launch

        return getattr(launch, name)
    if name == "SweepConfig":
        from gpucomm.measure.config import SweepConfig

        return SweepConfig
    if name in ("read_results", "SweepResults", "format_table"):
        from gpucomm.measure import results

        return getattr(results, name)
    raise AttributeError(f"module 'gpucomm.measure' has no attribute {name!r}")
