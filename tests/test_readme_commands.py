"""Every command line of the ``bash`` blocks of README.md and docs/*.md (tests/docset.py) parses as written: its
options exist, take the values given, and its config files load (training commands: ``--print_config``). Nothing runs: each CLI stops right after it
parsed its arguments, so the README's benchmark commands (hours of work, data not in a clean clone) are checked in
seconds. The blocks the README says work "from any folder" are parsed from an empty one (configs found by name, not
as files of the checkout). The Python blocks run whole (tests/test_readme.py).

What is read: ``python -m MODULE ...``, ``python evaluate.py|train.py|examples/X.py ...`` and the console scripts
(``sam-train``, ``sam-export``, ``sam-eval``, ``sam-data``, ``sam-serve``); ``A=...`` lines set variables the
later lines use (``$A``). A usage line's optional groups (``[--label origin|latest|all]``) are dropped and a
choice ``A|B`` stands for ``A``; ``S`` stands for a seed and ``...`` for more of the kind. Other commands (make, curl, pip) are not ours.

The prose names commands and options too (`` `evaluate.py --chunking on` ``, `` `--checkpoint-every` ``): every
option of a command in an inline code span is checked against that command's parser (its values may be
placeholders, so they are not parsed), optional groups of usage lines included, and an option named alone must
be an option of some command the README runs (tests/readme_cli.py). Every file, folder, module and function the
prose names in code exists."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import docset

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^( *)```bash\n(.*?)^\1```", re.S | re.M)  # indented too: a block inside a list item
FENCE = re.compile(r"^( *)```.*?^\1```", re.S | re.M)
SPAN = re.compile(r"`([^`]+)`")
SCRIPTS = {"sam-eval": "sam_model.evaluation.run", "sam-export": "sam_model.export", "sam-data": "sam_model.data.cli",
           "sam-serve": "sam_model.serve.cli", "evaluate.py": "sam_model.evaluation.run"}
PLACEHOLDERS = {"S": "0"}  # --seed S, --seed_everything S


def commands(text: str) -> list[tuple[int, str, list[str]]]:
    """(README line, what runs it, its arguments) for every command of ours in the bash blocks; ``what`` is a
    module name, ``TRAIN`` or ``FILE:path``."""
    out = []
    for m in BLOCK.finditer(text):
        line, env = text.count("\n", 0, m.start()) + 1, {}
        body = re.sub(rf"^{m.group(1)}", "", m.group(2), flags=re.M)
        for raw in re.sub(r"\\\n\s*", " ", body).splitlines():
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
                    out.append((line, *target))
    return out


def anywhere(text: str) -> set[int]:
    """The README lines of the bash blocks said to work "from any folder": they are parsed from an empty one."""
    return {text.count("\n", 0, m.start()) + 1 for m in BLOCK.finditer(text)
            if "from any folder" in text[max(0, m.start() - 300):m.start()]}


def prose_spans(text: str) -> list[tuple[int, str]]:
    """(README line, text) of every inline code span outside the fenced blocks."""
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # the line numbers kept
    return [(prose.count("\n", 0, m.start()) + 1, m.group(1)) for m in SPAN.finditer(prose)
            if "\n\n" not in m.group(1)]  # a span ends with its paragraph


def inline_commands(text: str) -> tuple[list[tuple[int, str, list[str]]], list[tuple[int, str]]]:
    """The prose's inline code spans (fenced blocks left out): (README line, what runs it, its words) for each
    command of ours given with an option, and (README line, option) for each option named alone."""
    found, bare = [], []
    for line, span in prose_spans(text):
        try:
            words = shlex.split(span)
        except ValueError:
            words = span.split()
        start = command_start(words)
        if start is not None:
            target = what(start)
            if target is not None and any(re.match(r"\[*--[a-z]", w) for w in target[1]):
                found.append((line, *target))
        elif words and words[0].startswith("--"):
            bare += [(line, w) for w in words if re.fullmatch(r"--[a-z][\w.-]*\+?", w)]
    return found, bare


ALIASES = {"pack": "sam_model.pretrained.pack", "chunk_table": "sam_model.bench.chunk_table"}  # as the prose says them


def command_start(words: list[str]) -> list[str] | None:
    """A command of ours inside a span's words, from its first word to a ``;``, as ``what`` reads it:
    ``rm -rf X; /usr/bin/time -v python train.py fit ...``, ``SAM_X=1 python evaluate.py ...``, ``evaluate.py
    --chunking on``, ``sam_model.data.synthetic --families trip``, ``pack --observation-max-length 8``."""
    for i, w in enumerate(words):
        rest = words[i + 1:]
        if w in ("python", "python3") and rest[:1] == ["-m"] and rest[1:2] and rest[1].startswith("sam_model."):
            cmd = ["python", *rest]
        elif w in ("python", "python3") and rest[:1] and rest[0].endswith(".py"):
            cmd = ["python", *rest]
        elif w in ("train.py", "evaluate.py") or w.startswith("examples/") and w.endswith(".py"):
            cmd = ["python", w, *rest]
        elif w in SCRIPTS or w == "sam-train":
            cmd = words[i:]
        elif re.fullmatch(r"sam_model(\.\w+)+", w) and rest[:1] and rest[0].startswith("--"):
            cmd = ["python", "-m", w, *rest]
        elif i == 0 and w in ALIASES:
            cmd = ["python", "-m", ALIASES[w], *rest]
        else:
            continue
        for j, c in enumerate(cmd):  # to the end of the command: "; next" or "...;"
            if c.endswith(";"):
                return cmd[:j] + ([c[:-1]] if c != ";" else [])
        return cmd
    return None


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


def test_usage_lines_become_commands():
    assert usage(["LOG.jsonl[.gz]|LOG.json[.gz]", "OUT.jsonl", "[--format", "NAME]", "[--unmasked]",
                  "[--label", "origin|latest|all]", "--seed", "S"]) == ["LOG.jsonl[.gz]", "OUT.jsonl", "--seed", "0"]
    assert usage(["--data.train", "[a.jsonl]"]) == ["--data.train", "[a.jsonl]"]  # a list value is no group
    got = commands("```bash\nC=x.gz; S=\"--compare a=b\"\npython evaluate.py --data $C $S --out o  # note\n"
                   "make demo && sam-train fit --config c.yaml > log\n```\n")
    assert got == [(1, "sam_model.evaluation.run", ["--data", "x.gz", "--compare", "a=b", "--out", "o"]),
                   (1, "TRAIN", ["fit", "--config", "c.yaml"])]
    indented = commands("- a list item:\n\n  ```bash\n  python -m sam_model.bench.paired D sam a   # note\n  ```\n")
    assert indented == [(3, "sam_model.bench.paired", ["D", "sam", "a"])]


def test_the_prose_commands_and_options_are_found():
    text = ("Run `evaluate.py --chunking on` (or\n`rm -rf c; /usr/bin/time -v python train.py fit --config\nx.yaml; ls`)"
            " with `--threads 1`, `pack --observation-max-length 8`, `sam_model.data.synthetic --families trip`;\n"
            "`sam_model.store` and `docker --cpus 2` are no commands of ours.\n```bash\n`--not-prose`\n```\n`--k 5`\n")
    found, bare = inline_commands(text)
    assert found == [(1, "sam_model.evaluation.run", ["--chunking", "on"]),
                     (2, "TRAIN", ["fit", "--config", "x.yaml"]),
                     (3, "sam_model.pretrained.pack", ["--observation-max-length", "8"]),
                     (3, "sam_model.data.synthetic", ["--families", "trip"])]
    assert bare == [(3, "--threads"), (8, "--k")]


def located(name: str, rows: list[tuple]) -> list[tuple]:
    """Rows whose first field is a line of file ``name``, with that field as FILE:LINE."""
    return [(f"{name}:{row[0]}", *row[1:]) for row in rows]


def test_every_readme_command_line_parses_and_names_options_that_exist(tmp_path):
    found, outside, inline, bare = [], set(), [], []
    for name, text in docset.texts():
        found += located(name, commands(text))
        outside |= {f"{name}:{line}" for line in anywhere(text)}
        spans, alone = inline_commands(text)
        inline += located(name, spans)
        bare += located(name, alone)
    assert len(found) > 100 and len(inline) > 50 and len(bare) > 50, \
        "the README's commands were not found: has the bash block syntax changed?"
    assert len(outside) == 2, "the blocks said to work from any folder were not found"
    items = [(line, target, usage(words), words, str(tmp_path if line in outside else REPO))
             for line, target, words in found]
    items += [(line, target, None, words, str(REPO)) for line, target, words in inline]  # placeholders: options only
    run = subprocess.run([sys.executable, str(REPO / "tests" / "readme_cli.py")], input=json.dumps([items, bare]),
                         capture_output=True, text=True, cwd=REPO, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert not result["failures"], "\n".join(result["failures"])
    assert result["checked"] == len(items)


PATH = re.compile(r"(?:sam_model|tests|configs|examples|data|docs)/[\w./-]*")
NAME = re.compile(r"sam_model(?:\.\w+)+")
WHEEL_ONLY = {"sam_model/configs/"}  # where a wheel puts configs/: no folder of a checkout


def resolves(name: str) -> bool:
    """``sam_model.a.b.c`` is a module, or an attribute (chain) of the longest module it starts with."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            if importlib.util.find_spec(".".join(parts[:i])) is None:
                continue
        except ImportError:  # a parent that is a module, not a package
            continue
        try:
            functools.reduce(getattr, parts[i:], importlib.import_module(".".join(parts[:i])))
        except AttributeError:
            return False
        return True
    return False


def test_every_path_and_module_the_readme_names_exists():
    """A file, folder, module or function the prose names in code (`sam_model/data/toolstate.py`,
    `sam_model.training.batching.memory_key`) is there: a rename or a removal shows here, not to a reader."""
    named = [(f"{name}:{line}", w.strip("(),;:'\"")) for name, text in docset.texts()
             for line, span in prose_spans(text) for w in span.split()]
    paths = [(line, w) for line, w in named if PATH.fullmatch(w)]
    names = [(line, w) for line, w in named if NAME.fullmatch(w)]
    assert len(paths) > 50 and len(names) > 50
    missing = [f"{line}: {p}" for line, p in paths if not (REPO / p).exists() and p not in WHEEL_ONLY]
    missing += [f"{line}: {n}" for line, n in names if not resolves(n)]
    assert not missing, "\n".join(missing)
