"""Synthetic inputs: calibrated AAIC-like job logs (``jobs``, with ``arrivals``, ``shapes``,
``schedule``, ``rng`` and the paper's targets in ``calibration``) and telemetry fixtures for a
job table (``telemetry``)."""

from swftools.synth.jobs import generate

__all__ = ["generate"]
