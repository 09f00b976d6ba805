"""bench.adapt_curve scores each adapted point as its export serves it: the store ordering the fit chose
(configs/adapt.yaml's ``export.used_order: auto``, written to the export's config.json) is the one its row searches
with, and the table says which ordering each seed's export chose; with ``--seeds`` a point is one adaptation per
seed. The fits are replaced by exports written here (a reuse model that ranks the task's used memories last, so the
ordering is visible in its MRR), so the test runs the curve's own code from the exports on, in seconds."""

from __future__ import annotations

import json

import pytest
from test_choose_order import _log, _retriever, _reuse

from sam_model.bench import adapt_curve
from sam_model.evaluation.run import score_orders
from sam_model.export import save_exported
from sam_model.io import SAMFileError
from sam_model.retriever import SAMRetriever
from sam_model.storeconfig import StoreConfig

CHOSEN = {"used_order": "model", "rule": "test", "log": {"decision_points": 6},
          "table": [{"used_order": o, "mrr": m, "recall@5": 1.0} for o, m in (("off", 0.5), ("model", 0.9),
                                                                               ("latest", 0.9))]}


def _export(tiny_bert_dir, folder, order: str | None):
    """An export as a fit with export.used_order auto writes it: the chosen ordering in config.json, its record in
    training.json."""
    r = _retriever(tiny_bert_dir)
    r.net.training_info = {"used_order_chosen": {**CHOSEN, "used_order": order or "off"}}
    return save_exported(r.net, folder, StoreConfig(provenance=False, used_order=order))


def test_each_seed_is_scored_with_the_ordering_its_export_chose(tiny_bert_dir, tmp_path, monkeypatch, capsys):
    data = _log(tmp_path, _reuse)
    chose = {0: "model", 1: None}  # seed 0's export chose the used memories first, seed 1's off
    exports = {s: _export(tiny_bert_dir, tmp_path / f"s{s}", o) for s, o in chose.items()}
    fits = []

    def fake_fit(init, data_path, n, seed, args):
        fits.append((n, seed))
        return exports[seed], 60.0 + seed

    monkeypatch.setattr(adapt_curve, "adapt", fake_fit)
    monkeypatch.setattr("sam_model.evaluation.data.load_eval_data", lambda *a, **k: data)
    out = tmp_path / "curve"
    assert adapt_curve.main(["--data", "coding.jsonl", "--sizes", "10", "--seeds", "0,1", "--out", str(out)]) == 0
    assert fits == [(10, 0), (10, 1)]
    [row] = json.loads((out / "curve.json").read_text())["rows"]
    assert row["methods"] == ["n=10-s0", "n=10-s1"] and row["used_order"] == ["model", "off"]
    assert row["validation"][0] == {"off": 0.5, "model": 0.9, "latest": 0.9}
    assert row["validation_decisions"] == [6, 6]  # how few decisions chose it, beside the choice (README's table)
    served = score_orders(_retriever(tiny_bert_dir), data, ["off", "model"])
    assert served["model"]["mrr"] > served["off"]["mrr"]  # the ordering moves the figure: the test can tell
    assert row["mrr_per_seed"] == pytest.approx([served["model"]["mrr"], served["off"]["mrr"]])
    assert "| model / off |" in capsys.readouterr().out


def test_a_config_json_the_loaded_store_does_not_serve_is_refused(tiny_bert_dir, tmp_path):
    export = _export(tiny_bert_dir, tmp_path / "e", "model")
    loaded = SAMRetriever.load(export, device="cpu")
    assert adapt_curve.served_order(loaded, export)["used_order"] == "model"
    other = _export(tiny_bert_dir, tmp_path / "off", None)
    with pytest.raises(SAMFileError, match="store.used_order None, but the loaded store searches with 'model'"):
        adapt_curve.served_order(loaded, other)


def test_a_joint_choice_reports_the_orderings_at_the_chosen_lexical_weight(tiny_bert_dir, tmp_path):
    """choose_order's record holds each ordering at each lexical weight: the validation figures are those of the
    weight the export serves, not the last weight's of each ordering."""
    r = _retriever(tiny_bert_dir)
    table = [{"used_order": o, "lexical": w, "mrr": m + w, "recall@5": 1.0}
             for w in (0.0, 0.3, 0.5) for o, m in (("off", 0.1), ("model", 0.2), ("latest", 0.3))]
    r.net.training_info = {"used_order_chosen": {**CHOSEN, "used_order": "latest", "lexical": 0.3, "table": table}}
    export = save_exported(r.net, tmp_path / "e", StoreConfig(provenance=False, used_order="latest", lexical=0.3))
    record = adapt_curve.served_order(SAMRetriever.load(export, device="cpu"), export)
    assert record["validation"] == {"off": 0.4, "model": 0.5, "latest": 0.6}


def test_seeds_must_be_distinct_integers_a_fit_takes(capsys):
    """A negative seed or one past 2**32 - 1 was taken, and its fit refused it (seed_everything's range) only when
    its turn came, after the points and seeds before it had trained."""
    for bad in ("0,x", "1,1", "0,-1", str(2 ** 32)):
        with pytest.raises(SystemExit):
            adapt_curve.main(["--data", "coding.jsonl", "--seeds", bad])
        assert "--seeds: " in capsys.readouterr().err  # its own message, not argparse's unknown option


def test_lexical_auto_scores_each_export_beside_its_ordering_alone_arm(tiny_bert_dir, tmp_path, monkeypatch, capsys):
    """--lexical auto (issue 21): each fit is given export.lexical auto, its export is scored as served (the joint
    choice: model at 0.5), and the same network again as the ordering alone would export it (the record's pick
    at the store's own weight 0: off), the pair bench.paired reads."""
    from sam_model.bench import lodo

    data = _log(tmp_path, _reuse)
    table = [{"used_order": o, "lexical": w, "mrr": m, "recall@5": 1.0}
             for o, w, m in (("off", 0.0, 0.5), ("model", 0.0, 0.1), ("latest", 0.0, 0.4),
                             ("off", 0.5, 0.2), ("model", 0.5, 0.9), ("latest", 0.5, 0.3))]
    r = _retriever(tiny_bert_dir)
    r.net.training_info = {"used_order_chosen": {**CHOSEN, "used_order": "model", "lexical": 0.5,
                                                 "lexical_own": 0.0, "table": table}}
    save_exported(r.net, tmp_path / "checkpoints" / "curve-n10-s0" / "export",
                  StoreConfig(provenance=False, used_order="model", lexical=0.5))
    fits = []

    def fake_fit(cmd, log):
        fits.append(cmd)
        return 0, 60.0, log

    monkeypatch.setattr(lodo, "fit", fake_fit)
    monkeypatch.chdir(tmp_path)  # the curve finds each run's export in checkpoints/NAME-nN-sS/export
    monkeypatch.setattr("sam_model.evaluation.data.load_eval_data", lambda *a, **k: data)
    out = tmp_path / "curve"
    assert adapt_curve.main(["--data", "coding.jsonl", "--sizes", "10", "--lexical", "auto", "--out", str(out)]) == 0
    assert len(fits) == 1 and fits[0][-2:] == ["--export.lexical", "auto"]
    [row] = json.loads((out / "curve.json").read_text())["rows"]
    assert row["methods"] == ["n=10"] and row["used_order"] == ["model"] and row["lexical"] == [0.5]
    methods = json.loads((out / "eval" / "report.json").read_text())["methods"]
    for name, order, weight in (("n=10", "model", 0.5), ("n=10-order", "off", 0.0)):
        served = SAMRetriever(r.net, StoreConfig(provenance=False, used_order=None if order == "off" else order,
                                                 lexical=weight))
        assert methods[name]["mrr"] == pytest.approx(score_orders(served, data, [order])[order]["mrr"])
    assert methods["n=10"]["mrr"] != pytest.approx(methods["n=10-order"]["mrr"])  # the two arms can be told apart
    assert "| model (lexical 0.5) |" in capsys.readouterr().out


def test_an_ordering_alone_the_record_cannot_give_is_refused_naming_its_file(tiny_bert_dir, tmp_path):
    """A fit whose store weight was off the grid (0.2: an export chosen with --lexical 0.2 as --init) has no row
    at its own weight: the pair is refused in one line naming the training.json, not max()'s empty sequence."""
    r = _retriever(tiny_bert_dir)
    table = [{"used_order": o, "lexical": w, "mrr": 0.5, "recall@5": 1.0} for o in ("off", "model") for w in (0.0, 0.5)]
    r.net.training_info = {"used_order_chosen": {**CHOSEN, "lexical": 0.5, "lexical_own": 0.2, "table": table}}
    export = save_exported(r.net, tmp_path / "export", StoreConfig(provenance=False, lexical=0.5))
    with pytest.raises(SAMFileError, match=r"training\.json: used_order_chosen: .* own lexical weight 0\.2"):
        adapt_curve.ordering_alone(SAMRetriever.load(export, device="cpu"), export)


def test_a_lexical_value_a_fit_refuses_is_refused_before_any_work(capsys):
    """--lexical went to each fit as given: 'lots' or -1 failed only at the first fit, after the test log and the
    zero point were loaded, as "adaptation ... failed; see LOG" rather than a line naming the option."""
    for bad in ("lots", "-1", "inf"):
        with pytest.raises(SystemExit):
            adapt_curve.main(["--data", "coding.jsonl", "--lexical", bad])
        assert "--lexical: " in capsys.readouterr().err
