"""Every command line of README.md's ``bash`` blocks parses as written: its options exist, take the values given,
and its config files load (training commands: ``--print_config``). Nothing runs: each CLI stops right after it
parsed its arguments, so the README's benchmark commands (hours of work, data not in a clean clone) are checked in
seconds. The Python blocks run whole (tests/test_readme.py).

What is read: ``python -m MODULE ...``, ``python evaluate.py|train.py|examples/X.py ...`` and the console scripts
(``sam-train``, ``sam-export``, ``sam-eval``, ``sam-data``, ``sam-serve``); ``A=...`` lines set variables the
later lines use (``$A``). A usage line's optional groups (``[--label origin|latest|all]``) are dropped and a
choice ``A|B`` stands for ``A``; ``S`` stands for a seed and ``...`` for more of the kind. Other commands (make, curl, pip) are not ours."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)
SCRIPTS = {"sam-eval": "sam_model.evaluation.run", "sam-export": "sam_model.export", "sam-data": "sam_model.data.cli",
           "sam-serve": "sam_model.serve.cli", "evaluate.py": "sam_model.evaluation.run"}
PLACEHOLDERS = {"S": "0"}  # --seed S, --seed_everything S


def commands(text: str) -> list[tuple[int, str, list[str]]]:
    """(README line, what runs it, its arguments) for every command of ours in the bash blocks; ``what`` is a
    module name, ``TRAIN`` or ``FILE:path``."""
    out = []
    for m in BLOCK.finditer(text):
        line, env = text.count("\n", 0, m.start()) + 1, {}
        for raw in re.sub(r"\\\n\s*", " ", m.group(1)).splitlines():
            lex = shlex.shlex(raw, posix=True, punctuation_chars=";&")
            lex.whitespace_split, lex.commenters = True, "#"
            try:
                tokens = list(lex)
            except ValueError:  # a heredoc's Python, not a command
                continue
            parts, cur = [], []
            for t in tokens + [";"]:
                if t in (";", "&&"):
                    parts.append(cur)
                    cur = []
                else:
                    cur.append(t)
            for words in filter(None, parts):
                if len(words) == 1 and (v := re.fullmatch(r"([A-Z]+)=(.*)", words[0])):
                    env[v.group(1)] = v.group(2)
                    continue
                args = []
                for w in words:
                    if w.startswith(">"):
                        break
                    if (v := re.fullmatch(r"\$([A-Z]+)", w)) and v.group(1) in env:
                        args += env[v.group(1)].split()
                        continue
                    args.append(re.sub(r"\$([A-Z]+)", lambda g, env=env: env.get(g.group(1), g.group(0)), w))
                target = what(args)
                if target is not None:
                    out.append((line, target[0], usage(target[1])))
    return out


def what(words: list[str]) -> tuple[str, list[str]] | None:
    if words[:2] == ["python", "-m"] and len(words) > 2:
        return words[2], words[3:]
    if words[:1] == ["python"] and len(words) > 1 and words[1].endswith(".py"):
        if words[1] == "train.py":
            return "TRAIN", words[2:]
        return SCRIPTS.get(words[1], f"FILE:{words[1]}"), words[2:]
    if words[:1] == ["sam-train"]:
        return "TRAIN", words[1:]
    if words and words[0] in SCRIPTS:
        return SCRIPTS[words[0]], words[1:]
    return None


def usage(args: list[str]) -> list[str]:
    """A usage line as a command: optional ``[...]`` groups dropped, ``A|B`` as ``A``, placeholders filled."""
    out, depth = [], 0
    for a in args:
        if depth or a.startswith("[-"):  # a group opens with an option; a list value ([a.jsonl]) is no group
            depth += a.count("[") - a.count("]")
            continue
        if a == "...":  # "and the others of the kind"
            continue
        out.append(PLACEHOLDERS.get(a, a.split("|")[0] if "|" in a and "=" not in a else a))
    return out


RUNNER = r'''
import argparse, contextlib, importlib, importlib.util, io, json, sys
import jsonargparse

class Parsed(Exception):
    pass

def stop(parse):
    def parse_args(self, *a, **k):
        parse(self, *a, **k)
        raise Parsed
    return parse_args

argparse.ArgumentParser.parse_args = stop(argparse.ArgumentParser.parse_args)
jsonargparse.ArgumentParser.parse_args = stop(jsonargparse.ArgumentParser.parse_args)
sys.argv = ["train.py"]
failures, checked = [], 0
for line, target, args in json.load(sys.stdin):
    sys.argv, buf = ["train.py"], io.StringIO()  # sam-data names itself in sys.argv[0]
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            if target == "TRAIN":
                from sam_model.training.cli import main
                main(args + ([] if any("help" in a for a in args) else ["--print_config"]))
            elif target.startswith("FILE:"):
                spec = importlib.util.spec_from_file_location("readme_example", target[5:])
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                module.main(args)
            else:
                module = importlib.import_module(target)
                (getattr(module, "main", None) or module.run)(args)
        checked += 1  # ran without options to parse (sam-data formats)
    except Parsed:
        checked += 1
    except SystemExit as exc:
        if exc.code in (0, None):
            checked += 1
        else:
            failures.append(f"README.md line {line}: {target} {' '.join(args)[:120]}: "
                            f"{(buf.getvalue().strip().splitlines() or [repr(exc)])[-1][:300]}")
    except Exception as exc:
        failures.append(f"README.md line {line}: {target} {' '.join(args)[:120]}: {type(exc).__name__}: {exc}"[:400])
print(json.dumps({"checked": checked, "failures": failures}))
'''


def test_usage_lines_become_commands():
    assert usage(["LOG.jsonl[.gz]|LOG.json[.gz]", "OUT.jsonl", "[--format", "NAME]", "[--unmasked]",
                  "[--label", "origin|latest|all]", "--seed", "S"]) == ["LOG.jsonl[.gz]", "OUT.jsonl", "--seed", "0"]
    assert usage(["--data.train", "[a.jsonl]"]) == ["--data.train", "[a.jsonl]"]  # a list value is no group
    got = commands("```bash\nC=x.gz; S=\"--compare a=b\"\npython evaluate.py --data $C $S --out o  # note\n"
                   "make demo && sam-train fit --config c.yaml > log\n```\n")
    assert got == [(1, "sam_model.evaluation.run", ["--data", "x.gz", "--compare", "a=b", "--out", "o"]),
                   (1, "TRAIN", ["fit", "--config", "c.yaml"])]


def test_every_readme_command_line_parses():
    found = commands((REPO / "README.md").read_text(encoding="utf-8"))
    assert len(found) > 100, "the README's commands were not found: has the bash block syntax changed?"
    run = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(found), capture_output=True, text=True,
                         cwd=REPO, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert not result["failures"], "\n".join(result["failures"])
    assert result["checked"] == len(found)
