"""Every Python block of README.md and docs/*.md (tests/docset.py) runs as written, from an empty folder (no checkpoints, no data, no shared
folder), so the snippets cannot rot.

The blocks use the packaged default retriever, ``SAMRetriever.from_pretrained("sam-general")``. Where this checkout
does not package it (sam_model/pretrained/sam-general), a tiny export is written as ./sam-general in the run folder
— a local folder of that name is what from_pretrained reads first — so the blocks run on something that exists in
a clean clone either way; the test says which one it used."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import docset
import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)

RUNNER = textwrap.dedent('''
    import sys, traceback
    blocks = {blocks!r}
    for line, code in blocks:
        try:
            exec(compile(code, f"{{line}} (block)", "exec"), {{"__name__": "__readme__"}})
        except Exception:
            traceback.print_exc()
            sys.exit(f"the block at {{line}} failed")
        print(f"the block at {{line}}: ok", flush=True)
''')


def readme_blocks() -> list[tuple[str, str]]:
    """(FILE:LINE, code) of every Python block of the README and docs/, README first (tests/docset.py)."""
    return docset.blocks(BLOCK)


def packaged_default() -> bool:
    try:
        from sam_model.pretrained import DEFAULT, FOLDER
    except ImportError:
        return False
    return (FOLDER / DEFAULT / "config.json").is_file()


def tiny_default(folder: Path, bert: Path) -> None:
    from sam_model.models.sam import SAMConfig, SAMNet
    from sam_model.retriever import SAMRetriever
    from sam_model.storeconfig import StoreConfig

    torch.manual_seed(0)
    net = SAMNet(SAMConfig(bert_path=str(bert), dim=16, hidden=32, proj_hidden=32, max_length=48, time_features=8,
                           kinds=["user", "system", "action", "result", "thought", "observation"]))
    SAMRetriever(net, StoreConfig(slot_match=0.1, provenance=True, source_kinds=["user", "system"])).save(folder)


def test_the_readme_has_its_python_blocks():
    blocks = readme_blocks()
    assert len(blocks) >= 4 and all(code.strip() for _, code in blocks)
    assert sum("from_pretrained(\"sam-general\")" in code for _, code in blocks) >= 4


@pytest.mark.slow
def test_every_readme_python_block_runs_as_written(tmp_path, tiny_bert_dir):
    pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed: pip install -e '.[langchain]'")
    if not packaged_default():
        tiny_default(tmp_path / "sam-general", tiny_bert_dir)
        print("sam-general is not packaged in this checkout: the README blocks ran on a tiny export")
    blocks = readme_blocks()
    out = subprocess.run([sys.executable, "-c", RUNNER.format(blocks=blocks)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-6000:]
    assert out.stdout.count(": ok") == len(blocks)


def test_the_run_time_memory_block_retrieves_from_the_episode_it_observed(tmp_path, tiny_bert_dir, monkeypatch):
    """The "Run-time memory" block observes a log's events (their own episode) and retrieves for the last one: it
    must enter that episode first. It called ``begin()`` alone, stayed in episode 'agent', and its search found
    nothing (hits == [], the prompt said "(none)") while the block still ran without an error."""
    block = next(code for _, code in readme_blocks() if "SAMMemory(SAMRetriever" in code)
    tiny_default(tmp_path / "sam-general", tiny_bert_dir)  # a local folder of that name is what from_pretrained reads
    monkeypatch.chdir(tmp_path)
    scope: dict = {"__name__": "__readme__"}
    exec(compile(block, "README.md run-time memory block", "exec"), scope)
    hits, now = scope["hits"], scope["now"]
    assert hits, "the README's SAMMemory block retrieved nothing"
    assert {h.episode_id for h in hits} == {now.episode_id}
    assert "(none)" not in scope["prompt"]


def test_the_core_install_check_runs_as_written(tmp_path, tiny_bert_dir):
    """The set-up's core-install block ends in a one-line check that an export loads with the core packages: its
    Python runs here as written, with this environment's interpreter for /tmp/core/bin/python and a tiny export
    where `make demo` writes checkpoints/demo/export. The core venv itself (pip, no Lightning) is
    tests/test_layering.py's: the inference path with every non-core package made absent."""
    from sam_model.retriever import SAMRetriever

    block = next(code for _, code in docset.blocks(re.compile(r"^```bash\n(.*?)^```", re.S | re.M))
                 if "/tmp/core/bin/python -c" in code)
    check = shlex.split(next(ln for ln in block.splitlines() if ln.startswith("/tmp/core/bin/python -c")))
    tiny_default(tmp_path / "checkpoints" / "demo" / "export", tiny_bert_dir)
    out = subprocess.run([sys.executable, *check[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == str(SAMRetriever.load(tmp_path / "checkpoints" / "demo" / "export").dim)
