"""Weight interpolation of a model and its fine-tune (sam_model.interpolate, WiSE-FT): the line between the two
weight sets, written as an export that loads and ranks like either end at 0 and 1, and refusals of what does
not line up."""

from __future__ import annotations

import json
import math

import pytest
import torch

from sam_model.export import save_exported
from sam_model.interpolate import interpolate, interpolate_nets, main
from sam_model.io import SAMFileError
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.retriever import SAMRetriever

KINDS = ["user", "system", "action", "result"]


def net(tiny_bert_dir, seed: int, **over) -> SAMNet:
    torch.manual_seed(seed)
    cfg = dict(bert_path=str(tiny_bert_dir), dim=16, hidden=32, proj_hidden=32, max_length=32, time_features=4,
               phases=["search", "book"], kinds=KINDS)
    return SAMNet(SAMConfig(**{**cfg, **over})).eval()


@pytest.fixture(scope="module")
def pair(tiny_bert_dir, tmp_path_factory):
    """Two exports on one frozen encoder: a 'base' and a 'fine-tune' (other head weights), with training records."""
    tmp = tmp_path_factory.mktemp("interp")
    base, tuned = net(tiny_bert_dir, 0), net(tiny_bert_dir, 1)
    base.training_info = {"data": {"sources": [{"path": "toolworlds:60:0:0:free"}]}}
    tuned.training_info = {"data": {"sources": [{"path": "../shared/data/sgd/train"}]}, "init_from": "base"}
    return save_exported(base, tmp / "base"), save_exported(tuned, tmp / "tuned"), tmp


def heads(r: SAMRetriever) -> dict[str, torch.Tensor]:
    return {k: v for k, v in r.net.state_dict().items() if ".bert." not in k}


def scores(r: SAMRetriever) -> torch.Tensor:
    """Two queries' scores over three memories, from the network as evaluate.py and search use it."""
    with torch.no_grad():
        q = r.net.encode_queries(["phase: book | needs: time", "phase: search"], ["book", "search"],
                                 ["ok, go ahead", "find one"])
        m = r.net.encode_memories(["a table for 4 at 7pm", "id 42", "hi"], ["user", "result", "system"],
                                  ["book", "search", "book"])
    return torch.as_tensor(q) @ torch.as_tensor(m).T


def test_the_line_between_two_models_written_as_an_export(pair):
    base_dir, tuned_dir, tmp = pair
    base, tuned = SAMRetriever.load(base_dir, device="cpu"), SAMRetriever.load(tuned_dir, device="cpu")
    hb, ht = heads(base), heads(tuned)
    assert any(not torch.equal(hb[k], ht[k]) for k in hb if hb[k].is_floating_point())
    for w in (0.0, 0.3, 1.0):
        out = interpolate(base_dir, tuned_dir, w, tmp / f"w{w}")
        mixed = SAMRetriever.load(out, device="cpu")
        for k, v in heads(mixed).items():
            assert torch.allclose(v, (1 - w) * hb[k] + w * ht[k], atol=1e-6), k
        bert = {k: v for k, v in mixed.net.state_dict().items() if ".bert." in k}
        assert all(torch.equal(v, base.net.state_dict()[k]) for k, v in bert.items())  # the frozen encoder as is
        record = json.loads((out / "training.json").read_text())
        assert record["interpolated"]["weight"] == w
        assert {s["path"] for s in record["data"]["sources"]} == {"toolworlds:60:0:0:free", "../shared/data/sgd/train"}
    assert torch.allclose(scores(SAMRetriever.load(tmp / "w0.0")), scores(base), atol=1e-5)
    assert torch.allclose(scores(SAMRetriever.load(tmp / "w1.0")), scores(tuned), atol=1e-5)
    assert not torch.allclose(scores(SAMRetriever.load(tmp / "w0.3")), scores(base), atol=1e-5)


def test_an_adapted_model_with_new_phases_mixes_with_its_start_extended(pair, tiny_bert_dir, tmp_path):
    base_dir, _, _ = pair
    from sam_model.models.adapt import extend_net, extended_config

    base = SAMRetriever.load(base_dir).net
    adapted = extend_net(base, extended_config(base.cfg, ["search", "book", "pay"], KINDS + ["tool"]))
    with torch.no_grad():
        for p in adapted.parameters():
            if p.requires_grad:
                p.add_(0.1 * torch.randn_like(p))  # "trained" on logs with a new tool and a new kind
    adapted.training_info = {"data": {"sources": [{"path": "my_logs"}]}, "init_from": "base"}
    adapted_dir = save_exported(adapted, tmp_path / "adapted")
    start = interpolate(base_dir, adapted_dir, 0.0, tmp_path / "w0")
    mixed = SAMRetriever.load(start).net
    assert mixed.cfg.phases == ["search", "book", "pay"] and mixed.cfg.kinds == KINDS + ["tool"]
    with torch.no_grad():  # w = 0 ranks as the first model, also for the phase it never saw (its unknown row)
        q = [["phase: pay"], ["pay"], ["go ahead"]]
        m = [["id 42", "hi"], ["tool", "user"], ["pay", "book"]]
        assert torch.allclose(mixed.encode_queries(*q) @ mixed.encode_memories(*m).T,
                              base.encode_queries(*q) @ base.encode_memories(*m).T, atol=1e-5)
    half = SAMRetriever.load(interpolate(base_dir, adapted_dir, 0.5, tmp_path / "w5")).net.state_dict()
    key = next(k for k in half if k.endswith("phase_emb.weight"))
    row0, tuned = base.state_dict()[key][0], adapted.state_dict()[key][-1]  # "pay": the last row, new
    assert torch.allclose(half[key][-1], 0.5 * row0 + 0.5 * tuned, atol=1e-6)  # the new row from the unknown one


def test_models_that_do_not_line_up_are_refused(pair, tiny_bert_dir, tmp_path):
    base_dir, tuned_dir, _ = pair
    other = save_exported(net(tiny_bert_dir, 2, dim=8), tmp_path / "other")
    with pytest.raises(SAMFileError, match="config field.*dim"):
        interpolate(base_dir, other, 0.5, tmp_path / "out")
    phases = save_exported(net(tiny_bert_dir, 2, phases=["book", "search"]), tmp_path / "phases")
    with pytest.raises(SAMFileError, match="phases"):  # not an extension of the first's: its rows mean other phases
        interpolate(base_dir, phases, 0.5, tmp_path / "out")
    a = SAMRetriever.load(base_dir).net
    for bad in (-0.1, 1.5, math.nan, True, "0.5"):
        with pytest.raises(SAMFileError, match="--weight must be a number from 0"):
            interpolate_nets(a, a, bad)
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_the_cli_writes_the_export_and_refuses_in_one_line(pair, tmp_path, capsys):
    base_dir, tuned_dir, _ = pair
    assert main([str(base_dir), str(tuned_dir), str(tmp_path / "mid"), "--weight", "0.5"]) == 0
    assert (tmp_path / "mid" / "model.safetensors").exists()
    assert main([str(base_dir), str(tuned_dir), str(tmp_path / "bad"), "--weight", "2"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--weight must be a number from 0" in err[0]


def test_lodo_sgd_mix_adapts_the_fold_model_to_sgd_and_mixes_it_back(pair, tmp_path, monkeypatch):
    """bench.lodo's variant sgdmix: the fold's model adapted to SGD by configs/adapt.yaml, then (1 − w) · model +
    w · adapted; with SGD left out there is no SGD to adapt to, so nothing is trained and the model is kept."""
    import argparse
    import shutil
    from pathlib import Path

    from sam_model.bench import lodo
    from sam_model.io import file_sha256

    base_dir, tuned_dir, _ = pair
    monkeypatch.chdir(tmp_path)
    calls = []

    def fake_fit(cmd, log):  # what train.py fit would leave: checkpoints/RUN/export
        calls.append(cmd)
        out = Path("checkpoints") / cmd[cmd.index("--run") + 1] / "export"
        shutil.copytree(tuned_dir, out)
        record = json.loads((out / "training.json").read_text())  # trained from the fold's model, as train.py says
        (out / "training.json").write_text(json.dumps({**record, "init_from": cmd[cmd.index("--model.init_from") + 1]}))
        config = json.loads((out / "config.json").read_text())  # and its digest, as train.py's export records it
        config["sha256"]["training.json"] = file_sha256(out / "training.json")
        (out / "config.json").write_text(json.dumps(config))
        return 0, 1.0, log

    monkeypatch.setattr(lodo, "fit", fake_fit)
    args = argparse.Namespace(seed=2, reuse=False, out=str(tmp_path / "out"))
    ckpt = base_dir / "best-epoch=03.ckpt"  # train() returns the best checkpoint; its export/ sits beside it
    assert lodo.sgd_mixed("sgd", ckpt, 0.25, Path("/data"), args) == ckpt and not calls
    fold = tmp_path / "fold"
    shutil.copytree(base_dir, fold / "export")
    mixed = lodo.sgd_mixed("coding", fold / "best-epoch=03.ckpt", 0.25, Path("/data"), args)
    (cmd,) = calls
    assert cmd[cmd.index("--config") + 1] == "configs/adapt.yaml"
    assert cmd[cmd.index("--model.init_from") + 1] == str(fold / "export")
    assert json.loads(cmd[cmd.index("--data.train") + 1]) == ["/data/sgd/train"]
    assert cmd[cmd.index("--data.sgd_every") + 1] == "3" and cmd[cmd.index("--seed_everything") + 1] == "2"
    hm, hb = heads(SAMRetriever.load(mixed, device="cpu")), heads(SAMRetriever.load(base_dir, device="cpu"))
    ht = heads(SAMRetriever.load(tuned_dir, device="cpu"))
    k = next(k for k in hb if hb[k].is_floating_point() and not torch.equal(hb[k], ht[k]))
    assert torch.allclose(hm[k], 0.75 * hb[k] + 0.25 * ht[k], atol=1e-6)
    assert lodo.VARIANTS["sgdmix"].same_training_as == "plots" and lodo.VARIANTS["sgdmix"].sgd_mix == 0.25


def test_the_output_is_never_an_input_or_a_packaged_name_and_the_card_is_the_mixs(pair, tiny_bert_dir, tmp_path,
                                                                                 monkeypatch):
    """Found by review: `interpolate A B B` wrote the mix over the adapted export (a rerun then mixed the mix);
    an output named sam-general in the working folder was loaded by every from_pretrained('sam-general')
    afterwards; the mix's record and card claimed the fine-tune's selected epoch and validation MRR."""
    from sam_model.pretrained import resolve

    a, _, _ = pair
    tuned = net(tiny_bert_dir, 1)
    tuned.training_info = {"init_from": "base", "selected": {"epoch": 7, "val/mrr": 0.987}}
    b = save_exported(tuned, tmp_path / "tuned")
    for out in (b, a, a / "inside"):
        with pytest.raises(SAMFileError, match="the output is .* or inside it, or holds it"):
            interpolate(a, b, 0.5, out)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SAMFileError, match="the name of a packaged retriever"):
        interpolate(a, b, 0.5, "sam-general")
    (tmp_path / "sam-general").mkdir()  # a folder of that name that is no export does not hide the packaged one
    assert (resolve("sam-general") / "config.json").is_file()
    with pytest.raises(SAMFileError, match="an empty retriever name"):
        resolve("")
    out = interpolate(a, b, 0.5, tmp_path / "mix")
    record = json.loads((out / "training.json").read_text())
    assert "selected" not in record and record["interpolated"]["second_selected"]["epoch"] == 7
    assert "0.987" not in (out / "README.md").read_text().split("interpolated")[0]
    card = (out / "README.md").read_text()  # the second's options and settings say whose they are (found by review)
    assert f"Settings (of {b}, the second model of this mix)" in card


def test_models_that_line_up_but_are_not_a_fine_tune_are_refused(pair, tiny_bert_dir, tmp_path):
    """Two models trained from scratch with other seeds line up (config, encoder, shapes) and were mixed without a
    word, the card calling it WiSE-FT (found by review): the second must name the first as its init_from, or both
    one start (a soup of two fine-tunes)."""
    base_dir, tuned_dir, _ = pair
    stranger = net(tiny_bert_dir, 5)
    stranger.training_info = {"data": {"sources": [{"path": "other"}]}}
    stranger_dir = save_exported(stranger, tmp_path / "stranger")
    with pytest.raises(SAMFileError, match=r"was not trained from .*base \(its training record's init_from is 'empty'"):
        interpolate(base_dir, stranger_dir, 0.5, tmp_path / "mix")
    sibling = net(tiny_bert_dir, 6)
    sibling.training_info = {"init_from": "base"}
    sib_dir = save_exported(sibling, tmp_path / "sibling")
    assert interpolate(tuned_dir, sib_dir, 0.5, tmp_path / "soup").is_dir()  # two fine-tunes of one start


def choose(pair, log, out, *extra):
    """``interpolate --choose-on LOG``, its BERT vector cache off (tests write nothing under ~)."""
    base_dir, tuned_dir, _ = pair
    return main([str(base_dir), str(tuned_dir), str(out), "--choose-on", str(log), "--text-cache", "", *extra])


def test_choose_on_writes_the_argmax_of_its_table_as_sam_eval_measures_it(pair, small_demo_logs, tmp_path, capsys):
    """The walkthrough found nothing to choose --weight with. --choose-on mixes at each weight, prints the table,
    writes the mix of the highest validation MRR (the one --weight writes at that w) and records the table; the
    MRR that chose is the one sam-eval reports for the written export on the same log."""
    from sam_model.evaluation.run import run as sam_eval

    base_dir, tuned_dir, _ = pair
    _, log = small_demo_logs
    assert choose(pair, log, tmp_path / "mixed", "--weights", "1,0.5,0.25") == 0
    out, err = capsys.readouterr()
    chosen = json.loads((tmp_path / "mixed" / "training.json").read_text())["interpolated"]["chosen"]
    rows = chosen["table"]
    assert [r["weight"] for r in rows] == [0.25, 0.5, 1.0]  # sorted, each scored
    assert len({round(r["mrr"], 6) for r in rows}) > 1  # the weights rank differently: the choice means something
    best = max(rows, key=lambda r: (r["mrr"], -r["weight"]))
    assert chosen["weight"] == best["weight"] != 0.25  # not merely the first row
    printed = [line for line in out.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(printed) == 3 and len([line for line in err.splitlines() if line.startswith("  w = ")]) == 3, err
    # one progress line a weight, as README says: the encoding bars of each score were four more (a walkthrough)
    assert not [line for line in err.splitlines() if line.startswith(("memories:", "queries:"))], err
    for line, r in zip(printed, rows, strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0].split()[0] == f"{r['weight']:g}" and float(cells[1]) == round(r["mrr"], 3)
        assert float(cells[2]) == round(r["logs"][str(log)]["recall@5"], 3)
        assert ("(chosen)" in cells[0]) == (r["weight"] == chosen["weight"])
    mixed = SAMRetriever.load(tmp_path / "mixed", device="cpu")
    same = SAMRetriever.load(interpolate(base_dir, tuned_dir, chosen["weight"], tmp_path / "by-weight"), device="cpu")
    assert all(torch.equal(v, heads(same)[k]) for k, v in heads(mixed).items())  # what --weight w writes
    assert sam_eval(["--retriever", str(tmp_path / "mixed"), "--data", str(log), "--out", str(tmp_path / "eval"),
                     "--baselines", "none", "--latency-queries", "1", "--tsne-points", "1", "--text-cache", ""]) == 0
    report = json.loads((tmp_path / "eval" / "report.json").read_text())
    assert report["methods"]["sam"]["mrr"] == pytest.approx(best["mrr"], abs=1e-6)
    card = (tmp_path / "mixed" / "README.md").read_text()
    assert "## Weight chosen on validation" in card and printed[0] in card


def test_choose_on_bad_weights_and_test_split_are_refused_in_one_line(pair, small_demo_logs, tmp_path, capsys):
    _, log = small_demo_logs
    base_dir, tuned_dir, _ = pair
    cases = [(("--weights", "0,1.5"), "--weights must be comma-separated numbers from 0"),
             (("--weights", ""), "--weights must be comma-separated numbers from 0"),
             (("--weights", "0,,1"), "--weights must be comma-separated numbers from 0"),
             (("--weights=-0.1,0.5",), "--weights must be comma-separated numbers from 0"),
             (("--weights", "nan"), "--weights must be comma-separated numbers from 0"),
             (("--split", "test"), "--choose-on with --split test"),
             (("--weight", "0.5"), "--weight and --choose-on")]
    for extra, message in cases:
        assert choose(pair, log, tmp_path / "out", *extra) != 0
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], (extra, err)
    for argv, message in (([], "give --weight W"), (["--weights", "0,1"], "--weights needs --choose-on")):
        assert main([str(base_dir), str(tuned_dir), str(tmp_path / "out"), *argv]) != 0
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "out").exists()


def test_choose_on_without_the_eval_extra_is_one_line(pair, small_demo_logs, tmp_path):
    """--weight runs on the core install; --choose-on needs sam-eval's packages, and says so in one line (in a
    fresh interpreter where matplotlib, of the [eval] extra, is absent)."""
    import subprocess
    import sys

    base_dir, tuned_dir, _ = pair
    argv = [str(base_dir), str(tuned_dir), str(tmp_path / "out"), "--choose-on", str(small_demo_logs[1])]
    code = f"import sys\nsys.modules['matplotlib'] = None\nfrom sam_model.interpolate import main\nsys.exit(main({argv!r}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(err) == 1, done.stderr[-2000:]
    assert "needs the [eval] extra (matplotlib is not installed)" in err[0]
    assert not (tmp_path / "out").exists()


def test_choose_on_a_small_log_warns_and_a_tie_keeps_the_smaller_weight(pair, tiny_bert_dir, small_demo_logs,
                                                                       tmp_path, capsys):
    """Fewer decisions than fit wants of validation: the same one-line warning (not a refusal, as fit's). Two
    models with the same weights tie at every w: the smallest, the first model's side, is kept."""
    base_dir, _, _ = pair
    _, log = small_demo_logs
    twin = SAMRetriever.load(base_dir, device="cpu").net
    twin.training_info = {"init_from": "base"}
    twin_dir = save_exported(twin, tmp_path / "twin")
    assert main([str(base_dir), str(twin_dir), str(tmp_path / "mixed"), "--choose-on", str(log), "--text-cache", "",
                 "--weights", "1,0.5,0.25", "--max-queries", "10"]) == 0
    err = capsys.readouterr().err
    assert "warning: --choose-on" in err and "holds only 10 decision points" in err and "moves by 0.050" in err
    chosen = json.loads((tmp_path / "mixed" / "training.json").read_text())["interpolated"]["chosen"]
    assert len({r["mrr"] for r in chosen["table"]}) == 1 and chosen["weight"] == 0.25


def test_choose_on_scores_the_exports_weights_bit_for_bit_without_copying_the_frozen_encoder(
        pair, small_demo_logs, tmp_path, monkeypatch):
    """Review: --choose-on mixed on --device (lerp on a GPU may round otherwise than on the CPU the export is mixed
    on) and copied the whole first network, BERT included. Each network scored is now the export --weight w writes,
    every tensor equal, and its BERT is the loaded first model's own (not a copy)."""
    import sam_model.evaluation.run as run_mod

    base_dir, tuned_dir, _ = pair
    _, log = small_demo_logs
    scored, loaded, real_score, real_load = [], [], run_mod.score_retriever, SAMRetriever.load

    def spy(retriever, *a, **kw):
        scored.append({k: v.detach().clone() for k, v in retriever.net.state_dict().items()})
        bert = dict(retriever.net.named_parameters())
        first = dict(loaded[0].net.named_parameters())
        assert all(bert[k].data_ptr() == first[k].data_ptr() for k in first if ".bert." in k)  # shared, no copy
        return real_score(retriever, *a, **kw)

    monkeypatch.setattr(run_mod, "score_retriever", spy)
    monkeypatch.setattr(SAMRetriever, "load", classmethod(
        lambda cls, *a, **kw: loaded.append(real_load(*a, **kw)) or loaded[-1]))
    assert choose(pair, log, tmp_path / "mixed", "--weights", "0.3,0.7", "--max-queries", "10", "--device", "cpu") == 0
    monkeypatch.setattr(SAMRetriever, "load", real_load)
    chosen = json.loads((tmp_path / "mixed" / "training.json").read_text())["interpolated"]["chosen"]["weight"]
    assert len(scored) == 2
    for w, state in zip((0.3, 0.7), scored, strict=True):
        out = tmp_path / "mixed" if w == chosen else interpolate(base_dir, tuned_dir, w, tmp_path / f"w{w}")
        written = SAMRetriever.load(out, device="cpu").net.state_dict()
        assert state.keys() == written.keys()
        assert all(torch.equal(state[k], written[k]) for k in state), w


def test_a_mix_of_learned_lexical_weights_serves_the_mixs_own(tiny_bert_dir, small_demo_logs, tmp_path, monkeypatch):
    """Two models of SAMConfig.lexical_learned: the mix's scores were trained beside softplus of its mixed raw
    scalar, so its export (and every weight --choose-on scores) serves that weight; it served the first model's
    whatever the weight (at w = 1 the fine-tune's heads beside the start's lexical weight). A weight set after
    training (not the learned one) stays the first model's setting, as its other store settings do."""
    from sam_model.evaluation import run as eval_run
    from sam_model.storeconfig import StoreConfig

    base, tuned = net(tiny_bert_dir, 0, lexical_learned=True), net(tiny_bert_dir, 1, lexical_learned=True)
    with torch.no_grad():
        base.lexical_raw.fill_(0.7)
        tuned.lexical_raw.fill_(-1.0)
    tuned.training_info = {"init_from": "base"}
    base_dir, tuned_dir = save_exported(base, tmp_path / "base"), save_exported(tuned, tmp_path / "tuned")

    def learned(raw: float) -> float:
        return float(torch.nn.functional.softplus(torch.tensor(raw)))

    def served(folder) -> float:
        return json.loads((folder / "config.json").read_text())["store"]["lexical"]

    assert served(base_dir) == learned(0.7)
    for w in (0.0, 0.5, 1.0):
        out = interpolate(base_dir, tuned_dir, w, tmp_path / f"w{w}")
        assert served(out) == pytest.approx(learned(0.7 + w * (-1.0 - 0.7)), abs=1e-6), w
        assert SAMRetriever.load(out, device="cpu").store.config.lexical == served(out)
    fixed = save_exported(base, tmp_path / "fixed" / "base", StoreConfig(lexical=0.2))  # set after training: kept
    assert served(interpolate(fixed, tuned_dir, 1.0, tmp_path / "kept")) == 0.2
    seen: dict[float, float] = {}
    raw = {}

    def score(retriever, data, **kw):
        seen[len(seen)] = retriever.store.config.lexical
        raw[len(raw)] = float(retriever.net.lexical_raw.detach())
        return {"mrr": 0.5, "recall@5": 0.5}

    monkeypatch.setattr(eval_run, "score_retriever", score)
    _, log = small_demo_logs
    assert main([str(base_dir), str(tuned_dir), str(tmp_path / "chosen"), "--choose-on", str(log), "--text-cache", "",
                 "--weights", "0,1"]) == 0
    assert len(seen) == 2 and seen[0] == pytest.approx(learned(0.7)) and seen[1] == pytest.approx(learned(-1.0))
    assert all(seen[i] == pytest.approx(learned(raw[i])) for i in seen)


def test_choose_on_a_log_the_fine_tune_trained_on_is_warned(pair, tiny_bert_dir, small_demo_logs, tmp_path, capsys):
    """--choose-on of the log the fine-tune was adapted on favours w = 1 (its own conversations) and was taken
    silently; the fine-tune's training record names the file, and the choice now says so in one line."""
    base_dir, _, _ = pair
    train, heldout = small_demo_logs
    tuned = net(tiny_bert_dir, 1)
    tuned.training_info = {"data": {"sources": [{"path": f"my_agent/{train.name}"}]}, "init_from": "base"}
    tuned_dir = save_exported(tuned, tmp_path / "tuned")
    assert choose((base_dir, tuned_dir, None), train, tmp_path / "mixed", "--weights", "0,1") == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "trained on" in line]
    assert said == [f"warning: {tuned_dir} trained on my_agent/{train.name} (its training.json, data.sources; "
                    f"transcript_split all): if that is {train}, these are conversations it trained on, not held-out "
                    "ones; choose on conversations kept out of its training (e.g. the fit's --data.val file)"]
    assert choose((base_dir, tuned_dir, None), heldout, tmp_path / "mixed", "--weights", "0,1") == 0
    assert "trained on" not in capsys.readouterr().err  # a log neither trained on: nothing said
