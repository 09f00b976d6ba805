"""Crash probe: kill -9 during saves and run concurrent writers, then count what was lost.

    python -m sam_model.bench.crash --kills 20 [--kinds index,bank,store,scoped,export,retriever,janus] [--saves 12]
        [--json F]

For every kind of save (MemoryIndex, MemoryBank, MemoryStore with chunked memories, ScopedMemory on an embedded
Qdrant collection with its history, export folder, SAMRetriever folder with its memory store (links and re-rank
data), Janus controller checkpoints):

- **kills**: a forked child saves versions 1, 2, 3, ... of one path in a loop (announcing each save
  before and after it) and is killed with SIGKILL after a random delay, ``--kills`` times. After each
  kill the path must load, hold a *complete* version (every part of it from the same version), and that
  version must be the last one whose save returned or the one in flight; a "loss" is anything else.
  Then the next save runs and the staging folders left in the parent folder are counted (must be 0).
- **concurrent**: two children save ``--saves`` versions each to one path while a third loads it in a
  loop; every load must succeed with a complete version, and the final one must be one writer's last.

Versions are written into the content itself (the network's α logit and config ``bert_path``, the store's ids,
the memories' words, vectors and history, the bank clock, Janus' step), so "complete" means: all files of the
loaded folder agree on the version.
The figures go to stdout (and ``--json``). Linux only (it forks); models are tiny (random BERT with
the packaged MiniLM tokenizer), so a run takes seconds, not minutes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from sam_model.io import DefaultsHelp, leftovers

KINDS = ("index", "bank", "store", "scoped", "export", "retriever", "janus")
CONCURRENT_KINDS = ("index", "bank", "store", "scoped", "export", "retriever")  # Janus runs one controller per workdir


class Subject:
    """One kind of save: ``save(path, v)`` writes version v; ``load(path)`` returns the version it finds,
    raising if the parts of what it loaded disagree (a torn or mixed version)."""

    name = ""

    def save(self, path: Path, v: int) -> None:
        raise NotImplementedError

    def load(self, path: Path) -> int:
        raise NotImplementedError

    def parent(self, path: Path) -> list[Path]:
        """Folders whose staging leftovers count."""
        return [path.parent]


class IndexSubject(Subject):
    """n memories plus one marker memory ``v<version>`` whose vector starts with the version."""

    name = "index"

    def __init__(self, n: int = 20_000, dim: int = 32):
        from sam_model.index import MemoryIndex

        self.n, self.dim = n, dim
        self.ix = MemoryIndex(dim, "flat", device="cpu")
        self.ix.add([f"m{i}" for i in range(n)], np.random.default_rng(0).standard_normal((n, dim)).astype(np.float32))

    def save(self, path, v):
        markers = self.ix.ids()[self.n:]
        if markers:
            self.ix.remove(markers)
        self.ix.add([f"v{v}"], np.full((1, self.dim), float(v), np.float32))
        self.ix.save(path)

    def load(self, path):
        from sam_model.index import MemoryIndex

        ix = MemoryIndex.load(path)
        ids = ix.ids()
        v = int(ids[-1][1:])
        if len(ids) != self.n + 1 or ix.get_vectors([ids[-1]])[0, 0] != v:
            raise AssertionError(f"{path}: the index's ids and vectors disagree on the version")
        return v


class BankSubject(Subject):
    name = "bank"

    def __init__(self, n: int = 3_000, dim: int = 64):
        from sam_model.memory import MemoryBank
        from sam_model.memory.unit import MemoryUnit

        rng = np.random.default_rng(0)
        self.bank = MemoryBank(dim)
        for i in range(n):
            self.bank.add(MemoryUnit(f"ep#{i}", f"memory {i}", "user", "plan", "ep", i),
                          rng.standard_normal(dim).astype(np.float32))
        self.n = n

    def save(self, path, v):
        self.bank.clock = v
        self.bank.save(path)

    def load(self, path):
        from sam_model.memory import MemoryBank

        bank = MemoryBank.load(path)
        if len(bank) != self.n:
            raise AssertionError(f"{path}: {len(bank)} units, saved {self.n}")
        return bank.clock


def tiny_net():
    """A small SAMNet (random 2-layer BERT, the packaged MiniLM tokenizer) that saves in milliseconds."""
    import torch
    from transformers import AutoTokenizer

    from sam_model.models.bert import default_bert_path, tiny_bert
    from sam_model.models.sam import SAMConfig, SAMNet

    tok = AutoTokenizer.from_pretrained(default_bert_path(), local_files_only=True, trust_remote_code=False)
    bert = tiny_bert(vocab_size=tok.vocab_size, hidden=32, layers=2)
    torch.manual_seed(0)
    return SAMNet(SAMConfig(dim=8, hidden=16, proj_hidden=16, phases=["plan"], kinds=["user"]), bert, tok)


def _mark(net, v: int) -> None:
    import torch

    with torch.no_grad():
        net.alpha_logit.fill_(float(v))
    net.cfg.bert_path = f"version-{v}"  # unused by a loaded export: a config.json field that carries the version


def _version_of(net, path: Path) -> int:
    a, s = float(net.alpha_logit.item()), float(net.cfg.bert_path.removeprefix("version-"))
    if a != s:
        raise AssertionError(f"{path}: model.safetensors is version {a} but config.json version {s}")
    return int(a)


class ExportSubject(Subject):
    name = "export"

    def __init__(self, net):
        self.net = net

    def save(self, path, v):
        from sam_model.export import save_exported

        _mark(self.net, v)
        save_exported(self.net, path)

    def load(self, path):
        from sam_model.retriever import SAMRetriever

        return _version_of(SAMRetriever.load(path, device="cpu").net, path)


class RetrieverSubject(Subject):
    name = "retriever"

    def __init__(self, net, n: int = 2_000):
        from sam_model.retriever import SAMRetriever

        self.r = SAMRetriever(net)
        self.n = n
        self.x = np.random.default_rng(1).standard_normal((n, net.out_dim)).astype(np.float32)

    def save(self, path, v):
        from sam_model.data.examples import MemoryRecord
        from sam_model.store import MemoryStore

        _mark(self.r.net, v)
        self.r.store = MemoryStore(self.r.encoder, self.r.store.config)
        self.r.store.add([MemoryRecord(f"v{v}-{i}", "ep", i, "user", "plan", f"memory {i}",
                                       sets=("slot",) if i < 50 else ()) for i in range(self.n)], self.x)
        self.r.save(path)

    def load(self, path):
        from sam_model.retriever import SAMRetriever

        r = SAMRetriever.load(path, device="cpu")
        v = _version_of(r.net, path)
        ids = r.store.ids()
        if len(ids) != self.n or not all(i.startswith(f"v{v}-") for i in ids[:: 97]) or \
                sorted(i for i in ids if r.store.sets_of(i)) != sorted(ids[:50]):
            raise AssertionError(f"{path}: the store (index or store.json) is not of version {v}")
        return v


class StoreSubject(Subject):
    """A MemoryStore (hashing encoder, one memory in five long enough to be stored as chunks): ids and words carry
    the version, so store.json, the index and each chunked memory's chunks must agree on it."""

    name = "store"

    def __init__(self, n: int = 1_500):
        from sam_model.memory import HashingEncoder
        from sam_model.store import MemoryStore
        from sam_model.storeconfig import StoreConfig

        self.enc, self.n = HashingEncoder(32), n
        self.store = MemoryStore(self.enc, StoreConfig(chunking={"size": 60, "overlap": 10}))

    def save(self, path, v):
        from sam_model.data.examples import MemoryRecord

        self.store.reset()
        texts = [f"version {v} memory {i}" + (" and more words" * 8 if i % 5 == 0 else "") for i in range(self.n)]
        self.store.add([MemoryRecord(f"v{v}-{i}", "ep", i, "user", "plan", t, t) for i, t in enumerate(texts)])
        self.store.save(path)

    def load(self, path):
        from sam_model.store import MemoryStore

        store = MemoryStore.load(path, self.enc)
        ids = list(dict.fromkeys(h.memory_id for h in store.get_all()))
        v = int(ids[0].split("-")[0][1:])
        if len(ids) != self.n or not all(i.startswith(f"v{v}-") for i in ids) or \
                not all(store.memory(i).text.startswith(f"version {v} memory ") for i in ids[::5]):
            raise AssertionError(f"{path}: the store's memories or their chunks are not all of version {v}")
        return v


class ScopedSubject(Subject):
    """A ScopedMemory (Mem0's API; on an embedded Qdrant collection when qdrant-client is installed): the version is
    in every memory's words and in their history, so store/ (store.json and the index's points) and scoped.json
    must agree on it."""

    name = "scoped"

    def __init__(self, n: int = 600):
        from sam_model.memory import HashingEncoder, ScopedMemory
        from sam_model.storeconfig import StoreConfig

        try:
            import qdrant_client  # noqa: F401

            index = {"kind": "qdrant"}
        except ImportError:
            index = {"kind": "flat"}
        self.enc, self.n = HashingEncoder(32), n
        self.memory = ScopedMemory(self.enc, StoreConfig(provenance=False, index=index))

    def save(self, path, v):
        self.memory.reset()
        self.memory.add([{"kind": "user", "text": f"version {v} note {i}"} for i in range(self.n)], user_id="u")
        self.memory.save(path)

    def load(self, path):
        from sam_model.memory import ScopedMemory

        memory = ScopedMemory.load(path, self.enc)
        got = memory.get_all(user_id="u", limit=None)["results"]
        v = int(got[0]["memory"].split()[1]) if got else -1
        said = {r["memory"] for r in got}
        told = {h[-1]["new_memory"] for h in (memory.history(r["id"]) for r in got) if h}
        hits = [memory.store.get(r["id"]) for r in got[::50]]  # the index's vectors are of these words (ids are not
        vectors = memory.store.index.get_vectors([h.id for h in hits])  # of a version: u#0, u#1, ... in each)
        if len(got) != self.n or said != told or not all(m.startswith(f"version {v} ") for m in said) or \
                not np.allclose(vectors, self.enc.encode_memories(hits), atol=1e-6):
            raise AssertionError(f"{path}: the memories, their vectors or their history are not all of version {v}")
        return v


@dataclass(frozen=True)
class CounterMemory:
    """A Janus memory whose state is a number (with padding, so a checkpoint takes a moment to write)."""

    value: int

    def save(self, path) -> None:
        Path(path).write_text(json.dumps({"value": self.value, "pad": "x" * 200_000}))

    @classmethod
    def load(cls, path) -> CounterMemory:
        return cls(int(json.loads(Path(path).read_text())["value"]))


class _Next:
    def propose(self, memory, tasks, feedback):
        return CounterMemory(memory.value + 1)


class _Solves:
    def correct(self, memory, tasks):
        return np.array([t <= memory.value for t in tasks], dtype=bool)


class JanusSubject(Subject):
    """Version = the controller's completed step t; with the "always" gate and a counter that only
    grows, every candidate wins, so the deployed memory's value must equal t after any crash."""

    name = "janus"

    def _controller(self, workdir: Path):
        from sam_model.janus import HybridEvalSet, JanusController, make_gate

        evalset = HybridEvalSet(lambda tasks: np.array([[float(t), 1.0] for t in tasks], np.float32),
                                coverage=2, boundary=2, fresh=2, seed=0)
        return JanusController(_Next(), _Solves(), None, make_gate("always"), evalset, workdir)

    @staticmethod
    def _stream():
        t = 0
        while True:
            t += 1
            yield [t, t + 0.5], None

    def save(self, path, v):
        """Run (resume) the controller until step v is done."""
        self._controller(path).run(itertools.islice(self._stream(), v), CounterMemory(0), resume=True)

    def loop(self, path: Path, announce: Callable[[str], None]) -> None:
        c = self._controller(path)

        def on_step(ctrl, d):
            announce(f"e {d.t}")
            announce(f"b {d.t + 1}")

        announce(f"b {self._done(path) + 1}")
        c.run(self._stream(), CounterMemory(0), resume=True, on_step=on_step)

    @staticmethod
    def _done(path: Path) -> int:
        try:
            return int(json.loads((path / "state.json").read_text())["t"])
        except (OSError, ValueError, KeyError):
            return 0

    def load(self, path):
        c = self._controller(path)
        c.restore(CounterMemory, self._stream())
        if c.memory.value != c.t or len(c.read_manifest()) != c.t:
            raise AssertionError(f"{path}: state.json says t={c.t} but the deployed memory is "
                                 f"{c.memory.value} and the manifest has {len(c.read_manifest())} lines")
        return c.t

    def parent(self, path):
        return [path, path / "memories", path / "tasks"]


@dataclass
class KillFigures:
    kind: str
    kills: int = 0
    kills_during_save: int = 0
    lost: int = 0  # kills after which no complete version at least as new as the last finished save loaded
    stale_after_kill: int = 0  # staging folders the kills left (cleaned by the next save or load)
    left_after_next_save: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass
class ConcurrentFigures:
    kind: str
    writers: int = 2
    saves: int = 0
    loads: int = 0
    failed_loads: int = 0
    final_complete: bool = False
    left_after: int = 0
    errors: list[str] = field(default_factory=list)


def _child(fn: Callable[[], None]) -> int:
    """Fork; the child runs ``fn`` and exits without running the parent's cleanup."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - report and exit, never return into the parent's code
            print(f"child {os.getpid()}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            code = 1
        os._exit(code)
    return pid


def _left(subject: Subject, path: Path) -> int:
    return sum(len(leftovers(p)) for p in subject.parent(path))


def probe_kills(subject: Subject, root: Path, kills: int, rng: random.Random) -> KillFigures:
    """Save in a forked loop, SIGKILL it at a random moment, check what loads; ``kills`` times."""
    fig = KillFigures(subject.name)
    path = root / f"{subject.name}-kill"
    t0 = time.perf_counter()
    subject.save(path, 1)
    save_s = time.perf_counter() - t0
    done = 1
    for _ in range(kills):
        r, w = os.pipe()
        start = done + 1

        def loop(start=start, w=w, r=r):
            os.close(r)
            announce = lambda line: os.write(w, (line + "\n").encode())  # noqa: E731
            if isinstance(subject, JanusSubject):
                subject.loop(path, announce)
                return
            v = start
            while True:
                announce(f"b {v}")
                subject.save(path, v)
                announce(f"e {v}")
                v += 1

        pid = _child(loop)
        os.close(w)
        time.sleep(rng.uniform(0.2, 4.0) * save_s)  # random: from the first save into the third or fourth
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        with os.fdopen(r) as fh:
            lines = fh.read().split("\n")
        events = [ln.split() for ln in lines if ln.strip()]
        finished = max([done] + [int(v) for e, v in events if e == "e"])
        fig.kills += 1
        fig.kills_during_save += bool(events) and events[-1][0] == "b"
        fig.stale_after_kill += _left(subject, path)
        try:
            got = subject.load(path)
            if not finished <= got <= finished + 1:
                raise AssertionError(f"loaded version {got}, the last finished save was {finished}")
        except Exception as exc:  # noqa: BLE001 - every failure is a loss, with its reason
            fig.lost += 1
            fig.errors.append(f"{type(exc).__name__}: {exc}"[:300])
            got = finished
        done = got + 1
        subject.save(path, done)  # the next save
        fig.left_after_next_save += _left(subject, path)
    return fig


def probe_concurrent(subject: Subject, root: Path, saves: int) -> ConcurrentFigures:
    """Two forked writers save ``saves`` versions each to one path while a forked reader loads it."""
    fig = ConcurrentFigures(subject.name, saves=saves)
    path = root / f"{subject.name}-concurrent"
    subject.save(path, 1)
    stop = root / f"{subject.name}-stop"
    bases = [1_000_000 * (w + 1) for w in range(fig.writers)]
    finals = {b + saves - 1 for b in bases}
    r, w = os.pipe()

    def reader():
        os.close(r)
        loads = failed = 0
        errors = []
        while True:
            last = stop.exists()
            try:
                v = subject.load(path)
                if v != 1 and not any(b <= v < b + saves for b in bases):
                    raise AssertionError(f"loaded version {v}, which no writer saved")
            except Exception as exc:  # noqa: BLE001 - a failed load is the figure
                failed += 1
                errors.append(f"{type(exc).__name__}: {exc}"[:300])
            loads += 1
            if last:
                break
        os.write(w, json.dumps({"loads": loads, "failed": failed, "errors": errors[:5]}).encode())

    reader_pid = _child(reader)
    os.close(w)
    writers = [_child(lambda b=b: [subject.save(path, b + j) for j in range(saves)]) for b in bases]
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in writers]
    stop.touch()
    os.waitpid(reader_pid, 0)
    with os.fdopen(r) as fh:
        report = json.loads(fh.read() or '{"loads": 0, "failed": 0, "errors": ["reader died"]}')
    fig.loads, fig.failed_loads, fig.errors = report["loads"], report["failed"], report["errors"]
    if any(codes):
        fig.errors.append(f"writer exit codes {codes}")
    try:
        fig.final_complete = subject.load(path) in finals
    except Exception as exc:  # noqa: BLE001
        fig.errors.append(f"final load: {type(exc).__name__}: {exc}"[:300])
    fig.left_after = _left(subject, path)
    return fig


def make_subjects(kinds: list[str]) -> list[Subject]:
    net = tiny_net() if {"export", "retriever"} & set(kinds) else None
    makers = {"index": IndexSubject, "bank": BankSubject, "store": StoreSubject, "scoped": ScopedSubject,
              "export": lambda: ExportSubject(net),
              "retriever": lambda: RetrieverSubject(net), "janus": JanusSubject}
    return [makers[k]() for k in kinds]


def run(kinds: list[str], kills: int, saves: int, root: Path, seed: int = 0) -> dict:
    import faiss
    import torch

    torch.set_num_threads(1)  # fork-safe: no OpenMP thread pool is ever started before a fork
    faiss.omp_set_num_threads(1)
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    subjects = make_subjects(kinds)
    out: dict = {"kills": [], "concurrent": []}
    for s in subjects:
        out["kills"].append(asdict(probe_kills(s, root, kills, rng)))
        if s.name in CONCURRENT_KINDS and saves > 0:
            out["concurrent"].append(asdict(probe_concurrent(s, root, saves)))
    k, c = out["kills"], out["concurrent"]
    out["total"] = {
        "kills": sum(f["kills"] for f in k), "kills_during_save": sum(f["kills_during_save"] for f in k),
        "lost": sum(f["lost"] for f in k), "stale_after_kill": sum(f["stale_after_kill"] for f in k),
        "left_after_next_save": sum(f["left_after_next_save"] for f in k),
        "concurrent_loads": sum(f["loads"] for f in c), "failed_loads": sum(f["failed_loads"] for f in c),
        "final_complete": f"{sum(f['final_complete'] for f in c)}/{len(c)}",
        "left_after_concurrent": sum(f["left_after"] for f in c),
    }
    return out


def render(report: dict) -> str:
    rows = ["| save | kills (during a save) | lost | staging left by kills → after the next save |",
            "|---|---|---|---|"]
    for f in report["kills"]:
        rows.append(f"| {f['kind']} | {f['kills']} ({f['kills_during_save']}) | {f['lost']} | "
                    f"{f['stale_after_kill']} → {f['left_after_next_save']} |")
    rows += ["", "| save | 2 writers × saves | reader loads | failed loads | final version complete | left |",
             "|---|---|---|---|---|---|"]
    for f in report["concurrent"]:
        rows.append(f"| {f['kind']} | 2 × {f['saves']} | {f['loads']} | {f['failed_loads']} | "
                    f"{'yes' if f['final_complete'] else 'NO'} | {f['left_after']} |")
    errors = [f"{f['kind']}: {e}" for part in ("kills", "concurrent") for f in report[part] for e in f["errors"]]
    return "\n".join(rows + [""] + [f"total: {json.dumps(report['total'])}"] + errors[:20])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.crash", description=__doc__.split("\n\n")[0],
                                 formatter_class=DefaultsHelp)
    ap.add_argument("--kills", type=int, default=20, help="SIGKILLs per kind of save (default 20)")
    ap.add_argument("--saves", type=int, default=12, help="saves per writer in the concurrent probe (0 = skip)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="the kinds of save to probe, comma-separated")
    ap.add_argument("--dir", type=Path, default=None, help="where to save (default: a fresh temporary folder)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--seed", type=int, default=0, help="seed of the kill delays")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    bad = sorted(set(kinds) - set(KINDS))
    if bad:
        ap.error(f"unknown kinds {bad}; choose from {', '.join(KINDS)}")
    import tempfile

    with tempfile.TemporaryDirectory(prefix="sam-crash-") as tmp:
        report = run(kinds, args.kills, args.saves, args.dir or Path(tmp), args.seed)
    print(render(report))
    if args.json:
        from sam_model.io import atomic_write_text

        atomic_write_text(args.json, json.dumps(report, indent=1))
    t = report["total"]
    bad_run = t["lost"] or t["left_after_next_save"] or t["failed_loads"] or t["left_after_concurrent"] or \
        t["final_complete"] != f"{len(report['concurrent'])}/{len(report['concurrent'])}"
    return 1 if bad_run else 0


if __name__ == "__main__":
    sys.exit(main())
