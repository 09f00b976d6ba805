"""The subprocess side of tests/test_readme_commands.py: runs each README command's CLI, from the folder the item
names, only until it calls ``parse_args``, then parses its arguments (``parse``) or does not (placeholders such as ``NAME|DIR`` or ``T``
are no values), and checks that every ``--option`` the README gives it is one of that parser's options.

Run as a script with the items as JSON on stdin; prints ``{"checked", "failures"}``. In a subprocess because it
patches argparse for the whole interpreter."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import importlib
import importlib.util
import io
import json
import os
import re
import sys
import typing

import jsonargparse

from sam_model.io import TRACEBACK_FLAG


class Parsed(Exception):
    def __init__(self, parser: argparse.ArgumentParser):
        self.parser = parser


PARSE = True  # parse the values too, or stop at the parser


def _stop(parse):
    def parse_args(self, *args, **kwargs):
        if PARSE:
            parse(self, *args, **kwargs)
        raise Parsed(self)

    return parse_args


argparse.ArgumentParser.parse_args = _stop(argparse.ArgumentParser.parse_args)
jsonargparse.ArgumentParser.parse_args = _stop(jsonargparse.ArgumentParser.parse_args)


def invoke(target: str, args: list[str]) -> None:
    """Run what the README runs, with ``args``, until it parses them (Parsed) or exits."""
    if target == "TRAIN":
        from sam_model.training.cli import main

        main(args + ([] if not PARSE or any("help" in a for a in args) else ["--print_config"]))
    elif target.startswith("FILE:"):
        spec = importlib.util.spec_from_file_location("readme_example", target[5:])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.main(args)
    else:
        module = importlib.import_module(target)
        (getattr(module, "main", None) or module.run)(args)


def chosen(parser: argparse.ArgumentParser, words: list[str]) -> argparse.ArgumentParser:
    """The sub-command's parser where the command names one (``sam-train fit``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = next((w for w in words if w in action.choices), None)
            if name is not None:
                return chosen(action.choices[name], words)
    return parser


def accepts(parser: argparse.ArgumentParser, flag: str) -> bool:
    """``flag`` is an option of ``parser``, or a field of a dataclass option (``--model.net.max_length``; an
    upper-case field is a placeholder: ``--model.net.X``)."""
    options = parser._option_string_actions
    if flag in options:
        return True
    parts = flag[2:].split(".")
    for i in range(len(parts) - 1, 0, -1):
        action = options.get("--" + ".".join(parts[:i]))
        if action is not None:
            return len(parts) - i == 1 and any(
                dataclasses.is_dataclass(t) and (parts[i].isupper() or parts[i] in {f.name for f in
                                                                                    dataclasses.fields(t)})
                for t in typing.get_args(getattr(action, "_typehint", None)) or (getattr(action, "_typehint", None),))
    return False


def options_of(words: list[str]) -> list[str]:
    """The ``--options`` of a command's words, those in optional groups too (``[--scope episode|global]``)."""
    return [w.strip("[]").split("=")[0] for w in words if re.match(r"\[*--[a-zA-Z]", w)]


def main() -> None:
    global PARSE
    items, bare = json.load(sys.stdin)
    failures, checked, parsers = [], 0, []
    for line, target, parse_args, words, cwd in items:
        os.chdir(cwd)  # the blocks said to work from any folder: from an empty one
        PARSE = parse_args is not None
        if PARSE:
            args = parse_args
        else:  # the parser is all that is needed: sub-commands, and "--help" where a fit asks for a config
            args = [w for w in words if not w.startswith(("-", "["))][:1] + ["--help"]
        sys.argv, buf, parser = ["train.py"], io.StringIO(), None  # sam-data names itself in sys.argv[0]
        where = f"{line}: {target} {' '.join(words)[:120]}"
        try:
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                invoke(target, args)
            checked += 1  # ran without options to parse (sam-data formats)
        except Parsed as done:
            checked += 1
            parser = chosen(done.parser, args)
        except SystemExit as exc:
            if exc.code in (0, None):
                checked += 1
            else:
                failures.append(f"{where}: {(buf.getvalue().strip().splitlines() or [repr(exc)])[-1][:300]}")
        except Exception as exc:
            failures.append(f"{where}: {type(exc).__name__}: {exc}"[:400])
        if parser is not None:
            parsers.append(parser)
            for flag in options_of(words):
                if not accepts(parser, flag):
                    close = difflib.get_close_matches(flag, parser._option_string_actions, n=1)
                    failures.append(f"{where}: no option {flag}" + (f" (did you mean {close[0]}?)" if close else ""))
    for line, flag in bare:  # an option named in the prose: some CLI the README runs takes it
        if flag != TRACEBACK_FLAG and not any(accepts(p, flag) for p in parsers):  # run_cli's, for every CLI
            failures.append(f"{line}: `{flag}` is an option of none of the documentation's commands")
    print(json.dumps({"checked": checked, "failures": failures, "parsers": len(parsers)}))


if __name__ == "__main__":
    main()
