"""Bounded requests and checked inputs: each refused with one line naming the argument or field, nothing changed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from sam_model.data.examples import MemoryRecord
from sam_model.data.schema import Event, State
from sam_model.export import save_exported
from sam_model.io import SAMFileError
from sam_model.limits import MAX_TEXT_CHARS
from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.models.sam import SAMConfig, SAMNet
from sam_model.retriever import SAMRetriever
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig


def _store() -> MemoryStore:
    store = MemoryStore(HashingEncoder(32), StoreConfig(provenance=False))
    store.add([MemoryRecord(f"e#{i}", "e", i, "user", "", f"memory {i}") for i in range(17)])
    return store


def test_a_huge_k_is_refused_before_anything_is_allocated():
    store = _store()
    for k in (10**9, 10**7, 10_001):
        with pytest.raises(ValueError, match=rf"^k must be an integer from 1 to 10000, got {k}$"):
            store.search(State(), "memory", k=k)
        with pytest.raises(ValueError, match="^k must be an integer from 1 to 10000"):
            store.index.search(np.zeros((1, 32), np.float32), k)
    assert len(store.search(State(), "memory", k=10_000)) == 17  # the bound itself works, padded to what exists


@pytest.mark.parametrize(("text", "why"), [("", "must not be empty"), ("   \n", "must not be empty"),
                                           (5, "must be a string, got a number 5"),
                                           ("x" * (MAX_TEXT_CHARS + 1), "has 100001 characters, more than the limit")])
def test_bad_memory_texts_are_refused_and_change_nothing(text, why):
    store = _store()
    good = MemoryRecord("f#0", "f", 0, "user", "", "fine")
    with pytest.raises((ValueError, TypeError), match=rf"^memories\[1\]\.text {why}"):
        store.add([good, MemoryRecord("f#1", "f", 1, "user", "", text)])
    with pytest.raises((ValueError, TypeError), match=rf"^memories\[0\]\.text {why}"):
        store.add([Event("f", 1, "user", text)])
    assert len(store) == 17 and "f#0" not in store and store.next_step("f") is None


@pytest.mark.parametrize("step", ["x", -1, 1.5, True])
def test_bad_steps_are_refused(step):
    store = _store()
    with pytest.raises(ValueError, match=r"^memories\[0\]\.step must be an integer >= 0 \(or None\), got "):
        store.add([Event("f", step, "user", "hello")])
    with pytest.raises(ValueError, match=r"^memories\[0\]\.step must be"):
        store.add([MemoryRecord("f#x", "f", step, "user", "", "hello")])
    assert len(store) == 17


def test_scoped_memory_k_and_limit():
    memory = ScopedMemory(HashingEncoder(32), k=5)
    for i in range(7):
        memory.add(f"message number {i}", user_id="ana")
    assert len(memory.search("message", user_id="ana")["results"]) == 5  # the default k
    assert len(memory.search("message", user_id="ana", k=2)["results"]) == 2
    with pytest.raises(ValueError, match="^k must be an integer from 1 to 10000, got 0$"):
        memory.search("message", user_id="ana", k=0)  # was silently 5
    assert len(memory.get_all(user_id="ana", limit=0)["results"]) == 0
    assert len(memory.get_all(user_id="ana", limit=3)["results"]) == 3
    with pytest.raises(ValueError, match="^limit must be a non-negative integer .*, got -1$"):
        memory.get_all(user_id="ana", limit=-1)  # was: every memory but the last
    with pytest.raises(ValueError, match="^k must be an integer from 1 to 10000"):
        ScopedMemory(HashingEncoder(32), k=0)
    with pytest.raises(ValueError, match="^batch_size must be an integer from 1 to"):
        memory.store.add([Event("z", 0, "user", "hi")], batch_size=0)


def test_sizes_in_a_config_name_their_field(tmp_path, tiny_bert_dir):
    with pytest.raises(ValueError, match=r"^field 'net\.dim' must be an integer from 1 to 65536, got 1000000000$"):
        SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=10**9))
    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16))
    out = save_exported(net, tmp_path / "export")
    good = json.loads((out / "config.json").read_text())
    for part, name, value in (("bert_config", "vocab_size", 10**12), ("bert_config", "hidden_size", -3),
                              ("sam", "hidden", 10**9), ("sam", "max_length", 0)):
        cfg = json.loads(json.dumps(good))
        cfg[part][name] = value
        (out / "config.json").write_text(json.dumps(cfg))
        with pytest.raises(SAMFileError, match=rf"config.json: .*field '{part}\.{name}' must be an integer from "):
            SAMRetriever.load(out)
    ckpt = tmp_path / "huge.ckpt"
    torch.save({"hyper_parameters": {"net": {**good["sam"]}, "bert_config": {**good["bert_config"], "vocab_size": 10**12}},
                "state_dict": {}}, ckpt)

    with pytest.raises(SAMFileError, match=r"huge.ckpt: field 'hyper_parameters.bert_config.vocab_size' must be"):
        SAMRetriever.load(ckpt)


def test_a_class_path_in_a_checkpoint_is_one_line(tmp_path, capsys, small_demo_logs):
    from sam_model.training.cli import run

    ckpt = tmp_path / "class_path.ckpt"
    torch.save({"state_dict": {}, "hyper_parameters": {"_class_path": "os.system", "net": {"dim": 8}}, "epoch": 0,
                "global_step": 0, "pytorch-lightning_version": "2.4.0"}, ckpt)
    rc = run(["fit", "--config", str(Path(__file__).resolve().parents[1] / "configs" / "demo.yaml"), f"--data.train=[{small_demo_logs[0]}]", "--ckpt_path", str(ckpt),
              "--trainer.max_epochs=1"])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"{ckpt}: its hyper-parameters name the class 'os.system' and do not fit this model" in err


@pytest.mark.parametrize("data", ["", "   ", 5, None, [{"role": "user", "content": " \n"}]])
def test_scoped_add_refuses_blank_or_wrong_data_and_changes_nothing(data):
    memory = ScopedMemory(HashingEncoder(32))
    with pytest.raises((ValueError, TypeError), match=r"^data( must |\[0\]\.content is only whitespace: nothing to store)"):
        memory.add(data, user_id="ana")
    memory.add("fine", user_id="ana")
    assert [r["step"] for r in memory.get_all(user_id="ana")["results"]] == [0]  # the refused call took no step


def test_metadata_is_json_that_can_be_read_back():
    from sam_model.limits import MAX_METADATA_CHARS, check_metadata

    check_metadata(None)
    check_metadata({"topic": "travel", "n": 3, "tags": ["a", {"b": None}], "ok": True, "x": 1.5})
    deep: dict = {}
    cur = deep
    for _ in range(40):
        cur["a"] = {}
        cur = cur["a"]
    for bad, err, says in [([1], TypeError, r"^metadata must be an object, got a list \[1\]$"),
                           ({1: "x"}, TypeError, "key that is not a string"),
                           ({"a": float("nan")}, ValueError, "metadata.a is nan"),
                           ({"a": {"b": object()}}, TypeError, "metadata.a.b must be a string, number.* got a Python "
                                                               "object$"),  # JSON's words, not Python's 'got list'
                           ({"a": {1, 2}}, TypeError, "metadata.a must be .* got a Python set$"),
                           (deep, ValueError, "nested more than 32"),
                           ({"a": "x" * MAX_METADATA_CHARS}, ValueError, "characters as JSON")]:
        with pytest.raises(err, match=says):
            check_metadata(bad)


def test_too_deep_counts_levels_of_objects_and_lists_without_recursing():
    from sam_model.limits import too_deep

    def nest(n):
        v = "x"
        for i in range(n):
            v = {"a": v} if i % 2 else [v]
        return v

    assert not too_deep(nest(32), 32) and too_deep(nest(33), 32)
    assert too_deep(nest(5000), 32) and not too_deep("x" * 10, 0)  # deep beyond Python's recursion limit


@pytest.mark.parametrize("hi, text, said", [
    (2**62, "0", "want an integer from 1 on, got '0'"),  # was: from 1 to 4611686018427387904
    (2**62, "x", "want an integer from 1 on, got 'x'"),
    (2**62, str(2**62 + 1), f"want an integer from 1 to {2**62}, got '{2**62 + 1}'"),  # past the guard: named
    (100, "0", "want an integer from 1 to 100, got '0'"),  # a bound a caller picks from: said as before
])
def test_an_option_names_its_guard_bound_only_past_it(hi, text, said):
    """sam-eval --max-queries 0 said 'want an integer from 1 to 4611686018427387904': a guard no caller picks from."""
    import argparse

    from sam_model.limits import int_option

    with pytest.raises(argparse.ArgumentTypeError) as refused:
        int_option(1, hi)(text)
    assert str(refused.value) == said
