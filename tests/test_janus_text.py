"""Text-memory adapter with a deterministic fake LLM: prompts, parsing, caching, and Janus gating it."""

import re

import numpy as np
import pytest

from sam_model.io import SAMFileError
from sam_model.janus import HybridEvalSet, JanusController, Memory, make_gate
from sam_model.janus.adapters.text_memory import (
    LLMEvaluator,
    LLMUpdater,
    TextMemory,
    TextMemoryFeatures,
    TextTask,
    TextTaskFeatures,
    exact_match,
    hashed_bow,
    parse_insights,
)


class FakeLLM:
    """Answers from facts in the prompt; revises by adding facts — or, when told to REWRITE, by
    keeping only the newest ones (the drifting revision Janus should catch)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        facts = dict(re.findall(r"^- fact: the capital of (\w+) is (\w+)$", prompt, flags=re.M))
        if prompt.startswith("You maintain"):
            new = dict(re.findall(r"Task: What is the capital of (\w+)\?\nFeedback: reference answer: (\w+)", prompt))
            keep = {} if "REWRITE" in prompt else facts
            return "\n".join(f"- fact: the capital of {k} is {v}" for k, v in {**keep, **new}.items())
        country = re.search(r"Task: What is the capital of (\w+)\?", prompt).group(1)
        return facts.get(country, "unknown")


def tasks_of(batch):
    return [TextTask(f"What is the capital of land{i}?", f"city{i}", id=str(i)) for i in range(5 * batch, 5 * batch + 5)]


def test_memory_save_load_and_protocol(tmp_path):
    m = TextMemory(("a", "b — ünïcode"))
    m.save(tmp_path / "m.json")
    assert TextMemory.load(tmp_path / "m.json") == m
    assert isinstance(m, Memory)
    (tmp_path / "bad.json").write_text('{"kind": "other"}')
    with pytest.raises(SAMFileError, match="not a text memory"):
        TextMemory.load(tmp_path / "bad.json")
    with pytest.raises(SAMFileError, match="not found"):
        TextMemory.load(tmp_path / "missing.json")


def test_parse_insights_and_match():
    reply = "Here you go:\n- one\n* two\n1. three\n2) one\nnot a bullet\n- four"
    assert parse_insights(reply, 10) == ("one", "two", "three", "four")
    assert parse_insights(reply, 2) == ("one", "two")
    assert exact_match(" Paris. ", "paris") and not exact_match("Lyon", "Paris")


def test_updater_prompt_and_revision():
    llm = FakeLLM()
    up = LLMUpdater(llm, max_insights=7)
    mem = up.propose(TextMemory(), tasks_of(0), None)
    assert len(mem.insights) == 5 and "fact: the capital of land0 is city0" in mem.insights
    mem = up.propose(mem, tasks_of(1), None)
    assert len(mem.insights) == 7  # capped
    prompt = up.prompt(mem, tasks_of(2)[:1], ["wrong: said city3"])
    assert "- fact: the capital of land0 is city0" in prompt and "Feedback: wrong: said city3" in prompt
    with pytest.raises(ValueError, match="one per task"):
        up.prompt(mem, tasks_of(2), ["x"])


def test_evaluator_answers_and_caches():
    llm = FakeLLM()
    ev = LLMEvaluator(llm)
    mem = LLMUpdater(llm).propose(TextMemory(), tasks_of(0), None)
    tasks = tasks_of(0)[:3] + tasks_of(1)[:2]
    before = llm.calls
    np.testing.assert_array_equal(ev.correct(mem, tasks), [True, True, True, False, False])
    assert llm.calls - before == 5
    ev.correct(mem, tasks)
    assert llm.calls - before == 5  # all cached
    batched = LLMEvaluator(batch_llm=lambda ps: [FakeLLM()(p) for p in ps], cache=False)
    np.testing.assert_array_equal(batched.correct(mem, tasks), ev.correct(mem, tasks))


def test_encoders_are_stable_and_signed():
    a, b = hashed_bow(["the capital of land1"], 64), hashed_bow(["the capital of land1"], 64)
    np.testing.assert_array_equal(a, b)
    assert np.abs(a).sum() == 4  # four words, one count each
    many = hashed_bow([" ".join(f"w{i}" for i in range(50))], 4096)[0]
    assert (many > 0).any() and (many < 0).any()  # signed hashing: collisions cancel on average
    phi = TextMemoryFeatures(dim=256)
    one, two = TextMemory(("fact: a",)), TextMemory(("fact: a", "fact: b"))
    np.testing.assert_allclose(phi(two) - phi(one), hashed_bow(["fact: b"], 256)[0])
    emb = TextTaskFeatures(dim=256)(tasks_of(0))
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, rtol=1e-5)


def run(tmp_path, gate):
    """8 batches of 5 countries; the revisions of batches 3 and 6 are told to REWRITE (forget)."""
    llm = FakeLLM()
    ctrl = JanusController(LLMUpdater(llm, max_insights=100), LLMEvaluator(llm), TextMemoryFeatures(),
                           make_gate(gate), HybridEvalSet(TextTaskFeatures(), coverage=10, boundary=10, fresh=3),
                           tmp_path / gate)
    stream = []
    for b in range(8):
        tasks = tasks_of(b)
        note = " REWRITE" if b in (3, 6) else ""
        stream.append((tasks, [f"reference answer: {t.answer}{note}" for t in tasks]))
    memory = ctrl.run(stream, TextMemory())
    all_tasks = [t for b in range(8) for t in tasks_of(b)]
    return LLMEvaluator(FakeLLM()).correct(memory, all_tasks).mean(), ctrl


def test_janus_keeps_the_memory_a_rewrite_would_forget(tmp_path):
    acc_none, _ = run(tmp_path, "none")
    acc_always, always = run(tmp_path, "always")
    acc_mmt, mmt = run(tmp_path, "mmt(0.5,0.5)")
    assert acc_mmt > acc_none and acc_always > acc_none
    assert mmt.comparisons < always.comparisons
    d = {x.t: x for x in mmt.read_manifest()}
    assert d[4].triggered and not d[4].accepted and d[4].cos < 0  # the REWRITE of batch 3 turned back
    assert d[7].triggered and not d[7].accepted
    assert not d[2].triggered and d[2].cos > 0.5  # an ordinary addition goes on without a comparison


@pytest.mark.parametrize("content, says", [(b"\xff\xfe{}", "unreadable text memory"),
                                           (b"[" * 100_000, "unreadable text memory"),
                                           (b'{"kind": "janus-text-memory", "insights": [{"x": 1}, null]}',
                                            "list of strings")])
def test_a_damaged_text_memory_file_is_one_line(tmp_path, content, says):
    from sam_model.io import SAMFileError

    (tmp_path / "m.json").write_bytes(content)
    with pytest.raises(SAMFileError, match=says):
        TextMemory.load(tmp_path / "m.json")
