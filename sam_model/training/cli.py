"""LightningCLI wiring: the model's vocabularies come from the training data."""

from __future__ import annotations

import sys

from pytorch_lightning.cli import LightningCLI

from sam_model.training.datamodule import AgentLogDataModule
from sam_model.training.module import SAMLightningModule
from sam_model.training.progress import LineProgress


class SAMCLI(LightningCLI):
    def add_arguments_to_parser(self, parser) -> None:
        parser.link_arguments("data.vocab", "model.vocab", apply_on="instantiate")


def main(args=None) -> SAMCLI:
    # Output to a file or a pipe: plain progress lines instead of a terminal bar that shows nothing there.
    defaults = {} if sys.stdout.isatty() else {"enable_progress_bar": False, "callbacks": [LineProgress()]}
    return SAMCLI(SAMLightningModule, AgentLogDataModule, seed_everything_default=0, args=args,
                  save_config_kwargs={"overwrite": True}, trainer_defaults=defaults)


def run() -> int:
    """The ``sam-train`` console command (``main`` returns the CLI object, which is no exit status)."""
    main()
    return 0
