"""Thread probe: many threads add, search, delete and save one shared memory; count crashes, leaks and bad saves.

    python -m sam_model.bench.threads --runs 20 [--threads 8] [--ops 150] [--json F]

Each run is a fresh child process (so a FAISS abort or a segfault counts as a crash instead of ending the
probe) in which ``--threads`` threads share one :class:`~sam_model.memory.scoped.ScopedMemory` (hashing
encoder, provenance links on) and one bare :class:`~sam_model.store.MemoryStore` given vectors (the case that
aborted FAISS before the store had a lock). Every thread is one user: it adds chat messages to two runs and events
to a third, searches its own scopes (every result must be its own: a result of another user is a *leak*), reads
its memories with ``get_all(limit=...)``, and deletes some; one thread in four also saves the memory, holding
``memory.lock`` so that it knows exactly which memories the save holds, then loads the save and checks that it
holds exactly those (and that a search of each user in it returns only that user's memories). A save that does
not load, or loads other memories, is a *bad save*. Printed: per run and in total, crashes, exceptions, leaks,
bad saves, and the operations done. Every write is checked to have taken effect: an add's memories are there with
their words right after it and a delete's memory is gone (both within the thread's own scope, which no other
thread writes), and at the end each user's memories are exactly those its thread's writes left; a save must load
back the same memories with the same words. A write that did not take, or was undone, is *lost*.

``--lock-cost`` measures what the lock costs a search: searches per second of one thread through the public
(locked) ``search_vector`` against the same search with the lock bypassed, and the total throughput of 1, 2, 4
and 8 threads searching one store at once (FAISS set to one thread per search, so that the figures measure the
Python side and the lock, not OpenMP's spinning on a busy host).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from sam_model.io import atomic_write_text

WORDS = ["flight", "Boston", "refund", "hotel", "Lisbon", "budget", "card", "window", "seat", "dinner", "train",
         "visa", "luggage", "upgrade", "cancel", "Paris", "meal", "aisle", "voucher", "gate"]


def _text(rng: random.Random) -> str:
    return " ".join(rng.sample(WORDS, 5))


def one_run(seed: int, threads: int = 8, ops: int = 150) -> dict:
    """One stress run in this process (see the module doc); returns its tallies."""
    from sam_model.data.schema import Event, State
    from sam_model.memory import HashingEncoder, ScopedMemory
    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    enc = HashingEncoder(64)
    memory = ScopedMemory(enc, StoreConfig(provenance=True), k=5)
    bare = MemoryStore(None, StoreConfig(provenance=False), dim=32)
    tally = {"exceptions": 0, "leaks": 0, "lost": 0, "bad_saves": 0, "saves": 0, "searches": 0, "adds": 0,
             "deletes": 0}
    errors: list[str] = []
    count = threading.Lock()
    folder = Path(tempfile.mkdtemp(prefix="sam-threads-"))
    barrier = threading.Barrier(threads)

    def bump(name: str, n: int = 1) -> None:
        with count:
            tally[name] += n

    def check_save(t: int, i: int) -> None:
        path = folder / f"mem-{t}"
        with getattr(memory, "lock", contextlib.nullcontext()):  # what the save holds, exactly (no lock: before)
            want = {h.id: (h.user_id, h.run_id, h.text) for h in memory.store.get_all()}
            owner = {i: u for i, (u, _, _) in want.items()}
            memory.save(path)
        bump("saves")
        try:
            back = ScopedMemory.load(path, enc)
            ok = {h.id: (h.user_id, h.run_id, h.text) for h in back.store.get_all()} == want  # words too
            for user in {u for u in owner.values()}:
                got = back.search("flight hotel", user_id=user, k=50)["results"]
                ok &= all(r["user_id"] == user and owner.get(r["id"]) == user for r in got)
        except Exception as exc:  # noqa: BLE001 - any failure to load is what is counted
            ok = False
            errors.append(f"save {t}/{i}: {type(exc).__name__}: {exc}")
        if not ok:
            bump("bad_saves")

    mine: dict[str, dict] = {}  # user -> memory id -> its words: what the thread's own writes left
    kept: dict[str, set] = {}  # user -> ids of the bare store's memories the thread's writes left

    def took(user: str, results: list[dict]) -> None:
        """An add's memories, each there with its words (none moved, none missing): else a lost write."""
        for r in results:
            mine[user][r["id"]] = r["memory"]
            got = memory.get(r["id"])
            if got is None or got["memory"] != r["memory"] or got["user_id"] != user:
                bump("lost")
                errors.append(f"{user}: add of {r['id']} answered, then {got and got['memory']!r}")

    def worker(t: int) -> None:
        rng = random.Random(seed * 1000 + t)
        user = f"u{t}"
        mine[user], kept[user] = {}, set()
        barrier.wait()
        for i in range(ops):
            try:
                op = rng.random()
                run = rng.choice(["a", "b"])
                if op < 0.35:
                    took(user, memory.add([{"role": "user", "content": _text(rng)}], user_id=user,
                                          run_id=run)["results"])
                    kept[user].update(bare.add([_record(user, t, i)], np.asarray([_vec(rng)]), user_id=user))
                    bump("adds", 2)
                elif op < 0.45:
                    took(user, memory.add([Event("x", 0, "user", _text(rng), State("plan", constraints={"seat": "aisle"}))],
                                          user_id=user, run_id="events")["results"])  # chat and events in runs apart
                    bump("adds")
                elif op < 0.85:
                    got = memory.search(_text(rng), user_id=user, k=rng.choice([1, 5, 50]))["results"]
                    got += memory.search(_text(rng), user_id=user, run_id=run, k=10)["results"]
                    hits = bare.search_vector(np.asarray(_vec(rng)), 20, user_id=user)
                    leaks = sum(r["user_id"] != user for r in got) + sum(h.user_id != user for h in hits)
                    limit = rng.randint(0, 5)
                    listed = memory.get_all(user_id=user, limit=limit)["results"]
                    leaks += sum(r["user_id"] != user for r in listed) + (len(listed) > limit)
                    bump("searches", 4)
                    if leaks:
                        bump("leaks", leaks)
                elif op < 0.95:
                    listed = memory.get_all(user_id=user)["results"]
                    if listed:
                        gone = rng.choice(listed)["id"]
                        memory.delete(gone)
                        mine[user].pop(gone, None)
                        if memory.get(gone) is not None:
                            bump("lost")
                            errors.append(f"{user}: delete of {gone} answered, memory still there")
                        bump("deletes")
                    own = [i for i in bare.ids() if str(i).startswith(f"{user}#")]
                    if own:
                        j = rng.choice(own)
                        bare.delete([j])
                        kept[user].discard(j)
                        bump("deletes")
                elif t % 4 == 0:
                    check_save(t, i)
            except Exception as exc:  # noqa: BLE001 - every exception in a thread is counted
                bump("exceptions")
                errors.append(f"thread {t} op {i}: {type(exc).__name__}: {exc}")

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    for user in mine:  # each user's memories: exactly what its thread's writes left, with their words
        have = {r["id"]: r["memory"] for r in memory.get_all(user_id=user, limit=None)["results"]}
        bare_have = {h.id for h in bare.get_all(user_id=user)}
        if have != mine[user] or bare_have != kept[user]:
            bump("lost", len(set(have.items()) ^ set(mine[user].items())) + len(bare_have ^ kept[user]))
            errors.append(f"{user}: {len(have)} memories where its writes left {len(mine[user])}")
    check_save(-1, -1)  # and the final state round-trips
    return {**tally, "memories": len(memory.store), "errors": errors[:5]}


def _record(user: str, t: int, i: int):
    from sam_model.data.examples import MemoryRecord

    return MemoryRecord(f"{user}#{i}", f"ep-{t}", i, "user", "plan", f"memory {i} of {user}", "")


def _vec(rng: random.Random) -> list[float]:
    return [rng.gauss(0, 1) for _ in range(32)]


def run_children(runs: int, threads: int, ops: int, seed: int = 0, timeout_s: float = 300) -> dict:
    """``runs`` stress runs, each in a fresh Python process; a child that dies or hangs is a crash."""
    rows = []
    for r in range(runs):
        cmd = [sys.executable, "-m", "sam_model.bench.threads", "--child", str(seed + r), "--threads", str(threads),
               "--ops", str(ops)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
            row = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
            crash = None if row is not None else f"exit status {done.returncode}: {done.stderr.strip()[-200:]}"
        except subprocess.TimeoutExpired:
            row, crash = None, f"hung for more than {timeout_s:.0f} s"
        except (json.JSONDecodeError, IndexError):
            row, crash = None, "printed no tally"
        rows.append({"run": r, "crash": crash, **(row or {})})
        print(f"run {r + 1}/{runs}: " + (f"CRASH ({crash})" if crash else ", ".join(
            f"{k} {row[k]}" for k in ("exceptions", "leaks", "lost", "bad_saves", "saves", "searches", "adds",
                                      "deletes"))),
            file=sys.stderr, flush=True)
    total = {k: sum(int(r.get(k, 0)) for r in rows) for k in
             ("exceptions", "leaks", "lost", "bad_saves", "saves", "searches", "adds", "deletes")}
    return {"runs": runs, "threads": threads, "ops_per_thread": ops, "crashes": sum(r["crash"] is not None for r in rows),
            **total, "per_run": rows}


def lock_cost(n: int = 5_000, dim: int = 64, seconds: float = 1.0, repeats: int = 5) -> dict:
    """Searches per second: locked vs lock bypassed (one thread), and 1/2/4/8 threads sharing one store."""
    import faiss

    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    faiss.omp_set_num_threads(1)  # one FAISS thread per search: what is measured is the Python side and the lock
    rng = np.random.default_rng(0)
    store = MemoryStore(None, StoreConfig(provenance=False), dim=dim)
    from sam_model.data.examples import MemoryRecord

    recs = [MemoryRecord(f"m{i}", "ep", i, "user", "", f"memory {i}") for i in range(n)]
    ids = store.add(recs, rng.standard_normal((n, dim)).astype(np.float32))
    assert len(ids) == n
    queries = rng.standard_normal((256, dim)).astype(np.float32)
    unlocked = MemoryStore.search_vector.__wrapped__  # the same search without taking the lock

    def rate(fn, threads: int = 1) -> float:
        done = [0] * threads
        stop = time.perf_counter() + seconds

        def loop(t: int) -> None:
            faiss.omp_set_num_threads(1)  # OpenMP's setting is per thread: each worker sets its own
            j = t
            while time.perf_counter() < stop:
                fn(queries[j % len(queries)])
                j += threads
                done[t] += 1

        pool = [threading.Thread(target=loop, args=(t,)) for t in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
        return sum(done) / seconds

    configs = {"locked_1_thread": (lambda q: store.search_vector(q, 10), 1),
               "unlocked_1_thread": (lambda q: unlocked(store, q, 10), 1),
               **{f"locked_{t}_threads": (lambda q: store.search_vector(q, 10), t) for t in (2, 4, 8)}}
    rate(configs["locked_1_thread"][0])  # warm-up
    rates: dict[str, list[float]] = {name: [] for name in configs}
    for _ in range(repeats):  # interleaved, median: a busy host slows every configuration alike
        for name, (fn, threads) in configs.items():
            rates[name].append(rate(fn, threads))
    lock, calls = store.lock, 200_000
    t0 = time.perf_counter()
    for _ in range(calls):
        with lock:
            pass
    per_call_us = (time.perf_counter() - t0) / calls * 1e6
    return {"memories": n, "dim": dim, "k": 10, "repeats": repeats, "lock_us": per_call_us,
            **{name: float(np.median(r)) for name, r in rates.items()}}


def render(report: dict) -> str:
    lines = []
    if "runs" in report:
        r = report
        lines += [f"thread stress: {r['runs']} runs x {r['threads']} threads x {r['ops_per_thread']} operations",
                  f"  crashes {r['crashes']}, exceptions {r['exceptions']}, cross-scope results {r['leaks']}, "
                  f"lost writes {r['lost']}, unloadable or wrong saves {r['bad_saves']} (of {r['saves']} saves)",
                  f"  done: {r['searches']} searches, {r['adds']} adds, {r['deletes']} deletes"]
    if "lock" in report:
        c = report["lock"]
        lines += [f"lock cost ({c['memories']} memories, dim {c['dim']}, k {c['k']}), searches/s, median of "
                  f"{c['repeats']} interleaved rounds:",
                  f"  1 thread: locked {c['locked_1_thread']:.0f}, lock bypassed {c['unlocked_1_thread']:.0f} "
                  f"(an uncontended acquire + release: {c['lock_us']:.2f} µs; a search takes a few)"]
        lines += [f"  {t} threads sharing the store: {c[f'locked_{t}_threads']:.0f} in total" for t in (2, 4, 8)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from sam_model.io import DefaultsHelp

    ap = argparse.ArgumentParser(prog="python -m sam_model.bench.threads", description=__doc__.split("\n\n")[0],
                                 formatter_class=DefaultsHelp)
    ap.add_argument("--runs", type=int, default=20, help="stress runs, each in a fresh process (default 20)")
    ap.add_argument("--threads", type=int, default=8, help="threads sharing the memory in each run (default 8)")
    ap.add_argument("--ops", type=int, default=150, help="operations per thread per run (default 150)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first run (run r uses seed + r)")
    ap.add_argument("--lock-cost", action="store_true", help="also measure searches/s with and without the lock")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)  # one run, tally on stdout
    args = ap.parse_args(argv)
    if args.child is not None:
        print(json.dumps(one_run(args.child, args.threads, args.ops)))
        return 0
    report: dict = run_children(args.runs, args.threads, args.ops, args.seed) if args.runs > 0 else {}
    if args.lock_cost:
        report["lock"] = lock_cost()
    print(render(report))
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=2))
    bad = sum(report.get(k, 0) for k in ("crashes", "exceptions", "leaks", "lost", "bad_saves"))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
