"""How states and memories are written as text for the BERT encoders.

One place for this, because training, export, evaluation baselines and the memory
bank must all see exactly the same strings.
"""

from __future__ import annotations

from typing import Any

from sam_model.data.schema import Event, State


def _fmt(value: Any) -> str:
    if isinstance(value, list):
        return "/".join(_fmt(v) for v in value)
    return str(value)


def norm(value: Any) -> str:
    """Integral floats as ints, then lower-case, collapse whitespace runs, strip: how values are matched
    against texts (SGD mention sets, provenance links, tool-call arguments, a memory unit's facts). A list or
    tuple is its items' forms joined by '/' (a unit's fact keeps one value per slot)."""
    if isinstance(value, (list, tuple)):
        return "/".join(norm(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return " ".join(str(value).lower().split())


# The field labels of a state's text, in the order state_to_text writes them (and drop_known reads them).
PHASE, SUBGOALS, NEEDS, KNOWN, LAST_RESULT = TEXT_FIELDS = ("phase: ", "subgoals: ", "needs: ", "known: ",
                                                            "last result: ")


def state_to_text(state: State) -> str:
    """The state as one line: phase, sub-goals (top last), constraints, open needs, last result.

    Field names are kept in the text so that a slot name in ``needs`` can be matched
    to the memory that mentions a value of that slot.
    """
    parts = [f"{PHASE}{state.phase or 'none'}"]
    if state.subgoal_stack:
        parts.append(SUBGOALS + " > ".join(state.subgoal_stack))
    if state.uncertainty_flags:
        parts.append(NEEDS + ", ".join(state.uncertainty_flags))
    if state.constraints:
        parts.append(KNOWN + ", ".join(f"{k}={_fmt(v)}" for k, v in sorted(state.constraints.items())))
    if state.last_action_result:
        parts.append(f"{LAST_RESULT}{state.last_action_result}")
    return " | ".join(parts)


def drop_known(state_text: str) -> str:
    """``state_text`` (as ``state_to_text`` writes it) without its ``known: ...`` field: the text of the same state
    with no constraints, what known-value dropout trains on (sam_model.training.batching.encode_batch). A value
    holding " | " stays inside its field (the parts after ``known:`` are skipped up to the next field's label)."""
    out, skipping = [], False
    for part in state_text.split(" | "):
        if part.startswith(KNOWN):
            skipping = True
        elif not skipping or part.startswith(TEXT_FIELDS):
            skipping = False
            out.append(part)
    return " | ".join(out)


def constraints_delta(before: State | None, after: State) -> list[str]:
    """Constraint slots that ``after`` sets or changes compared with ``before``.

    An event's memory is more than its words: the slots the agent's state learned
    at that event are what a later state that needs those slots is looking for.
    """
    prev = before.constraints if before is not None else {}
    return sorted(k for k, v in after.constraints.items() if prev.get(k) != v)


def memory_to_text(event: Event, sets: list[str] | None = None) -> str:
    """A memory as text: its kind, the slots its event established, and its content."""
    head = f"[{event.kind}]"
    if sets:
        head += " sets " + ", ".join(sets) + ":"
    return f"{head} {event.text}"


def content_text(kind: str, text: str) -> str:
    """A memory as plain content, without anything taken from the agent's state: what a
    vector database would store (the content-only ablation reads this)."""
    return f"[{kind}] {text}"
