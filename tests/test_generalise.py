"""Issue 21's generalisation pieces: generated tool worlds, phase dropout, the dense-state fusion, and the
leave-one-domain-out benchmark's bookkeeping."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
from test_model import make_net, toy_rows

from sam_model.data import toolworlds
from sam_model.data.schema import State
from sam_model.data.text import drop_known, state_to_text
from sam_model.data.transcripts import iter_transcript_events
from sam_model.models.vocab import UNK
from sam_model.training.batching import collate_episodes, drop_phases, encode_batch


def test_tool_worlds_are_seeded_and_labelled_by_the_transcript_rule(tmp_path):
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    toolworlds.write(a, 45, seed=3)
    toolworlds.write(b, 45, seed=3)
    assert gzip.open(a).read() == gzip.open(b).read()
    assert gzip.open(a).read() != gzip.open(toolworlds.write(tmp_path / "c.jsonl.gz", 45, seed=4)).read()
    events = list(iter_transcript_events(a))
    kind_at = {(e["episode_id"], e["step"]): e["kind"] for e in events}
    origins = Counter(kind_at[(e["episode_id"], s)] for e in events for s in e.get("useful_memory_steps") or [])
    # values first said by the user, by a tool and by the agent itself: provenance, not one domain's habit
    assert origins["user"] > 10 and origins["result"] > 10 and origins["system"] > 3, origins
    tools = {e["state"]["phase"] for e in events if e.get("useful_memory_steps")}
    assert len(tools) > 20  # every world names its own tools
    groups = {json.loads(line)["group"] for line in gzip.open(a, "rt")}
    assert len(groups) == 45 // toolworlds.CONVERSATIONS_PER_WORLD


def _origin_shares(path) -> Counter:
    events = list(iter_transcript_events(path))
    kind_at = {(e["episode_id"], e["step"]): e["kind"] for e in events}
    origins = Counter(kind_at[(e["episode_id"], s)] for e in events for s in e.get("useful_memory_steps") or [])
    total = sum(origins.values())
    return Counter({k: v / total for k, v in origins.items()})


def test_user_first_moves_the_origin_mix_towards_the_user_and_zero_changes_nothing(tmp_path):
    plain = toolworlds.write(tmp_path / "plain.jsonl.gz", 60, seed=2)
    zero = toolworlds.write(tmp_path / "zero.jsonl.gz", 60, seed=2, user_first=0.0)
    half = toolworlds.write(tmp_path / "half.jsonl.gz", 60, seed=2, user_first=0.5)
    assert gzip.open(plain).read() == gzip.open(zero).read()  # the shipped model's worlds stay as they were
    before, after = _origin_shares(plain), _origin_shares(half)
    assert after["user"] > before["user"] + 0.05 and after["result"] < before["result"] - 0.05, (before, after)


def test_a_tool_worlds_source_is_generated_once_into_the_cache(tmp_path):
    from sam_model.data.sources import SourceOptions, materialise, source_kind

    assert source_kind("toolworlds:12:1") == "transcripts"
    log = materialise("toolworlds:12:1", SourceOptions(), tmp_path)
    assert (tmp_path / "toolworlds-n12-s1.jsonl.gz").exists() and log.stat().st_size > 0
    assert materialise("toolworlds:12:1", SourceOptions(), tmp_path) == log
    assert materialise("toolworlds:12:1:0.5", SourceOptions(), tmp_path) != log  # another mix, another file
    assert (tmp_path / "toolworlds-n12-s1-u0.5.jsonl.gz").exists()
    with pytest.raises(ValueError, match="USER_FIRST"):
        materialise("toolworlds:12:1:1.5", SourceOptions(), tmp_path)
    with pytest.raises(ValueError, match="toolworlds:N, toolworlds:N:SEED, toolworlds:N:SEED:USER_FIRST or"):
        materialise("toolworlds:many", SourceOptions(), tmp_path)
    free = materialise("toolworlds:12:1:0:free", SourceOptions(), tmp_path)
    assert (tmp_path / "toolworlds-n12-s1-free.jsonl.gz").exists() and free != log
    for bad in ("toolworlds:12:1:0.5:free", "toolworlds:12:1:0:wild", "toolworlds:12:1:0:free:x"):
        with pytest.raises(ValueError, match="toolworlds:N:SEED:0:free"):
            materialise(bad, SourceOptions(), tmp_path)


def test_free_plots_vary_the_plot_the_origins_and_restate_values(tmp_path):
    from sam_model.data.text import norm

    a = toolworlds.write(tmp_path / "a.jsonl.gz", 60, seed=5, plots="free")
    assert gzip.open(a).read() == gzip.open(toolworlds.write(tmp_path / "b.jsonl.gz", 60, seed=5, plots="free")).read()
    fixed = toolworlds.write(tmp_path / "fixed.jsonl.gz", 60, seed=5)
    assert gzip.open(a).read() != gzip.open(fixed).read()
    events = list(iter_transcript_events(a))
    by_step = {(e["episode_id"], e["step"]): e for e in events}
    shares = _origin_shares(a)
    assert min(shares["user"], shares["result"]) > 0.2 and shares["action"] + shares["system"] > 0.1, shares
    decisions = [e for e in events if e.get("useful_memory_steps")]
    per_episode = Counter(e["episode_id"] for e in decisions)
    assert max(per_episode.values()) >= 4 > min(per_episode.values())  # 1-3 tasks: conversations differ in length
    # the free plot's own tools (search, compute, code search, file view) are called, not only look-up/change
    calls = [e["text"] for e in events if e["kind"] == "action"]
    assert any("expression=" in c for c in calls) and any("path=" in c for c in calls)
    # restatements: some label is said again by a later event before its decision (origin vs later mention)
    restated = 0
    for d in decisions:
        for s in d["useful_memory_steps"]:
            words = {w for w in norm(by_step[(d["episode_id"], s)]["text"]).split() if len(w) > 5}
            later = [by_step[(d["episode_id"], t)]["text"] for t in range(s + 1, d["step"])]
            restated += any(w in norm(t) for w in words for t in later)
    assert restated > len(decisions) // 4
    with pytest.raises(ValueError, match="user_first 0"):
        list(toolworlds.generate(3, plots="free", user_first=0.5))


# sha256 of toolworlds.generate(60, 5, plots="free") as JSON lines, before the briefed conversations were added:
# brief 0 must keep the worlds the shipped model and every earlier table were trained on byte for byte
FREE_60_5 = "97d425498506d0402c80a3619123d87406cde7ca038de4476f8f8d38c6471bcf"


def _digest(conversations) -> str:
    import hashlib

    h = hashlib.sha256()
    for c in conversations:
        h.update((json.dumps(c) + "\n").encode())
    return h.hexdigest()


def _call_values(message) -> set[str]:
    args = json.loads(message["tool_calls"][0]["function"]["arguments"])
    return {str(v) for v in args.values()}


def test_briefed_conversations_open_with_the_values_later_calls_use_and_zero_changes_nothing(tmp_path):
    from sam_model.bench import lodo
    from sam_model.data.sources import SourceOptions, materialise

    assert _digest(toolworlds.generate(60, 5, plots="free", brief=0.0)) == FREE_60_5
    assert _digest(toolworlds.generate(60, 5, plots="free")) == FREE_60_5
    briefed = list(toolworlds.generate(60, 5, plots="free", brief=1.0))
    for conv in briefed:
        msgs = conv["messages"]
        assert msgs[0]["role"] == "system" and msgs[1]["role"] == "user"  # the opening message is the statement
        opening = msgs[1]["content"]
        calls = [(i, v) for i, m in enumerate(msgs) if m.get("tool_calls") for v in _call_values(m)]
        stated = {v for _, v in calls if v in opening}
        assert len(stated) >= 2, (opening, calls)  # several values, not one id
        # used far from it: some stated value is first called after at least two tool results
        results_before = [sum(m["role"] == "tool" for m in msgs[:i]) for i, v in calls if v in stated]
        assert max(results_before) >= 2
    # not one domain's values: file paths, methods, names, amounts and ids are stated across the set
    kinds = Counter()
    for conv in briefed:
        opening = conv["messages"][1]["content"]
        kinds["path"] += "/" in opening
        kinds["amount"] += "Move " in opening
        kinds["person"] += " for " in opening
    assert min(kinds.values()) > 5, kinds
    # the transcript rule makes the opening message a label far more often than before, and not of every decision
    mixed = toolworlds.write(tmp_path / "b.jsonl.gz", 90, seed=5, plots="free", brief=0.5)
    plain = toolworlds.write(tmp_path / "p.jsonl.gz", 90, seed=5, plots="free")
    shares = []
    for path in (plain, mixed):
        events = list(iter_transcript_events(path))
        first = {}
        for e in events:
            if e["kind"] == "user":
                first.setdefault(e["episode_id"], e["step"])
        decisions = [e for e in events if e.get("useful_memory_steps")]
        shares.append(sum(first.get(d["episode_id"]) in d["useful_memory_steps"] for d in decisions) / len(decisions))
    assert shares[1] > 2 * shares[0] and shares[1] < 0.8, shares
    materialise("toolworlds:12:1:0:free:0.5", SourceOptions(), tmp_path)
    assert (tmp_path / "toolworlds-n12-s1-free-b0.5.jsonl.gz").exists()  # its own file: free's stays as it was
    for bad in ("toolworlds:12:1:0:free:1.5", "toolworlds:12:1:0:fixed:0.5", "toolworlds:12:1:0:free:0.5:1:1"):
        with pytest.raises(ValueError, match="BRIEF"):
            materialise(bad, SourceOptions(), tmp_path)
    assert lodo.train_sources("coding", Path("/d"), lodo.VARIANTS["brief"], 300)[0][-1] == "toolworlds:300:0:0:free:0.5"
    assert lodo.train_sources("coding", Path("/d"), lodo.VARIANTS["plots"], 300)[0][-1] == "toolworlds:300:0:0:free"


def test_phase_dropout_trains_the_unknown_phase():
    assert drop_phases(["a", "b"], 0.0) == ["a", "b"] and drop_phases(["a", "b"], 1.0) == [UNK, UNK]
    batch = collate_episodes(toy_rows(4))
    grads = []
    for share in (0.0, 0.5):
        net = make_net(alpha=1.0, learn_alpha=False)
        torch.manual_seed(0)
        q, m = encode_batch(net, batch, phase_dropout=share)
        (q @ m.T).sum().backward()
        grads.append(net.state_encoder.phase_emb.weight.grad[0].abs().sum().item())
    assert grads[0] == 0.0 < grads[1]  # without dropout the unknown row (where unseen tools map) never learns


@pytest.mark.parametrize("state", [
    State("book", ("find", "book"), {"city": "Paris | Nord", "n": 2}, ("time",), "ok | 3 found"),
    State("book", (), {"date": "May 3"}, (), ""), State("", (), {}, ("id",), "done"), State("x")])
def test_known_value_dropout_is_the_same_state_without_its_constraints(state):
    """What known-value dropout trains on is a state the agent could have logged: no constraints, all else kept
    (a value holding the field separator stays inside its field)."""
    from dataclasses import replace

    assert drop_known(state_to_text(state)) == state_to_text(replace(state, constraints={}))


def test_known_value_dropout_changes_only_the_queries_it_draws():
    batch = collate_episodes(toy_rows(4))
    batch["q_state_texts"] = [t + " | known: city=paris" for t in batch["q_state_texts"]]
    net = make_net(alpha=1.0, learn_alpha=False).eval()
    with torch.no_grad():
        q0, m0 = encode_batch(net, batch)
        q1, m1 = encode_batch(net, batch, known_dropout=1.0)
        stripped = dict(batch, q_state_texts=[drop_known(t) for t in batch["q_state_texts"]])
        q2, _ = encode_batch(net, stripped)
    assert torch.equal(m0, m1) and not torch.allclose(q0, q1) and torch.allclose(q1, q2)


def test_state_fusion_adds_the_untrained_state_similarity_with_a_learned_weight():
    plain, fused = make_net(alpha=0.7, seed=0), make_net(alpha=0.7, seed=0, state_content=True)
    fused.load_state_dict({**plain.state_dict(), "state_content": fused.state_content.detach()})
    args = (["phase: ask_city needs city"], ["ask_city"], ["ok"])
    mems = (["my city is 3", "hi"], ["user", "system"], ["collect", "collect"])
    plain.eval(), fused.eval()
    diff = fused.encode_queries(*args) @ fused.encode_memories(*mems).T - \
        plain.encode_queries(*args) @ plain.encode_memories(*mems).T
    text = fused.state_encoder.text_encoder
    cos = torch.nn.functional.normalize(text(args[0]), dim=-1) @ torch.nn.functional.normalize(text(mems[0]), dim=-1).T
    assert torch.allclose(diff, fused.state_content.detach() * cos, atol=1e-5)
    (fused.encode_queries(*args) @ fused.encode_memories(*mems).T).sum().backward()
    assert fused.state_content.grad is not None and fused.state_content.grad.abs() > 0
    with pytest.raises(ValueError, match="state_content needs query_input 'state'"):
        make_net(query_input="observation", state_content=True)


def test_lodo_leaves_the_domain_out_and_reports_paired_differences(tmp_path):
    from sam_model.bench import lodo

    root = Path("/data")
    sources, repeat = lodo.train_sources("coding", root, lodo.VARIANTS["worlds"], 300)
    assert sources == ["/data/sgd/train", "/data/tau-bench/gpt-4o-airline.json.gz", "toolworlds:300"]
    assert len(repeat) == len(sources)
    assert not any("coding" in s for s in lodo.train_sources("coding", root, lodo.VARIANTS["base"], 300)[0])
    assert lodo.train_sources("sgd", root, lodo.VARIANTS["origins"], 300)[0][-1] == "toolworlds:300:0:0.5"
    assert lodo.train_sources("sgd", root, lodo.VARIANTS["plots"], 300)[0][-1] == "toolworlds:300:0:0:free"
    per_query = tmp_path / "per_query.jsonl"
    per_query.write_text("".join(json.dumps({"episode_id": f"e{i}", "methods": {"m": {"rr": a}, "b": {"rr": b}}})
                                 + "\n" for i, (a, b) in enumerate([(1.0, 0.5), (0.5, 0.5), (1.0, 0.25)])))
    mean, lo, hi = lodo.paired_difference(per_query, "m", "b")
    assert mean == pytest.approx(0.4166, abs=1e-3) and lo <= mean <= hi
    row = {"domain": "coding", "decisions": 3, "label": "x", "mrr": 0.83, "recall@5": 1.0, "best_baseline": "b",
           "best_baseline_mrr": 0.42, "difference": (mean, lo, hi)}
    assert "| coding | 3 | x | 0.830 | 1.000 | b (0.420) | +0.417" in lodo.table([row])
    assert lodo.table([row]).rstrip().endswith("| – |")  # the first row has no row above
    with pytest.raises(SystemExit):
        lodo.main(["--domains", "telecom"])


def test_lodo_chooses_a_domains_lexical_weight_on_the_other_domains_only(tmp_path):
    from sam_model.bench import lodo

    # each domain's own best weight differs from the others' mean best: a leak would pick the domain's own
    grids = {"a": {"0": 0.50, "0.1": 0.40, "0.5": 0.90}, "b": {"0": 0.60, "0.1": 0.70, "0.5": 0.20},
             "c": {"0": 0.60, "0.1": 0.65, "0.5": 0.30}}
    rows = []
    for domain, grid in grids.items():
        (tmp_path / domain).mkdir()
        (tmp_path / domain / "per_query.jsonl").write_text("".join(json.dumps({"episode_id": f"e{i}", "methods": {
            "bm25": {"rr": 0.5}, "fusion": {"rr": 0.6},
            **{lodo.grid_name("lexcv", float(w)): {"rr": m} for w, m in grid.items()}}}) + "\n" for i in range(4)))
        rows += [{"domain": domain, "variant": "fusion", "mrr": 0.6},
                 {"domain": domain, "variant": "lexcv", "best_baseline": "bm25", "above": "fusion",
                  "grid": {w: {"mrr": m, "recall@5": m} for w, m in grid.items()}}]
    lodo.cross_validate(rows, tmp_path)
    chosen = {r["domain"]: r for r in rows if r["variant"] == "lexcv"}
    assert chosen["a"]["lexical"]["weight"] == 0.1 and chosen["a"]["lexical"]["chosen_on"] == ["b", "c"]
    assert chosen["a"]["mrr"] == 0.40  # measured at the other domains' weight, not at its own best (0.5: 0.90)
    assert chosen["b"]["lexical"]["weight"] == 0.5
    assert chosen["c"]["lexical"]["weight"] == 0.0  # a tie (a, b: .55 at every weight) goes to the smaller weight
    assert chosen["a"]["lexical"]["shipped"] == 0.1  # best mean over all three: (.40+.70+.65)/3
    assert chosen["a"]["change"][0] == pytest.approx(0.40 - 0.6) and chosen["a"]["difference"][0] == pytest.approx(-0.1)
    with pytest.raises(lodo.SAMFileError, match="at least two"):
        lodo.cross_validate([dict(rows[1], lexical=None)], tmp_path)
    # a search-time variant's change is against the training it reuses, not whatever variant ran before it
    assert lodo.row_above(["fusion", "plots", "lexcv"], 2) == "fusion"
    assert lodo.row_above(["fusion", "plots", "lexcv"], 1) == "fusion"
    assert lodo.row_above(["plots", "lexcv"], 1) == "plots" and lodo.row_above(["fusion"], 0) is None


def test_lexical_bonus_is_bm25_scaled_by_the_best_candidate():
    from sam_model.rerank import lexical_bonus

    texts = ["CALL get_order(order_id=W1)", "the weather is nice", "order_id W1 and order W2"]
    bonus = lexical_bonus("needs: order_id for cancel_order", texts, 0.2)
    assert bonus.max() == pytest.approx(0.2) and bonus[1] == 0.0 and bonus[0] > 0 and bonus[2] > 0
    assert not lexical_bonus("needs order_id", texts, 0.0).any() and not lexical_bonus("the is", texts, 1.0).any()


def test_the_store_fuses_the_lexical_match_only_when_asked():
    import numpy as np

    from sam_model.data.examples import MemoryRecord
    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    with pytest.raises(ValueError, match="store config.lexical"):
        StoreConfig(lexical=-1.0)
    mems = [MemoryRecord("e#0", "e", 0, "user", "p", "my favourite colour is blue"),
            MemoryRecord("e#1", "e", 1, "result", "p", "payment_method credit_card 1234")]
    for weight, first in ((0.0, "e#0"), (0.5, "e#1")):
        store = MemoryStore(None, StoreConfig(lexical=weight, provenance=False), dim=2)
        store.add(mems, np.array([[1.0, 0.0], [0.9, 0.1]], dtype=np.float32))
        hits = store.search_vector(np.array([1.0, 0.0]), 2, episode_id="e", query_text="needs payment_method")
        assert hits[0].id == first
    assert StoreConfig.from_dict({"slot_match": 0.1}).lexical == 0.0  # an older export searches as it did


def test_lodo_models_of_one_frozen_bert_share_one_text_cache():
    from types import SimpleNamespace

    from sam_model.bench.lodo import share_text_caches

    a, b = (SimpleNamespace(net=make_net(seed=0)) for _ in range(2))
    a.net.state_encoder.text_encoder(["encoded once"])
    share_text_caches([a, b])
    enc_a, enc_b = a.net.state_encoder.text_encoder, b.net.state_encoder.text_encoder
    assert enc_a._cache is enc_b._cache and "encoded once" in enc_b._cache
    enc_b(["encoded once"])
    assert enc_b.encoded == 0  # b found a's vector
    c = SimpleNamespace(net=make_net(seed=0))  # the same BERT run in bfloat16: its vectors are other ones
    c.net.state_encoder.text_encoder.use_backend("bf16")
    share_text_caches([a, c])
    assert c.net.state_encoder.text_encoder._cache is not enc_a._cache


def test_the_card_says_the_fusion_weights_of_a_fused_model():
    from sam_model import card

    text = card.render({"state_content": True, "query_input": "state"}, {}, None, {"alpha": 0.9, "state_content": 0.15},
                       {"lexical": 0.2, "provenance": True})
    assert "β·cos(state text, memory)" in text and "| β (dense-state fusion) | 0.15 (learned) |" in text
    assert "lexical match 0.2" in text
    assert "β" not in card.render({"query_input": "state"}, {}, None, {"alpha": 0.9}, {})


def test_lodo_seeds_interval_holds_the_seed_spread_and_pairs_the_decisions(tmp_path):
    from sam_model.bench import lodo_seeds

    runs = []
    for seed, shift in enumerate((0.0, 0.3, -0.3)):  # the reference moves a lot from seed to seed
        run = tmp_path / f"s{seed}"
        rows = []
        for domain, n in (("a", 40), ("b", 60)):
            (run / domain).mkdir(parents=True)
            base = np.random.default_rng(n).uniform(0.2, 0.6, n)  # the same decisions in every seed
            lines = [json.dumps({"episode_id": f"e{i}", "step": i, "methods": {
                "bm25": {"rr": b, "recall@5": 0}, "plots": {"rr": b + 0.1, "recall@5": 0},
                "fusion": {"rr": b + 0.1 + shift, "recall@5": 0}}}) for i, b in enumerate(base)]
            (run / domain / "per_query.jsonl").write_text("\n".join(lines) + "\n")
            rows.append({"domain": domain, "variant": "plots", "best_baseline": "bm25"})
        (run / "lodo.json").write_text(json.dumps(rows))
        runs.append(run)
    data, shared = lodo_seeds.load(runs, "plots", "fusion")
    assert shared == {"a": [f"e{i}" for i in range(40)], "b": [f"e{i}" for i in range(60)]}  # the same decisions
    s = lodo_seeds.summarise(data, shared=shared)
    # plots is the baseline + 0.1 on every decision of every seed: paired, its interval is exactly that
    assert s["a"]["variant - baseline"] == pytest.approx((0.1, 0.1, 0.1))
    assert s["average"]["variant - baseline"] == pytest.approx((0.1, 0.1, 0.1))
    # the reference's mean is the same, but its seeds spread by +-0.3: the interval must show it
    mean, lo, hi = s["b"]["reference - baseline"]
    assert mean == pytest.approx(0.1) and lo < -0.1 and hi > 0.3
    assert s["a"]["per_seed"]["reference"][1] - s["a"]["per_seed"]["reference"][0] == pytest.approx(0.3, abs=1e-3)
    assert "| **average** |" in lodo_seeds.table(s, "plots", "fusion")
    # three copies of one seed are one seed: the interval over them is the one seed's (the review found the
    # decisions drawn per seed, which made it 40 % narrower)
    from sam_model.bench.seeds import over_seeds

    one = [data["b"][0]["reference"]] * 3
    assert over_seeds(one, shared["b"], shared=True).ci() == pytest.approx(over_seeds(one[:1], shared["b"]).ci())
    with pytest.raises(SystemExit, match="no method 'lexcv'"):
        lodo_seeds.load(runs, "lexcv", "fusion")
    (runs[2] / "lodo.json").write_text(json.dumps([{"domain": "a", "variant": "plots", "best_baseline": "bm25"}]))
    with pytest.raises(SystemExit, match="domain b is in 2 of the 3 runs"):
        lodo_seeds.load(runs, "plots", "fusion")


def test_lodo_seeds_refuses_a_run_given_twice(tmp_path, capsys):
    """A seed's folder given twice (a shell glob) counted that seed twice: an interval narrower than the runs."""
    from sam_model.bench import lodo_seeds

    run = tmp_path / "s0"
    run.mkdir()
    (run / "lodo.json").write_text("[]")
    with pytest.raises(SystemExit) as info:
        lodo_seeds.main([str(run), str(run), "--variant", "plots", "--reference", "fusion"])
    assert info.value.code == 2 and f"{run} is given twice" in capsys.readouterr().err


@pytest.mark.parametrize("key", ["task_dropout", "phase_dropout", "known_dropout"])
def test_a_dropout_share_outside_0_1_is_refused_by_name(key):
    from sam_model.training.module import SAMLightningModule

    with pytest.raises(ValueError, match=f"model.{key} must be a share of training queries in \\[0, 1\\], got 1.5"):
        SAMLightningModule(**{key: 1.5})


def test_lodo_explicit_variant_adds_one_family_of_explicit_state_logs(tmp_path, monkeypatch):
    """Variant explicit trains on the demo generator's logs of one family beside the plots recipe's sources, so
    the other family stays a domain no model has seen."""
    import argparse

    from sam_model.bench import lodo

    monkeypatch.chdir(tmp_path)
    seen = []

    def fake_fit(cmd, log):
        seen.append(cmd)
        run = Path("checkpoints") / cmd[cmd.index("--run") + 1]
        run.mkdir(parents=True)
        (run / "best-epoch=00.ckpt").write_text("")
        return 0, 1.0, log

    monkeypatch.setattr(lodo, "fit", fake_fit)
    args = argparse.Namespace(seed=0, reuse=False, out="out", worlds=60, sgd_every=12, max_epochs=None)
    lodo.train("coding", "explicit", Path("/data"), args)
    cmd = seen[0]
    sources, repeat = (json.loads(cmd[cmd.index(k) + 1]) for k in ("--data.train", "--data.repeat"))
    plots = lodo.train_sources("coding", Path("/data"), lodo.VARIANTS["plots"], 60)
    assert sources[:-1] == plots[0] and repeat == plots[1] + [1]
    events = [json.loads(line) for line in Path(sources[-1]).read_text().splitlines()]
    families = {e["meta"]["family"] for e in events if "family" in e.get("meta", {})}
    assert families == {"trip"} and len({e["episode_id"] for e in events}) == lodo.EXPLICIT_EPISODES


def test_lodo_one_change_variants_are_measured_against_the_recipe_they_change():
    from sam_model.bench import lodo

    names = ["plots", "known", "explicit", "sgdmix"]
    assert [lodo.row_above(names, i) for i in range(4)] == [None, "plots", "plots", "plots"]
    assert lodo.row_above(["base", "phase", "worlds"], 2) == "phase"  # the cumulative rows: the one before
