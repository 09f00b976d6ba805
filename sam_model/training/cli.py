"""LightningCLI wiring: the model's vocabularies come from the training data; safe checkpoints; one-line errors.

Configs stack: ``train.py fit --config configs/sgd.yaml --config configs/content_only.yaml`` merges the
override over the base (sam_model.cli_config: ``omegaconf+`` mode, ``${...}`` resolved after the merge). Every
run has an ``experiment`` (set by the dataset config) and a ``run`` name (default: the experiment); the configs
write checkpoints and TensorBoard logs to ``checkpoints/${run}/``.

Configs are found by name (``--config adapt.yaml``: the installed one when the folder has none, see
sam_model.cli_config.resolve_config), a fit without any config is refused (it would train built-in defaults
into ``lightning_logs/``), and every fit ends by exporting its best checkpoint into ``export/`` beside it
(``checkpoints/${run}/export``), the folder SAMRetriever.load and evaluate.py read.
"""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path

from jsonargparse import ActionYesNo
from pytorch_lightning.cli import LightningArgumentParser, LightningCLI

from sam_model import cli_config
from sam_model.checkpoint import load_checkpoint, recorded_folder
from sam_model.data.advice import spelt
from sam_model.data.schema import LogFormatError
from sam_model.data.transcripts import skip_would_help
from sam_model.io import SAMFileError, run_cli
from sam_model.training.checkpoint_io import earlier_logs, replace_after_first_save, use_atomic_checkpoints
from sam_model.training.datamodule import AgentLogDataModule
from sam_model.training.module import SAMLightningModule
from sam_model.training.progress import LineProgress

SUBCOMMANDS = ("fit", "validate", "test", "predict")


class PlainHelpParser(LightningArgumentParser):
    """--help as a terminal shows it: the options' help comes from docstrings (Lightning's Trainer, this package's
    modules), whose reStructuredText ``literal`` marks printed as raw double backticks in ``sam-train fit --help``."""

    def format_help(self) -> str:
        return super().format_help().replace("``", "")


class SAMCLI(LightningCLI):
    def __init__(self, *args, parser_class: type[LightningArgumentParser] = PlainHelpParser, **kwargs) -> None:
        super().__init__(*args, parser_class=parser_class, **kwargs)

    def add_arguments_to_parser(self, parser) -> None:
        parser.add_argument("--experiment", type=str, default="sam",
                            help="the experiment's name, set by the dataset config (demo, sgd, tools, ...); the run "
                                 "name defaults to it")
        parser.add_argument("--run", type=str, default="${.experiment}",
                            help="the run's name: the configs put its checkpoints (best-epoch=NN.ckpt, last.ckpt) and "
                                 "TensorBoard logs in checkpoints/${run}/ (default: the experiment's name; an override "
                                 "that makes a variant names it, e.g. configs/content_only.yaml: "
                                 "${experiment}_content_only)")
        parser.add_argument("--overwrite", action=ActionYesNo, default=False,
                            help="replace the run already in checkpoints/${run}: its checkpoints, export and "
                                 "TensorBoard version_N folders are deleted once this run has written its first "
                                 "checkpoint (without it, a fresh run "
                                 "into a folder holding another run's checkpoints is refused); on the command line "
                                 "only, a config file's value is ignored")
        from sam_model.training.export_order import CHOICES, HELP, LEXICAL_HELP, ON_HELP

        parser.add_argument("--export.used_order", type=str, default=None, choices=CHOICES, help=HELP)
        parser.add_argument("--export.used_order_on", type=list[str] | None, default=None, help=ON_HELP)
        parser.add_argument("--export.lexical", type=str | float | None, default=None, help=LEXICAL_HELP)
        parser.link_arguments("data.vocab", "model.vocab", apply_on="instantiate")
        config = parser._option_string_actions.get("--config")
        if config is not None:
            config.help = ("a config file, or the name of an installed one when the folder has no such file ("
                           f"{', '.join(cli_config.installed_configs())}); repeat to stack overrides (later win)")

    def parse_arguments(self, parser, args) -> None:
        """A bad config ends in one line naming the key and the file that set it (sam_model.cli_config)."""
        from jsonargparse import ArgumentError
        from omegaconf.errors import OmegaConfBaseException

        argv = list(sys.argv[1:] if args is None else args)
        self._argv = argv
        sub = next((a for a in argv if a in SUBCOMMANDS), None)
        prefix = f"{sub}." if sub else ""
        try:
            super().parse_arguments(parser, args)
        except ArgumentError as exc:
            sub_parser = parser._subcommands_action._name_parser_map.get(sub) if sub else parser
            line = cli_config.explain(str(exc), argv, sub_parser, prefix)
            if "expected list" in line and ("data.train" in line or "data.val" in line):  # a file given bare
                line += "; a list of logs: write it in brackets, --data.train '[LOG]' (quoted for the shell)"
            if "export.used_order" in line and "'False'" in line:  # YAML 1.1 reads a bare off as false
                line += "; YAML reads a bare off as false: write it quoted, used_order: 'off'"
            if "export.lexical" in line and ("'False'" in line or "'True'" in line):  # YAML's off, yes
                line += "; give auto or a weight >= 0 (0: the lexical match off), not a yes/no"
            if "required" in line and "data.train" in line:  # adapt.yaml, or an override given alone
                line += ("; no --config file sets it: give your logs (--data.train '[LOG, ...]'), or stack an "
                         "override on a base, e.g. --config configs/sgd.yaml --config configs/content_only.yaml")
            raise SAMFileError(line) from None
        except OmegaConfBaseException as exc:  # a ${...} that names no key
            raise SAMFileError(cli_config.explain_interpolation(exc, argv, prefix)) from None

    def before_instantiate_classes(self) -> None:
        """Tell the model which ``model.net`` fields the run set (``model.net_fields``): with ``model.init_from`` the
        others are the pretrained model's, not the defaults the parser filled in. A field on the command line is
        set whatever its value; one in a config file only where it differs from SAMConfig's default (a config
        printed by ``--print_config`` or saved beside a run lists every field); every field of a resumed
        checkpoint's network is set (``--ckpt_path``: the checkpoint's network goes on as it was, and
        ``model.resumed`` says so: ``model.init_from`` is not read)."""
        from dataclasses import fields

        from sam_model.models.sam import SAMConfig

        sub = self.config.get("subcommand")
        cfg = self.config[sub] if sub else self.config
        if cfg.get("model") is None:
            return
        argv = getattr(self, "_argv", [])
        prefix = f"{sub}." if sub else ""
        _check_run_names_the_folders(cfg, argv, prefix)
        if sub == "fit" and not cfg.get("ckpt_path"):
            overwrite = cli_config.where("overwrite", argv, prefix) == "command line" and bool(cfg.get("overwrite"))
            self._replaces, self._overwrite = _earlier_run(cfg, overwrite), overwrite
        names = [f.name for f in fields(SAMConfig)]
        whole = any(a == f"--{k}" or a.startswith(f"--{k}=") for a in argv for k in ("model.net", prefix + "model.net"))
        cfg["model"]["resumed"] = bool(cfg.get("ckpt_path"))  # the checkpoint's network, not init_from's
        if cfg.get("ckpt_path"):
            cfg["model"]["net_fields"] = names
        elif whole:
            cfg["model"]["net_fields"] = None  # a whole network given at once: the fields that differ from defaults
        else:
            net, default = cfg["model"].get("net"), SAMConfig()
            given = []
            for n in names:
                source = cli_config.where(f"model.net.{n}", argv, prefix)
                value = net.get(n) if isinstance(net, Mapping) else getattr(net, n, None)
                if source == "command line" or (source and value != getattr(default, n)):
                    given.append(n)
            cfg["model"]["net_fields"] = given

    def _parse_ckpt_path(self) -> None:
        """LightningCLI reads --ckpt_path's hyper-parameters (weights_only); a refused or broken checkpoint is
        reported by sam_model.checkpoint's one-line error instead of torch's page of advice. They win over the
        config, so an older checkpoint's relative ``bert_path`` is found here (sam_model.checkpoint.recorded_folder)."""
        try:
            super()._parse_ckpt_path()
        except Exception as exc:
            ckpt = self.config[self.config.subcommand].get("ckpt_path")
            if not ckpt:
                raise
            hp = load_checkpoint(ckpt).get("hyper_parameters")  # raises SAMFileError naming the file and the reason
            named = hp.get("_class_path") if isinstance(hp, dict) else None
            what = f"name the class {named!r} and " if named else ""
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            raise SAMFileError(f"{ckpt}: its hyper-parameters {what}do not fit this model ({first}); nothing from it "
                               "was run — resume from a .ckpt train.py wrote for this config") from None
        _absolute_bert_path(self.config)

    def fit(self, **kwargs) -> None:
        """``trainer.fit``, without Lightning's warning that a checkpoint folder "exists and is not empty": a fresh
        run's folder holds its own TensorBoard logs and config (the configs put them there, written before the
        check), and a folder with another run's checkpoints was refused or replaced on purpose (``--overwrite``,
        :func:`_earlier_run`), or is resumed. Nor its "Found N module(s) in eval mode at the start of training. This
        may lead to unexpected behavior": the frozen BERT is kept in eval mode on purpose (no dropout in a frozen
        encoder; its vectors are cached), and every fit of the README's recipe printed it."""
        if (stopped := _stopped_early(kwargs.get("ckpt_path"))) is not None:
            print(f"{kwargs['ckpt_path']}: this run stopped early after epoch {stopped} (no better validation for "
                  "EarlyStopping's patience): nothing to resume; start a new run (--run NAME) to train on")
            return
        export = self._export_options()
        from sam_model.training.export_order import chosen_sources, lexical_choice

        lexical_choice(export.get("lexical"), export.get("used_order"))  # a bad weight fails now, not after training
        if export.get("used_order") == "auto":  # a source it cannot name fails now, not after the training
            chosen_sources(self.datamodule, export.get("used_order_on"))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"Checkpoint directory .* exists and is not empty\.")
            warnings.filterwarnings("ignore", message=r"Found \d+ module\(s\) in eval mode at the start of training")
            self.trainer.fit(**kwargs)

    def _export_options(self) -> dict:
        """The run's ``export`` options (used_order, used_order_on, lexical), as given."""
        sub = self.config.get("subcommand")
        return (self.config[sub] if sub else self.config).get("export") or {}

    def after_fit(self) -> None:
        """Export the best checkpoint (else the last) into ``export/`` beside it, so a run ends with the folder
        SAMRetriever.load reads and nobody has to find a checkpoint's name; with ``export.used_order`` its store's
        ordering (and with ``export.lexical`` its lexical weight) set, or chosen on the run's validation conversations
        (sam_model.training.export_order)."""
        from sam_model.export import save_exported
        from sam_model.retriever import SAMRetriever

        cb = self.trainer.checkpoint_callback
        ckpt = (cb.best_model_path or cb.last_model_path) if cb is not None else ""
        if not ckpt or not self.trainer.is_global_zero:
            return
        r = SAMRetriever.load(ckpt, device="cpu")
        net, store = r.net, r.store.config
        export = self._export_options()
        order, lexical = export.get("used_order"), export.get("lexical")
        if order is not None or lexical is not None:  # set, or chosen on the run's validation conversations (auto)
            from sam_model.training.export_order import export_order

            net, store = export_order(r, self.datamodule, order, export.get("used_order_on"), lexical=lexical)
        out = save_exported(net, Path(ckpt).parent / "export", store)
        said = ([f"store.used_order {store.used_order or 'off'}"] if order else []) + (
            [f"store.lexical {store.lexical:g}"] if lexical is not None else [])
        print(f"exported {ckpt} -> {out}" + (f" ({', '.join(said)})" if said else ""))
        print(next_steps(out, self.trainer.logger))

    def instantiate_trainer(self, **kwargs):
        trainer = super().instantiate_trainer(**kwargs)
        use_atomic_checkpoints(trainer)  # atomic last.ckpt, and --ckpt_path never runs pickled code
        replaces = list(getattr(self, "_replaces", []))  # --overwrite: the earlier run's checkpoints, export, logs
        if getattr(self, "_overwrite", False):
            replaces += earlier_logs(trainer)
        replace_after_first_save(trainer, replaces)
        return trainer


def next_steps(export: Path, logger) -> str:
    """What to do with a fit's export, in one line: load it, measure it, see its curves. A fit ended on the export's
    path, and a new user went back to the README for each of the three."""
    from shlex import quote  # the commands run as printed: a run folder may hold a space

    tb = getattr(logger, "root_dir", None)  # TensorBoardLogger's folder of versions; another logger says none
    curves = f"; its training curves: tensorboard --logdir {quote(str(tb))}" if tb else ""
    return (f"next: SAMRetriever.load({str(export)!r}) in your agent (README \"Use it in your agent\"); "
            f"sam-eval --retriever {quote(str(export))} --data LOG --out {quote(str(Path(export).parent / 'eval'))} "
            f"measures it on conversations it did not train on{curves}")


def _absolute_bert_path(config) -> None:
    """The resumed checkpoint's ``model.net.bert_path``, absolute (an older checkpoint recorded it as given)."""
    sub = config.get("subcommand")
    cfg = config[sub] if sub else config
    ckpt, net = cfg.get("ckpt_path"), (cfg.get("model") or {}).get("net")
    if ckpt and Path(ckpt).is_file() and net is not None and net.get("bert_path"):
        net["bert_path"] = recorded_folder(net["bert_path"], ckpt, "hyper_parameters.net.bert_path")


def _run_folders(cfg) -> list[str]:
    """The folders the run's checkpoint callbacks and logger write to, as the resolved config gives them."""
    trainer = cfg.get("trainer") or {}
    parts = list(trainer.get("callbacks") or []) + [trainer.get("logger")]
    out = []
    for part in parts:
        args = part.get("init_args") if hasattr(part, "get") else None
        folder = (args.get("dirpath") or args.get("save_dir")) if hasattr(args, "get") else None
        if isinstance(folder, str) and folder:
            out.append(folder)
    return out


def _check_run_names_the_folders(cfg, argv: list[str], prefix: str) -> None:
    """``--run NAME`` moves a run only where its config writes to ``checkpoints/${run}``. A config printed by
    --print_config (or saved beside a run) has that resolved (``checkpoints/adapt``), so --run changed nothing and
    the new run overwrote the other run's last.ckpt and export; refused in one line instead."""
    if cli_config.where("run", argv, prefix) != "command line":
        return
    run = str(cfg.get("run"))
    fixed = [f for f in _run_folders(cfg) if run not in Path(f).parts]
    if fixed:
        raise SAMFileError(f"--run {run}: the config writes to {fixed[0]}, which --run does not change (a config "
                           "printed by --print_config or saved beside a run has checkpoints/${run} resolved); "
                           "write checkpoints/${run} there again, or drop --run")


def _earlier_run(cfg, overwrite: bool) -> list[Path]:
    """The checkpoints and export of another run in the folders this fresh fit writes to. A re-run overwrote that
    run's last.ckpt and export but left its best-epoch=NN.ckpt beside the new one's, where a listing or a resume
    found a best checkpoint of another run. Refused in one line (as a --run that does not move the run is), or with
    ``--overwrite`` returned, to be deleted once the new run has a checkpoint (``replace_after_first_save``)."""
    folders = [Path(f) for f in dict.fromkeys(_run_folders(cfg))]
    old = sorted({p for f in folders for p in f.glob("*.ckpt")})
    if not old:
        return []
    if not overwrite:
        folder = old[0].parent
        last = folder / "last.ckpt" if (folder / "last.ckpt") in old else old[-1]
        names = ", ".join(p.name for p in old[:3]) + (", ..." if len(old) > 3 else "")
        raise SAMFileError(f"{folder} holds the checkpoints of an earlier run ({names}): resume it with --ckpt_path "
                           f"{last}, train into a new folder with --run NAME, or replace that run with --overwrite")
    return old + [f / "export" for f in folders if (f / "export").is_dir()]


def _stopped_early(ckpt: str | None) -> int | None:
    """The epoch at which the run of ``ckpt`` was stopped by EarlyStopping, else None. Lightning does not keep that
    the trainer should stop, so a resume trained one more epoch on a finished run (and stopped again)."""
    if not ckpt or ckpt in ("last", "best", "hpc", "registry"):
        return None
    states = load_checkpoint(ckpt).get("callbacks") or {}
    stopped = [s.get("stopped_epoch", 0) for k, s in states.items()
               if str(k).startswith("EarlyStopping") and isinstance(s, Mapping)]
    return max(stopped) if stopped and max(stopped) > 0 else None


def _resolve(args: list[str] | None) -> list[str] | None:
    """Installed configs by name (``--config adapt.yaml``); a fit without a config is refused in one line."""
    from sam_model.io import SAMFileError

    argv = list(sys.argv[1:] if args is None else args)
    resolved = cli_config.resolve_configs(argv)
    for f in cli_config.config_files(resolved):  # read here so that a bad one is named (the parser names none)
        try:
            text = Path(f).read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise SAMFileError(f"--config {f}: not UTF-8 (byte {exc.start}); re-save it as UTF-8") from None
        except OSError:
            continue  # a missing file: the parser's own message names it
        if (twice := cli_config.repeated_key(text)) is not None:
            raise SAMFileError(f"--config {f}: {twice}")
    asks = {"-h", "--help", "--print_config"}
    if "fit" in argv and not cli_config.config_files(argv) and not any(a.split("=")[0] in asks or a.endswith(".help")
                                                                     for a in argv):
        raise SAMFileError("fit needs a config (without one it trains built-in defaults into lightning_logs/): "
                           "sam-train fit --config adapt.yaml --data.train '[MY_LOGS]' adapts the default model "
                           f"to your logs; installed configs: {', '.join(cli_config.installed_configs())}")
    if args is None:
        sys.argv[1:] = resolved  # LightningCLI reads sys.argv itself
        return None
    return resolved


class _NoTips(logging.Filter):
    """Drops Lightning's "💡 Tip: ... try installing litlogger / litmodels" lines: advertisements printed at every
    fit start (logger and checkpoint setup), not about the run. Its other messages pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("💡 Tip:")


def quiet_tips() -> None:
    """Filter the tips on the loggers Lightning's ``rank_zero_info`` writes to, its documented way to shape its
    console output (Lightning has no option or variable for them); once, however often a fit starts."""
    for name in ("pytorch_lightning.utilities.rank_zero", "lightning_fabric.utilities.rank_zero"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _NoTips) for f in logger.filters):
            logger.addFilter(_NoTips())


def main(args=None) -> SAMCLI:
    cli_config.use_interpolation()
    quiet_tips()
    args = _resolve(args)
    # Output to a file or a pipe: plain progress lines instead of a terminal bar that shows nothing there.
    defaults = {} if sys.stdout.isatty() else {"enable_progress_bar": False, "callbacks": [LineProgress()]}
    if not sys.stderr.isatty():  # the datasets library's "Generating train split" bars, redrawn into a file
        import datasets

        datasets.disable_progress_bars()
    modes = {"parser_mode": cli_config.PARSER_MODE, "exit_on_error": False}
    return SAMCLI(SAMLightningModule, AgentLogDataModule, seed_everything_default=0, args=args,
                  parser_kwargs={**modes, **{s: dict(modes) for s in SUBCOMMANDS}},
                  save_config_kwargs={"overwrite": True}, trainer_defaults=defaults)


def _hint(exc: BaseException) -> str:
    """What data.on_error: skip would do for a bad line of an agent log, or a bad conversation of a transcript
    file (a transcript error the option cannot help, e.g. nothing converted, gets no hint)."""
    if isinstance(exc, LogFormatError):
        return f"fix that line, or {spelt('skip', 'sam-train')} to train on the other lines (each skipped line is listed)"
    if skip_would_help(exc):
        return (f"fix that conversation, or {spelt('skip', 'sam-train')} to train on the other conversations (each "
                "skipped one is listed)")
    return ""


def run(argv: list[str] | None = None) -> int:
    """train.py: a bad input (log, config value, checkpoint, BERT folder) ends in one ``error: ...`` line naming
    the file and what to do; ``--traceback`` or SAM_TRACEBACK=1 shows the full trace."""
    def fit(args: list[str]) -> int:
        main(args if args != sys.argv[1:] else None)  # None: LightningCLI reads sys.argv itself, without a warning
        return 0

    from lightning_fabric.utilities.exceptions import MisconfigurationException

    # Lightning's refusals of a trainer setting (e.g. --trainer.logger false with the LR monitor) are bad input too
    return run_cli(fit, argv, errors=(ValueError, OSError, MisconfigurationException), hint=_hint)
