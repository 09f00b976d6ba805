"""Retrieval benchmark: the trained retriever against baselines, plus the tuning diagnostics.

``python evaluate.py --help`` is the entry point; :func:`sam_model.evaluation.run.evaluate`
is the same thing as a function (tests and notebooks pass retriever objects directly).

``evaluate`` and ``main`` load on first use: the benchmark needs the evaluation extra (matplotlib, torchmetrics),
and sam_model.evaluation.options, which the core-install ``python -m sam_model.interpolate`` builds its parser
from, must import without it.
"""

__all__ = ["evaluate", "main"]


def __getattr__(name: str):
    if name in __all__:
        from sam_model.evaluation import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
