"""Saving and loading a memory bank: round trip, damaged files, and a writer killed mid-save."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from sam_model.data.schema import Event, State
from sam_model.io import SAMFileError
from sam_model.memory import HashingEncoder, MemoryBank, MemoryConfig, SAMMemory
from sam_model.memory.tiers import LONGTERM

REPO = Path(__file__).resolve().parents[1]


def build(n_events: int, capacity: int = 0, working: int = 0) -> SAMMemory:
    """A small bank with facts, corrections, summaries and edges (deterministic)."""
    mem = SAMMemory(HashingEncoder(64), config=MemoryConfig(capacity=capacity, working_size=working,
                                                              half_life=20.0), episode_id="trip")
    cities = ["Paris", "Rome", "Oslo", "Lima"]
    for s in range(n_events):
        c = {"destination": cities[(s // 7) % 4], "pax": 2 + (s // 11) % 3}
        if s % 5 == 0:  # a passing preference the state drops again: pruned, kept in a summary
            c[f"pref{s}"] = f"value{s}"
        kind = ("user", "system", "action", "result")[s % 4]
        text = f"CALL Book(to={c['destination']}, pax={c['pax']})" if kind == "action" else f"{kind} {s} about {c['destination']}"
        mem.observe(Event("trip", s, kind, text, State("plan", ("trip",), c, ("pax",) if s % 9 == 0 else ())))
    return mem


def snapshot(bank: MemoryBank) -> dict:
    return {
        "units": {u.id: ({**u.to_json(), "time": 0}, bank.vector(u.id).tolist()) for u in bank},
        "clock": bank.clock, "slots": bank.slots, "last_unit": bank.last_unit,
        "last_state": {k: v.to_json() for k, v in bank.last_state.items()},
        "config": bank.config.to_json(),
        "longterm": sorted(u.id for u in bank if bank.tiers.tier_of(u.id) == LONGTERM),
    }


def test_round_trip_keeps_everything_and_searches_the_same(tmp_path):
    mem = build(60, capacity=25, working=8)
    bank = mem.bank
    assert any(u.kind == "summary" for u in bank) and any(u.relations for u in bank)
    path = bank.save(tmp_path / "bank.npz")
    loaded = MemoryBank.load(path)
    assert snapshot(loaded) == snapshot(bank)
    def incoming(b: MemoryBank) -> dict:
        return {u: {k: v for k, v in d.items() if v} for u, d in b.graph.incoming.items() if any(d.values())}

    assert incoming(loaded) == incoming(bank)
    q = mem.encoder.encode_queries([State("plan", constraints={"pax": 3})], ["book Paris"])[0]
    assert [(h.id, round(h.score, 5)) for h in loaded.search(q, 5)] == \
           [(h.id, round(h.score, 5)) for h in bank.search(q, 5)]
    # a loaded bank keeps working: the agent goes on where it stopped
    again = SAMMemory(mem.encoder, loaded, episode_id="trip")
    assert again.next_step == 60
    again.observe("user says hi", State("plan"))
    assert "trip#60" in loaded


def test_missing_and_damaged_files_raise_a_clear_error(tmp_path):
    with pytest.raises(SAMFileError, match="memory bank not found"):
        MemoryBank.load(tmp_path / "nope.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip at all")
    with pytest.raises(SAMFileError, match=r"bad\.npz.*restore the previous bank"):
        MemoryBank.load(bad)
    good = build(10).bank.save(tmp_path / "good.npz")
    cut = tmp_path / "cut.npz"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(SAMFileError, match="cut.npz"):
        MemoryBank.load(cut)
    other = tmp_path / "other.npz"
    np.savez(other, meta=np.frombuffer(b'{"format": "something else"}', np.uint8), embeddings=np.zeros((0, 4)))
    with pytest.raises(SAMFileError, match="not a memory bank file"):
        MemoryBank.load(other)
    for name, arr in (("array.npy", np.zeros(3)), ("pickled.npy", np.array([{"a": 1}], dtype=object))):
        np.save(tmp_path / name, arr, allow_pickle=True)  # a bare array (was: TypeError trace) or a pickle
        with pytest.raises(SAMFileError, match=f"{name}: not a memory bank file .*restore the previous bank"):
            MemoryBank.load(tmp_path / name)


WRITER = textwrap.dedent("""
    import io, os, sys, time
    sys.path.insert(0, {repo!r})
    sys.path.insert(0, {tests!r})
    from test_memory_persistence import build
    import sam_model.memory.bank as bank_mod

    path = sys.argv[1]
    mem = build(30)
    mem.bank.save(path)
    print("saved", len(mem.bank), flush=True)
    for s in range(30, 60):  # the agent goes on...
        mem.observe(f"later event {{s}}", mem.state)
    real = bank_mod._write

    def slow_write(fh, meta, emb):  # ...and is killed halfway through writing the new bank
        buf = io.BytesIO()
        real(buf, meta, emb)
        data = buf.getvalue()
        fh.write(data[: len(data) // 2])
        fh.flush()
        os.fsync(fh.fileno())
        print("midway", flush=True)
        time.sleep(120)

    bank_mod._write = slow_write
    mem.bank.save(path)
    print("finished", flush=True)
""")


def test_a_writer_killed_mid_save_leaves_the_previous_bank_loadable(tmp_path):
    path = tmp_path / "bank.npz"
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(repo=str(REPO), tests=str(REPO / "tests")))
    proc = subprocess.Popen([sys.executable, str(script), str(path)], stdout=subprocess.PIPE, text=True)
    try:
        out: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [out.put(x) for x in proc.stdout], daemon=True).start()
        lines = []
        deadline = time.monotonic() + 60
        while not (lines and lines[-1] == "midway"):
            try:
                lines.append(out.get(timeout=max(0.01, deadline - time.monotonic())).strip())
            except queue.Empty:
                break
        assert lines and lines[-1] == "midway", f"writer did not reach the middle of its save: {lines}"
        n_saved = int(lines[0].split()[1])
        partial = list(tmp_path.glob(".bank.npz.*.tmp/bank.npz"))  # in the writer's staging folder
        assert partial and partial[0].stat().st_size > 0  # the new bank was half written
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    loaded = MemoryBank.load(path)  # the previous bank, intact
    assert len(loaded) == n_saved == 30
    assert snapshot(loaded) == snapshot(build(30).bank)


def _meta(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        return json.loads(z["meta"].tobytes().decode("utf-8")), np.asarray(z["embeddings"])


def test_the_recorder_has_one_owner_and_a_version_2_bank_still_loads(tmp_path):
    """The bank's recorder is its store's (saved once, inside the store's state); a bank saved by version 2, which
    kept a recorder of its own beside the store's empty one, loads with its task starts."""
    mem = build(30)
    mem.begin()
    mem.observe("a new task begins", State("plan"))
    bank = mem.bank
    assert bank.recorder is bank.store.recorder and bank.recorder.task_start("trip") == 30
    path = bank.save(tmp_path / "bank.npz")
    meta, emb = _meta(path)
    assert "recorder" not in meta and meta["store"]["recorder"]["last"]
    meta.update(version=2, recorder=meta["store"]["recorder"])  # the old layout
    meta["store"]["recorder"] = {"last": []}
    old = tmp_path / "old.npz"
    np.savez(old, meta=np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8), embeddings=emb)
    loaded = MemoryBank.load(old)
    assert loaded.recorder.task_start("trip") == 30
    assert loaded.recorder.state_dict() == bank.recorder.state_dict()
    meta["version"] = 99
    np.savez(old, meta=np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8), embeddings=emb)
    with pytest.raises(SAMFileError, match=r"old.npz: memory bank version 99, this code reads 1 to 3"):
        MemoryBank.load(old)


def test_a_bank_saved_by_one_model_is_refused_with_another(tmp_path):
    """Found by review: the bank recorded no model, so SAMMemory(other_model, MemoryBank.load(path)) searched one
    model's vectors with another's queries, silently (as the store and sam-serve did before their probe)."""
    mem = build(12)
    path = mem.bank.save(tmp_path / "bank.npz")
    assert SAMMemory(HashingEncoder(64), MemoryBank.load(path), episode_id="trip").next_step == 12  # the same model
    with pytest.raises(SAMFileError, match="encoded by another model .* rebuild the bank with this one"):
        SAMMemory(HashingEncoder(64, seed=1), MemoryBank.load(path), episode_id="trip")
    plain = MemoryBank(64)  # a bank no model has written through records none, and loads with any
    assert SAMMemory(HashingEncoder(64, seed=1), MemoryBank.load(plain.save(tmp_path / "plain.npz"))).k == 5


def test_a_bank_loaded_and_saved_again_without_its_model_keeps_the_models_probe(tmp_path):
    """Found by review: only a bank with an encoder recorded the probe, so a bank file loaded, pruned and saved by a
    maintenance script (no model at hand) lost it, and then any other model searched its vectors unchecked."""
    path = build(12).bank.save(tmp_path / "bank.npz")
    bank = MemoryBank.load(path)
    bank.remove(next(iter(bank)).id)  # a maintenance step with no model
    again = MemoryBank.load(bank.save(tmp_path / "again.npz"))
    assert again.saved_probe == bank.saved_probe is not None
    assert SAMMemory(HashingEncoder(64), again, episode_id="trip").next_step == 12  # its own model still loads it
    with pytest.raises(SAMFileError, match="encoded by another model"):
        SAMMemory(HashingEncoder(64, seed=1), again, episode_id="trip")
