"""Presentation: model output and measurements -> plotly figures (no torch, no ipywidgets)."""
