"""Adapters that make a memory system pluggable into Janus (Memory, Updater, Evaluator, φ)."""
