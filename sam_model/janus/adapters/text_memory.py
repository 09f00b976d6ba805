"""Adapter (3): a text memory — an insight list / cheatsheet revised by an LLM.

As in ExpeL or Dynamic Cheatsheet, the memory is a short list of natural-language insights put
in the solver's prompt, and the updater asks the LLM to revise it after each batch of tasks.
Such revisions drift: a rewrite tuned to the latest tasks silently drops what solved older ones.
Janus gates them. All you supply is ``llm(prompt) -> str`` (any endpoint; deterministic decoding
keeps runs resumable):

    llm = my_endpoint                       # str -> str
    ctrl = JanusController(LLMUpdater(llm), LLMEvaluator(llm), TextMemoryFeatures(), make_gate("mmt"),
                           HybridEvalSet(TextTaskFeatures()), "runs/cheatsheet")
    memory = ctrl.run(((batch, feedback) for batch, feedback in my_stream), TextMemory(()))

φ and the task features are hashed bags of words by default (no model needed); pass
``embedder=TextEmbedder()`` (sam_model.models.text_encoder) for sentence embeddings instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sam_model.io import SAMFileError, read_json

LLM = Callable[[str], str]

UPDATE_PROMPT = """You maintain a short list of insights that help solve tasks like the ones below.

Current insights:
{insights}

Latest tasks and feedback:
{examples}

Rewrite the list: keep the insights that still help, fix wrong ones, add what the feedback teaches.
At most {max_insights} insights. Reply with the list only, one insight per line, each starting with "- "."""

ANSWER_PROMPT = """Insights:
{insights}

Task: {question}
Reply with the answer only."""


@dataclass(frozen=True)
class TextTask:
    """A task for the text memory: a question and its reference answer (used by the evaluator)."""

    question: str
    answer: str
    id: str = ""


@dataclass(frozen=True)
class TextMemory:
    """The insight list. Immutable, so the updater can never change the deployed memory in place."""

    insights: tuple[str, ...] = ()

    def render(self) -> str:
        return "\n".join(f"- {s}" for s in self.insights) if self.insights else "(none yet)"

    def save(self, path: str | os.PathLike) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"kind": "janus-text-memory", "insights": list(self.insights)}, fh, ensure_ascii=False)

    @classmethod
    def load(cls, path: str | os.PathLike) -> TextMemory:
        if not Path(path).exists():
            raise SAMFileError(f"text memory not found: {path}")
        data = read_json(Path(path), "text memory (JSON)", "save the memory again")
        if not isinstance(data, dict) or data.get("kind") != "janus-text-memory" \
                or not isinstance(data.get("insights"), list) or not all(isinstance(s, str) for s in data["insights"]):
            raise SAMFileError(f"{path} is not a text memory (expected kind 'janus-text-memory' and an "
                               "'insights' list of strings)")
        return cls(tuple(data["insights"]))


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.*\S)\s*$")


def parse_insights(reply: str, max_insights: int) -> tuple[str, ...]:
    """Bulleted or numbered lines of an LLM reply, de-duplicated in order, at most ``max_insights``."""
    out: dict[str, None] = {}
    for line in reply.splitlines():
        m = _BULLET.match(line)
        if m:
            out.setdefault(m.group(1), None)
    return tuple(out)[:max_insights]


def normalise_answer(s: str) -> str:
    """Lower-case, drop punctuation, collapse whitespace (the usual exact-match normalisation)."""
    return " ".join(re.sub(r"[^\w\s]", " ", s.lower()).split())


def exact_match(prediction: str, reference: str) -> bool:
    return normalise_answer(prediction) == normalise_answer(reference)


class LLMUpdater:
    """Asks the LLM to revise the insight list from the latest tasks and their feedback.

    ``feedback`` is one string per task (what the agent learnt: "failed, the answer was X", a
    critique, ...) or None, in which case each task's reference answer is shown.
    """

    def __init__(self, llm: LLM, max_insights: int = 20, template: str = UPDATE_PROMPT):
        self.llm, self.max_insights, self.template = llm, max_insights, template

    def prompt(self, memory: TextMemory, tasks: Sequence[TextTask], feedback: Sequence[str] | None) -> str:
        if feedback is not None and len(feedback) != len(tasks):
            raise ValueError(f"feedback has {len(feedback)} entries for {len(tasks)} tasks; give one per task")
        fb = feedback if feedback is not None else [f"reference answer: {t.answer}" for t in tasks]
        examples = "\n\n".join(f"Task: {t.question}\nFeedback: {f}" for t, f in zip(tasks, fb))
        return self.template.format(insights=memory.render(), examples=examples, max_insights=self.max_insights)

    def propose(self, memory: TextMemory, tasks: Sequence[TextTask], feedback: Any = None) -> TextMemory:
        return TextMemory(parse_insights(self.llm(self.prompt(memory, tasks, feedback)), self.max_insights))


class LLMEvaluator:
    """Answers each task with the insights in the prompt and checks the reply against the reference.

    Replies are cached by prompt: Janus evaluates the deployed memory again and again on the same
    coverage and boundary tasks, and a deterministic endpoint need not be asked twice. ``workers``
    > 1 sends prompts concurrently (endpoints are I/O bound); ``batch_llm`` takes a whole list at once.
    """

    def __init__(self, llm: LLM | None = None, match: Callable[[str, str], bool] = exact_match,
                 template: str = ANSWER_PROMPT, batch_llm: Callable[[list[str]], list[str]] | None = None,
                 workers: int = 1, cache: bool = True):
        if llm is None and batch_llm is None:
            raise ValueError("give llm(prompt) -> str or batch_llm(prompts) -> list[str]")
        self.llm, self.batch_llm, self.match, self.template = llm, batch_llm, match, template
        self.workers = workers
        self.cache: dict[str, str] | None = {} if cache else None
        self.calls = 0  # prompts actually sent

    def _ask(self, prompts: list[str]) -> list[str]:
        self.calls += len(prompts)
        if self.batch_llm is not None:
            replies = list(self.batch_llm(prompts))
            if len(replies) != len(prompts):
                raise ValueError(f"batch_llm returned {len(replies)} replies for {len(prompts)} prompts")
            return replies
        if self.workers > 1:
            with ThreadPoolExecutor(self.workers) as pool:
                return list(pool.map(self.llm, prompts))
        return [self.llm(p) for p in prompts]

    def answers(self, memory: TextMemory, tasks: Sequence[TextTask]) -> list[str]:
        prompts = [self.template.format(insights=memory.render(), question=t.question) for t in tasks]
        keys = [hashlib.sha1(p.encode("utf-8")).hexdigest() for p in prompts]
        cache = self.cache if self.cache is not None else {}
        todo = list(dict.fromkeys(k for k in keys if k not in cache))
        if todo:
            first = {k: p for k, p in zip(keys, prompts)}
            cache.update(zip(todo, self._ask([first[k] for k in todo])))
        return [cache[k] for k in keys]

    def correct(self, memory: TextMemory, tasks: Sequence[TextTask]) -> np.ndarray:
        return np.array([self.match(a, t.answer) for a, t in zip(self.answers(memory, tasks), tasks)], dtype=bool)


def hashed_bow(texts: Sequence[str], dim: int = 1024) -> np.ndarray:
    """Signed feature hashing of word counts (stable across runs: blake2b, not Python's hash)."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        for w in normalise_answer(text).split():
            h = int.from_bytes(hashlib.blake2b(w.encode("utf-8"), digest_size=8).digest(), "little")
            out[i, h % dim] += 1.0 if (h >> 63) & 1 else -1.0
    return out


class TextMemoryFeatures:
    """φ(memory): hashed word counts of all insights (or a sentence embedding of the rendered list).

    Counts, not normalised vectors: adding an insight adds its words to φ, dropping one subtracts
    them, so a step that undoes earlier additions points against the momentum — which is exactly
    the forgetting the trigger should catch.
    """

    def __init__(self, dim: int = 1024, embedder: Any = None):
        self.dim, self.embedder = dim, embedder

    def __call__(self, memory: TextMemory) -> np.ndarray:
        if self.embedder is not None:
            return self.embedder.encode([memory.render()])[0]
        return hashed_bow(list(memory.insights), self.dim).sum(0)


class TextTaskFeatures:
    """Task embeddings for the coverage set: hashed bag of words of the question, L2-normalised."""

    def __init__(self, dim: int = 1024, embedder: Any = None):
        self.dim, self.embedder = dim, embedder

    def __call__(self, tasks: Sequence[TextTask]) -> np.ndarray:
        questions = [t.question for t in tasks]
        if self.embedder is not None:
            return self.embedder.encode(questions)
        x = hashed_bow(questions, self.dim)
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
