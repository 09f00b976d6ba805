"""The store's ``used_order`` chosen on validation decisions (sam_model.choose_order): the ordering whose validation
MRR is highest, a tie to off; scored through evaluate's own search (evaluation.run.score_orders), written into the
export's config.json (store.used_order) and card, and served from there by SAMRetriever.load.

Two tiny logs tell the choice apart: in one the task's later calls take their values from what its earlier calls
used (a coding agent: the used memories are the labels), in the other each request is new (the labels are memories
no call used yet). The model ranks the used memories last, so moving them first is visible either way.
"""

from __future__ import annotations

import json

import pytest
import torch
from test_opening import make_net
from test_task_first import EMPTY, data_of, event, write

from sam_model.choose_order import LEXICALS, ORDERS, RULE, choose_order, main, pick, why
from sam_model.evaluation.run import score_orders, score_retriever
from sam_model.export import save_exported
from sam_model.retriever import SAMRetriever
from sam_model.storeconfig import StoreConfig
from sam_model.training.split_report import MIN_VAL_DECISIONS


def _reuse(ep: str) -> list[dict]:
    """Two calls on one file: the second takes its value from the issue the first used."""
    return [event(ep, 0, "user", f"Bug {ep} in billing/tax.py: rounding."),
            event(ep, 1, "action", "CALL open(billing/tax.py)", useful=[0]),
            event(ep, 2, "result", "40 def total(self): return round(x)"),
            event(ep, 3, "user", "Please hurry."),
            event(ep, 4, "action", "CALL edit(billing/tax.py, 41)", useful=[0])]


def _new(ep: str) -> list[dict]:
    """A second request: the later call's value is in a message no call used."""
    return [event(ep, 0, "user", f"Book a flight {ep} to Paris."),
            event(ep, 1, "action", "CALL search_flights(Paris)", useful=[0]),
            event(ep, 2, "result", "flight F1 to Paris"),
            event(ep, 3, "user", "Also a hotel in Rome."),
            event(ep, 4, "action", "CALL book_hotel(Rome)", useful=[3])]


def _log(tmp_path, kind) -> object:
    lines = [e for i in range(3) for e in kind(f"t{i}")]
    return data_of(write(tmp_path / f"{kind.__name__}.jsonl", lines))


def _retriever(tiny_bert_dir, used_order=None) -> SAMRetriever:
    """A reuse model whose w_u is very negative: it ranks every used memory last itself."""
    net = make_net(tiny_bert_dir, task_opening=True, task_reuse=True).eval()
    with torch.no_grad():
        net.reuse.head.bias.fill_(-10.0)
    return SAMRetriever(net, StoreConfig(provenance=False, used_order=used_order))


def test_the_rule_takes_the_highest_mrr_and_a_tie_goes_to_off_then_model():
    rows = lambda a, b, c: [{"used_order": o, "mrr": m} for o, m in zip(("off", "model", "latest"), (a, b, c))]  # noqa: E731
    assert pick(rows(0.5, 0.7, 0.6))["used_order"] == "model"
    assert pick(rows(0.5, 0.6, 0.7))["used_order"] == "latest"
    assert pick(rows(0.7, 0.7, 0.7))["used_order"] == "off"
    assert pick(rows(0.5, 0.7, 0.7 + 1e-12))["used_order"] == "model"  # a float's last bits are a tie
    assert "then to off" in RULE


def test_auto_picks_a_used_ordering_where_the_used_memories_are_the_labels(tiny_bert_dir, tmp_path):
    record = choose_order(_retriever(tiny_bert_dir), _log(tmp_path, _reuse))
    table = {r["used_order"]: r["mrr"] for r in record["table"]}
    assert table["model"] > table["off"] and record["used_order"] in ("model", "latest")
    assert record["log"]["decision_points"] == 6 and record["log"]["conversations"] == 3


def test_auto_picks_off_where_the_labels_are_new_values(tiny_bert_dir, tmp_path):
    record = choose_order(_retriever(tiny_bert_dir), _log(tmp_path, _new))
    table = {r["used_order"]: r["mrr"] for r in record["table"]}
    assert table["off"] > table["model"] and table["off"] > table["latest"]
    assert record["used_order"] == "off"


def test_each_order_scores_as_the_store_searches_it(tiny_bert_dir, tmp_path):
    """One code path: an order's figure is score_retriever's for a store that sets it (evaluate's plain row), and
    None is the store's own."""
    data = _log(tmp_path, _reuse)
    scores = score_orders(_retriever(tiny_bert_dir), data, [None, "off", "model", "latest"])
    assert scores[None] == scores["off"]
    for order in ("model", "latest"):
        assert score_retriever(_retriever(tiny_bert_dir, order), data) == scores[order]


@pytest.mark.parametrize(("kind", "want"), [(_reuse, "model"), (_new, None)])
def test_the_choice_lands_in_config_json_and_is_what_the_loaded_store_serves(tiny_bert_dir, tmp_path, kind, want,
                                                                            capsys):
    export = save_exported(_retriever(tiny_bert_dir).net, tmp_path / "export", StoreConfig(provenance=False))
    assert SAMRetriever.load(export, device="cpu").store.config.used_order is None  # off stays the default
    log = write(tmp_path / "val.jsonl", [e for i in range(3) for e in kind(f"t{i}")])
    out = tmp_path / "chosen"
    assert main([str(export), "--choose-on", str(log), "--out", str(out), "--record", str(tmp_path / "r.json")]) == 0
    assert json.loads((out / "config.json").read_text())["store"]["used_order"] == want
    assert SAMRetriever.load(out, device="cpu").store.config.used_order == want
    card = (out / "README.md").read_text()
    assert "## Used ordering chosen on validation" in card and f"| {want or 'off'} (chosen) |" in card
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["used_order"] == (want or "off") and len(record["table"]) == 3
    assert json.loads((out / "training.json").read_text())["used_order_chosen"]["used_order"] == (want or "off")
    said = capsys.readouterr()
    chose = next(line for line in said.out.splitlines() if line.startswith("chose used_order"))
    best = max(r["mrr"] for r in record["table"])
    tied = sum(round(r["mrr"], 9) == round(best, 9) for r in record["table"]) > 1
    assert ("tie" in chose) == tied and f"{best:.3f}" in chose  # a tie said only where the table holds one
    err = said.err  # the slow scoring is announced before it starts, with what it scores
    assert err.index("choosing the store's used_order on") < err.index("  scored off, model, latest")
    assert f"{log} (6 decision points): scoring 3 settings ..." in err  # 6 < MIN_VAL_DECISIONS: the ordering alone


def test_a_choice_on_the_test_split_is_refused(tmp_path, capsys):
    log = write(tmp_path / "val.jsonl", _reuse("t0"))
    assert main(["sam-general", "--choose-on", str(log), "--split", "test"]) != 0
    assert "--split test" in capsys.readouterr().err


def test_the_choice_can_be_written_into_the_export_it_was_made_for(tiny_bert_dir, tmp_path):
    """configs/adapt.yaml's advice for a WiSE-FT mix (which keeps its first model's store): choose on it in place."""
    export = save_exported(_retriever(tiny_bert_dir).net, tmp_path / "mix", StoreConfig(provenance=False))
    log = write(tmp_path / "val.jsonl", [e for i in range(3) for e in _reuse(f"t{i}")])
    assert main([str(export), "--choose-on", str(log), "--out", str(export)]) == 0
    assert SAMRetriever.load(export, device="cpu").store.config.used_order == "model"


@pytest.mark.parametrize("out", ["sam-general", "PACKAGE"])
def test_the_choice_is_never_written_into_the_installed_package(tmp_path, monkeypatch, capsys, out):
    """--out the packaged folder replaced the installed sam-general (its files read-only or not), and a bare
    packaged name wrote a local folder that every from_pretrained('sam-general') there loads instead."""
    from sam_model.pretrained import FOLDER

    monkeypatch.chdir(tmp_path)
    package = FOLDER / "sam-general"
    before = {p.name: p.stat().st_mtime_ns for p in package.iterdir()}
    log = write(tmp_path / "val.jsonl", [e for i in range(3) for e in _reuse(f"t{i}")])
    target = str(package) if out == "PACKAGE" else out
    assert main(["sam-general", "--choose-on", str(log), "--out", target]) != 0
    err = capsys.readouterr().err
    assert "--out" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "sam-general").exists()
    assert {p.name: p.stat().st_mtime_ns for p in package.iterdir()} == before


def test_a_chunking_store_is_chosen_on_the_chunks_it_serves(tiny_bert_dir, tmp_path):
    """A store that chunks long memories (configs/coding_chunks.yaml's export) was scored on whole memories, so
    train.py's auto chose on a search its export never makes: each figure is now the served search's."""
    from sam_model.data.chunks import Chunking

    lines = [e for i in range(3) for e in _reuse(f"t{i}")]
    for e in lines:
        if e["kind"] == "result":
            e["text"] = "\n".join(f"{n} def line_{n}(self): return {n}" for n in range(40, 52))
    data = data_of(write(tmp_path / "val.jsonl", lines))
    windows = {"size": 60, "overlap": 10}
    r = _retriever(tiny_bert_dir)
    r = SAMRetriever(r.net, StoreConfig(provenance=False, chunking=windows))
    record = choose_order(r, data)
    assert record["options"]["chunking"] == Chunking.from_dict(windows).to_dict()
    for row in record["table"]:
        served = SAMRetriever(r.net, StoreConfig(provenance=False, chunking=windows, used_order=row["used_order"]
                                                 if row["used_order"] != "off" else None))
        assert score_retriever(served, data, chunking=Chunking.from_dict(windows))["mrr"] == row["mrr"]


def _named(ep: str) -> list[dict]:
    """A freight-like conversation: the decision's state knows the booking reference, which only the lookup's
    result repeats (no needed slot's name in it, so the slot bonus does not find it); four chatty turns of the
    shipper sit between. The lexical match of the state text finds the result."""
    state = {**EMPTY, "uncertainty_flags": ["eta"], "constraints": {"booking": f"BK{ep}X"}}
    return [event(ep, 0, "user", "Where is my shipment? It is late."),
            event(ep, 1, "result", f"booking BK{ep}X arrives Rotterdam on vessel Aurora"),
            *[event(ep, s, "user", f"Please hurry, the customer waits {s}.") for s in range(2, 6)],
            {**event(ep, 6, "action", "CALL delivery_slot(Rotterdam)", useful=[1]), "state": state}]


def _big(tmp_path, kind, n: int = MIN_VAL_DECISIONS):
    return data_of(write(tmp_path / f"{kind.__name__}_big.jsonl", [e for i in range(n) for e in kind(f"t{i}")]))


def test_the_rule_ties_to_the_smaller_lexical_weight_first():
    rows = [{"used_order": o, "lexical": w, "mrr": m}
            for o, w, m in [("latest", 0.1, 0.8), ("off", 0.3, 0.8), ("model", 0.5, 0.8), ("off", 0.0, 0.7)]]
    assert (pick(rows)["lexical"], pick(rows)["used_order"]) == (0.1, "latest")
    rows.append({"used_order": "model", "lexical": 0.5, "mrr": 0.8 + 1e-12})  # a tie at 9 decimals
    assert pick(rows)["lexical"] == 0.1
    assert "smaller lexical weight" in RULE and LEXICALS == (0.0, 0.1, 0.3, 0.5)


def test_the_joint_choice_takes_the_lexical_weight_that_finds_the_named_result(tiny_bert_dir, tmp_path):
    data = _big(tmp_path, _named)
    record = choose_order(_retriever(tiny_bert_dir), data)
    table = {(r["used_order"], r["lexical"]): r["mrr"] for r in record["table"]}
    assert len(table) == len(ORDERS) * len(LEXICALS) and record["lexical_kept"] is None
    assert table[("off", 0.5)] > table[("off", 0.0)] + 0.2  # the weight clearly wins here
    assert record["lexical"] > 0 and table[(record["used_order"], record["lexical"])] == max(table.values())
    for (order, weight), mrr in table.items():  # each figure is the search a store of that setting serves
        if order == "off":
            served = SAMRetriever(_retriever(tiny_bert_dir).net, StoreConfig(provenance=False, lexical=weight))
            assert score_retriever(served, data)["mrr"] == mrr


def test_a_log_too_small_keeps_the_stores_lexical_weight_and_says_so(tiny_bert_dir, tmp_path):
    said = []
    record = choose_order(_retriever(tiny_bert_dir), _big(tmp_path, _named, 5), say=said.append)
    assert {r["lexical"] for r in record["table"]} == {0.0} and record["lexical"] == 0.0
    assert any("lexical weight is not chosen" in line and str(MIN_VAL_DECISIONS) in line for line in said)
    assert "not chosen" in record["lexical_kept"]


def test_the_chosen_lexical_weight_is_what_the_export_serves(tiny_bert_dir, tmp_path, capsys):
    from sam_model.memory.scoped import ScopedMemory

    export = save_exported(_retriever(tiny_bert_dir).net, tmp_path / "export", StoreConfig(provenance=False))
    log = write(tmp_path / "val.jsonl", [e for i in range(MIN_VAL_DECISIONS) for e in _named(f"t{i}")])
    out = tmp_path / "chosen"
    assert main([str(export), "--choose-on", str(log), "--out", str(out), "--record", str(tmp_path / "r.json")]) == 0
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["lexical"] > 0 and len(record["table"]) == len(ORDERS) * len(LEXICALS)
    assert json.loads((out / "config.json").read_text())["store"]["lexical"] == record["lexical"]
    assert SAMRetriever.load(out, device="cpu").store.config.lexical == record["lexical"]
    assert ScopedMemory(SAMRetriever.load(out, device="cpu")).store.lexical == record["lexical"]  # what it searches
    assert json.loads((out / "training.json").read_text())["used_order_chosen"]["lexical"] == record["lexical"]
    card = (out / "README.md").read_text()
    assert f"lexical weight {record['lexical']:g} (store.lexical)" in card
    assert f"| {record['used_order']} (chosen) | {record['lexical']:g} |" in card
    assert f"lexical {record['lexical']:g}" in capsys.readouterr().out


def test_a_bad_lexical_grid_is_refused_in_one_line(tmp_path, capsys):
    log = write(tmp_path / "val.jsonl", _named("t0"))
    assert main(["sam-general", "--choose-on", str(log), "--lexical", "0,-1"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--lexical" in err[0]


@pytest.mark.parametrize("kind", [_named, _reuse])
def test_the_ordering_alone_is_the_joint_records_pick_at_the_stores_own_weight(tiny_bert_dir, tmp_path, kind):
    """adapt_curve pairs a joint choice with the ordering-alone export of the same network: order_alone reads it
    off the joint record, and it must be what choose_order picks with the ordering alone, on the same figures."""
    from sam_model.choose_order import order_alone

    data = _big(tmp_path, kind)
    joint = choose_order(_retriever(tiny_bert_dir), data)
    alone = choose_order(_retriever(tiny_bert_dir), data, lexicals=None)
    assert {r["lexical"] for r in alone["table"]} == {joint["lexical_own"]} == {0.0}
    assert order_alone(joint)["used_order"] == alone["used_order"]
    assert [r for r in joint["table"] if r["lexical"] == 0.0] == alone["table"]


def _named_after_a_call(ep: str) -> list[dict]:
    """:func:`_named` with a call before the decision, so one memory is used: the used-first orderings move it
    ahead of the result the lexical match finds, which only off leaves first."""
    state = {**EMPTY, "uncertainty_flags": ["eta"], "constraints": {"booking": f"BK{ep}X"}}
    return [event(ep, 0, "user", "Where is my shipment? It is late."),
            event(ep, 1, "action", "CALL track(shipment)", useful=[0]),
            event(ep, 2, "result", f"booking BK{ep}X arrives Rotterdam on vessel Aurora"),
            *[event(ep, s, "user", f"Please hurry, the customer waits {s}.") for s in range(3, 7)],
            {**event(ep, 7, "action", "CALL delivery_slot(Rotterdam)", useful=[2]), "state": state}]


def test_the_ordering_alone_is_read_off_the_joint_record_where_the_weight_changes_the_best_ordering(tiny_bert_dir,
                                                                                                 tmp_path):
    """The check above held on logs where the joint choice and the ordering alone pick the same ordering, so an
    order_alone that returned the joint pick itself passed it (and adapt_curve's ordering-alone arm would be the
    joint export again, the paired difference 0 by construction). Here reuse conversations make a used-first
    ordering best at weight 0 and the named results make off best once the lexical match finds them."""
    from sam_model.choose_order import order_alone

    lines = [e for i in range(10) for e in _reuse(f"r{i}")] + [e for i in range(30) for e in _named_after_a_call(f"n{i}")]
    data = data_of(write(tmp_path / "mixed.jsonl", lines))
    joint = choose_order(_retriever(tiny_bert_dir), data)
    alone = choose_order(_retriever(tiny_bert_dir), data, lexicals=None)
    assert joint["lexical"] > 0 and joint["used_order"] != alone["used_order"]  # the two choices differ here
    row = order_alone(joint)
    assert (row["used_order"], row["lexical"]) == (alone["used_order"], alone["lexical"]) == (alone["used_order"], 0.0)
    assert row["mrr"] == next(r["mrr"] for r in alone["table"] if r["used_order"] == alone["used_order"])


def test_the_ordering_alone_is_refused_in_one_line_where_the_record_cannot_give_it():
    """A table without a row at the store's own weight (a store at 0.2, the grid 0,0.1,0.3,0.5) raised max()'s
    "arg is an empty sequence"; a record written before lexical_own, whose table holds several weights, was read
    at the chosen weight: the ordering alone came back as the joint pick itself."""
    from sam_model.choose_order import order_alone
    from sam_model.io import SAMFileError

    table = [{"used_order": o, "lexical": w, "mrr": m} for o, w, m in
             (("off", 0.0, 0.5), ("model", 0.0, 0.6), ("off", 0.5, 0.9), ("model", 0.5, 0.7))]
    with pytest.raises(SAMFileError, match="no row at the store's own lexical weight 0.2"):
        order_alone({"used_order": "off", "lexical": 0.5, "lexical_own": 0.2, "table": table})
    with pytest.raises(SAMFileError, match="does not record the store's own lexical weight"):
        order_alone({"used_order": "off", "lexical": 0.5, "table": table})
    kept = {"used_order": "model", "lexical": 0.0, "table": table[:2]}  # one weight scored: it was the store's
    assert order_alone(kept)["used_order"] == "model"


def test_the_choice_says_a_tie_only_where_there_is_one():
    """The walkthrough's held-out log chose off at 0.972 MRR over 0.951 and 0.900, and the line read "(equal to 9
    decimals: a tie)": the rule's text printed after every choice. The line now says which it was."""
    rows = [{"used_order": o, "lexical": w, "mrr": m}
            for o, w, m in [("off", 0.0, 0.972), ("model", 0.0, 0.9), ("off", 0.1, 0.951)]]
    record = {"used_order": "off", "lexical": 0.0, "table": rows}
    assert why(record) == "the highest validation MRR, 0.972 against 0.951 next" and "tie" not in why(record)
    rows[1]["mrr"] = 0.972 + 1e-12  # a tie at 9 decimals: off beats model by the tie order
    said = why(record)
    assert "tied (equal to 9 decimals) with 1 other setting;" in said and "then to off, then model" in said
    rows[1]["mrr"] = 0.972 - 2e-5  # no tie at 9 decimals: the line shows the digits the lead is in
    assert why(record) == "the highest validation MRR, 0.97200 against 0.97198 next"


def test_choosing_on_the_file_the_model_trained_on_is_warned(tiny_bert_dir, tmp_path, capsys):
    """A walkthrough's --choose-on of the log the model was adapted on chose silently, on conversations that favour
    what it learned there; its training record names the file, and the choice now says so in one line."""
    net = _retriever(tiny_bert_dir).net
    log = write(tmp_path / "val.jsonl", [e for i in range(3) for e in _new(f"t{i}")])
    for trained_on, warned in (("elsewhere/val.jsonl", True), ("elsewhere/other.jsonl", False)):
        net.training_info = {"data": {"sources": [{"path": trained_on}], "transcript_split": "all"}}
        export = save_exported(net, tmp_path / "export", StoreConfig(provenance=False))
        assert main([str(export), "--choose-on", str(log)]) == 0
        said = [line for line in capsys.readouterr().err.splitlines() if "trained on" in line]
        assert len(said) == warned
        if warned:
            assert said[0].startswith(f"warning: {export} trained on {trained_on} ")
            assert f"if that is {log}," in said[0] and "--data.val" in said[0]
