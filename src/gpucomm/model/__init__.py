"""The model layer: pure Python (standard library only), where every formula and catalog number lives.

Nothing here imports torch, plotly, ipywidgets or the other layers of gpucomm
(``measure``, ``viz``, ``cli``); ``tests/test_layering.py`` walks this package to check it.
The pages, the CLI, the widgets and the in-browser calculators all call these modules.

Modules
-------
units
    Sizes, times and rates: parsing and formatting at the edges (SI inside).
catalog, hardware
    The sourced hardware catalog: GPUs, links (PCIe, NVLink), NVSwitch systems, NICs, host hops.
collectives
    The collectives: names, message-size conventions, busbw factors (nccl-tests definitions).
fabric
    How GPUs are connected (GPU, link, topology, nodes, network): the one type every estimate takes.
cost, protocols
    Alpha-beta cost of a collective per algorithm and protocol, with NCCL-like automatic choice;
    where Simple overtakes LL.
tp, training, planning, scaling
    What tensor (and data, pipeline) parallelism costs in communication and time.
fit, validation, measurements
    Alpha-beta fits of sweeps; the model against the bundled published measurements.
"""
