"""LightningCLI wiring: the model's vocabularies come from the training data."""

from __future__ import annotations

from pytorch_lightning.cli import LightningCLI

from sam_model.training.datamodule import AgentLogDataModule
from sam_model.training.module import SAMLightningModule


class SAMCLI(LightningCLI):
    def add_arguments_to_parser(self, parser) -> None:
        parser.link_arguments("data.vocab", "model.vocab", apply_on="instantiate")


def main(args=None) -> SAMCLI:
    return SAMCLI(SAMLightningModule, AgentLogDataModule, seed_everything_default=0, args=args,
                  save_config_kwargs={"overwrite": True})
