"""Chunked memories: windows that cover a long memory with overlap, chunks that know their event and offsets,
a no-op for short memories (same ids, vectors and rankings), store hits at chunk level folded per memory, and
an evaluation that counts an event found when one of its chunks is and says which chunk."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_evaluate import HashedBowRetriever

from sam_model.data.chunks import Chunking, body_of, chunk_record, chunk_records, fold_positions, label_chunks
from sam_model.data.examples import MemoryRecord
from sam_model.evaluation.data import chunk_eval_data, load_eval_data
from sam_model.evaluation.run import evaluate
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig

LINES = [f"    {i:4d}  def method_{i}(self, arg_{i}):  # file src/pkg/module_{i}.py" for i in range(60)]
LONG = "view_file: " + "\n".join(LINES)


def record(text: str, step: int = 0, ep: str = "e", kind: str = "result", phase: str = "view_file") -> MemoryRecord:
    return MemoryRecord(MemoryRecord.make_id(ep, step), ep, step, kind, phase, f"[{kind}] sets path: {text}",
                        f"[{kind}] {text}", sets=("path",))


def test_windows_are_blocks_of_whole_lines_that_cover_the_text():
    c = Chunking(180, 50)
    spans = c.spans(LONG)
    assert spans[0][0] == 0 and spans[-1][1] == len(LONG) and len(spans) > 10
    for (s0, e0), (s1, _) in zip(spans, spans[1:]):
        assert e0 - s0 <= 180 and s0 < s1 <= e0  # contiguous or overlapping, always moving on
        assert LONG[e0 - 1] == "\n" and LONG[s1 - 1] == "\n"  # whole lines
    for line in LINES:  # every line is whole in some window: a value on one line is never only cut apart
        assert any(line in LONG[s:e] for s, e in spans)
    short = "\n".join(f"f{i}.py" for i in range(80))  # short lines: the last ones are repeated
    assert all(s1 < e0 for (_, e0), (s1, _) in zip(c.spans(short), c.spans(short)[1:]))
    assert c.spans("short text") == [(0, 10)]


def test_a_line_longer_than_the_window_is_cut_into_overlapping_windows():
    text = " ".join(f"word{i}" for i in range(200))
    spans = Chunking(100, 30).spans(text)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (s0, e0), (s1, _) in zip(spans, spans[1:]):
        assert e0 - s0 <= 100 and s0 < s1 < e0 and e0 - s1 <= 30


def test_no_window_lies_inside_another_and_every_character_is_covered():
    """Short lines before a line longer than the window: the overlap backed the next block up to lines that could
    not reach past the block before, so it lay inside it ("ab\\n" * 3 + "x" * 200 gave (0, 9), (3, 9), (6, 9), ...;
    6.7 % of the coding-agent chunks; found by review)."""
    rng = np.random.default_rng(0)
    texts = ["ab\n" * 3 + "x" * 200, "ab\n" * 3 + " ".join(["word"] * 80) + "\nend"]
    for _ in range(300):
        texts.append("\n".join("y" * int(rng.choice([0, 2, 20, 60, 150, 400])) for _ in range(rng.integers(1, 30))))
    for size, overlap in ((180, 50), (60, 30), (40, 0)):
        c = Chunking(size, overlap)
        for text in texts:
            spans = c.spans(text)
            assert spans[0][0] == 0 and spans[-1][1] == len(text) and all(e - s <= max(size, 0) for s, e in spans)
            for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
                assert s0 < s1 <= e0 < e1, (text[:30], spans)  # each reaches past the one before, no gap
    assert Chunking(180, 50).spans(texts[0])[:2] == [(0, 9), (9, 189)]


def test_bad_chunking_settings_are_refused_with_the_field():
    with pytest.raises(ValueError, match="size"):
        Chunking(5)
    with pytest.raises(ValueError, match="overlap"):
        Chunking(100, 80)
    for bad in ({"size": 180, "overlap": True}, {"size": 180, "overlap": False}):  # `overlap: yes` was 1 character
        with pytest.raises(ValueError, match=r"store.chunking: chunking overlap must be an integer .* got (True|False)"):
            StoreConfig.from_dict({"chunking": bad}, "store")
    with pytest.raises(ValueError, match="chunking: expected true, null or an object with 'size'"):
        StoreConfig(chunking={"size": 100, "width": 3})
    with pytest.raises(ValueError, match=r"'store': field 'store.chunking'|store.chunking"):
        StoreConfig.from_dict({"chunking": {"size": 3}}, "store")


def test_a_long_memory_becomes_chunks_that_know_their_event_and_offsets():
    rec = record(LONG, step=4)
    chunks = chunk_record(rec, Chunking(180, 50))
    assert len(chunks) > 10
    for j, ch in enumerate(chunks):
        s, e = ch.span
        assert (ch.id, ch.parent, ch.chunk, ch.step, ch.kind, ch.sets) == (f"e#4/{j}", "e#4", j, 4, "result", ("path",))
        assert body_of(ch).endswith(LONG[s:e]) and ch.text.startswith("[result] sets path: ")
        assert j == 0 or ch.text.startswith("[result] sets path: view_file: ...")  # the tool, for later chunks
    assert chunk_record(chunks[3], Chunking()) == [chunks[3]]  # a chunk is not split again


def test_chunking_is_a_no_op_for_short_memories():
    recs = [record(f"short memory {i}", i) for i in range(5)]
    assert chunk_records(recs, Chunking()) == recs
    assert all(a is b for a, b in zip(chunk_records(recs, Chunking()), recs))


def test_the_label_of_a_value_is_the_chunk_that_says_it():
    chunks = chunk_record(record(LONG), Chunking(180, 50))
    got = label_chunks(chunks, ["src/pkg/module_41.py"])
    assert got and all("module_41.py" in chunks[i].text for i in got)
    assert label_chunks(chunks, ["nowhere_said"]) == list(range(len(chunks)))


def test_fold_keeps_the_best_chunk_per_event():
    events, best = fold_positions([5, 4, 1, 6, 0, 2], [0, 0, 0, 1, 1, 2, 2], 2)
    assert events == [2, 1] and best == [5, 4]


def _unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_store_with_chunking_on_short_memories_is_the_store_without():
    recs = [record(f"short memory {i}", i) for i in range(8)]
    x = _unit_rows(8, 16, 0)
    q = _unit_rows(1, 16, 1)[0]
    off, on = (MemoryStore(None, StoreConfig(provenance=False, chunking=c), 16) for c in (None, {"size": 180}))
    assert off.add(recs, x) == on.add(recs, x)
    a, b = off.search_vector(q, 8), on.search_vector(q, 8, fold=True)
    assert [(h.id, h.score, h.parent_id) for h in a] == [(h.id, h.score, h.parent_id) for h in b]
    np.testing.assert_array_equal(off.index.get_vectors(off.ids()), on.index.get_vectors(on.ids()))


class WordEncoder:
    """A store encoder that reads every word (so which chunk says the value decides)."""

    dim = 256
    content_only = False

    def __init__(self):
        self.bow = HashedBowRetriever(self.dim)

    def encode_memories(self, recs, batch_size=64, progress=False):
        return self.bow.encode_memories(recs)

    def encode_queries(self, states, observations, batch_size=64, progress=False, steps=None, task_starts=None):
        return self.bow._vectors(list(observations))


def test_store_hits_are_chunks_folded_per_memory_and_survive_save_and_delete(tmp_path):
    store = MemoryStore(WordEncoder(), StoreConfig(provenance=False, chunking={"size": 180, "overlap": 50}))
    ids = store.add([record(LONG, 0), record("method_7 is short here", 1)])
    assert len(ids) > 10 and ids[-1] == "e#1"
    chunk_hits = store.search({"phase": "view_file"}, "src/pkg/module_41.py method_41 arg_41", k=5)
    assert chunk_hits[0].parent_id == "e#0" and "module_41.py" in chunk_hits[0].text
    s, e = chunk_hits[0].span
    assert "module_41.py" in LONG[s:e] and chunk_hits[0].memory_id == "e#0"
    folded = store.search({"phase": "view_file"}, "src/pkg/module_41.py method_41 arg_41", k=2, fold=True)
    assert [h.memory_id for h in folded] == ["e#0", "e#1"] and folded[0].id == chunk_hits[0].id
    back = MemoryStore.load(store.save(tmp_path / "s"), WordEncoder())
    again = back.search({"phase": "view_file"}, "src/pkg/module_41.py method_41 arg_41", k=2, fold=True)
    assert [(h.id, h.span, h.chunk) for h in again] == [(h.id, h.span, h.chunk) for h in folded]
    back.delete(["e#0"])  # the memory's id removes all of its chunks
    assert back.ids() == ["e#1"]


def _long_log(path) -> None:
    """Episodes whose decision needs a value said on one line deep inside a long file view."""
    with open(path, "w", encoding="utf-8") as fh:
        for ep in range(4):
            target = 40 + ep
            events = [("user", "fix the bug in the module loader"), ("result", LONG),
                      ("system", "I will look at the method now"), ("result", "edit_file: ok"),
                      ("system", f"open src/pkg/module_{target}.py there")]
            for step, (kind, text) in enumerate(events):
                ev = {"episode_id": f"ep{ep}", "step": step, "kind": kind, "text": text,
                      "state": {"phase": "view_file", "uncertainty_flags": ["path"] if step == 4 else []}}
                if step == 4:
                    ev["useful_memory_steps"] = [1]
                    ev["meta"] = {"needed": {"path": [f"src/pkg/module_{target}.py"]}}
                fh.write(json.dumps(ev) + "\n")


def test_evaluation_finds_an_event_by_its_chunk_and_says_which(tmp_path):
    log = tmp_path / "long.jsonl"
    _long_log(log)
    chunking = Chunking(180, 50)
    report = evaluate(log, tmp_path / "on", HashedBowRetriever(dim=4096), baselines=("recency", "bm25"),
                      latency_queries=2, tsne_points=10, quiet=True, chunking=chunking)
    assert report["chunking"]["events"] == 20 and report["chunking"]["chunks"] > 40
    assert report["methods"]["sam"]["mrr"] == report["methods"]["bm25"]["mrr"] == 1.0  # found through a chunk
    rows = [json.loads(line) for line in (tmp_path / "on" / "per_query.jsonl").read_text().splitlines()]
    chunks = {(c.parent, c.chunk): c for c in chunk_eval_data(load_eval_data(log, "episode"), chunking).search.memories}
    for row, ep in zip(rows, range(4)):
        bm25 = row["methods"]["bm25"]  # exact words: the chunk that says the value must rank its event first
        assert bm25["top"][0] == f"ep{ep}#1"
        assert f"src/pkg/module_{40 + ep}.py" in chunks[(f"ep{ep}#1", bm25["top_chunks"][0])].text
    assert report["methods"]["bm25"]["grounding@5"] == 1.0


def test_evaluation_with_chunking_on_short_memories_is_the_same(tmp_path):
    from test_evaluate import _fixture_log

    log = tmp_path / "short.jsonl.gz"
    _fixture_log(log)
    kw = dict(baselines=("recency", "bm25", "bm25-state"), latency_queries=2, tsne_points=10, quiet=True)
    off = evaluate(log, tmp_path / "off", HashedBowRetriever(), **kw)
    on = evaluate(log, tmp_path / "on", HashedBowRetriever(), chunking=Chunking(), **kw)
    assert on["chunking"]["chunks"] == on["chunking"]["events"] == off["n_memories"]
    for name, m in off["methods"].items():
        assert {k: v for k, v in m.items() if "latency" not in k} == \
            {k: v for k, v in on["methods"][name].items() if "latency" not in k}
    top = [{n: r["top"] for n, r in json.loads(line)["methods"].items()}
           for line in (tmp_path / "off" / "per_query.jsonl").read_text().splitlines()]
    assert top == [{n: r["top"] for n, r in json.loads(line)["methods"].items()}
                   for line in (tmp_path / "on" / "per_query.jsonl").read_text().splitlines()]


def test_a_model_exported_with_chunking_is_evaluated_on_whole_memories_without_chunking(tmp_path):
    """store.chunking of an export (configs/coding_chunks.yaml) must not re-chunk an evaluation's whole memories
    (it raised: vectors for the events, chunks in the store): ``--chunking`` alone decides what is searched."""
    from types import SimpleNamespace

    log = tmp_path / "long.jsonl"
    _long_log(log)
    bow = HashedBowRetriever(dim=4096)
    chunked_export = SimpleNamespace(encoder=bow, store=MemoryStore(bow, StoreConfig(
        provenance=False, chunking={"size": 180, "overlap": 50}), 4096))
    kw = dict(baselines=(), latency_queries=2, tsne_points=10, quiet=True)
    for name, chunking in (("off", None), ("on", Chunking(180, 50))):
        got = evaluate(log, tmp_path / f"export-{name}", chunked_export, chunking=chunking, **kw)
        plain = evaluate(log, tmp_path / f"plain-{name}", bow, chunking=chunking, **kw)
        assert got["methods"]["sam"]["mrr"] == plain["methods"]["sam"]["mrr"]
        assert ("chunking" in got) == (chunking is not None)
        # report.md says what was searched: it read the same chunked or not, and whole memories of a chunking
        # export without a word
        md = (tmp_path / f"export-{name}" / "report.md").read_text()
        assert ("chunked (chunks of 180 characters, overlap 50): " in md) == (chunking is not None)
        assert ("whole memories: the retriever's store searches chunks of 180 characters" in md) == (chunking is None)
        assert "whole memories: the retriever's store" not in (tmp_path / f"plain-{name}" / "report.md").read_text()


def test_training_batches_hold_chunks_and_the_chunk_that_says_the_value_is_the_positive(tmp_path):
    import torch

    from sam_model.data.examples import episode_row
    from sam_model.data.reader import read_episodes
    from sam_model.training.batching import candidate_masks, collate_episodes

    log = tmp_path / "long.jsonl"
    _long_log(log)
    rows = [(i, episode_row(ep)) for i, ep in enumerate(read_episodes(log))]
    plain, chunked = collate_episodes(rows), collate_episodes(rows, Chunking(180, 50))
    assert len(chunked["q_step"]) == len(plain["q_step"]) == 4 and "mem_label" not in plain
    assert len(chunked["mem_texts"]) > 4 * len(plain["mem_texts"])
    allowed, positive = candidate_masks(chunked["q_episode"], chunked["q_step"], chunked["q_labels"],
                                        chunked["mem_episode"], chunked["mem_step"], True, chunked["mem_label"])
    for q in range(4):
        pos = torch.nonzero(positive[q]).flatten().tolist()
        assert pos and all(f"src/pkg/module_{40 + q}.py" in chunked["mem_texts"][j] for j in pos)
        same_event = (chunked["mem_episode"] == q) & (chunked["mem_step"] == 1)
        assert bool(allowed[q][same_event & ~positive[q]].all())  # the event's other chunks: candidates


def test_updating_a_chunked_memory_replaces_its_chunks_in_its_scopes():
    store = MemoryStore(WordEncoder(), StoreConfig(provenance=False, chunking={"size": 180, "overlap": 50}))
    store.add([record(LONG, 0)], user_id="ana")
    before = store.ids()
    revised = record(LONG.replace("module_41.py", "module_41_fixed.py"), 0)
    store.update(revised)
    assert len(store.ids()) == len(before) and all(i.startswith("e#0/") for i in store.ids())
    hits = store.search({"phase": "view_file"}, "src/pkg/module_41_fixed.py", k=1, user_id="ana", fold=True)
    assert hits[0].memory_id == "e#0" and "module_41_fixed.py" in hits[0].text
    assert store.search({"phase": "view_file"}, "src/pkg/module_41_fixed.py", k=1, user_id="bo") == []


def test_a_memory_id_names_one_memory_whole_or_chunked_and_an_update_never_loses_it():
    """Found by review: a whole memory added under a chunked memory's id (or chunks under a whole one's) was
    stored beside it, so a delete by the id left one of them, a read joined the other's words and a fold merged
    two scopes' memories; and an update whose new chunks took the id of another's memory deleted the old version,
    then had its add refused: the memory was gone."""
    store = MemoryStore(WordEncoder(), StoreConfig(provenance=False, chunking={"size": 180, "overlap": 50}))
    store.add([record(LONG[:500], 0)], user_id="ana")
    ana = store.ids()
    assert len(ana) == 4 and all(i.startswith("e#0/") for i in ana)
    whole = MemoryRecord("e#0", "x", 0, "user", "", "bob's own", "[user] bob's own")
    with pytest.raises(ValueError, match="memory id 'e#0' is already in the store"):
        store.add([whole], user_id="bob")  # a whole memory named as ana's chunked one
    store.add([MemoryRecord("b#0", "x", 0, "user", "", "bob's", "[user] bob's")], user_id="bob")
    with pytest.raises(ValueError, match="memory id 'b#0' is already in the store"):
        store.add([record(LONG, 0, ep="b")], user_id="ana")  # chunks of a memory named as bob's whole one
    with pytest.raises(ValueError, match="memory id 'c#0' is already in the store"):
        store.add([record(LONG, 0, ep="c"), record("short", 0, ep="c")], user_id="ana")  # both in one batch
    store.add([MemoryRecord("e#0/5", "x", 0, "user", "", "bob's note", "[user] bob's note")], user_id="bob")
    with pytest.raises(ValueError, match="memory id 'e#0/5' is already in the store"):
        store.update(record(LONG, 0))  # its new chunks e#0/0 ... e#0/5 ...: refused before the old version goes
    assert store.ids() == ana + ["b#0", "e#0/5"] and store.memory("e#0").content == f"[result] {LONG[:500]}"
    store.update(record(LONG[:600], 0))  # its own chunk ids are its to replace
    assert store.memory("e#0").content == f"[result] {LONG[:600]}" and store.get("e#0/5").user_id == "bob"
    store.delete(["e#0"])
    assert store.ids() == ["b#0", "e#0/5"]


def test_the_chunk_table_pairs_the_two_runs_decision_by_decision(tmp_path):
    from sam_model.bench.chunk_table import against, table

    for name, rr in (("off", [0.5, 1.0, 0.25]), ("on", [1.0, 1.0, 0.5])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "per_query.jsonl").write_text("".join(
            json.dumps({"episode_id": f"e{i}", "step": i, "methods": {"sam": {"rr": r, "recall@5": 1.0}}}) + "\n"
            for i, r in enumerate(rr)))
    row = [line for line in table(tmp_path / "off", tmp_path / "on").splitlines() if line.startswith("| sam")][0]
    assert "| 0.583 [" in row and "| 0.833 [" in row and "| +0.250 [" in row and "+0.000 [+0.000, +0.000]" in row
    (tmp_path / "off" / "per_query.jsonl").write_text("".join(
        json.dumps({"episode_id": f"e{i}", "step": i, "methods": {"sam": {"rr": r, "recall@5": 1.0},
                                                              "ref": {"rr": 0.5, "recall@5": 0.0}}}) + "\n"
        for i, r in enumerate([0.5, 1.0, 0.25])))
    row = [line for line in against(tmp_path / "off", tmp_path / "on", "ref").splitlines()
           if line.startswith("| sam")][0]
    cells = [c.strip() for c in row.split("|")[2:-1]]  # MRR: whole, chunked, chunked − ref whole; then Recall@5
    assert cells[0].startswith("+0.083 [") and cells[1] == "—" and cells[2].startswith("+0.333 [")
    assert cells[3] == "+1.000 [+1.000, +1.000]" and cells[5] == "+1.000 [+1.000, +1.000]"
    means = {"both": ["sam", "ref"]}  # per decision (0.5+0.5)/2, (1+0.5)/2, (0.25+0.5)/2
    row = [line for line in table(tmp_path / "off", tmp_path / "on", means).splitlines() if line.startswith("| both")]
    assert row[0].startswith("| both | 0.542 [") and "| — |" in row[0]  # "on" has no ref: no mean there
    # a mean of seeds gets the interval bench.paired gives the same seeds (over seeds and conversations)
    rng = np.random.default_rng(1)
    rows = [{"episode_id": f"e{i // 3}", "step": i, "methods": {
        **{f"a{s}": {"rr": float(rng.random() < 0.3 + 0.2 * s), "recall@5": 1.0} for s in range(3)},
        **{f"b{s}": {"rr": float(rng.random() < 0.4), "recall@5": 1.0} for s in range(3)}}} for i in range(60)]
    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "per_query.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    from sam_model.bench.paired import seeds_table

    means = {"A": ["a0", "a1", "a2"], "B": ["b0", "b1", "b2"]}
    row = [line for line in against(tmp_path / "seeds", tmp_path / "seeds", "B", means).splitlines()
           if line.startswith("| A ")][0]
    paired = [line for line in seeds_table(tmp_path / "seeds", means["A"], means["B"]).splitlines()
              if line.startswith("| MRR")][0]
    assert row.split("|")[2].strip() == paired.split("|")[-2].strip()  # MRR whole − B whole: the same interval
    with pytest.raises(SystemExit, match="--mean x: .* neither ran all of: sam, nope"):
        table(tmp_path / "off", tmp_path / "on", {"x": ["sam", "nope"]})
    with pytest.raises(SystemExit, match="no method 'nope'"):
        against(tmp_path / "off", tmp_path / "on", "nope")
    (tmp_path / "on" / "per_query.jsonl").write_text("")
    with pytest.raises(SystemExit, match="different decision points"):
        table(tmp_path / "off", tmp_path / "on")


def _two_decisions_log(path) -> None:
    """One long file view that two later decisions label, each needing a value said in another chunk of it."""
    with open(path, "w", encoding="utf-8") as fh:
        events = [("user", "fix the bug in the module loader", None), ("result", LONG, None),
                  ("system", "open src/pkg/module_5.py there", "src/pkg/module_5.py"),
                  ("system", "open src/pkg/module_52.py there", "src/pkg/module_52.py")]
        for step, (kind, text, need) in enumerate(events):
            ev = {"episode_id": "ep0", "step": step, "kind": kind, "text": text,
                  "state": {"phase": "view_file", "uncertainty_flags": ["path"] if need else []}}
            if need:
                ev["useful_memory_steps"] = [1]
                ev["meta"] = {"needed": {"path": [need]}}
            fh.write(json.dumps(ev) + "\n")


def _chunked_batch(log, chunking=Chunking(180, 50)):
    from sam_model.data.examples import episode_row
    from sam_model.data.reader import read_episodes
    from sam_model.training.batching import collate_episodes

    return collate_episodes([(i, episode_row(ep)) for i, ep in enumerate(read_episodes(log))], chunking)


def test_the_positives_of_a_decision_are_the_chunks_that_say_its_own_values(tmp_path):
    """Two decisions labelling one long event: each decision's positives were the chunks saying *either*
    decision's value (the needed values were pooled per event), so a chunk that says module_52 was a positive of
    the decision that needed module_5 (31 % of such pairs in the AutoCodeRover train split; found by review)."""
    from sam_model.training.batching import candidate_masks

    _two_decisions_log(tmp_path / "log.jsonl")
    b = _chunked_batch(tmp_path / "log.jsonl")
    _, positive = candidate_masks(b["q_episode"], b["q_step"], b["q_labels"], b["mem_episode"], b["mem_step"], True,
                                  b["mem_label"])
    for q, (want, other) in enumerate((("module_5.py", "module_52.py"), ("module_52.py", "module_5.py"))):
        pos = torch.nonzero(positive[q]).flatten().tolist()
        assert pos and all(want in b["mem_texts"][j] for j in pos), (q, pos)
        assert not any(other in b["mem_texts"][j] and want not in b["mem_texts"][j] for j in pos)
        said = [j for j, t in enumerate(b["mem_texts"]) if want in t and int(b["mem_step"][j]) == 1]
        assert pos == said  # every chunk that says it, and no other
    assert b["mem_label"].shape == (2, len(b["mem_texts"]))  # per decision


def _chunked_ddp_worker(rank: int, world: int, init_file: str, log: str, out: dict) -> None:
    import torch.distributed as dist
    from test_model import make_net

    from sam_model.data.examples import episode_row
    from sam_model.data.reader import read_episodes
    from sam_model.models.losses import MultiPositiveInfoNCE
    from sam_model.training.batching import collate_episodes
    from sam_model.training.objective import batch_loss

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    rows = [(i, episode_row(ep)) for i, ep in enumerate(read_episodes(log))]
    net = make_net(trainable_layers=-1, cache_text=False).train(False)
    loss = batch_loss(net, MultiPositiveInfoNCE(0.1), collate_episodes(rows[rank::world], Chunking(180, 50)),
                      world_size=world)
    total = loss.detach().clone()
    dist.all_reduce(total)
    out[rank] = total.item() / world
    dist.destroy_process_group()


def test_chunk_labels_of_two_processes_give_the_single_process_loss(tmp_path):
    """Each process's chunk labels are for its own memories: among the memories gathered from every process they
    must sit at that process's columns (the other's are never its queries' positives)."""
    import os

    import torch.multiprocessing as mp
    from test_model import make_net

    from sam_model.models.losses import MultiPositiveInfoNCE
    from sam_model.training.objective import batch_loss

    log = tmp_path / "long.jsonl"
    _long_log(log)  # episodes 0 and 2 on one process, 1 and 3 on the other
    net = make_net(trainable_layers=-1, cache_text=False).train(False)
    one = batch_loss(net, MultiPositiveInfoNCE(0.1), _chunked_batch(log))
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with mp.Manager() as manager:
        out = manager.dict()
        mp.spawn(_chunked_ddp_worker, args=(2, str(tmp_path / "init"), str(log), out), nprocs=2, join=True)
        got = dict(out)
    assert got[0] == pytest.approx(one.item(), rel=1e-5)


def test_a_chunk_result_gives_the_memorys_own_words_at_its_span():
    """A later chunk's words began with the tool name the encoder reads before its window (``start: ...line 6``,
    from a user's own message), so a result's ``memory`` was no text the memory said and ``text[start:end]`` of
    the memory did not give it (found by review)."""
    from sam_model.memory.encoders import HashingEncoder
    from sam_model.memory.scoped import ScopedMemory

    memory = ScopedMemory(HashingEncoder(64), StoreConfig(chunking={"size": 180, "overlap": 50}))
    long = "".join(f"line {i} of a long tool output about order {55123 + i}\r\n" for i in range(10))
    memory.add([{"role": "user", "content": long}], user_id="mia")
    memory.add([{"role": "tool", "name": "search", "content": "é😀 " + long}], user_id="mia")
    results = memory.search("order 55130", user_id="mia", limit=5)["results"]
    assert len(results) == 2 and all("chunk" in r for r in results)
    assert any(r["chunk"]["index"] > 0 for r in results)  # a later chunk: the one that had the tool name before it
    for r in results:
        start, end = r["chunk"]["span"]
        assert memory.get(r["id"])["memory"][start:end] == r["memory"]


def test_training_with_chunking_on_short_memories_is_training_without(tmp_path):
    from test_evaluate import _fixture_log

    from sam_model.training.batching import candidate_masks

    _fixture_log(tmp_path / "short.jsonl.gz")
    plain, on = _chunked_batch(tmp_path / "short.jsonl.gz", None), _chunked_batch(tmp_path / "short.jsonl.gz")
    assert set(on) - set(plain) == {"mem_label"} and len(plain["q_step"]) > 5
    for k, v in plain.items():
        assert torch.equal(v, on[k]) if isinstance(v, torch.Tensor) else v == on[k], k
    args = [plain[k] for k in ("q_episode", "q_step", "q_labels", "mem_episode", "mem_step")]
    for a, b in zip(candidate_masks(*args, True), candidate_masks(*args, True, on["mem_label"])):
        assert torch.equal(a, b)


def test_a_chunk_says_the_words_of_its_window_not_the_tool_name_before_it():
    """Later chunks read ``view_file: ...`` before their window (for the encoder); labels read it too, so a value
    equal to the tool's name was said by every chunk, not by the one whose window says it (found by review)."""
    chunks = chunk_record(record(LONG), Chunking(180, 50))
    assert chunks[1].content.startswith("[result] view_file: ...") and LONG.startswith("view_file: ")
    assert label_chunks(chunks, ["view_file"]) == [0]
    assert label_chunks(chunks, ["view_file", "src/pkg/module_41.py"]) == [0] + label_chunks(chunks, ["module_41.py"])


def test_a_damaged_chunk_span_or_parent_in_a_saved_store_is_refused_naming_the_field(tmp_path):
    """A span out of order or longer than the chunk's words loaded, and the memory read back other words; a parent
    that is a list failed with "unhashable type" (found by review)."""
    import shutil

    from sam_model.io import SAMFileError

    store = MemoryStore(WordEncoder(), StoreConfig(provenance=False, chunking={"size": 180, "overlap": 50}))
    store.add([record(LONG[:500], 0), record("short", 1)])
    saved = store.save(tmp_path / "s")
    assert MemoryStore.load(saved, WordEncoder()).memory("e#0").content == f"[result] {LONG[:500]}"
    cases = [(1, "span", [9, 2]), (1, "span", [0, 100_000]), (1, "span", [-5, 3]), (1, "span", None),
             (1, "parent", ["e#0"]), (1, "parent", None), (-1, "span", [0, 5])]
    for n, (entry, field, value) in enumerate(cases):
        bad = shutil.copytree(saved, tmp_path / f"bad{n}")
        d = json.loads((bad / "store.json").read_text())
        d["entries"][entry][field] = value
        (bad / "store.json").write_text(json.dumps(d))
        (bad / "store.json.sha256").unlink()  # edited on purpose: the fields are checked still
        with pytest.raises(SAMFileError, match=r"store.json: .*memory '(e#0/1|e#1)': field '(span|parent)' must be"):
            MemoryStore.load(bad, WordEncoder())


def test_a_chunk_added_with_a_span_that_cannot_be_its_words_is_refused():
    """The same rules at add: a record with a parent and no span stored fine and then ``memory`` failed on it (and
    a save of it no longer loaded); a span longer than its words stored and read back other words."""
    store = MemoryStore(WordEncoder(), StoreConfig(provenance=False))
    for n, (parent, span) in enumerate([("x", None), ("x", (0, 99)), ("x", (5, 2)), (None, (0, 2)), (["x"], (0, 2))]):
        rec = MemoryRecord(f"x/{n}", "e", 0, "user", "", "[user] hi", "[user] hi", parent=parent, chunk=0, span=span)
        with pytest.raises(ValueError, match=r"memories\[0\]\.(span|parent) must be"):
            store.add([rec])
    assert store.ids() == []
    good = chunk_record(record(LONG[:500]), Chunking(180, 50))
    store.add(good)  # chunks made by chunk_records pass
    assert store.memory("e#0").content == f"[result] {LONG[:500]}"


def test_the_frozen_pass_reads_the_chunk_texts_the_batches_hold(tmp_path):
    """With data.chunking the batches hold chunks, but the frozen pass (DataModule.texts) listed the whole memory
    texts: no chunk was in the text cache, so the first epoch ran BERT on every chunk in its steps (20 s a batch of
    the coding mixture on 2 cores, against ~1 s cached). Every text a batch holds is now listed, with or without
    chunking, content-only too."""
    from sam_model.training.datamodule import AgentLogDataModule

    log = tmp_path / "long.jsonl"
    _long_log(log)
    from sam_model.models.bert import default_bert_path, load_tokenizer
    from sam_model.models.text_encoder import TokenCount

    for chunking, content_only in ((None, False), ({"size": 180, "overlap": 50}, False),
                                   ({"size": 180, "overlap": 50}, True), ({"tokens": 64, "overlap": 50}, False)):
        dm = AgentLogDataModule(train=[str(log)], val_fraction=0.25, batch_episodes=8, chunking=chunking,
                                cache_dir=str(tmp_path / "cache"))
        if "tokens" in (chunking or {}):  # as SAMLightningModule.setup gives it
            dm.count_tokens = TokenCount(load_tokenizer(default_bert_path()), 64)
        dm.setup("fit")
        listed = set(dm.texts(content_only))
        for loader in (dm.train_dataloader(), dm.val_dataloader()):
            for batch in loader:
                held = batch["mem_contents"] if content_only else batch["mem_texts"]
                assert set(held) <= listed
                assert content_only or set(batch["q_state_texts"]) <= listed
        if chunking is not None:
            assert len(listed) > 10
