"""What the two Janus benchmarks share: the policies-and-gate config section, the command line, the run plan.

The head benchmark (:mod:`sam_model.bench.janus_head`) and the bank benchmark (:mod:`sam_model.bench.janus_bank`)
each have a typed config tree (a dataclass filled by jsonargparse from ``--config`` files and the command line);
their ``janus`` sections extend :class:`PolicyCfg`, the twelve keys both read the same way. Which benchmark a
command runs is decided by :mod:`sam_model.bench.janus` (``stream:``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from sam_model import tensorboard_log
from sam_model.io import SAMFileError


@dataclass
class PolicyCfg:
    """The policies compared and the Janus controller's gate and hybrid evaluation set (both benchmarks).

    Args:
        policies: subset of none (the base updater alone), always, mmt, random, periodic (random and periodic
            make as many comparisons as MMT).
        ablations: parts of E_t switched off one at a time under MMT: subset of coverage, boundary, fresh.
        beta: MMT's momentum factor (an EMA of the deployed update vectors z_t, their lengths included).
        tau: MMT compares when cos(z_t, m_{t-1}) < tau (budget mode: until 8 cosines have been seen).
        budget: MMT in budget mode when set: compare when cos < the budget-quantile of the last 64 cosines.
        warmup: MMT compares each of the first ``warmup`` deployed steps whatever their cosine, then gates as
            usual (plain mode only: refused with budget).
        momentum: m follows the deployed steps ("deployed") or every proposed step ("proposed", the literal
            formula).
        ema: m averages the steps themselves ("vectors", their lengths included) or their directions
            ("directions": each step scaled to length 1).
        periodic_n: the periodic gate's period; 0 = MMT's number of comparisons, evenly spaced.
        coverage: E_t's coverage part: cluster representatives of every task seen.
        boundary: E_t's boundary part: tasks whose correctness flipped.
        fresh: E_t's fresh part: tasks since the last trigger.
        holdout_latest: judge a candidate on tasks it was not fine-tuned on (only tasks before its batch).
    """

    policies: list[str] = field(default_factory=lambda: ["none", "always", "mmt", "random", "periodic"])
    ablations: list[str] = field(default_factory=lambda: ["coverage", "boundary", "fresh"])
    beta: float = 0.9
    tau: float = 0.0
    budget: float | None = None
    warmup: int = 0
    momentum: str = "deployed"
    ema: str = "vectors"
    periodic_n: float = 0
    coverage: int = 16
    boundary: int = 16
    fresh: int = 8
    holdout_latest: bool = True


USAGE = """Options come from --config files (repeat --config to stack overrides: later files win) and then from the
command line, one option per config key (--janus.beta 0.97, --data.train_per_domain 10, --seeds 0,
--seeds tuning, --janus.policies [none,mmt]); --print_config shows the resolved config and exits."""


def _help_formatter():
    from jsonargparse import DefaultHelpFormatter

    class HelpFormatter(DefaultHelpFormatter, argparse.RawDescriptionHelpFormatter):
        """Option help with its type and default; the description as written."""

    return HelpFormatter


def parser(cfg_class: type, description: str):
    """The jsonargparse parser of a benchmark's config class (janus_head.BenchCfg, janus_bank.BankBenchCfg), its
    help led by ``description`` (the benchmark module's docstring)."""
    from jsonargparse import ActionConfigFile, ArgumentParser

    from sam_model import cli_config

    p = ArgumentParser(prog="python -m sam_model.bench.janus", description=f"{description}\n{USAGE}",
                       usage="%(prog)s --config FILE [--config OVERRIDE ...] --out DIR [--KEY VALUE ...]",
                       parser_mode=cli_config.PARSER_MODE, exit_on_error=False, formatter_class=_help_formatter())
    p.add_argument("--config", action=ActionConfigFile,
                   help="a YAML config (configs/janus_sgd.yaml, configs/janus_bank.yaml); repeat it to stack "
                        "overrides on it (configs/janus_sgd_noisy.yaml on janus_sgd.yaml)")
    p.add_argument("--out", required=True, help="output folder: janus.json (and janus_accuracy.png), runs/; it must "
                                                "hold no earlier runs")
    tensorboard_log.add_option(p, "janus_accuracy.png's curves (each policy's accuracy by step t, first seed) "
                                  "and the PNG")
    p.add_class_arguments(cfg_class, None)
    return p


def parse_config(argv: Sequence[str], cfg_class: type, description: str | None = None):
    """(config, output folder) from ``argv``; a bad config raises SAMFileError in one line naming key and file."""
    return parse_run(argv, cfg_class, description)[:2]


def parse_run(argv: Sequence[str], cfg_class: type, description: str | None = None):
    """(config, output folder, TensorBoard log folder or None) from ``argv``; a bad config, or a log folder that
    cannot be written (checked before the run, not after it), raises SAMFileError in one line."""
    from jsonargparse import ArgumentError

    from sam_model import cli_config

    cli_config.use_interpolation()
    from omegaconf.errors import OmegaConfBaseException
    argv = cli_config.resolve_configs(argv)  # --config janus_sgd.yaml: the installed one when the folder has none
    p = parser(cfg_class, description or sys.modules[cfg_class.__module__].__doc__ or "")
    try:
        ns = p.parse_args(list(argv))
    except ArgumentError as exc:
        raise SAMFileError(cli_config.explain(str(exc), argv, p)) from None
    except OmegaConfBaseException as exc:
        raise SAMFileError(cli_config.explain_interpolation(exc, argv)) from None
    init = p.instantiate(ns) if hasattr(p, "instantiate") else p.instantiate_classes(ns)
    cfg = cfg_class(**{f.name: init[f.name] for f in fields(cfg_class)})
    if cfg.seeds == "tuning":
        cfg.seeds = list(cfg.tuning_seeds)
    elif isinstance(cfg.seeds, int):
        cfg.seeds = [cfg.seeds]
    if why := tensorboard_log.problem(ns.tensorboard):
        raise SAMFileError(why)
    return cfg, Path(ns.out), ns.tensorboard


def load_config(cfg_class: type, path: str | None = None, *args: str):
    """The ``cfg_class`` config of ``--config path`` (defaults without a path), with further command-line
    ``args``."""
    return parse_config([*(("--config", path) if path else ()), *args, "--out", "-"], cfg_class)[0]


def refuse_earlier_runs(out: Path) -> None:
    """A benchmark writes its runs into ``out/runs``; one that already holds runs is refused, not overwritten."""
    if (out / "runs").exists() and any((out / "runs").iterdir()):
        raise SAMFileError(f"{out}/runs already holds Janus runs; choose another --out or remove it")


def as_dict(obj: Any) -> Any:
    return {k: as_dict(v) for k, v in vars(obj).items()} if hasattr(obj, "__dataclass_fields__") else obj


def plan(cfg: Any) -> list[tuple[str, str | None, str | None]]:
    """(name, gate or None = decided after MMT ran, ablation) in run order: MMT before the matched baselines.
    ``cfg.janus`` is a :class:`PolicyCfg`."""
    j = cfg.janus
    if j.momentum not in ("deployed", "proposed"):
        raise SAMFileError(f"janus.momentum must be 'deployed' or 'proposed', got {j.momentum!r}")
    if j.ema not in ("vectors", "directions"):
        raise SAMFileError(f"janus.ema must be 'vectors' or 'directions', got {j.ema!r}")
    p = ("p" if j.momentum == "proposed" else "") + ("u" if j.ema == "directions" else "")
    if j.budget is not None and j.warmup:  # budget mode has no warm-up: it was dropped without a word
        raise SAMFileError(f"janus.warmup ({j.warmup}) works in plain mode only: leave it 0 with janus.budget")
    mmt = f"mmt{p}({j.beta},{j.tau},{j.warmup})" if j.budget is None else f"mmt{p}q({j.beta},{j.budget},{j.tau})"
    known = {"none", "always", "mmt", "random", "periodic"}
    bad = set(j.policies) - known
    if bad:
        raise SAMFileError(f"unknown policies {sorted(bad)}; known: {sorted(known)}")
    bad = set(j.ablations) - {"coverage", "boundary", "fresh"}
    if bad:
        raise SAMFileError(f"unknown ablations {sorted(bad)}; known: coverage, boundary, fresh")
    matched = {"random", "periodic"} & set(j.policies)
    runs: list[tuple[str, str | None, str | None]] = []
    for p in ("none", "always"):
        if p in j.policies:
            runs.append((p, p, None))
    if "mmt" in j.policies or matched or j.ablations:
        runs.append(("mmt", mmt, None))
    for p in ("random", "periodic"):
        if p in j.policies:
            runs.append((p, None, None))
    runs += [(f"mmt-no-{a}", mmt, a) for a in j.ablations]
    return runs


def stream_of(argv: Sequence[str]) -> str:
    """Which benchmark ``argv`` asks for: ``--stream X``, else the ``stream:`` of the last --config file that has
    one, else "head" (an unreadable file is left to the parser to report)."""
    import yaml

    from sam_model import cli_config

    args = list(argv)
    for i, a in enumerate(args):
        if a == "--stream" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--stream="):
            return a.split("=", 1)[1]
    for path in reversed(cli_config.config_files(args)):
        try:
            raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            return "head"
        if isinstance(raw, dict) and "stream" in raw:
            return str(raw["stream"])
    return "head"


def override_alone(argv: Sequence[str]) -> str | None:
    """The first --config file when it is an override (it sets no ``data.train``: janus_sgd_noisy.yaml), which
    would otherwise run on the built-in defaults instead of the base it changes; None when the stack is fine."""
    import yaml

    from sam_model import cli_config

    files = cli_config.config_files(list(argv))
    if not files:
        return None
    try:
        raw = yaml.safe_load(Path(files[0]).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None  # the parser names an unreadable file
    data = raw.get("data") if isinstance(raw, dict) else None
    return None if isinstance(data, dict) and "train" in data else files[0]
