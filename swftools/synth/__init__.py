"""Synthetic inputs: calibrated AAIC-like job logs (``jobs``, with ``arrivals``, ``shapes``,
``schedule``, ``rng`` and the paper's targets in ``calibration``) and telemetry fixtures for a
job table (``telemetry``). ``generate_chunks`` and ``write_log`` stream logs of any size."""

from swftools.synth.jobs import generate, generate_chunks, write_log

__all__ = ["generate", "generate_chunks", "write_log"]
