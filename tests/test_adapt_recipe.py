"""The README's "Train on your own logs" recipe, as written, from a folder outside the checkout: the packaged
default model loads with no training, and `sam-train fit --config adapt.yaml --data.train '[MY_LOGS]'` adapts it
(vocabularies extended) and leaves best/last checkpoints and an export. Tiny limits keep it to seconds of
training; MiniLM is real."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from sam_model.data import read_episodes
from sam_model.data.synthetic import write_synthetic
from sam_model.io import SAMFileError
from sam_model.retriever import SAMRetriever


def _sam_train() -> str:
    found = Path(sys.executable).parent / "sam-train"
    return str(found) if found.exists() else (shutil.which("sam-train") or pytest.skip("sam-train is not installed"))


@pytest.mark.slow
def test_readme_adaptation_recipe_outside_the_checkout(tmp_path):
    general = SAMRetriever.from_pretrained("sam-general")  # ships with the package: no training, no checkout
    write_synthetic(tmp_path / "my_logs.jsonl", 4, seed=3)
    limits = ["--trainer.max_epochs=1", "--trainer.limit_train_batches=1", "--trainer.num_sanity_val_steps=0",
              "--data.batch_episodes=4", "--data.lives=[1]", "--model.text_cache_dir=",
              f"--data.cache_dir={tmp_path / 'cache'}"]
    res = subprocess.run([_sam_train(), "fit", "--config", "adapt.yaml", "--data.train", "[my_logs.jsonl]", *limits],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    run = tmp_path / "checkpoints" / "adapt"
    assert (run / "last.ckpt").exists() and list(run.glob("best-epoch=*.ckpt")), sorted(run.iterdir())
    assert not (tmp_path / "lightning_logs").exists()
    adapted = SAMRetriever.load(run / "export")
    phases, kinds = adapted.net.cfg.phases, adapted.net.cfg.kinds
    # extended: sam-general's vocabularies first, in their order, then the new tools of my_logs
    assert phases[: len(general.net.cfg.phases)] == general.net.cfg.phases and len(phases) > len(general.net.cfg.phases)
    assert kinds[: len(general.net.cfg.kinds)] == general.net.cfg.kinds
    assert json.loads((run / "export" / "training.json").read_text())["init_from"] == "sam-general"
    episode = read_episodes(tmp_path / "my_logs.jsonl")[0]
    decision = episode.decision_points[0]
    adapted.add_memories([e for e in episode.events if e.step < decision.step])
    hits = adapted.search(decision.state, decision.text, k=3, episode_id=episode.episode_id)
    assert len(hits) == 3 and all(h.step < decision.step for h in hits)
    # the recipe's last step: mixed halfway back with sam-general (WiSE-FT), the vocabularies as adapted
    res = subprocess.run([sys.executable, "-m", "sam_model.interpolate", "sam-general", "checkpoints/adapt/export",
                          "checkpoints/adapt/mixed", "--weight", "0.5"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    mixed = SAMRetriever.load(run / "mixed")
    assert mixed.net.cfg.phases == phases and mixed.net.cfg.kinds == kinds
    key = "state_encoder.fuse.0.weight"
    want = 0.5 * general.net.state_dict()[key] + 0.5 * adapted.net.state_dict()[key]
    assert torch.allclose(mixed.net.state_dict()[key], want, atol=1e-6)
    mixed.add_memories([e for e in episode.events if e.step < decision.step])
    assert len(mixed.search(decision.state, decision.text, k=3, episode_id=episode.episode_id)) == 3


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
