"""The live calculators of the course (need a Jupyter kernel): TP inference, mesh vs NVSwitch,
interconnect generations, training communication; and the collective cost calculator.

Each ``build_*_widget(**overrides)`` takes initial values of its inputs dataclass, checks them and
returns the calculator box undisplayed (:func:`gpucomm.viz.widgets.controls.build_calculator`): controls
from the fields' metadata, one observer, a status line, a ``go.FigureWidget`` updated in place.
"""

from __future__ import annotations

import ipywidgets as widgets

from gpucomm.viz.calculators.generations import GenerationsInputs, generations_figure, generations_update
from gpucomm.viz.calculators.inputs import check_inputs
from gpucomm.viz.calculators.mesh import CONTROL_ROWS as MESH_ROWS
from gpucomm.viz.calculators.mesh import MeshInputs, mesh_figure, mesh_update
from gpucomm.viz.calculators.tp_inference import CONTROL_ROWS as TP_ROWS
from gpucomm.viz.calculators.tp_inference import TPInputs, tp_figure, tp_update
from gpucomm.viz.calculators.training import CONTROL_ROWS as TRAINING_ROWS
from gpucomm.viz.calculators.training import TrainingInputs, training_figure, training_update
from gpucomm.viz.widgets.collective import build_cost_widget
from gpucomm.viz.widgets.controls import build_calculator

__all__ = ["build_cost_widget", "build_tp_widget", "build_mesh_widget", "build_generations_widget",
           "build_training_widget"]


def build_tp_widget(**overrides) -> widgets.VBox:
    """Live TP inference calculator over :class:`~gpucomm.viz.calculators.tp_inference.TPInputs`.

    Raises
    ------
    GpucommError
        If the initial values are out of range or refused by the model.
    """
    inputs = check_inputs(TPInputs(**overrides))
    return build_calculator(inputs, figure=tp_figure, update=tp_update, rows=[list(r) for r in TP_ROWS])


def build_mesh_widget(**overrides) -> widgets.VBox:
    """Live P2P mesh vs NVSwitch calculator over :class:`~gpucomm.viz.calculators.mesh.MeshInputs`.

    Raises
    ------
    GpucommError
        If the initial values are out of range or refused by the model.
    """
    inputs = check_inputs(MeshInputs(**overrides))
    return build_calculator(inputs, figure=mesh_figure, update=mesh_update,
                            rows=[list(row) for row in MESH_ROWS])


def build_generations_widget(**overrides) -> widgets.VBox:
    """Live interconnect-generations explorer over :class:`~gpucomm.viz.calculators.generations.GenerationsInputs`.

    Raises
    ------
    GpucommError
        If the initial values are out of range.
    """
    inputs = check_inputs(GenerationsInputs(**overrides))
    return build_calculator(inputs, figure=generations_figure, update=generations_update)


def build_training_widget(**overrides) -> widgets.VBox:
    """Live training communication calculator over :class:`~gpucomm.viz.calculators.training.TrainingInputs`.

    Raises
    ------
    GpucommError
        If the initial values are out of range or refused by the model.
    """
    inputs = check_inputs(TrainingInputs(**overrides))
    return build_calculator(inputs, figure=training_figure, update=training_update,
                            rows=[list(row) for row in TRAINING_ROWS])
