"""Typed events and states of the agent-log format (``../shared/spec/agent-log.md``).

Parsing is strict and every failure is a :class:`LogFormatError` that carries the
file and line, because users feed us logs from their own agents and need to know
exactly which line to fix.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sam_model.data.formats import (
    claude_code,
    claude_stream,
    codex,
    codex_exec,
    gemini_cli,
    openhands,
    pydantic_ai,
)
from sam_model.io import json_type

STATE_FIELDS = ("phase", "subgoal_stack", "constraints", "uncertainty_flags", "last_action_result")
EVENT_FIELDS = ("episode_id", "step", "kind", "text", "state", "useful_memory_steps", "meta")
REQUIRED_FIELDS = ("episode_id", "step", "kind", "text")
MAX_STEP = 2**63 - 1  # steps are int64 in training batches and Arrow tables


class LogFormatError(ValueError):
    """A line of an agent log breaks the format. ``str()`` reads ``FILE:LINE: reason``."""

    def __init__(self, source: str, line: int, reason: str):
        self.source, self.line, self.reason = source, line, reason
        super().__init__(f"{source}:{line}: {reason}")


@dataclass(frozen=True)
class State:
    """The agent's task state when an event was logged; missing fields mean empty."""

    phase: str = ""
    subgoal_stack: tuple[str, ...] = ()
    constraints: dict[str, Any] = field(default_factory=dict)
    uncertainty_flags: tuple[str, ...] = ()
    last_action_result: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "subgoal_stack": list(self.subgoal_stack),
            "constraints": dict(self.constraints),
            "uncertainty_flags": list(self.uncertainty_flags),
            "last_action_result": self.last_action_result,
        }

    @classmethod
    def from_json(cls, obj: Any, where: str = "state") -> State:
        """Build a State from its JSON object; raises ValueError naming the bad field."""
        if obj is None:
            return cls()
        if not isinstance(obj, dict):
            raise ValueError(f"'{where}' must be an object, got {json_type(obj)}")
        phase = _str(obj.get("phase"), f"{where}.phase")
        stack = _str_list(obj.get("subgoal_stack"), f"{where}.subgoal_stack")
        flags = _str_list(obj.get("uncertainty_flags"), f"{where}.uncertainty_flags")
        constraints = obj.get("constraints")
        if constraints is None:
            constraints = {}
        if not isinstance(constraints, dict):
            raise ValueError(f"'{where}.constraints' must be an object, got {json_type(constraints)}")
        for key, value in constraints.items():
            ok = _is_scalar(value) or (isinstance(value, list) and all(_is_scalar(v) for v in value))
            if not ok:
                raise ValueError(f"'{where}.constraints.{key}' must be a scalar or a list of scalars")
            if any(isinstance(v, float) and not math.isfinite(v) for v in (value if isinstance(value, list) else [value])):
                raise ValueError(f"'{where}.constraints.{key}' must be a finite number, got {value!r}")
        last = _str(obj.get("last_action_result"), f"{where}.last_action_result")
        extra = {k: v for k, v in obj.items() if k not in STATE_FIELDS}
        return cls(phase, tuple(stack), dict(constraints), tuple(flags), last, extra)


@dataclass(frozen=True)
class Event:
    """One line of an agent log. ``useful_memory_steps`` is set on decision points only."""

    episode_id: str
    step: int
    kind: str
    text: str
    state: State = field(default_factory=State)
    useful_memory_steps: tuple[int, ...] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def is_decision_point(self) -> bool:
        return bool(self.useful_memory_steps)

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON object of the log format (state extras go back into meta)."""
        out: dict[str, Any] = {
            "episode_id": self.episode_id,
            "step": self.step,
            "kind": self.kind,
            "text": self.text,
            "state": self.state.to_json(),
        }
        if self.useful_memory_steps is not None:
            out["useful_memory_steps"] = list(self.useful_memory_steps)
        meta = dict(self.meta)
        if self.state.extra:
            meta.setdefault("state_extra", dict(self.state.extra))
        if meta:
            out["meta"] = meta
        return out

    def to_line(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)


def as_state(s: Any) -> State:
    """A State from a State or a state mapping (phase, constraints, ...), with a clear error otherwise."""
    if isinstance(s, State):
        return s
    if not isinstance(s, Mapping):
        raise TypeError(f"state must be a State or a state mapping (phase, constraints, ...), got {type(s).__name__}")
    _check_query_fields(s)
    return State.from_json(dict(s))


def _check_query_fields(s: Mapping) -> None:
    """A query state's keys: one that misspells a field it lacks (``constraint``, ``phaes``), or a mapping with no
    field at all, is refused. Extra keys are kept as State.extra, which the encoder does not read, so such a query
    searched by an empty state, silently. Other extra keys pass, as in a log."""
    known = set(STATE_FIELDS)
    for key in s:
        if key in known:  # the usual case, on every search: no fuzzy match
            continue
        close = difflib.get_close_matches(str(key), [f for f in STATE_FIELDS if f not in s], n=1, cutoff=0.75)
        if close:
            raise ValueError(f"state.{key} is not a state field: did you mean {close[0]!r}? (the fields: "
                             f"{', '.join(STATE_FIELDS)})")
    if s and not known.intersection(s):
        raise ValueError(f"state has none of the state fields ({', '.join(STATE_FIELDS)}), only "
                         f"{sorted(map(str, s))[:5]}: the search would rank by an empty state")


TRANSCRIPT_HINT = ("this looks like a tool-call transcript, not an agent log: convert it with `sam-data transcripts "
                   "FILE OUT.jsonl` (train.py and evaluate.py take transcripts as they are)")


def named(hint: str, source: str) -> str:
    """``hint`` with its FILE the file read (quoted for the shell), where ``source`` names one: read_episodes on a
    transcript said "sam-data transcripts FILE OUT.jsonl", a placeholder the message's own file could fill."""
    if not source or source.startswith("<"):  # "<input>", "<stdin>": no file to name
        return hint
    import shlex

    return hint.replace("transcripts FILE ", f"transcripts {shlex.quote(source)} ", 1)


# what holds a conversation in each log format sam-data transcripts reads: messages (OpenAI, Anthropic, Bedrock,
# LangChain), contents (Gemini), input / items (Responses), resourceSpans (OTLP), traj (tau-bench), history /
# trajectory (SWE-agent, an OpenHands evaluation's output.jsonl), action / observation (an OpenHands event)
CONVERSATION_KEYS = ("messages", "role", "contents", "input", "items", "resourceSpans", "traj", "history",
                     "trajectory", "action", "observation", "steps", "step_number")


def _chat(obj: Any) -> bool:
    """A conversation or a trajectory (a transcript given as an agent log), not an event; or a line of a file that is
    one conversation a line at a time (a Codex rollout's, a Claude Code session's: its first line may hold no
    message at all, a session's meta or a file-history snapshot; a Gemini CLI session's, its metadata or a message
    record; an agent's headless output, Claude Code's
    stream-json or codex exec's events, whose first line is its run's start; a Pydantic AI message, of a history
    written as a line)."""
    return isinstance(obj, dict) and (any(k in obj for k in CONVERSATION_KEYS) or codex.is_rollout(obj)
                                      or claude_code.is_entry(obj) or claude_stream.is_message(obj)
                                      or codex_exec.is_event(obj) or gemini_cli.is_record(obj)
                                      or pydantic_ai.is_message(obj))


def is_transcript(obj: Any) -> bool:
    """A line parse_event tells to convert with sam-data transcripts: a conversation or a session's line
    (:func:`_chat`), or a list holding them; not an OpenHands event alone, which it tells how to write the run."""
    if isinstance(obj, list):
        return any(_chat(x) for x in obj[:3])
    return _chat(obj) and _transcript_hint(obj) is TRANSCRIPT_HINT


def _transcript_hint(obj: Any) -> str:
    """What to do with a transcript line given as an agent log: convert it, unless it is one OpenHands event alone,
    which sam-data transcripts refuses as well (and train.py reads as an agent log): then how to write its run."""
    if openhands.is_event(obj) and not openhands.is_v1_event(obj):
        return (f"not an agent log but {openhands.ALONE}; then `sam-data transcripts` converts it (train.py and "
                "evaluate.py take it as it is)")
    return TRANSCRIPT_HINT


def parse_event(obj: Any, source: str = "<input>", line: int = 0) -> Event:
    """Validate one decoded JSON value as an Event, or raise LogFormatError(source, line, reason)."""

    def fail(reason: str) -> LogFormatError:
        return LogFormatError(source, line, reason)

    if not isinstance(obj, dict):
        listed = isinstance(obj, list)
        raise fail(f"an event must be a JSON object, got {json_type(obj)}" + (
            ("; " + named(TRANSCRIPT_HINT, source) if any(_chat(x) for x in obj[:3]) else
             " (write each event as one object on its own line, JSON Lines)") if listed else ""))
    for name in REQUIRED_FIELDS:
        if name not in obj:
            raise fail(f"missing required field '{name}'" + ("; " + named(_transcript_hint(obj), source)
                                                              if _chat(obj) else ""))
    episode_id, step, kind, text = obj["episode_id"], obj["step"], obj["kind"], obj["text"]
    if not isinstance(episode_id, str) or not episode_id:
        raise fail("field 'episode_id' must be a non-empty string")
    if isinstance(step, bool) or not isinstance(step, int):
        raise fail(f"field 'step' must be an integer, got {json.dumps(step)}")
    if step < 0:
        raise fail(f"field 'step' must be >= 0, got {step}")
    if step > MAX_STEP:
        raise fail(f"field 'step' must fit in 64 bits (at most {MAX_STEP}), got {step}; renumber the episode's steps")
    if not isinstance(kind, str) or not kind:
        raise fail("field 'kind' must be a non-empty string")
    if not isinstance(text, str):
        raise fail(f"field 'text' must be a string, got {json_type(text)}")
    try:
        state = State.from_json(obj.get("state"))
    except ValueError as exc:
        raise fail(str(exc)) from None
    labels = obj.get("useful_memory_steps")
    if labels is not None:
        if not isinstance(labels, list) or any(isinstance(s, bool) or not isinstance(s, int) for s in labels):
            raise fail("field 'useful_memory_steps' must be a list of integers")
        for s in labels:
            if s >= step or s < 0:
                raise fail(
                    f"bad label: useful_memory_steps names step {s}, which is not an earlier step "
                    f"than this event's step {step}"
                )
        labels = tuple(sorted(set(labels)))
    meta = obj.get("meta")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise fail(f"field 'meta' must be an object, got {json_type(meta)}")
    unknown = {k: v for k, v in obj.items() if k not in EVENT_FIELDS}
    if unknown:
        meta = {**meta, "extra_fields": unknown}
    return Event(episode_id, step, kind, text, state, labels, meta)


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def _str(value: Any, where: str) -> str:
    """A state's string field: null or missing is empty, as the spec's missing fields are."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"'{where}' must be a string, got {json_type(value)}")
    return value


def _str_list(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"'{where}' must be a list of strings")
    return value
