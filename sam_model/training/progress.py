"""Training progress as plain lines, for runs whose output goes to a file.

Rich's and tqdm's bars redraw one terminal line; sent to a file they print nothing useful (or everything at
the end), so a 40-minute first epoch looked dead. When stdout is not a terminal the CLI swaps the bar for
this callback: one line every ``every_s`` seconds and one per finished epoch, flushed at once.
"""

from __future__ import annotations

import sys
import time

from pytorch_lightning.callbacks import Callback


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


def _epoch(trainer) -> str:
    """``epoch 01 (2/10)``: the number checkpoints carry (from 0), then which of the run's epochs it is (it said
    ``epoch 2/10`` of the epoch saved as ``best-epoch=01.ckpt``)."""
    return f"epoch {trainer.current_epoch:02d} ({trainer.current_epoch + 1}/{trainer.max_epochs})"


class LineProgress(Callback):
    """``epoch 02 (3/25)  train 120/450 (27%)  2.1 batch/s  ETA 2m37s  loss 1.234`` (the training loss), then
    ``epoch 02 (3/25) done in 1m02s  validation: loss 0.912  mrr 0.910 ...``: the validation metrics, said so, since
    the two losses differ in scale and a bare ``loss`` after the epoch read as the training loss rising.
    The epoch is numbered as the checkpoint files name it (``best-epoch=02.ckpt``), with its place in the run."""

    def __init__(self, every_s: float = 30.0, stream=None):
        self.every_s, self.stream = every_s, stream
        self._t0 = self._last = self._v0 = 0.0

    def _say(self, text: str) -> None:
        stream = self.stream or sys.stdout
        print(text, file=stream, flush=True)

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        self._t0 = self._last = time.monotonic()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        now = time.monotonic()
        if now - self._last < self.every_s or trainer.global_rank != 0:
            return
        self._last = now
        total = trainer.num_training_batches
        done = batch_idx + 1
        rate = done / max(now - self._t0, 1e-9)
        eta = f"  ETA {_clock((total - done) / rate)}" if isinstance(total, int) and rate > 0 else ""
        share = f" ({done / total:.0%})" if isinstance(total, int) and total else ""
        loss = trainer.callback_metrics.get("train/loss")
        self._say(f"{_epoch(trainer)}  train {done}/{total}{share}  "
                  f"{rate:.2f} batch/s{eta}" + (f"  loss {float(loss):.4f}" if loss is not None else ""))

    def on_validation_start(self, trainer, pl_module) -> None:
        self._v0 = time.monotonic()

    def on_validation_end(self, trainer, pl_module) -> None:  # after the module has logged its metrics
        if trainer.sanity_checking or trainer.global_rank != 0:
            return
        metrics = {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith("val/")}
        shown = "  ".join(f"{k[4:]} {v:.4f}" for k, v in sorted(metrics.items()))
        if getattr(getattr(trainer, "state", None), "fn", None) == "validate":  # `validate`: no epoch was trained
            self._say(f"validation done in {_clock(time.monotonic() - self._v0)}  {shown}")
            return
        total = trainer.num_training_batches
        loop = getattr(getattr(trainer, "fit_loop", None), "epoch_loop", None)
        seen = getattr(getattr(getattr(loop, "batch_progress", None), "current", None), "completed", None)
        if isinstance(total, int) and isinstance(seen, int) and 0 < seen < total:  # val_check_interval < 1
            self._say(f"{_epoch(trainer)}  validation at train {seen}/{total}:"
                      f"  {shown}")
            return
        self._say(f"{_epoch(trainer)} done in "  # 'validation:': a bare 'loss' read as the training loss above
                  f"{_clock(time.monotonic() - self._t0)}  validation: {shown}")
