"""Every option of every command says what it does (house rule: "CLIs have ``--help`` that explains every option").

The walk: the console scripts of pyproject.toml, sam-data's subcommands, train.py and evaluate.py, and every module
of the package run as ``python -m`` (the exporter, the data tools, each benchmark with a ``main``). Each is called
with ``--help`` while the parser's parse step hands the parser back instead of parsing, so the test reads what the
parser holds and runs nothing. Checked per option: a help text of a few words at least (an empty or missing one
showed a bare ``--child`` or ``--n N`` in --help), and its default said, by the formatter or in the text, where it
has one. sam-train's parser is Lightning's: its own options (trainer.*, optimizer.*) are Lightning's to explain;
the ones this package adds (experiment, run, overwrite, config, model.*, data.*, and SAMConfig / StoreConfig
behind --model.net / --model.store) are checked.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import re
import sys
from pathlib import Path

import pytest

import sam_model

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path(sam_model.__file__).parent
MIN_WORDS = 4  # "vector dimension", "learning rate." said what the name says, not what to give
HIDDEN = {("sam_model.bench.threads", "--child")}  # the parent's protocol with its child processes, not an option


class Parsed(BaseException):  # not an Exception: no CLI's error handling may swallow it
    def __init__(self, parser):
        self.parser = parser


def _grab(self, *args, **kwargs):
    raise Parsed(self)


def parser_of(main, argv: list[str], monkeypatch):
    """The parser ``main(argv)`` builds, taken at its parse step (argparse and jsonargparse); None if it parses
    nothing (a command without options)."""
    monkeypatch.setattr(sys, "argv", ["cli"])  # LightningCLI reads it too, and warned of pytest's own arguments
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", _grab)
    with contextlib.suppress(ImportError):
        import jsonargparse

        monkeypatch.setattr(jsonargparse.ArgumentParser, "parse_args", _grab)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            main(argv)
    except Parsed as got:
        return got.parser
    except SystemExit as exc:
        assert exc.code in (0, None), out.getvalue()
    return None


def _main_modules() -> list[str]:
    """Every module of the package that runs as ``python -m`` (a ``__main__`` guard), by name."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if 'if __name__ == "__main__"' not in path.read_text(encoding="utf-8"):
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def _scripts() -> dict[str, str]:
    """pyproject.toml's [project.scripts]: name -> "module:function"."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    return dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]+)"', section, re.M))


@pytest.mark.parametrize("script, same_as", [("train.py", "sam-train"), ("evaluate.py", "sam-eval")])
def test_the_root_scripts_are_the_console_scripts(script, same_as):
    """train.py and evaluate.py run the console scripts' functions, so the walk below checks their options too
    (building sam-train's parser twice costs seconds)."""
    spec = importlib.util.spec_from_file_location(f"_cli_{Path(script).stem}", REPO / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the __main__ guard keeps it from running
    target, function = _scripts()[same_as].split(":")
    assert module.run is getattr(importlib.import_module(target), function)


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # an extra that is not installed here
        pytest.skip(f"{name}: {exc}")


def commands() -> list[tuple[str, str, list[str]]]:
    """(id, "module:function" or a root script, argv before --help)."""
    out = [(name, target, []) for name, target in _scripts().items() if name != "sam-data"]
    from sam_model.data.cli import COMMANDS

    data = _scripts()["sam-data"]
    out += [(f"sam-data {sub}", data, [sub]) for sub in COMMANDS]
    out += [(f"python -m {m.removesuffix('.__main__')}", f"{m}:main", []) for m in _main_modules()]
    return out


NO_OPTIONS = {"sam-data formats", "python -m sam_model.data.formats",  # they list the formats; nothing to set
              "python -m sam_model.data.cli"}  # sam-data itself: its usage lists the subcommands, checked one by one
LIGHTNING = {"sam-train"}


def _text(action) -> str:
    return re.sub(r"%\([a-z_]+\)[sdr]", "X", action.help or "")


def problem(action, parser, jsonargparse_formatter) -> str | None:
    """What is wrong with an option's help, or None."""
    if action.help is None:
        return "no help text"
    text = _text(action)
    if len(text.split()) < MIN_WORDS:
        return f"help {text!r} says too little (under {MIN_WORDS} words)"
    default = action.default
    if (not action.option_strings or action.required or action.nargs == 0 or default in (None, argparse.SUPPRESS)
            or (isinstance(default, (list, tuple)) and not default)):
        return None
    if jsonargparse_formatter is not None and issubclass(parser.formatter_class, jsonargparse_formatter):
        return None  # "(type: ..., default: ...)" under every option
    if issubclass(parser.formatter_class, argparse.ArgumentDefaultsHelpFormatter) or "default" in text.lower():
        return None
    return f"default {default!r} not said (sam_model.io.DefaultsHelp says it)"


def walk(parser, name: str):
    """(command name, parser, action) for every option of ``parser`` and its subcommands."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, sub_parser in action.choices.items():
                yield from walk(sub_parser, f"{name} {sub}")
        elif not isinstance(action, argparse._HelpAction):
            yield name, parser, action


def _ours(dest: str) -> bool:
    return dest in ("experiment", "run", "overwrite", "config") or dest.startswith(("model.", "data."))


@pytest.mark.parametrize("cmd", commands(), ids=lambda c: c[0])
def test_every_option_explains_itself(cmd, monkeypatch):
    name, target, argv = cmd
    module, function = target.split(":")
    main = getattr(_import(module), function)
    if name in LIGHTNING:
        pytest.importorskip("pytorch_lightning")
    parser = parser_of(main, [*argv, "--help"], monkeypatch)
    if name in NO_OPTIONS:
        assert parser is None
        return
    assert parser is not None, f"{name} --help built no parser"
    try:
        from jsonargparse import DefaultHelpFormatter
    except ImportError:
        DefaultHelpFormatter = None
    bad = []
    for where, p, action in walk(parser, name):
        option = "/".join(action.option_strings) or action.dest
        if action.help == argparse.SUPPRESS:
            assert (target.split(":")[0], option) in HIDDEN, f"{where}: {option} is hidden from --help"
            continue
        if name in LIGHTNING and not _ours(action.dest):
            continue
        if (why := problem(action, p, DefaultHelpFormatter)) is not None:
            bad.append(f"{where} {option}: {why}")
        p.format_help()  # a stray % in a help text fails here, as it would in --help
    assert not bad, "\n".join(bad)


def test_the_network_and_store_settings_behind_sam_train_explain_themselves():
    """--model.net and --model.store are single options in `sam-train fit --help`; their fields' help is the
    dataclasses' docstrings (shown by --model.net.help, and in the Janus benchmarks' --help)."""
    jsonargparse = pytest.importorskip("jsonargparse")
    from sam_model.models.sam import SAMConfig
    from sam_model.storeconfig import StoreConfig

    parser = jsonargparse.ArgumentParser()
    parser.add_class_arguments(SAMConfig, "net")
    parser.add_class_arguments(StoreConfig, "store")
    bad = [f"{a.dest}: {problem(a, parser, jsonargparse.DefaultHelpFormatter)}" for a in parser._actions
           if a.dest.startswith(("net.", "store.")) and problem(a, parser, jsonargparse.DefaultHelpFormatter)]
    assert not bad, "\n".join(bad)


def test_help_shows_defaults_as_typed_and_once():
    """DefaultsHelp: a list default as it is typed, an empty one not at all, a help that says its default
    itself not twice."""
    from sam_model.io import DefaultsHelp

    p = argparse.ArgumentParser(formatter_class=DefaultsHelp)
    p.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[10_000, 100_000],
                   help="bank sizes, comma-separated")
    p.add_argument("--extra", action="append", default=[], help="another retriever to evaluate; repeatable")
    p.add_argument("--kills", type=int, default=20, help="SIGKILLs per kind of save (default 20)")
    text = " ".join(p.format_help().split())
    assert "bank sizes, comma-separated (default: 10000,100000)" in text
    assert "repeatable (default" not in text
    assert text.count("default") == 2 and "(default 20)" in text


def test_the_commands_that_read_transcripts_say_which_logs_they_take():
    """sam-eval's --data and sam-train's --data.train take a log of any format `sam-data transcripts` reads and the
    trajectory folders of SWE-agent and OpenHands (sam_model.data.sources), but their help named OpenAI's
    {"id", "messages"} lines and tau-bench only: a Gemini or Bedrock user read that their log was not taken."""
    from sam_model.evaluation.run import build_parser
    from sam_model.training.datamodule import AgentLogDataModule

    data = next(a for a in build_parser()._actions if a.dest == "data").help
    train = AgentLogDataModule.__doc__.split("train:", 1)[1].split("val:", 1)[0]
    for text in (data, train):
        text = " ".join(text.split())
        assert "sam-data formats" in text and "Gemini" in text and "OpenHands" in text, text


def test_sam_train_fit_help_shows_no_raw_double_backticks(capsys):
    """`sam-train fit --help` rendered docstrings (Lightning's Trainer and this package's) with their
    reStructuredText ``literal`` marks: 124 raw double backticks, ``"auto"`` for "auto"."""
    from sam_model.training.cli import main as train_main

    with pytest.raises(SystemExit):
        train_main(["fit", "--help"])
    shown = capsys.readouterr().out
    assert "--trainer.strategy" in shown and 'Default: "auto"' in shown and "``" not in shown
