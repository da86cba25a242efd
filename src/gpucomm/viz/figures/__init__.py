"""Presentation: model output and measurements -> plotly figures (no torch, no ipywidgets).

One module per kind of figure, each drawing what :mod:`gpucomm.model` computes: ``collectives``
(algorithms, all_reduce over PCIe), ``topology`` (mesh vs switch, ``nvidia-smi topo -m``), ``links``
(bandwidth by generation and direction), ``parallelism`` (TP speed-up and communication, training),
``serving`` (decode vs TP, NVIDIA's TP=2 table, systems compared), ``scale_out`` (across nodes),
``measured`` (sweeps and logs against the model), ``validation``, ``bench``, ``tp_layer``, ``nccl_algorithms``
(NCCL's tuner: every algorithm and protocol, its pick; small messages); ``render`` is
the book's plotly renderer.
"""
