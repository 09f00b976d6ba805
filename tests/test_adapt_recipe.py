"""The README's "Train on your own logs" recipe, as written, from a folder outside the checkout: the packaged
default model loads with no training, and the block's command lines run in order on a tool-call transcript
`my_agent/chats.jsonl.gz` (generated: OpenAI-format chats of random tool worlds): `sam-data transcripts` shows what
would be learned, `sam-train fit --config adapt.yaml --data.train '[my_agent/chats.jsonl.gz]'` adapts sam-general
(vocabularies extended) and leaves best/last checkpoints and an export, the resume, `--run mine` and `--overwrite`
lines do what their comments say, and the interpolation mixes the result back. The lines are read from the README,
so an edit there runs here. Changed, and only these: tiny training limits appended to each fit (one training batch
an epoch, one epoch, two for the resume), caches in the test's folder, and /tmp/check.jsonl written there too. The
first fit runs as the `sam-train` console script; the three after it call the script's entry point in-process
(the same code, without a second start of Python and Lightning). The `--help` lines are run by
tests/test_readme_commands.py. MiniLM is real."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import docset
import pytest
import torch
from test_readme_commands import BLOCK

from sam_model.checkpoint import load_checkpoint
from sam_model.data import read_episodes
from sam_model.io import SAMFileError
from sam_model.retriever import SAMRetriever

REPO = Path(__file__).resolve().parents[1]


def _sam_train() -> str:
    found = Path(sys.executable).parent / "sam-train"
    return str(found) if found.exists() else (shutil.which("sam-train") or pytest.skip("sam-train is not installed"))


def readme_recipe() -> list[list[str]]:
    """The command lines of the README's "Train on your own logs" block, comments dropped, ``a ; b`` as two."""
    block = next(code for _, code in docset.blocks(BLOCK, 2) if "sam-data transcripts my_agent/" in code)
    out = []
    for raw in block.splitlines():
        words = shlex.split(raw, comments=True)
        while ";" in words:
            out.append(words[: words.index(";")])
            words = words[words.index(";") + 1:]
        out.append(words)
    return [w for w in out if w]


def limits(words: list[str], tmp: Path) -> list[str]:
    """A fit shrunk to seconds; a resume gets a second epoch to train."""
    epochs = 2 if any(w.startswith("--ckpt_path") for w in words) else 1
    return [f"--trainer.max_epochs={epochs}", "--trainer.limit_train_batches=1", "--trainer.num_sanity_val_steps=0",
            "--data.batch_episodes=4", "--data.lives=[1]", f"--model.text_cache_dir={tmp / 'text'}",
            f"--data.cache_dir={tmp / 'cache'}"]


def epoch_of(ckpt: Path) -> int:
    return int(load_checkpoint(ckpt)["epoch"])


@pytest.mark.slow
def test_readme_adaptation_recipe_outside_the_checkout(tmp_path, monkeypatch):
    from sam_model.data import toolworlds
    from sam_model.data.cli import main as sam_data
    from sam_model.training.cli import run as sam_train

    general = SAMRetriever.from_pretrained("sam-general")  # ships with the package: no training, no checkout
    toolworlds.write(tmp_path / "my_agent" / "chats.jsonl.gz", 12, seed=3)
    toolworlds.write(tmp_path / "my_agent" / "held.jsonl.gz", 6, seed=4)  # the conversations kept out of the fits
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["sam-train"])  # the in-process fits read their args, not pytest's
    recipe = readme_recipe()
    fits = [w for w in recipe if w[:2] == ["sam-train", "fit"] and not any("help" in a for a in w)]
    assert [w[0] for w in recipe].count("sam-data") == 1 and len(fits) == 4, recipe
    run = tmp_path / "checkpoints" / "adapt"
    for words in recipe:
        if words[0] == "sam-data":
            assert words[1:3] == ["transcripts", "my_agent/chats.jsonl.gz"]
            assert sam_data([*words[1:-1], str(tmp_path / Path(words[-1]).name)]) == 0  # /tmp/check.jsonl, here
        elif words is fits[0]:  # as the console script, in a process of its own
            res = subprocess.run([_sam_train(), *words[1:], *limits(words, tmp_path)], cwd=tmp_path,
                                 capture_output=True, text=True, timeout=600)
            assert res.returncode == 0, res.stderr[-3000:]
            assert (run / "last.ckpt").exists() and list(run.glob("best-epoch=*.ckpt")), sorted(run.iterdir())
            assert not (tmp_path / "lightning_logs").exists()
        elif words in fits:
            assert sam_train([*words[1:], *limits(words, tmp_path)]) == 0, words
            if "--ckpt_path" in words:  # resumed: the second epoch trained on from the first's last.ckpt
                assert words[words.index("--ckpt_path") + 1] == "checkpoints/adapt/last.ckpt"
                assert epoch_of(run / "last.ckpt") == 1
            elif "--run" in words:  # a run of its own, beside adapt's
                assert (tmp_path / "checkpoints" / words[words.index("--run") + 1] / "export" / "config.json").exists()
                assert epoch_of(run / "last.ckpt") == 1
            else:  # --overwrite: adapt trained again from sam-general, its resumed run replaced
                assert "--overwrite" in words and epoch_of(run / "last.ckpt") == 0
        elif words[:3] == ["python", "-m", "sam_model.interpolate"]:
            res = subprocess.run([sys.executable, *words[1:]], cwd=tmp_path, capture_output=True, text=True,
                                 timeout=600)
            assert res.returncode == 0, res.stderr[-3000:]
    adapted = SAMRetriever.load(run / "export")  # the --overwrite run's
    phases, kinds = adapted.net.cfg.phases, adapted.net.cfg.kinds
    # extended: sam-general's vocabularies first, in their order, then the new tools of my_agent's chats
    assert phases[: len(general.net.cfg.phases)] == general.net.cfg.phases and len(phases) > len(general.net.cfg.phases)
    assert kinds[: len(general.net.cfg.kinds)] == general.net.cfg.kinds
    training = json.loads((run / "export" / "training.json").read_text())
    assert training["init_from"] == "sam-general"
    # adapt.yaml's export.used_order auto: the store's ordering chosen on the held-out conversations, and served
    assert adapted.store.config.used_order == {"off": None}.get(c := training["used_order_chosen"]["used_order"], c)
    # and its export.lexical auto (2026-12-07): the weight chosen with it over the grid, or kept with the warning
    chosen = training["used_order_chosen"]
    assert len({r["lexical"] for r in chosen["table"]}) == 4 or "not chosen" in (chosen["lexical_kept"] or "")
    assert adapted.store.config.lexical == chosen["lexical"]
    episode = read_episodes(tmp_path / "check.jsonl")[0]  # what sam-data transcripts showed would be learned
    decision = episode.decision_points[0]
    adapted.add_memories([e for e in episode.events if e.step < decision.step])
    hits = adapted.search(decision.state, decision.text, k=3, episode_id=episode.episode_id)
    assert hits and all(h.step < decision.step for h in hits)
    # the recipe's last step: mixed back with sam-general (WiSE-FT) at the weight chosen on the held-out
    # conversations, the vocabularies as adapted
    mixed = SAMRetriever.load(run / "mixed")
    assert mixed.net.cfg.phases == phases and mixed.net.cfg.kinds == kinds
    record = json.loads((run / "mixed" / "training.json").read_text())["interpolated"]
    w = record["weight"]
    assert "chosen" in record and w in (0, 0.25, 0.5, 0.75, 1)
    key = "state_encoder.fuse.0.weight"
    want = (1 - w) * general.net.state_dict()[key] + w * adapted.net.state_dict()[key]
    assert torch.allclose(mixed.net.state_dict()[key], want, atol=1e-6)
    mixed.add_memories([e for e in episode.events if e.step < decision.step])
    assert mixed.search(decision.state, decision.text, k=3, episode_id=episode.episode_id)


def test_the_adapters_default_to_the_packaged_model():
    from sam_model.memory import ScopedMemory

    memory = ScopedMemory()  # no retriever given: sam-general, with its export's search settings
    general = SAMRetriever.from_pretrained("sam-general")
    assert memory.store.encoder.net.cfg == general.net.cfg and memory.store.config == general.store.config
    memory.add([{"role": "user", "content": "I'm mia_li_3668, cancel my Boston flight"}], user_id="mia")
    assert memory.search("which user?", user_id="mia", k=1)["results"][0]["user_id"] == "mia"
    pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed")
    from sam_model.integrations.langchain import SAMLangChainRetriever

    assert SAMLangChainRetriever().memory.store.encoder.net.cfg == general.net.cfg
    with pytest.raises(SAMFileError, match="no packaged retriever of that name .packaged: sam-general"):
        SAMRetriever.from_pretrained("sam-genral")


@pytest.mark.slow
def test_a_wheel_carries_the_configs_and_the_default_model(tmp_path):
    """Outside a checkout only the wheel's files exist: the configs (by name) and sam-general must be in it."""
    import zipfile

    repo = Path(__file__).resolve().parents[1]
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                          str(tmp_path), str(repo)], capture_output=True, text=True, timeout=600)
    if res.returncode != 0 and "No module named pip" in res.stderr:
        pytest.skip("pip is not installed in this environment")
    assert res.returncode == 0, res.stderr[-2000:]
    names = set(zipfile.ZipFile(next(tmp_path.glob("sam_model-*.whl"))).namelist())
    configs = {p.name for p in (repo / "configs").glob("*.yaml")}
    assert {f"sam_model/configs/{c}" for c in configs} <= names
    shipped = {n for n in names if n.startswith("sam_model/pretrained/sam-general/")}
    assert {f"sam_model/pretrained/sam-general/{f}" for f in ("config.json", "model.safetensors", "vocab.json",
                                                              "README.md")} <= shipped, shipped
