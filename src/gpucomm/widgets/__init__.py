"""Live calculators: thin ipywidgets UIs over :mod:`gpucomm.plots` and the model (need a Jupyter kernel)."""
