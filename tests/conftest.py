"""Shared fixtures: writing small agent logs, and the ../shared folder (skipped when absent)."""

from __future__ import annotations

import gzip
import json
import os
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# The suite compares vectors across code paths to float32 rounding. Backend auto adds bfloat16 only on a CPU with
# bfloat16 units (sam_model.models.bf16_text), so it is left out here (subprocesses too) and tested by name in
# tests/test_bf16_text.py: the suite gives the same results on every machine CI lands on.
os.environ["SAM_TEXT_BF16"] = "0"


@pytest.fixture
def write_log(tmp_path: Path) -> Callable[..., Path]:
    """``write_log(lines, name="log.jsonl")`` writes a log under tmp_path and returns its path.

    Lines are dicts (written as JSON) or strings (written as they are, for malformed
    input); a name ending in ``.gz`` is gzip-compressed.
    """

    def write(lines: Iterable[dict | str], name: str = "log.jsonl") -> Path:
        text = "".join((ln if isinstance(ln, str) else json.dumps(ln, ensure_ascii=False)) + "\n" for ln in lines)
        path = tmp_path / name
        path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
        return path

    return write


@pytest.fixture
def shared_dir() -> Path:
    """The shared folder (``../shared`` or $SAM_SHARED_DIR); skips the test when it is absent."""
    path = Path(os.environ.get("SAM_SHARED_DIR", REPO / ".." / "shared")).resolve()
    if not (path / "spec").is_dir():
        pytest.skip(f"shared folder absent ({path}); set SAM_SHARED_DIR to the folder holding spec/ and data/")
    return path


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> Path:
    """A small randomly initialised BERT saved as a local HF folder (with MiniLM's tokenizer)."""
    from transformers import AutoTokenizer

    from sam_model.models.bert import default_bert_path, tiny_bert

    folder = tmp_path_factory.mktemp("tiny_bert")
    tok = AutoTokenizer.from_pretrained(default_bert_path(), local_files_only=True, trust_remote_code=False)
    tiny_bert(vocab_size=tok.vocab_size, hidden=32, layers=2).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def small_demo_logs(tmp_path_factory) -> tuple[Path, Path]:
    """(train, held-out) synthetic demo logs: 48 and 24 episodes with different seeds."""
    from sam_model.data.synthetic import write_synthetic

    folder = tmp_path_factory.mktemp("demo")
    train, heldout = folder / "train.jsonl", folder / "heldout.jsonl"
    write_synthetic(train, 48, seed=0)
    write_synthetic(heldout, 24, seed=1)
    return train, heldout


@pytest.fixture(scope="session")
def trained_demo_export(tmp_path_factory, small_demo_logs) -> Path:
    """configs/demo.yaml trained briefly (real frozen MiniLM) on the small demo log, then exported."""
    from sam_model.export import main as export_main
    from sam_model.training.cli import main as train_main

    train, _ = small_demo_logs
    run = tmp_path_factory.mktemp("run")
    train_main(["fit", "--config", str(REPO / "configs" / "demo.yaml"), f"--data.train=[{train}]",
                "--trainer.max_epochs=8", "--model.net.max_length=64", "--data.batch_episodes=8", "--model.text_cache_dir=", "--trainer.enable_progress_bar=false", f"--trainer.default_root_dir={run}",
                "--trainer.logger=false", "--trainer.callbacks=[]", "--trainer.enable_checkpointing=true",
                f"--data.cache_dir={run / 'cache'}"])
    ckpts = sorted(run.rglob("*.ckpt"))
    assert ckpts, f"training wrote no checkpoint under {run}"
    assert export_main([str(ckpts[-1]), str(run / "export")]) == 0
    return run / "export"


@pytest.fixture(params=["faiss", "qdrant", "qdrant-edge"])
def store_backend(request, tmp_path, monkeypatch) -> str:
    """Runs a test once per vector backend (sam_model.backends): as written (FAISS), and with every store whose
    config asks for the default flat index built on an embedded Qdrant collection instead (persisted under
    tmp_path, so saves load back), or on an embedded Qdrant Edge shard (exact search, so rankings equal FAISS
    flat's; its live shard under tmp_path). Tests of FAISS's own formats carry ``@pytest.mark.faiss_only``."""
    if request.param != "faiss":
        if request.param == "qdrant":
            pytest.importorskip("qdrant_client", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
            swap = {"kind": "qdrant", "path": str(tmp_path / "qdrant")}
        else:
            pytest.importorskip("qdrant_edge", reason="the [qdrant-edge] extra is not installed "
                                "(pip install -e '.[qdrant-edge]')")
            swap = {"kind": "qdrant-edge", "path": str(tmp_path / "edge"), "exact": True}
        if request.node.get_closest_marker("faiss_only"):
            pytest.skip("tests a FAISS file format")
        import sam_model.store
        from sam_model.backends import index_from_config

        def on_qdrant(dim: int, cfg: dict | None, where: str = "index"):
            if (cfg or {}).get("kind", "flat") == "flat":
                cfg = swap
            return index_from_config(dim, cfg, where)

        monkeypatch.setattr(sam_model.store, "index_from_config", on_qdrant)
    return request.param


@pytest.fixture
def run_threads() -> Callable[..., list[str]]:
    """``run_threads((call, n), ...)``: each ``call(i)`` for i < n on a thread of its own, all at once, the
    interpreter switching threads every microsecond (a race shows in a short run); returns what the calls raised."""

    def run(*work: tuple[Callable[[int], object], int]) -> list[str]:
        errors: list[str] = []

        def loop(call: Callable[[int], object], n: int) -> None:
            for i in range(n):
                try:
                    call(i)
                except Exception as err:  # noqa: BLE001 - what the test counts
                    errors.append(repr(err)[:120])

        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        try:
            threads = [threading.Thread(target=loop, args=w) for w in work]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            sys.setswitchinterval(interval)
        return errors

    return run
