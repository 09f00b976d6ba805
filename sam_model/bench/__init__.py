"""Benchmarks: scripts that print figures (timings never live in tests)."""
