"""Long work shows progress also when its output goes to a file (house rule).

tqdm's bar redraws one line with carriage returns: into a file (a job's log, ``2> eval.log``) it was one endless
row of redraws joined by ``\\r``, nothing a ``tail`` could read. sam_model.progress.progress_bar writes plain
lines there; these tests hold every command to it.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import sam_model
from sam_model.progress import progress_bar

REPO = Path(__file__).resolve().parents[1]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_into_a_file_each_update_is_a_line():
    out = io.StringIO()  # not a terminal
    for _ in progress_bar(range(3), file=out, desc="work", unit="x", every_s=0.0):
        pass
    text = out.getvalue()
    assert "\r" not in text and text.endswith("\n")
    lines = text.splitlines()
    assert all(line.startswith("work:") for line in lines)
    assert "0/3" in lines[0] and "3/3" in lines[-1]


def test_into_a_file_a_bar_that_does_not_stay_keeps_its_last_line():
    """leave=False erases the bar on a terminal; a file keeps where it ended (the evaluation's ranking bars)."""
    out = io.StringIO()
    with progress_bar(total=4, file=out, desc="ranking", leave=False, every_s=0.0) as bar:
        for _ in range(4):
            bar.update()
    assert "\r" not in out.getvalue() and "4/4" in out.getvalue().splitlines()[-1]


def test_on_a_terminal_it_is_the_bar():
    out = Terminal()
    for _ in progress_bar(range(3), file=out, desc="work", mininterval=0):
        pass
    assert "\r" in out.getvalue()


def test_a_command_writing_to_a_file_writes_lines(tmp_path):
    """`python -m sam_model.data.synthetic OUT 2> log`: the log holds lines, not one row of \\r redraws."""
    with open(tmp_path / "log.txt", "w") as log:
        subprocess.run([sys.executable, "-m", "sam_model.data.synthetic", str(tmp_path / "d.jsonl"), "--episodes",
                        "20"], stdout=subprocess.DEVNULL, stderr=log, check=True, cwd=REPO,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    text = (tmp_path / "log.txt").read_bytes().decode()  # as written: read_text() turns each \r into \n
    assert "\r" not in text
    assert re.search(r"^synthetic: 100%.* 20/20 ", text, re.M), text


def test_no_module_draws_a_bar_of_its_own():
    """tqdm is used through sam_model.progress alone, so a new loop cannot bring the \\r rows back. Training's
    frozen-BERT pass prints its own lines into a file (sam_model.training.module)."""
    own = {"progress.py", "training/module.py"}
    root = Path(sam_model.__file__).parent
    users = [str(p.relative_to(root)) for p in root.rglob("*.py")
             if re.search(r"^\s*(from tqdm|import tqdm)", p.read_text(encoding="utf-8"), re.M)]
    assert sorted(set(users) - own) == []
