"""Retrieval benchmark: the trained retriever against baselines, plus the tuning diagnostics.

``python evaluate.py --help`` is the entry point; :func:`sam_model.evaluation.run.evaluate`
is the same thing as a function (tests and notebooks pass retriever objects directly).
"""

from sam_model.evaluation.run import evaluate, main

__all__ = ["evaluate", "main"]
