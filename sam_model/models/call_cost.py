"""What one BERT call costs on this machine, measured: the figures that decide how texts are cut into calls and,
under backend ``auto``, whether PyTorch or ONNX Runtime runs a call.

A call over ``rows`` rows of ``width`` tokens costs about

    ms = fixed + per_token · rows · width · (1 + attention · width)

a fixed part (dispatch, thread wake-up: most of a short query's time on PyTorch), the per-token layers, and
attention, whose scores grow with the row's width. The three are fitted by least squares to a few timed calls
(``measure``: SHAPES, the fastest of ``repeats``, tens of ms on idle cores) once per process for each backend
and thread count (``cached``), because they differ by machine, backend and load: measured here, PyTorch's fixed
part was worth ~30 tokens and ONNX Runtime's next to none (README, "CPU speed"). Without a measurement the
plan uses DEFAULT, which batches as the code did before costs were measured.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

SHAPES = ((1, 8), (1, 32), (1, 96), (2, 64), (4, 128), (8, 24))  # (rows, width) of the timed calls
REPEATS = 3  # times each shape is timed (the fastest counts)


@dataclass(frozen=True)
class CallCost:
    fixed: float  # ms per call
    per_token: float  # ms per row token
    attention: float  # extra cost of a token per token of its row's width (relative)

    def ms(self, rows: int, width: int) -> float:
        return self.fixed + self.per_token * rows * width * (1.0 + self.attention * width)

    @property
    def fixed_tokens(self) -> float:
        """The fixed part in tokens: what padding may cost before a second call is cheaper."""
        return self.fixed / max(self.per_token, 1e-12)


DEFAULT = CallCost(fixed=16.0, per_token=1.0, attention=0.0)  # length_batches' old CALL_COST of 16 token slots


def fit(shapes: list[tuple[int, int]], ms: list[float]) -> CallCost:
    """Least-squares fit of ms ≈ fixed + p·rows·width + q·rows·width², each part kept ≥ 0 (then attention = q/p)."""
    x = np.array([[1.0, r * w, r * w * w] for r, w in shapes])
    y = np.asarray(ms, float)
    keep = [0, 1, 2]
    while True:  # drop a negative part and refit (non-negative least squares on three terms)
        coef = np.zeros(3)
        coef[keep] = np.linalg.lstsq(x[:, keep], y, rcond=None)[0]
        neg = [k for k in keep if coef[k] < 0]
        if not neg:
            break
        keep.remove(min(neg, key=lambda k: coef[k]))
    per_token = max(coef[1], 1e-9)
    return CallCost(fixed=float(coef[0]), per_token=float(per_token), attention=float(coef[2] / per_token))


def measure(run: Callable[[int, int], object], shapes: list[tuple[int, int]] | None = None,
            repeats: int = REPEATS) -> CallCost:
    """Time ``run(rows, width)`` (one BERT call of that shape) at ``shapes`` (default SHAPES), the fastest of
    ``repeats`` after a warm-up call, and fit (``fit``)."""
    shapes = list(shapes or SHAPES)
    run(*shapes[0])
    ms = []
    for rows, width in shapes:
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            run(rows, width)
            best = min(best, time.perf_counter() - t)
        ms.append(1e3 * best)
    return fit(shapes, ms)


_MEASURED: dict[tuple, CallCost] = {}


def cached(key: tuple, run: Callable[[int, int], object], shapes: list[tuple[int, int]] | None = None) -> CallCost:
    """``measure(run, shapes)`` once per process for ``key`` (the backend, the BERT's shape, the thread count)."""
    if key not in _MEASURED:
        _MEASURED[key] = measure(run, shapes)
    return _MEASURED[key]
