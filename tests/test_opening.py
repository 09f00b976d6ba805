"""The task-opening flag and its state-dependent weight (sam_model.models.opening)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import training

from sam_model.data.examples import MemoryRecorder, episode_memories
from sam_model.data.lives import make_lives, task_openings, task_starts
from sam_model.data.reader import Episode
from sam_model.data.schema import parse_event
from sam_model.encoder import SAMEncoder
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig
from sam_model.training.batching import collate_episodes, opens_of

KINDS = ["system", "agent", "user", "tool", "user", "agent"]  # the user's first event is the task's second


def make_net(bert_dir, **kw) -> SAMNet:
    return training.make_net(bert_dir, ["collect"], ["user", "tool", "system", "agent"], **kw)


def _task(eid: str) -> list[dict]:
    return [{"episode_id": eid, "step": s, "kind": k, "text": f"{eid} {k} {s}"} for s, k in enumerate(KINDS)]


def test_the_first_user_event_of_each_task_is_flagged():
    life = [parse_event(e) for e in make_lives(_task("a") + _task("b"), 2)]
    starts = task_starts(life)
    want = [False, False, True, False, False, False] * 2  # the second task's first user event too
    assert task_openings([e.kind for e in life], starts) == want
    assert [m.opens_task for m in episode_memories(Episode(life[0].episode_id, tuple(life)))] == want
    single = [parse_event(e) for e in _task("c")]
    assert task_openings(KINDS, task_starts(single)) == want[:6]
    rec = MemoryRecorder()  # an agent that starts a new task in the same episode: its next user event opens it
    flags = [rec.record(e).opens_task for e in single[:4]]
    rec.new_task("c")
    flags += [rec.record(e).opens_task for e in single[4:]]
    assert flags == [False, False, True, False, True, False]


def test_a_rolled_back_record_leaves_the_opening_to_the_retry():
    rec, events = MemoryRecorder(), [parse_event(e) for e in _task("a")]
    for e in events[:2]:
        rec.record(e)
    mark = rec.mark(["a"])
    assert rec.record(events[2]).opens_task
    rec.rollback(mark)
    assert rec.record(events[2]).opens_task and not rec.record(events[4]).opens_task


def test_a_rollback_whose_retry_writes_another_kind_at_the_openers_step_leaves_the_opening_to_a_later_user_event():
    """The opener's step was kept through a rollback (MemoryRecorder.mark's rows do not hold it), so where the retry
    wrote an event of another kind at that step, the task's first user event after it was not flagged: a fresh
    recorder of the retry's events flags it."""
    events = [parse_event(e) for e in _task("a")]
    other = parse_event({**_task("a")[2], "kind": "agent"})
    rec = MemoryRecorder()
    for e in events[:2]:
        rec.record(e)
    mark = rec.mark(["a"])
    assert rec.record(events[2]).opens_task
    rec.rollback(mark)
    retried = [rec.record(e).opens_task for e in (other, events[3], events[4])]
    fresh = MemoryRecorder()
    want = [fresh.record(e).opens_task for e in (*events[:2], other, events[3], events[4])][2:]
    assert retried == want and any(want)


def test_training_rows_flag_what_the_recorder_flags():
    life = [parse_event(e) for e in make_lives(_task("a") + _task("b"), 2)]
    row = {"steps": [e.step for e in life], "kinds": [e.kind for e in life], "task_starts": task_starts(life)}
    assert opens_of(row) == [m.opens_task for m in episode_memories(Episode(life[0].episode_id, tuple(life)))]


def test_off_the_vectors_are_those_of_a_model_without_it_and_on_the_weight_starts_at_zero(tiny_bert_dir):
    off = make_net(tiny_bert_dir, time_features=4).eval()
    on = make_net(tiny_bert_dir, time_features=4, task_opening=True).eval()
    assert not any(k.startswith("opening.") for k in off.state_dict())
    assert on.out_dim == off.out_dim + 1
    texts, kinds, phases = ["fix foo in bar.py", "ok"], ["user", "tool"], ["collect"] * 2
    with torch.no_grad():
        m_off = off.encode_memories(texts, kinds, phases, steps=[1, 2])
        m_on = on.encode_memories(texts, kinds, phases, steps=[1, 2], opens=[True, False])
        q_off = off.encode_queries(["phase: collect"], ["collect"], ["go"], steps=[3], task_starts=[0])
        q_on = on.encode_queries(["phase: collect"], ["collect"], ["go"], steps=[3], task_starts=[0])
    assert torch.equal(m_off, off.encode_memories(texts, kinds, phases, steps=[1, 2], opens=[True, False]))
    assert torch.equal(m_on[:, :-1], m_off) and m_on[:, -1].tolist() == [1.0, 0.0]
    assert torch.equal(q_on[:, :-1], q_off) and q_on[:, -1].tolist() == [0.0]
    assert torch.count_nonzero(on.opening.head.weight) == 0
    with pytest.raises(ValueError, match="opens_task"):
        on.encode_memories(texts, kinds, phases, steps=[1, 2])


def test_a_model_with_it_refuses_memories_that_cannot_say(tiny_bert_dir):
    """A bare event cannot say whether it opened its task; the store's recorder says it of the events it is given,
    as evaluate.py's records do (tests/test_opening_served.py: every entry point)."""
    enc = SAMEncoder(make_net(tiny_bert_dir, task_opening=True))
    events = [parse_event(e) for e in _task("a")]
    records = episode_memories(Episode("a", tuple(events)))
    assert enc.encode_memories(records)[:, -1].tolist() == [0, 0, 1, 0, 0, 0]
    with pytest.raises(ValueError, match="MemoryRecords"):
        enc.encode_memories(events)
    given = MemoryStore(enc, StoreConfig())
    given.add(records, enc.encode_memories(records))  # as evaluate.py replays a log: the vectors given
    store = MemoryStore(enc, StoreConfig())
    store.add(events)
    assert store.index.get_vectors(store.ids())[:, -1].tolist() == [0, 0, 1, 0, 0, 0]
    assert store.index.get_vectors(store.ids()).tolist() == given.index.get_vectors(given.ids()).tolist()


def _same_words_rows(n: int) -> list[tuple[int, dict]]:
    """The user states the task, then says the same words again: only the opening flag tells them apart."""
    texts = ["fix foo in bar.py", "searching", "fix foo in bar.py", "result", "call"]
    kinds = ["user", "tool", "user", "tool", "agent"]
    return [(ep, {"steps": list(range(5)), "texts": texts, "memory_texts": texts, "kinds": kinds,
                  "phases": ["collect"] * 5, "labels": [[]] * 4 + [[0]], "state_texts": ["phase: collect"] * 5,
                  "task_starts": [0] * 5}) for ep in range(8)]


def test_the_weight_learns_to_rank_the_opening_first(tiny_bert_dir):
    net = make_net(tiny_bert_dir, alpha=1.0, learn_alpha=False, task_opening=True)
    batch = collate_episodes(_same_words_rows(8))
    assert batch["mem_opens"][:5] == [True, False, False, False, False]
    first, last = training.train_part(net, net.opening.parameters(), batch, 40)
    assert last < 0.5 * first


def test_a_model_without_the_flag_exports_as_before(tiny_bert_dir, tmp_path):
    """Off (the default), an export's config.json leaves task_opening out: the file written before the flag existed,
    which older sam_model versions load (they refuse an unknown field), and it loads as off. On, it says so."""
    from serving import tiny_export

    from sam_model.export import read_config

    tiny_export(tiny_bert_dir, tmp_path / "off")
    assert "task_opening" not in json.loads((tmp_path / "off" / "config.json").read_text())["sam"]
    assert read_config(tmp_path / "off" / "config.json")[0].task_opening is False
    tiny_export(tiny_bert_dir, tmp_path / "on", task_opening=True)
    assert json.loads((tmp_path / "on" / "config.json").read_text())["sam"]["task_opening"] is True
    assert read_config(tmp_path / "on" / "config.json")[0].task_opening is True


def _module(bert_dir, task_opening: bool = True, **kw):
    from sam_model.training.module import SAMLightningModule

    torch.manual_seed(0)
    cfg = SAMConfig(bert_path=str(bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32, dropout=0.0,
                    phases=["collect"], kinds=["user", "tool"], task_opening=task_opening)
    return SAMLightningModule(cfg, lr=1e-3, warmup_steps=0, **kw)


def test_the_opening_head_steps_at_its_own_rate_only_when_asked(tiny_bert_dir):
    """Adam moves a parameter by about its learning rate a step, whatever the gradient's size: at the heads' rate the
    weight's bias moves 1e-3 a step (0.1 in a fold training's ~100 full steps, README), with ``opening_lr`` at that
    rate. Every other parameter keeps the heads' rate, and without it the groups are those from before."""
    plain, fast = _module(tiny_bert_dir), _module(tiny_bert_dir, opening_lr=0.01)
    own = {id(p) for p in fast.net.opening.parameters()}
    plain_rates, fast_rates = training.group_rates(plain), training.group_rates(fast)
    assert set(plain_rates.values()) == {1e-3} and len(fast_rates) == len(plain_rates)
    assert {lr for i, lr in fast_rates.items() if i in own} == {0.01}
    assert {lr for i, lr in fast_rates.items() if i not in own} == {1e-3}
    for module, moved in ((plain, 0.01), (fast, 0.1)):  # ten steps of a loss that wants w up, however little
        opt = module.configure_optimizers()["optimizer"]
        for _ in range(10):
            loss = -1e-4 * module.net.opening.head.bias.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        assert module.net.opening.head.bias.item() == pytest.approx(moved, rel=0.01)


def test_an_opening_rate_without_the_head_or_below_zero_is_refused(tiny_bert_dir):
    with pytest.raises(ValueError, match="model.opening_lr is 0.01 but model.net.task_opening is off"):
        _module(tiny_bert_dir, task_opening=False, opening_lr=0.01)
    with pytest.raises(ValueError, match="model.opening_lr must be >= 0"):
        _module(tiny_bert_dir, opening_lr=-0.01)


def test_a_model_card_names_the_opening_rate_only_where_one_was_set(tmp_path):
    """Off (0), an export's card is as before: no new key."""
    from sam_model.export import training_info

    assert "opening_lr" not in training_info({"hyper_parameters": {"lr": 1e-3, "opening_lr": 0.0}}, tmp_path / "a")
    assert training_info({"hyper_parameters": {"lr": 1e-3, "opening_lr": 0.01}}, tmp_path / "a")["opening_lr"] == 0.01


def test_the_lodo_variant_is_opening_with_the_head_at_its_own_rate():
    import yaml

    from sam_model.bench import lodo

    fast, opening = lodo.VARIANTS["opening-lr"], lodo.VARIANTS["opening"]
    assert fast.configs == (*opening.configs, "configs/opening_lr.yaml") and fast.on == "opening"
    assert (fast.worlds, fast.plots, fast.brief) == (opening.worlds, opening.plots, opening.brief)
    assert yaml.safe_load((Path(__file__).resolve().parents[1] / "configs" / "opening_lr.yaml").read_text())["model"] == {"opening_lr": 0.01}


def test_the_weight_is_weighed_against_the_gaps_it_has_to_close(tiny_bert_dir, tmp_path):
    """bench.opening_weight reads w off the query vectors: zero, it changes no decision's best memory; large, every
    decision's best is the memory that opened its task, here the label of each."""
    import json

    from serving import tiny_export

    from sam_model.bench.opening_weight import weigh
    from sam_model.evaluation.data import load_eval_data
    from sam_model.retriever import SAMRetriever

    log = tmp_path / "log.jsonl"
    events = [dict(e, state={"phase": "collect"}, **({"useful_memory_steps": [2]} if e["step"] == 5 else {}))
              for eid in ("a", "b", "c") for e in _task(eid)]
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    data = load_eval_data(log, "episode", progress=False)
    retriever = SAMRetriever.load(tiny_export(tiny_bert_dir, tmp_path / "export", task_opening=True,
                                              phases=["collect"], kinds=["user", "tool", "system", "agent"]))
    off = weigh(retriever, data)
    assert (off["decisions"], off["label_is_opening"], off["w_mean"], off["top1_changed_by_w"]) == (3, 3, 0.0, 0)
    assert off["median_top2_gap"] >= 0
    with torch.no_grad():
        retriever.net.opening.head.bias.fill_(100.0)
    on = weigh(retriever, data)
    assert on["w_min"] == pytest.approx(100.0) and on["w_positive"] == 3 and on["bias"] == 100.0
    assert on["opening_scores_best"] == 3 and on["top1_changed_by_w"] == 3 - off["opening_scores_best"]
