"""SAM inside an agent loop: observe, retrieve for the current state, prompt, record.

Works with any ``llm(prompt) -> str``. One turn of an agent::

    mem = SAMMemory(SAMRetriever.load(export))    # or SAMMemory(encoder, MemoryBank.load(path))
    mem.begin()                                   # a new task (in the same life); begin("ep-2"): a new episode
    thought, action = mem.step(llm, state, user_message)   # searched before the message is written
    mem.observe(user_message, state)              # everything the agent sees goes in
    result = environment(action)
    mem.record(thought, action, result)           # what it did goes in; used memories are reinforced

``step`` is ``retrieve`` + ``build_prompt`` + ``llm`` + ``parse_reply``; call them yourself
to change any part. ``retrieve`` searches the bank's memory store (sam_model.store) with the query's step and
the current task's start, as evaluate.py does, so over an agent life it ranks what evaluate.py measures (with
the bank's priors off, its default for a model with learned time features: see sam_model.memory.config): the
events before the decision, its own not yet written (as examples/agent_loop.py runs it). A message observed
first is found by a retrieve made now, the default (its words are the query's: rank 1); give
``retrieve(..., step=)`` its step to leave it out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from sam_model.data.schema import Event, State
from sam_model.hit import Hit
from sam_model.limits import check_k, check_step, check_text
from sam_model.locking import locked
from sam_model.memory.bank import MemoryBank
from sam_model.memory.config import MemoryConfig
from sam_model.memory.rules import BankRules
from sam_model.memory.unit import MemoryUnit, values_in
from sam_model.store import encoder_of, reads_openings, refuse_reuse, store_config_of
from sam_model.storeconfig import StoreConfig

_CITE = re.compile(r"\[(\d+)\]|\bmemor(?:y|ies)\s*#?(\d+)", re.IGNORECASE)
_THOUGHT = re.compile(r"^\s*thought\s*:\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_ACTION = re.compile(r"^\s*action\s*:\s*(.*)$", re.IGNORECASE | re.MULTILINE)


class SAMMemory:
    """An encoder plus a bank plus the state-driven rules, with the calls an agent needs."""

    def __init__(self, encoder: Any, bank: MemoryBank | None = None, config: MemoryConfig | None = None,
                 episode_id: str = "agent", k: int = 5, store_config: StoreConfig | None = None,
                 scope: str = "episode"):
        """``encoder``: a SAMRetriever (its encoder and its export's search settings) or any
        sam_model.encoder.Encoder. ``config``: the bank's rules (default: MemoryConfig.for_encoder).
        ``scope``: search the current episode (an agent life is one episode: evaluate.py's default scope) or
        ``"all"`` the bank holds (evaluate.py's ``--scope global``)."""
        if scope not in ("episode", "all"):
            raise ValueError(f"scope must be 'episode' or 'all', got {scope!r}")
        self.scope = scope
        self.encoder = encoder_of(encoder)
        refuse_reuse(self.encoder, "SAMMemory")  # its units' vectors would keep u_m = 0 at every search
        if bank is None:
            bank = MemoryBank(int(self.encoder.dim), config or MemoryConfig.for_encoder(self.encoder),
                              store_config or store_config_of(encoder))
        self.bank = bank
        if self.bank.dim != self.encoder.dim:
            raise ValueError(f"the bank has dim {self.bank.dim} but the encoder encodes dim {self.encoder.dim}; "
                             "use a bank built with this encoder")
        if self.bank.saved_probe is not None:  # a bank file: written by this model? (another's vectors rank badly)
            self.bank.store.check_encoder(self.bank.saved_probe, "memory bank", self.encoder,
                                          fix="rebuild the bank with this one from the agent log")
        if reads_openings(self.encoder):  # each unit says whether it opened its task, and the bank's saves keep it
            self.bank.store.check_openings("memory bank", self.encoder)
            self.bank.store.keep_openings = True
        self.bank.encoder = self.encoder
        self.rules = BankRules(self.bank, encode=lambda units: self.encoder.encode_memories(units))
        self.k = check_k(k)
        self._enter(episode_id)

    @property
    def lock(self):
        """The bank's lock: the agent's calls and the bank's own run one at a time (sam_model.locking); ``step``
        holds it only around its retrieve and its record, never while the LLM answers."""
        return self.bank.lock

    # -- writing
    @locked
    def observe(self, event: Event | str, state: State | None = None, kind: str = "observation") -> MemoryUnit | None:
        """Write what the agent saw. ``event`` is an Event, or a text (of ``kind``) at the next step."""
        if isinstance(event, str):  # the next step of the episode in the bank: another agent may share it
            step = max(self.next_step, self.bank.store.next_step(self.episode_id) or 0)
            event = Event(self.episode_id, step, kind, event, state or self.state)
        state = event.state if state is None else state
        unit = self.rules.observe(event, state=state)  # refused (a bad state, an encoder error): nothing changes
        if event.episode_id == self.episode_id:
            self.next_step = max(self.next_step, event.step + 1)
        self.state = state
        return unit

    @locked
    def begin(self, episode_id: str | None = None) -> None:
        """Start a new task: in the episode ``episode_id`` (a new one gets a fresh step counter), or in the
        current one (the next task of an agent life). The task starts at the next step: queries then carry
        that task start, and the task's first memory is compared with no earlier state (as in a life's log)."""
        if episode_id is not None and episode_id != self.episode_id:
            self._enter(episode_id)
        self.bank.recorder.new_task(self.episode_id, self.next_step)

    def _enter(self, episode_id: str) -> None:
        """Continue (or open) the episode: its step counter and last state come from the bank; the hits of the
        last retrieve are forgotten (they were another episode's: citing "[1]" in this one must not reinforce
        them)."""
        if not isinstance(episode_id, str) or not episode_id:
            raise ValueError(f"episode_id must be a non-empty string, got {episode_id!r}")
        self.episode_id = episode_id
        self.last_hits: list[Hit] = []
        self.last_used: list[str] = []
        self.next_step = self.bank.store.next_step(episode_id) or 0
        self.state = self.bank.last_state.get(episode_id, State())

    @property
    def task_start(self) -> int | None:
        """The step where the current task began (the bank's recorder; None before the episode's first event)."""
        return self.bank.recorder.task_start(self.episode_id)

    @locked
    def record(self, thought: str, action: str, result: str = "", state: State | None = None) -> list[MemoryUnit]:
        """Write the agent's thought, action and the action's result; reinforce the memories used.

        A retrieved memory counts as used when the thought or action cites it (``[2]``,
        ``memory 2``) or repeats one of its values. ``state`` is the state the action was
        taken in (default: the one of the last ``retrieve``/``observe``).
        """
        used = self.used_memories(f"{thought}\n{action}")
        self.rules.reinforce(used)
        self.last_used = used
        state = self.state if state is None else state
        written = [self.observe(text, state, kind)
                   for kind, text in (("thought", thought), ("action", action), ("result", result)) if text]
        return [u for u in written if u is not None]

    def used_memories(self, text: str) -> list[str]:
        cited = {int(a or b) for a, b in _CITE.findall(text)}
        used = []
        for i, hit in enumerate(self.last_hits, 1):
            if hit.id not in self.bank or (self.scope == "episode" and hit.episode_id != self.episode_id):
                continue
            u = self.bank.unit(hit.id)
            if i in cited or values_in(text, [v for v in u.entities if len(v) > 2]):
                used.append(u.id)
        return used

    # -- reading
    @locked
    def retrieve(self, state: State, observation: str, k: int | None = None, step: int | None = None,
                 task_start: int | None = None) -> list[Hit]:
        """The memories for this state and observation, best first: the store's search (with the query's
        ``step``, default the next step, and the current task's start) and the bank's priors and expansion. A
        ``step`` given leaves the episode's memories at or after it out (the agent's current event, observed before
        the search: evaluate.py ranks the events before a decision point); the default, now, leaves none out."""
        if not isinstance(state, State):
            raise TypeError(f"state must be a sam_model.data.schema.State, got {type(state).__name__}")
        check_text(observation, "observation", empty=True)
        check_step(step), check_step(task_start, "task_start")
        self.state = state
        if len(self.bank) == 0:
            self.last_hits = []
            return []
        before = None if step is None else (self.episode_id, step)  # now (another agent's newer memories too)
        step = self.next_step if step is None else step
        task_start = self.task_start if task_start is None else task_start
        q = self.encoder.encode_queries([state], [observation], steps=[step], task_starts=[task_start])[0]
        hits = self.bank.search(q, self.k if k is None else k, needs=state.uncertainty_flags,
                                episode_id=self.episode_id if self.scope == "episode" else None, before=before)
        self.bank.touch([h.id for h in hits])
        self.last_hits = hits
        return hits

    def step(self, llm: Callable[[str], str], state: State, observation: str,
             k: int | None = None) -> tuple[str, str]:
        """Retrieve, prompt the LLM, and parse its reply into (thought, action)."""
        hits = self.retrieve(state, observation, k)
        return parse_reply(llm(self.build_prompt(state, hits, observation)))

    @locked
    def build_prompt(self, state: State, memories: Sequence[Hit | MemoryUnit | str], observation: str) -> str:
        """:func:`build_prompt` with each hit's unit from the bank (what it says of corrections). Under the bank's
        lock: another agent sharing the bank could prune a unit between the membership test and the read."""
        return build_prompt(state, [self.bank.unit(m.id) if isinstance(m, Hit) and m.id in self.bank else m
                                    for m in memories], observation)


def _value(v) -> str:
    return "/".join(map(str, v)) if isinstance(v, list) else str(v)


def build_prompt(state: State, memories: Sequence[Hit | MemoryUnit | str], observation: str) -> str:
    """The prompt: the state in words, the memories numbered, the observation, a request for Thought and Action."""
    lines = ["You are an agent working on a long task. Use the memories below when they help.", "",
             "## Current state", f"Phase: {state.phase or 'none'}"]
    if state.subgoal_stack:
        lines.append("Sub-goals (current last): " + " > ".join(state.subgoal_stack))
    if state.constraints:
        lines.append("Known: " + ", ".join(f"{k}={_value(v)}" for k, v in sorted(state.constraints.items())))
    if state.uncertainty_flags:
        lines.append("Still needed: " + ", ".join(state.uncertainty_flags))
    if state.last_action_result:
        lines.append(f"Last result: {state.last_action_result}")
    lines += ["", "## Retrieved memories"]
    if not memories:
        lines.append("(none)")
    for i, m in enumerate(memories, 1):
        if isinstance(m, (MemoryUnit, Hit)):
            corrected = getattr(m, "superseded_by", None)
            note = f" (step {m.step}, phase {m.phase or 'none'}"
            note += f", corrected later by {corrected}" if corrected else ""
            lines.append(f"{i}. {m.text}{note})")
        else:
            lines.append(f"{i}. {m}")
    lines += ["", "## Observation", observation, "",
              "Reply with two lines, citing memories by number where you use them:",
              "Thought: <your reasoning>", "Action: <the next action>"]
    return "\n".join(lines)


def parse_reply(reply: str) -> tuple[str, str]:
    """(thought, action) from an LLM reply; a reply without an ``Action:`` line is all action."""
    thought = _THOUGHT.search(reply)
    action = _ACTION.search(reply)
    if action is None:
        return (thought.group(1).strip() if thought else ""), reply.strip()
    return (thought.group(1).strip() if thought else ""), action.group(1).strip()
