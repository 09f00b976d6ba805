"""LightningCLI wiring: the model's vocabularies come from the training data; safe checkpoints; one-line errors."""

from __future__ import annotations

import sys

from pytorch_lightning.cli import LightningCLI

from sam_model.checkpoint import load_checkpoint
from sam_model.data.schema import LogFormatError
from sam_model.io import run_cli
from sam_model.training.checkpoint_io import use_atomic_checkpoints
from sam_model.training.datamodule import AgentLogDataModule
from sam_model.training.module import SAMLightningModule
from sam_model.training.progress import LineProgress


class SAMCLI(LightningCLI):
    def add_arguments_to_parser(self, parser) -> None:
        parser.link_arguments("data.vocab", "model.vocab", apply_on="instantiate")

    def _parse_ckpt_path(self) -> None:
        """LightningCLI reads --ckpt_path's hyper-parameters (weights_only); a refused or broken checkpoint is
        reported by sam_model.checkpoint's one-line error instead of torch's page of advice."""
        try:
            super()._parse_ckpt_path()
        except Exception:
            ckpt = self.config[self.config.subcommand].get("ckpt_path")
            if ckpt:
                load_checkpoint(ckpt)  # raises SAMFileError naming the file and the reason
            raise

    def instantiate_trainer(self, **kwargs):
        trainer = super().instantiate_trainer(**kwargs)
        use_atomic_checkpoints(trainer)  # atomic last.ckpt, and --ckpt_path never runs pickled code
        return trainer


def main(args=None) -> SAMCLI:
    # Output to a file or a pipe: plain progress lines instead of a terminal bar that shows nothing there.
    defaults = {} if sys.stdout.isatty() else {"enable_progress_bar": False, "callbacks": [LineProgress()]}
    return SAMCLI(SAMLightningModule, AgentLogDataModule, seed_everything_default=0, args=args,
                  save_config_kwargs={"overwrite": True}, trainer_defaults=defaults)


def _hint(exc: BaseException) -> str:
    if isinstance(exc, LogFormatError):
        return "fix that line, or set data.on_error: skip to train on the other lines (each skipped line is listed)"
    return ""


def run(argv: list[str] | None = None) -> int:
    """train.py: a bad input (log, config value, checkpoint, BERT folder) ends in one ``error: ...`` line naming
    the file and what to do; ``--traceback`` or SAM_TRACEBACK=1 shows the full trace."""
    def fit(args: list[str]) -> int:
        main(args)
        return 0

    return run_cli(fit, argv, hint=_hint)
