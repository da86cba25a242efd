"""gpucomm: how GPUs talk to each other in distributed LLM training and inference.

The package has four layers, each a subpackage; imports point downward only:

``model``
    Pure Python, standard library only: units, the hardware catalog, the collectives, the
    cost model, tensor parallelism, training, fits and validation. Every formula lives here.
``measure``
    Real measurements through torch.distributed (one timing harness for collective sweeps,
    copy bandwidth and the TP layer), nccl-tests logs, the machine's topology.
``viz``
    Figures (plotly), the calculators' inputs and figures, the ipywidgets UIs.
``cli``
    The ``gpucomm`` command: one module per verb.

``tests/test_layering.py`` checks the direction of imports by walking the package tree.
"""

__version__ = "0.1.0"


class GpucommError(ValueError):
    """A bad input or state, with a message that names the bad value and what is accepted."""
