"""TensorBoard logs of ``--tensorboard LOGDIR``: evaluate.py's and the benchmarks', through one writer.

evaluate.py logged its metrics and figures; the benchmarks drew PNGs that TensorBoard never saw. Both now open
their log here, with the same option, checked the same way before any work: a benchmark hands the lines it drew
and its PNG to :func:`log_figure`, so what TensorBoard shows is the plot, not a second reading of the results.
Each run logs into a folder of its own in LOGDIR (:func:`run_folder`), so runs into one LOGDIR stay apart.
``torch.utils.tensorboard`` is the [eval] extra's and is imported only when a log is asked for: the inference path
never imports this module (tests/test_layering.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path


def add_option(parser, what: str) -> None:
    """``--tensorboard LOGDIR`` on ``parser`` (argparse or jsonargparse), saying ``what`` goes into the log."""
    parser.add_argument("--tensorboard", metavar="LOGDIR", default=None,
                        help=f"also log {what} to this TensorBoard log folder, in a new folder of its own per run "
                             "(default: off)")


def unwritable(folder: Path) -> str | None:
    """Why ``folder`` cannot be made and written into, or None. Checked before the work runs: reports and logs are
    written after it, so a path under a file (``--out report.md/x``) failed only after every method had ranked,
    and ``--tensorboard`` with a bare "[Errno 20] Not a directory"."""
    path = Path(folder).absolute()
    for p in (path, *path.parents):
        if p.is_dir():
            return None if os.access(p, os.W_OK | os.X_OK) else f"{p} is not writable"
        if p.exists() or p.is_symlink():
            return "a file is there" if p == path else f"{p} is a file, not a folder"
    return None


def problem(logdir: str | os.PathLike | None) -> str | None:
    """The one-line error for a ``--tensorboard`` folder that cannot be written, or None (also for no log)."""
    why = unwritable(Path(logdir)) if logdir else None
    return f"--tensorboard {logdir}: {why}; give a folder to write into" if why else None


def run_folder(logdir: str | os.PathLike, name: str) -> Path:
    """A new folder ``LOGDIR/NAME_N`` for one run's log, N the first number free (made here, so two runs at once
    never get one). Why: TensorBoard reads the event files of one folder as one run, and a writer keeps its
    embedding projector's files per folder (``00000/TAG/``, ``projector_config.pbtxt``, rewritten whole): a second
    evaluation into the same LOGDIR wrote its state embeddings over the first's, and both runs' scalars became one
    line with two values at each step."""
    root = Path(logdir)
    root.mkdir(parents=True, exist_ok=True)
    n = 0
    while True:
        try:
            (path := root / f"{name}_{n}").mkdir()
            return path
        except FileExistsError:
            n += 1


def writer(logdir: str | os.PathLike | None, name: str):
    """A ``SummaryWriter`` on a new run folder ``LOGDIR/NAME_N`` (:func:`run_folder`), or None when no log is asked
    for."""
    if logdir is None:
        return None
    from torch.utils.tensorboard import SummaryWriter

    return SummaryWriter(str(run_folder(logdir, name)))


def log_figure(logdir: str | os.PathLike | None, name: str, lines: Mapping[str, Sequence[tuple[float, float]]],
               png: Path) -> None:
    """Log one drawn plot to its own run folder ``logdir/name_N`` (nothing when None): each line as scalars
    ``name/label``, its x the step (TensorBoard's steps are integers: the x a plot draws at, a count, a size, a
    position), and the PNG as the image ``name``."""
    w = writer(logdir, name)
    if w is None:
        return
    import matplotlib.image

    try:
        for label, points in lines.items():
            for x, y in points:
                if y is not None:
                    w.add_scalar(f"{name}/{label}", float(y), int(x))
        w.add_image(name, matplotlib.image.imread(png)[..., :3], dataformats="HWC")  # RGB, as add_figure logs
    finally:
        w.close()
