"""The figure layer: plotly figures, calculators and ipywidgets UIs over :mod:`gpucomm.model`.

It draws what the model computes; it holds no formula of its own.
"""
