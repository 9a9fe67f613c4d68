"""Benchmark reports: HTML, markdown and JSON (being written)."""
