"""The course's calculators, presentation side: inputs with metadata, model calls, figures.

Each calculator has three layers (see CONTRIBUTING.md, "A calculator"):

1. an inputs dataclass whose fields carry label, unit, range or catalog choices and help
   (:mod:`gpucomm.viz.calculators.inputs`);
2. pure model calls and ``*_figure(inputs)`` / ``*_update(inputs)`` here, plus a static
   ``*_explorer_figure`` whose plotly sliders and dropdowns replay precomputed updates;
3. ``build_*_widget(**overrides)`` in :mod:`gpucomm.viz.widgets`, which only wires controls to 2.

Modules: :mod:`~gpucomm.viz.calculators.collective` (collective cost, the first calculator),
:mod:`.tp_inference`, :mod:`.mesh`, :mod:`.generations`, :mod:`.training`.
"""
