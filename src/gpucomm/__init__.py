"""gpucomm: how GPUs talk to each other in distributed LLM training and inference.

The model layer (``units``, ``hardware``, ``collectives``, ``cost``, ``tp``) is pure
Python and imports neither torch, plotly nor ipywidgets. Presentation (``plots``,
``widgets``) and measurement (``bench``) build on it.
"""

__version__ = "0.1.0"


class GpucommError(ValueError):
    """A bad input or state, with a message that names the bad value and what is accepted."""
