"""Load and fault bench of sam-serve (loopback only, bounded): latency at scale, kill -9 under load, isolation.

    python -m sam_model.bench.serve load  --memories 100000 --clients 16 --seconds 30 [--model sam-general]
    python -m sam_model.bench.serve fault --kills 20 --clients 8 [--model sam-general]

Both start a real ``python -m sam_model.serve`` subprocess on 127.0.0.1 with two tenants (keys file written here)
and drive it with N client threads over HTTP (httpx, keep-alive), each client one tenant's user.

- **load**: the first tenant's memory is filled with ``--memories`` memories first (``--users`` users; the memory
  vectors are random: what is measured is the search over that many, not their quality), checkpointed, and the
  server started on it. Then for ``--seconds`` every client loops: with probability ``--add-share`` an add (a
  chat message, encoded and fsync-logged), else a search with a state of its own (SAM's state-adaptive query,
  encoded; the served encoder caches no text vectors, so the frozen-BERT cache never answers it; ``--queries``:
  short generated states, or the demo agent's states, as long as agents write them). Reports QPS and p50/p99 per
  operation, errors, and which part of a search dominates (the server's encoder batches: queries per forward).
  With ``--think-ms`` each client waits that long on average after each answer, as an agent does while its LLM
  writes the next step; the default 0 is a closed loop, the service's saturation, where by Little's law the mean
  latency is clients / throughput whatever the service does. Several think times run one after the other
  against the same server.
- **fault**: the clients add, search, list, update and delete their own memories while the server is killed with
  SIGKILL every ``--kill-every`` seconds and restarted, ``--kills`` times. A write counts as acknowledged when its
  2xx arrived (an add's answer must name the memory it stored, with its words: an add answered without it counts
  as lost at once); after the run the server is restarted once more and every acknowledged write is looked up:
  lost = an acknowledged add or update whose words are not there, or an acknowledged delete whose memory is. A
  write whose request got no answer may or may not have been applied: its memory is left out of the check.
  Requests that fail while the server is down are counted as errors (they were never acknowledged).

Every search and list result is checked against the client's tenant and user, and so is every memory the last
lookup finds: cross-tenant (or cross-user) = a result that is not the client's own. In fault mode the clients also
write into runs of their own (``run_id``), give their user's scope to half of their updates and deletes by id, and
now and then ask for another user's memory of their tenant by its id as their own (get, update, delete with
``?user_id=`` theirs): any 2xx counts as cross-user. In fault mode a hostile
client with the second tenant's key also tries the first tenant's acknowledged ids (get, update, delete,
history), its users (list, search, delete_all), a filter that widens the scope and a wrong key, all the run long:
any answer with the first tenant's data counts as cross-tenant (and a change that got through would show as a
lost write). The command exits 1 when anything was lost or crossed, or nothing was checked. What kill -9 cannot
test: a power loss, which only the log's fsync before each answer survives (tests/test_wal.py checks that a write
whose fsync fails is not answered). Figures go to stdout and ``--json``; progress to stderr and ``--log``. Timings are
of this machine as it is (shared, under load: say so when quoting them).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import httpx
import numpy as np

from sam_model.cpus import cores
from sam_model.io import DefaultsHelp, atomic_write_text

KEYS = {"acme": "acme-key-0123456789abcdef", "globex": "globex-key-0123456789abcdef"}
PHASES = ["search", "plan", "confirm", "book"]
SLOTS = ["date", "city", "budget", "name", "time"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model: str | Path, keys: Path, data: Path, port: int, *extra: str, log: Path | None = None,
                 timeout: float = 300.0) -> subprocess.Popen:
    """``python -m sam_model.serve`` in a subprocess, returned once /health answers."""
    out = open(log or os.devnull, "ab")  # noqa: SIM115 - the child keeps it
    proc = subprocess.Popen([sys.executable, "-m", "sam_model.serve", "--model", str(model), "--keys", str(keys),
                             "--data", str(data), "--port", str(port), "--log-level", "warning", *extra],
                            stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sam-serve exited with {proc.returncode} (its log: {log})")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"sam-serve did not answer /health within {timeout} s (its log: {log})")


@dataclass
class Tally:
    """What the clients saw (each client its own; summed at the end)."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {"add": [], "search": []})
    errors: dict[str, int] = field(default_factory=dict)
    acked: list[tuple[str, str, str, str]] = field(default_factory=list)  # acknowledged adds: (tenant, user, id, text)
    cross: list[str] = field(default_factory=list)
    # fault mode: (tenant, user, id) -> the words an acknowledged write left (None: deleted); the ids whose last
    # write got no answer (applied or not: not checked); adds answered without naming what they stored
    expect: dict[tuple[str, str, str], str | None] = field(default_factory=dict)
    unsure: set[tuple[str, str, str]] = field(default_factory=set)
    unstored: list[str] = field(default_factory=list)
    writes: dict[str, int] = field(default_factory=lambda: {"add": 0, "update": 0, "delete": 0})

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1


def _state(rng: random.Random) -> dict:
    return {"phase": rng.choice(PHASES), "constraints": {"city": f"c{rng.randrange(10**9)}"},
            "uncertainty_flags": rng.sample(SLOTS, 2)}


QUERIES = ("short", "demo")


def asker(kind: str) -> Callable[[random.Random], tuple[str, dict]]:
    """What a search sends, (query text, state), drawn with the client's rng.

    ``short``: a one-line generated state (a phase, two needs, one known value: ~23 BERT tokens as text) and "what
    about N?". ``demo``: the state and words of a decision point of the demo's generated agent
    (sam_model.data.synthetic, 200 episodes: sub-goals, needs, known values, the last result; ~85 tokens, more
    than a model's 64-token read), as long as the states agents write. The served encoder caches no text vectors
    (sam_model.serve.tenants), so a state drawn twice costs its BERT pass twice, as a new one would.
    """
    if kind == "short":
        return lambda rng: (f"what about {rng.randrange(10**9)}?", _state(rng))
    if kind != "demo":
        raise ValueError(f"--queries must be one of {', '.join(QUERIES)}, got {kind!r}")
    from sam_model.data.synthetic import generate_episodes

    pool = [(e["text"], e["state"]) for ep in generate_episodes(200, seed=7) for e in ep
            if e.get("useful_memory_steps")]
    return lambda rng: rng.choice(pool)


def foreign(tenant: str, user: str, results: list[dict]) -> list[str]:
    """The results that are not this tenant's user's own (every text a client writes starts with its name)."""
    return [h["memory"] for h in results if h["user_id"] != user or not h["memory"].startswith(f"{tenant}:{user} ")]


def client(base: str, tenant: str, user: str, stop: threading.Event, tally: Tally, seed: int,
           add_share: float, think: float = 0.0, ask: Callable[[random.Random], tuple[str, dict]] | None = None,
           writes: bool = False) -> None:
    """Add and search as one user of one tenant until ``stop``; every 2xx add is acknowledged. ``think``: mean
    seconds the client waits after each answer (exponential: an agent's LLM step between two memory calls);
    0 = the next request at once (a closed loop at full load). ``ask``: what a search sends (:func:`asker`;
    default the short states). ``writes`` (fault mode): of the operations that are not adds, a fifth lists the
    user's memories, a tenth updates one and a tenth deletes one, each checked after the run, and one in twenty
    peeks: reads or updates another user's memory of the tenant by its id with this user's scope (must be 404);
    a third of the adds also carry a run of the user's (``run_id``), and half of the updates and deletes give the
    user's scope (module doc)."""
    rng = random.Random(seed)
    ask = ask or asker("short")
    peeked: tuple[str, str, str, str] | None = None  # a peek's target: another user's acknowledged add
    headers = {"Authorization": f"Bearer {KEYS[tenant]}"}
    mine: dict[str, str] = {}  # the ids of this client's memories that its acknowledged writes left
    if think:  # clients that think do not all start at once: a burst of N first requests is no agent fleet's load
        stop.wait(rng.expovariate(1.0 / think))
    with httpx.Client(base_url=base, headers=headers, timeout=30.0) as http:
        while not stop.is_set():
            draw = rng.random()
            op = "add" if draw < add_share else "search"
            if writes and op == "search":
                op = rng.choices(["search", "list", "update", "delete", "peek"], [0.55, 0.2, 0.1, 0.1, 0.05])[0]
                if op in ("update", "delete") and not mine:
                    op = "search"
                if op == "peek":
                    others = [a for a in tally.acked[-200:] if a[0] == tenant and a[1] != user]
                    op, peeked = ("peek", rng.choice(others)) if others else ("search", None)
            text = f"{tenant}:{user} fact {uuid.uuid4().hex[:10]}"
            target = rng.choice(sorted(mine)) if op in ("update", "delete") else peeked[2] if op == "peek" else None
            path = None if target is None else "/v1/memories/" + quote(target, safe="")
            scoped = {"user_id": user} if op == "peek" or rng.random() < 0.5 else {}  # by id, within the user
            t0 = time.perf_counter()
            try:
                if op == "add":
                    run = {"run_id": f"run{rng.randrange(3)}"} if rng.random() < 1 / 3 else {}
                    r = http.post("/v1/memories", json={"messages": text, "user_id": user, **run})
                elif op == "peek":  # another user's memory, asked for as this user's: nothing, and nothing changed
                    answers = [http.get(path, params=scoped),
                               http.put(path, params=scoped, json={"data": "peeked"}),
                               http.delete(path, params=scoped)]
                    for a in answers:
                        if 200 <= a.status_code < 300:  # (a 5xx while the server goes down is no leak)
                            tally.cross.append(f"{tenant}:{user} {a.request.method} {target} as its own: "
                                               f"HTTP {a.status_code} {a.text[:60]}")
                    tally.latencies.setdefault("peek", []).append(time.perf_counter() - t0)
                    continue
                elif op == "search":
                    query, state = ask(rng)
                    r = http.post("/v1/memories/search", json={"query": query, "user_id": user, "state": state,
                                                               "limit": 5})
                elif op == "list":
                    r = http.get("/v1/memories", params={"user_id": user, "limit": 1000})
                elif op == "update":
                    r = http.put(path, params=scoped, json={"data": text + " (updated)"})
                else:
                    r = http.delete(path, params=scoped)
            except httpx.HTTPError as err:
                tally.error(f"{op}: no answer")
                if op in ("update", "delete") and not isinstance(err, httpx.ConnectError):  # sent: applied or not
                    tally.unsure.add((tenant, user, target))
                    mine.pop(target)
                time.sleep(0.05)
                continue
            dt = time.perf_counter() - t0
            if r.status_code != 200:
                tally.error(f"{op}: HTTP {r.status_code}")
                continue
            tally.latencies.setdefault(op, []).append(dt)
            if op == "add":
                stored = [h["id"] for h in r.json()["results"] if h["event"] == "ADD" and h["memory"] == text]
                tally.acked += [(tenant, user, i, text) for i in stored]
                tally.writes["add"] += 1
                if not stored:
                    tally.unstored.append(f"{tenant}:{user}: {r.text[:80]}")
                for i in stored:
                    mine[i] = tally.expect[(tenant, user, i)] = text
            elif op in ("update", "delete"):
                tally.writes[op] += 1
                tally.expect[(tenant, user, target)] = text + " (updated)" if op == "update" else None
                if op == "update":
                    mine[target] = text + " (updated)"
                else:
                    mine.pop(target)
            else:
                tally.cross += foreign(tenant, user, r.json()["results"])
            if think:
                stop.wait(rng.expovariate(1.0 / think))


def hostile(base: str, stop: threading.Event, tally: Tally, seed: int) -> None:
    """Globex's key against acme's memories until ``stop``: acme's acknowledged ids (get, update, delete,
    history), acme's users (list, delete_all), filters that try to widen the scope, and wrong keys. Anything
    that answers with acme's data or changes it is a breach (counted in ``tally.cross``)."""
    rng = random.Random(seed)
    with httpx.Client(base_url=base, headers={"X-API-Key": KEYS["globex"]}, timeout=30.0) as http:
        while not stop.is_set():
            theirs = [a for a in tally.acked[-200:] if a[0] == "acme"]
            if not theirs:
                stop.wait(0.1)
                continue
            _, user, mid, text = rng.choice(theirs)
            path = "/v1/memories/" + quote(mid, safe="")
            try:
                tries = [http.get(path), http.put(path, json={"data": "globex was here"}), http.delete(path),
                         http.get("/v1/history/" + quote(mid, safe="")),
                         http.get("/v1/memories", params={"user_id": user}),
                         http.delete("/v1/memories", params={"user_id": user}),  # its own user of that name only
                         http.post("/v1/memories/search", json={"query": "x", "user_id": user}),
                         http.post("/v1/memories/search", json={"query": "x", "user_id": "u1", "limit": 50,
                                                                "filters": {"OR": [{"user_id": user}, {"user_id": "u1"}]}}),
                         http.post("/v1/memories/search", json={"query": "x", "user_id": user},
                                   headers={"X-API-Key": KEYS["acme"][:-1] + "?"})]
            except httpx.HTTPError:
                stop.wait(0.05)
                continue
            for r in tries:
                if r.status_code == 200 and "acme:" in r.text:
                    tally.cross.append(f"hostile {r.request.method} {r.request.url.path}: {r.text[:80]}")
            tally.latencies.setdefault("hostile", []).append(0.0)


def run_clients(base: str, n: int, seconds: float, add_share: float, tally: Tally, users: int = 0,
                tenants: tuple[str, ...] = ("acme", "globex"), during=None, hostile_client: bool = False,
                think: float = 0.0, seed: int = 0, ask: Callable[[random.Random], tuple[str, dict]] | None = None,
                writes: bool = False) -> float:
    """n client threads (tenants in turn; client i is user u<i>, or u<i mod users>; ``think``: see client) for
    ``seconds`` (``during(stop, end)`` runs beside them instead of a plain wait); returns the wall time. ``seed``
    draws the clients' operations and waits (a run with another seed sends other requests at other times); ``ask``:
    what their searches send (:func:`asker`)."""
    stop = threading.Event()
    threads = [threading.Thread(target=client, args=(base, tenants[i % len(tenants)], f"u{i % users if users else i}",
                                                     stop, tally, seed * n + i, add_share, think, ask, writes),
                               daemon=True)
               for i in range(n)]
    if hostile_client:
        threads.append(threading.Thread(target=hostile, args=(base, stop, tally, n), daemon=True))
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    if during is not None:
        during(stop, t0 + seconds)
    else:
        stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(60)
    return time.perf_counter() - t0


def percentiles(xs: list[float]) -> dict:
    if not xs:
        return {"n": 0}
    a = np.asarray(xs) * 1000
    return {"n": len(xs), "p50_ms": round(float(np.percentile(a, 50)), 1), "p99_ms": round(float(np.percentile(a, 99)), 1),
            "mean_ms": round(float(a.mean()), 1)}


def preload(model: str | Path, data: Path, keys: Path, memories: int, users: int, log) -> None:
    """Write the first tenant's checkpoint holding ``memories`` memories (random vectors) of ``users`` users."""
    from sam_model.data.examples import MemoryRecord
    from sam_model.memory.scoped import ScopedMemory
    from sam_model.retriever import SAMRetriever
    from sam_model.serve.tenants import Tenant
    from sam_model.store import store_config_of

    retriever = SAMRetriever.load(str(model), device="cpu")
    cfg = store_config_of(retriever)
    tenant = Tenant("acme", data / "acme", lambda: ScopedMemory(retriever, cfg), lambda f: ScopedMemory.load(f, retriever))
    rng = np.random.default_rng(0)
    store, per = tenant.memory.store, max(1, memories // users)
    for u in range(users):
        n = per if u < users - 1 else memories - per * (users - 1)
        if n <= 0:
            break
        ep = ScopedMemory.episode_of(user_id=f"u{u}")
        recs = [MemoryRecord(f"{ep}#{i}", ep, i, "user", "plan", f"acme:u{u} old fact {i}") for i in range(n)]
        x = rng.standard_normal((n, store.dim)).astype(np.float32)
        store.add(recs, x / np.linalg.norm(x, axis=1, keepdims=True), user_id=f"u{u}")
        for r in recs:  # the times and ADD event ScopedMemory.add keeps of each memory: a checkpoint writes them too
            tenant.memory._log(r.id, "ADD", None, r.text)
        if u % max(1, users // 10) == 0:
            log(f"preload: {len(store)}/{memories} memories")
    tenant.checkpoint()
    tenant.release()  # the server opens it next


def breakdown(model: str | Path, data: Path, clients: int, rounds: int, users: int, threads: int, log,
              queries: str = "short") -> dict:
    """What a search costs in-process on the preloaded memory (no HTTP): encoding one query, encoding ``clients``
    queries in one forward (what micro-batching does), and one search + re-rank of the store with the vector given
    (the mean over ``rounds``), on the device the server uses;
    the queries as the load sent them (``queries``: :func:`asker`), with no text-vector cache, as served."""
    import torch

    from sam_model.memory.scoped import ScopedMemory
    from sam_model.retriever import SAMRetriever
    from sam_model.serve.tenants import CHECKPOINT

    torch.set_num_threads(threads)
    retriever = SAMRetriever.load(str(model))  # on the device the server picks: CUDA when there is one
    retriever.encoder.limit_text_cache(0)  # as sam-serve's (sam_model.serve.tenants): every query pays its encode
    memory = ScopedMemory.load(data / "acme" / CHECKPOINT / "memory", retriever)
    rng, ask = random.Random(1), asker(queries)
    asks = [(*ask(rng), f"u{rng.randrange(users)}") for _ in range(rounds * clients)]
    inputs = [memory.query_input(q, st, user_id=u)[1] for q, st, u in asks]
    warm = [memory.query_input(f"warm-up {i}", _state(rng), user_id="u0")[1] for i in range(clients)]
    memory.encode_query("state", warm[:1]), memory.encode_query("state", warm)  # first forwards: allocation
    t0 = time.perf_counter()
    vectors = [memory.encode_query("state", [i])[0] for i in inputs[:rounds]]
    one = (time.perf_counter() - t0) / rounds
    t0 = time.perf_counter()
    for r in range(rounds):
        memory.encode_query("state", inputs[r * clients:(r + 1) * clients])
    batch = (time.perf_counter() - t0) / rounds
    t0 = time.perf_counter()
    for (q, st, u), v in zip(asks[:rounds], vectors, strict=True):  # one search per encoded query
        memory.search(q, st, user_id=u, limit=5, query_vector=v)
    search = (time.perf_counter() - t0) / rounds
    out = {"encode_1_ms": round(one * 1000, 1), f"encode_{clients}_in_one_forward_ms": round(batch * 1000, 1),
           "search_and_rerank_ms": round(search * 1000, 2), "memories": len(memory.store),
           "encoder_device": str(retriever.encoder.device)}
    log(f"in-process breakdown: {out}")
    return out


def share_args(args) -> tuple[str, ...]:
    """The server's --checkpoint-share, when the bench was given one."""
    return () if args.checkpoint_share is None else ("--checkpoint-share", str(args.checkpoint_share))


def load_bench(args, folder: Path, log) -> dict:
    keys = folder / "keys.json"
    atomic_write_text(keys, json.dumps(KEYS))
    data = folder / "data"
    t0 = time.perf_counter()
    preload(args.model, data, keys, args.memories, args.users, log)
    log(f"preloaded {args.memories} memories in {time.perf_counter() - t0:.0f} s; starting the server")
    port = free_port()
    every = () if args.checkpoint_every is None else ("--checkpoint-every", str(args.checkpoint_every))
    proc = start_server(args.model, keys, data, port, "--batch-ms", str(args.batch_ms), "--threads", str(args.threads),
                        *every, *share_args(args), log=folder / "server.log")
    try:
        base = f"http://127.0.0.1:{port}"
        warm = Tally()
        ask = asker(args.queries)
        run_clients(base, max(2, args.clients // 4), 3.0, args.add_share, warm, args.users, ("acme",), ask=ask)
        runs = []
        for r, think in enumerate(args.think_ms):  # one server, one preload: a row per think time
            tally = Tally()
            wall = run_clients(base, args.clients, args.seconds, args.add_share, tally, args.users, ("acme",),
                               think=think / 1000, seed=r + 1, ask=ask)  # seed 0: the warm-up
            runs.append({"think_ms": think, "seconds": round(wall, 1),
                         "qps": round(sum(map(len, tally.latencies.values())) / wall, 1),
                         "search": percentiles(tally.latencies["search"]), "add": percentiles(tally.latencies["add"]),
                         "errors": tally.errors, "cross_tenant_results": len(tally.cross)})
            log(f"think {think:g} ms: {runs[-1]['qps']} requests/s, search {runs[-1]['search']}")
    finally:
        proc.terminate()
        proc.wait(60)
    parts = breakdown(args.model, data, args.clients, 10, args.users, args.threads, log, args.queries)
    return {"mode": "load", "queries": args.queries, "breakdown": parts, "memories": args.memories,
            "clients": args.clients, "checkpoint_every": args.checkpoint_every,
            "checkpoint_share": args.checkpoint_share,
            "batch_ms": args.batch_ms, "threads": args.threads, "cpus": os.cpu_count(), "runs": runs}


def fault_bench(args, folder: Path, log) -> dict:
    keys = folder / "keys.json"
    atomic_write_text(keys, json.dumps(KEYS))
    data, port = folder / "data", free_port()
    every = 50 if args.checkpoint_every is None else args.checkpoint_every
    extra = ("--checkpoint-every", str(every), "--batch-ms", str(args.batch_ms), *share_args(args))
    server = {"proc": start_server(args.model, keys, data, port, *extra, log=folder / "server.log")}
    kills, restarts = [0], []

    def killer(stop: threading.Event, end: float) -> None:
        while kills[0] < args.kills and not stop.is_set():
            time.sleep(args.kill_every * random.Random(kills[0]).uniform(0.5, 1.5))
            server["proc"].kill()  # SIGKILL: no shutdown, no checkpoint
            server["proc"].wait()
            kills[0] += 1
            t0 = time.perf_counter()
            server["proc"] = start_server(args.model, keys, data, port, *extra, log=folder / "server.log")
            restarts.append(time.perf_counter() - t0)
            log(f"kill {kills[0]}/{args.kills}: restarted in {restarts[-1]:.1f} s")
        stop.wait(args.settle)  # a last stretch without kills: the hostile client and the clients run on

    tally = Tally()
    base = f"http://127.0.0.1:{port}"
    wall = run_clients(base, args.clients, 0, args.add_share, tally, during=killer, hostile_client=True, writes=True)
    server["proc"].kill()
    server["proc"].wait()
    proc = start_server(args.model, keys, data, port, *extra, log=folder / "server.log")  # after a last kill
    lost = list(tally.unstored)
    try:
        for tenant in ("acme", "globex"):
            with httpx.Client(base_url=base, headers={"X-API-Key": KEYS[tenant]}, timeout=60) as http:
                for u in sorted({u for t, u, _ in tally.expect if t == tenant}):
                    got = http.get("/v1/memories", params={"user_id": u, "limit": 10**6}).json()["results"]
                    tally.cross += [f"last lookup {tenant}:{u}: {m}" for m in foreign(tenant, u, got)]
                    held = {m["id"]: m["memory"] for m in got}
                    lost += [i for (t, v, i), want in tally.expect.items()
                             if t == tenant and v == u and (t, v, i) not in tally.unsure and held.get(i) != want]
    finally:
        proc.terminate()
        proc.wait(60)
    return {"mode": "fault", "kills": kills[0], "clients": args.clients, "seconds": round(wall, 1),
            "acknowledged_writes": sum(tally.writes.values()), "acknowledged": dict(tally.writes),
            "unchecked_no_answer": len(tally.unsure), "acknowledged_but_lost": len(lost), "lost_ids": lost[:10],
            "cross_tenant_results": len(tally.cross), "cross_examples": tally.cross[:5],
            "hostile_rounds": len(tally.latencies.get("hostile", [])), "peeks": len(tally.latencies.get("peek", [])),
            "errors": tally.errors,
            "restart_s": {"mean": round(float(np.mean(restarts)), 2), "max": round(float(np.max(restarts)), 2)}
            if restarts else {},
            "search": percentiles(tally.latencies["search"]), "add": percentiles(tally.latencies["add"])}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m sam_model.bench.serve", description=__doc__.split("\n\n")[0],
                                formatter_class=DefaultsHelp)
    p.add_argument("mode", choices=["load", "fault"], help="load: latency at scale; fault: kill -9 under load")
    p.add_argument("--model", default="sam-general", help="the served retriever (export folder or packaged name)")
    p.add_argument("--clients", type=int, default=16, help="concurrent client threads (alternating two tenants)")
    p.add_argument("--seconds", type=float, default=30.0, help="load: how long the clients run (per think time)")
    p.add_argument("--think-ms", type=think_times, default=[0.0],
                   help="load: the clients' mean wait after each answer, ms, comma-separated for a run each "
                        "(exponential, an agent's LLM step between memory calls; 0: a closed loop at full load)")
    p.add_argument("--queries", choices=QUERIES, default="short",
                   help="load: what searches send. short: one-line generated states (~23 BERT tokens); demo: the "
                        "states and words of the demo agent's decision points (~85 tokens: sub-goals, known values, "
                        "last result), as long as agents' states are")
    p.add_argument("--memories", type=int, default=100_000, help="load: memories preloaded into the first tenant")
    p.add_argument("--users", type=int, default=1000, help="load: users the preloaded memories belong to")
    p.add_argument("--add-share", type=float, default=None,
                   help="share of operations that are adds (default: 0.1 for load, 0.5 for fault)")
    p.add_argument("--batch-ms", type=float, default=2.0, help="the server's micro-batching window (0: off)")
    p.add_argument("--threads", type=int, default=cores(),
                   help="load: the server's encoder threads (sam-serve --threads; default, as there: the cores)")
    p.add_argument("--kills", type=int, default=20, help="fault: SIGKILLs of the server")
    p.add_argument("--kill-every", type=float, default=3.0, help="fault: mean seconds between kills (0.5-1.5 x)")
    p.add_argument("--settle", type=float, default=5.0, help="fault: seconds the clients run on after the last kill")
    p.add_argument("--checkpoint-every", type=int, default=None,
                   help="the server's checkpoint interval in writes (default: 50 for fault; for load the server's "
                        "own, 1000, which a 30 s run at 10 %% adds never reaches: give e.g. 100 to measure the "
                        "searches during checkpoints of the preloaded memories)")
    p.add_argument("--checkpoint-share", type=float, default=None,
                   help="the server's --checkpoint-share (default: its own, 0.1: at 100k memories a checkpoint "
                        "waits for 10,000 writes; give 0 with --checkpoint-every to checkpoint by count alone)")
    p.add_argument("--workdir", type=Path, default=None, help="where data and logs go (default: a temp folder)")
    p.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    p.add_argument("--log", type=Path, default=None, help="also write progress to this file")
    return p


def think_times(text: str) -> list[float]:
    """``--think-ms``: comma-separated milliseconds >= 0."""
    try:
        out = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"want comma-separated milliseconds such as 0,250,1000, got {text!r}") from None
    if not out or any(not (x >= 0 and np.isfinite(x)) for x in out):
        raise argparse.ArgumentTypeError(f"think times must be finite numbers >= 0, got {text!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.checkpoint_every is not None and args.checkpoint_every < 1:  # before a preload of minutes, not after
        ap.error(f"--checkpoint-every must be >= 1 (writes between a tenant's checkpoints), got {args.checkpoint_every}")
    if args.checkpoint_share is not None:
        from sam_model.serve.tenants import check_checkpoint_share

        try:
            check_checkpoint_share(args.checkpoint_share)
        except ValueError as err:
            ap.error(f"--checkpoint-share: {err}")
    if args.add_share is None:
        args.add_share = 0.1 if args.mode == "load" else 0.5

    log = progress(args.log)
    with tempfile.TemporaryDirectory(prefix="sam-serve-bench-") as tmp:
        folder = args.workdir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        out = (load_bench if args.mode == "load" else fault_bench)(args, folder, log)
        emit(out, args.json)
    crossed = out.get("cross_tenant_results", 0) + sum(r["cross_tenant_results"] for r in out.get("runs", []))
    checked = (out["acknowledged_writes"] > 0 and out["hostile_rounds"] > 0 if args.mode == "fault" else
               all(r["search"]["n"] > 0 for r in out["runs"]))
    if not checked:  # a server that refused everything passed (found by review)
        print("error: nothing was checked (no acknowledged write, no hostile round or no search answered): see "
              "the errors above and the server's log", file=sys.stderr)
    return 1 if crossed or out.get("acknowledged_but_lost", 0) or not checked else 0


def progress(path: Path | None):
    """A ``log(msg)`` that prints time-stamped progress to stderr and, with ``path``, appends it there."""

    def log(msg: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, file=sys.stderr, flush=True)
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(line + "\n")

    return log


def emit(figures: dict, path: Path | None) -> None:
    """The figures as JSON on stdout and, with ``path``, in that file."""
    text = json.dumps(figures, indent=2)
    print(text)
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text + "\n")


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["Tally", "emit", "fault_bench", "load_bench", "progress", "start_server"]
