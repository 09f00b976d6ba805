"""A non-author check of variant reuse-recent's r_m (README "How recently a memory was used"): over random episodes
(lives of several tasks, labels reaching back into earlier tasks, decisions labelling several memories at once,
chunked memories), training's recency matrix, evaluate.py's replay ranks and the live path's ranks all equal a brute
force of the design's rule: at decision t, over the uses by decision points BEFORE t of t's task, r_m = 1/k, k = 1 +
the number of used memories whose latest use is later (the memories of one call share k), 0 for an unused memory,
and a chunked event's chunks share their event's r_m."""

from __future__ import annotations

import random

import pytest
import torch
from test_reuse_recent import recent_net  # noqa: F401 - its module fixture, the reuse-recent network
from test_task_first import EMPTY, data_of, write

from sam_model.data.chunks import Chunking
from sam_model.data.examples import episode_row
from sam_model.data.reader import read_episodes
from sam_model.evaluation.ranking import used_ranks
from sam_model.memory.scopeduses import used_ids, used_steps
from sam_model.training.batching import collate_episodes, recency_matrix, reuse_matrix

KINDS = ("user", "action", "result", "thought")


def _life(rng: random.Random, episode: str) -> list[dict]:
    """One episode of 2-4 tasks (meta.source_episode), 4-9 events each; about one event in three a decision point
    labelling 1-3 earlier events of any task (a later task may use what an earlier one said)."""
    out, step = [], 0
    for task in range(rng.randint(2, 4)):
        for _ in range(rng.randint(4, 9)):
            e = {"episode_id": episode, "step": step, "kind": rng.choice(KINDS),
                 "text": " ".join(f"w{rng.randint(0, 99)}" for _ in range(rng.randint(2, 40))), "state": EMPTY,
                 "meta": {"source_episode": f"{episode}-t{task}"}}
            if step and rng.random() < 0.4:
                e["useful_memory_steps"] = sorted(rng.sample(range(step), min(step, rng.randint(1, 3))))
            out.append(e)
            step += 1
    return out


def _brute(events: list[dict], i: int) -> dict[int, float]:
    """The design's r_m at events[i] (memory step -> 1/k), from scratch: the uses by decision points before it
    whose step is at or after its task's start."""
    src = events[i]["meta"]["source_episode"]
    start = min(e["step"] for e in events if e["meta"]["source_episode"] == src)
    latest: dict[int, int] = {}
    for e in events[:i]:
        if e["step"] >= start:
            for m in e.get("useful_memory_steps", ()):
                latest[m] = max(latest.get(m, -1), e["step"])
    return {m: 1.0 / (1 + sum(1 for s in latest.values() if s > t)) for m, t in latest.items()}


@pytest.fixture(scope="module")
def lives(tmp_path_factory):
    rng = random.Random(21)
    episodes = [_life(rng, f"E{n}") for n in range(12)]
    log = write(tmp_path_factory.mktemp("lives") / "lives.jsonl", [e for ep in episodes for e in ep])
    # the draw must hold what can fail: ties (a call of several labels), uses reaching into an earlier task, and
    # decisions whose task used memories at more than one call
    want = {(ep[0]["episode_id"], e["step"]): _brute(ep, i) for ep in episodes for i, e in enumerate(ep)
            if e.get("useful_memory_steps")}
    assert any(len(set(r.values())) > 2 for r in want.values())
    assert any(sum(1 for v in r.values() if v == 1.0) > 1 for r in want.values())
    return episodes, log, want


def test_evaluates_replay_ranks_are_the_designs(lives):
    episodes, log, want = lives
    data = data_of(log)
    got = {(ex.episode_id, ex.step): {data.memories[p].step: 1.0 / k for p, k in used_ranks(data.memories, ex).items()}
           for ex in data.examples}
    assert got == want


@pytest.mark.parametrize("chunking", [None, Chunking(size=40, overlap=10)])
def test_trainings_recency_matrix_is_the_designs_for_every_memory_and_chunk(lives, chunking):
    episodes, log, want = lives
    rows = [(n, episode_row(ep)) for n, ep in enumerate(read_episodes(log))]
    batch = collate_episodes(rows, chunking)
    if chunking is not None:
        assert len(batch["mem_step"]) > sum(len(ep) for ep in episodes)  # some events are chunked: can fail
    r = recency_matrix(batch["q_episode"], batch["q_used"], batch["q_recent"], batch["mem_episode"], batch["mem_step"])
    u = reuse_matrix(batch["q_episode"], batch["q_used"], batch["mem_episode"], batch["mem_step"])
    names = [ep[0]["episode_id"] for ep in episodes]
    assert len(batch["q_step"]) == len(want)
    for q in range(len(batch["q_step"])):
        ep, step = int(batch["q_episode"][q]), int(batch["q_step"][q])
        expect = want[(names[ep], step)]
        row: dict[int, set[float]] = {}
        for j in range(len(batch["mem_step"])):
            if int(batch["mem_episode"][j]) == ep:
                row.setdefault(int(batch["mem_step"][j]), set()).add(float(r[q, j]))
            else:
                assert r[q, j] == 0
        # every chunk of an event holds its event's r_m (float32, as training holds it)
        assert row == {s: {float(torch.tensor(expect.get(s, 0.0)))} for s in row}, (names[ep], step)
        assert torch.equal(r[q] > 0, u[q])


def test_the_live_paths_ranks_are_the_designs(lives):
    episodes, log, want = lives
    for ep in episodes:
        labels = {e["step"]: e["useful_memory_steps"] for e in ep if e.get("useful_memory_steps")}
        for i, e in enumerate(ep):
            if e.get("useful_memory_steps"):
                src = e["meta"]["source_episode"]
                start = min(x["step"] for x in ep if x["meta"]["source_episode"] == src)
                told = used_ids(e["episode_id"], used_steps(None, 0, labels, e["step"], start))
                got = {int(i.rpartition("#")[2]): 1.0 / k for i, k in told.items()}
                assert got == want[(e["episode_id"], e["step"])]


class _RecencyEncoder:
    """Just enough of an encoder for a store to score reuse and recency (store.reads_recency): the store is given
    its vectors, so nothing is encoded."""

    class net:  # noqa: N801 - the attribute path reads_reuse/reads_recency follow
        class reuse:  # noqa: N801
            recency = object()

    dim = 6


def _store(rng: random.Random):
    import numpy as np

    from sam_model.data.examples import MemoryRecord
    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    mems = [MemoryRecord(MemoryRecord.make_id("E", s), "E", s, "tool", "p", f"m{s}", f"tool: m{s}") for s in range(12)]
    v = np.array([[rng.uniform(-1, 1) for _ in range(4)] + [0.0, 0.0] for _ in mems], dtype=np.float32)
    store = MemoryStore(_RecencyEncoder(), StoreConfig(provenance=False, slot_match=0.0), 6)
    store.add(mems, v)
    return store, mems, v


def test_the_store_scores_1_over_k_in_float64_refuses_what_is_not_a_rank_and_keeps_no_mark(tmp_path):
    import threading

    import numpy as np

    rng = random.Random(5)
    store, mems, v = _store(rng)
    assert store.scores_uses and store.scores_recency
    q = np.array([rng.uniform(-1, 1) for _ in range(4)] + [0.7, 3.0], dtype=np.float32)
    told = {mems[2].id: 1, mems[5].id: 1, mems[7].id: 3, "E#99": 2}  # one id not stored: passed over
    hits = store.search_vector(q, 12, episode_id="E", used=told, rerank=False)
    m = v.astype(np.float64)
    for i, k in told.items():
        if i != "E#99":
            m[int(i.rpartition("#")[2]), 4:] = [1.0, 1.0 / k]
    want = (m * q.astype(np.float64)).sum(axis=1)
    assert {h.id: h.score for h in hits} == pytest.approx({x.id: want[n] for n, x in enumerate(mems)}, abs=1e-12)
    assert [h.id for h in hits] == [mems[n].id for n in np.argsort(-want, kind="stable")]
    assert [h.used for h in hits] == [h.id in told for h in hits]
    for bad in ({mems[2].id: 0}, {mems[2].id: True}, {mems[2].id: 1.0}, {mems[2].id: "1"}):
        with pytest.raises(ValueError, match=r"^used\[") as err:
            store.search_vector(q, 3, episode_id="E", used=bad)
        assert "\n" not in str(err.value)
    for ids in (list(told), set(told)):
        with pytest.raises(ValueError, match="task_recency"):
            store.search_vector(q, 3, episode_id="E", used=ids)
    with pytest.raises(ValueError, match="task_reuse"):
        store.search_vector(q, 3, episode_id="E")
    # searches in threads, each told its own ranks, get what each gets alone, and the index keeps 0s
    asks = [{mems[j].id: rng.randint(1, 4) for j in rng.sample(range(12), 4)} for _ in range(16)]
    alone = [[(h.id, h.score) for h in store.search_vector(q, 5, episode_id="E", used=a)] for a in asks]
    got: list = [None] * len(asks)

    def run(n: int) -> None:
        for _ in range(20):
            got[n] = [(h.id, h.score) for h in store.search_vector(q, 5, episode_id="E", used=asks[n])]

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(asks))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == alone
    assert np.array_equal(store.index.get_vectors([x.id for x in mems]), v)
    from sam_model.store import MemoryStore

    store.encoder = None  # saved as a store given its vectors (a save probes its encoder, which this one is not)
    store.save(tmp_path / "saved")  # a save holds the vectors as written, no search's u_m or r_m
    assert np.array_equal(MemoryStore.load(tmp_path / "saved").index.get_vectors([x.id for x in mems]), v)


def _seeded(folder, methods: dict[str, list[float]], seed: int):
    """test_lodo_seeds_from's run folder (coding's six decisions, a fixed split: the same for every seed), its
    report.json recording the seed as bench.lodo's evaluation writes it."""
    import json

    from test_lodo_seeds_from import _run

    run = _run(folder, methods)
    (run / "coding" / "report.json").write_text(json.dumps({"seed": seed}))
    return run


def test_reference_from_refuses_a_reference_of_another_seed_or_given_twice_or_missing_a_domain(tmp_path, capsys):
    """--reference-from pairs by seed and decision (README "How recently a memory was used"); on a fixed split the
    decisions of every seed are the same, so the decisions alone let a reference run of another seed through (given
    in another order, or one run given for every seed): the seed each report.json records is checked too."""
    from sam_model.bench import lodo_seeds

    new = [_seeded(tmp_path / f"new{s}", {"bm25": [0.5] * 6, "new": [1] * 6}, s) for s in (0, 1)]
    old = [_seeded(tmp_path / f"old{s}", {"bm25": [0.5] * 6, "old": [0.5] * 6}, s) for s in (0, 1)]
    assert len(lodo_seeds.load(new, "new", "old", old)[0]["coding"]) == 2  # seed by seed: taken
    with pytest.raises(SystemExit, match="is seed 0 but .* is seed 1"):
        lodo_seeds.load(new, "new", "old", old[::-1])
    with pytest.raises(SystemExit) as err:
        lodo_seeds.main([*map(str, new), "--variant", "new", "--reference", "old", "--reference-from",
                         str(old[0]), str(old[0])])
    assert err.value.code == 2 and "given twice" in capsys.readouterr().err
    (old[1] / "coding" / "per_query.jsonl").unlink()
    with pytest.raises(SystemExit, match="not found: .* did not leave out coding"):
        lodo_seeds.load(new, "new", "old", old)


def test_scoped_memory_fed_the_lives_event_by_event_is_told_the_designs_ranks(lives, recent_net):  # noqa: F811
    """The live path whole: each life's events added to a ScopedMemory one by one (their steps, labels and task
    keys, as an agent's log is added), each decision point's search told, before its event is written, the
    design's ranks of its task's earlier uses."""
    from test_agreement import DEPTH, retriever

    from sam_model.data.schema import parse_event
    from sam_model.memory import ScopedMemory

    episodes, _, want = lives
    memory, told, expect = ScopedMemory(retriever(recent_net), k=DEPTH), [], []
    for ep in episodes[:4]:
        for d in ep:
            e = parse_event(d, "test")
            if e.is_decision_point:
                # told its task start: a decision point that opens a task (its event not added yet) is of a task
                # the memory has not seen begin, and searched by default in the current one (the earlier task's)
                start = min(x["step"] for x in ep if x["meta"] == d["meta"])
                used = memory.used(memory.query_input(e.text, e.state, user_id=e.episode_id, task_start=start)[1])
                told.append({int(i.rpartition("#")[2]): 1.0 / k for i, k in used.items()})
                expect.append(want[(e.episode_id, e.step)])
                memory.search(e.text, e.state, user_id=e.episode_id, task_start=start)  # taken, not refused
            memory.add(d, user_id=e.episode_id)
    assert told == expect
