"""Live calculators: thin ipywidgets UIs over :mod:`gpucomm.viz.figures` and the model (need a Jupyter kernel)."""
