"""A LlamaIndex ``ReActAgent``'s reasoning, as its memory keeps it: one assistant message of text.

The ReAct agent calls no tool through the model's API: the model writes ``Thought: ...``, ``Action: NAME`` and
``Action Input: {...}`` lines, the agent runs the tool and writes ``Observation: ...``, until ``Thought: ...`` and
``Answer: ...``. After the run (llama-index-core 0.12 to 0.14, ``ReActAgent.finalize``) the memory holds the user's
message and one assistant message joining those steps' texts, each step's ``get_content()`` a line apart, the action
input its dict's Python repr. Read as words, such a memory held no call, and its conversations were refused as
having "no tool-call fields of any format at all". Read here, each action is a call (its id made from its place) and
its observation the call's result; the answer is the assistant's words.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from sam_model.data.formats.base import FAILED, chat_call

# the labels a step's get_content() writes at a line's start (ActionReasoningStep, ObservationReasoningStep,
# ResponseReasoningStep); a line with none goes on the field before it (a thought, an observation, an answer)
LABEL = re.compile(r"^(Thought|Action|Action Input|Observation|Answer): ?", re.MULTILINE)


def _fields(text: str) -> list[tuple[str, str]] | None:
    """``text``'s labelled fields in order, (label, text); None where it does not open with a thought."""
    marks = list(LABEL.finditer(text))
    if not marks or marks[0].start() != 0 or marks[0].group(1) != "Thought":
        return None
    return [(m.group(1), text[m.end():marks[i + 1].start() if i + 1 < len(marks) else len(text)].rstrip("\n"))
            for i, m in enumerate(marks)]


def _arguments(text: str) -> Any:
    """An action input: its dict's Python repr as the agent wrote it, or JSON; else the text as given."""
    for parse in (ast.literal_eval, json.loads):
        try:
            value = parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return text


def not_found(text: Any, name: Any) -> bool:
    """Whether ``text``, the result of a call of tool ``name``, is what LlamaIndex's agents (0.12 to 0.14) give a
    call of a tool they do not have: their ``ToolOutput`` says ``is_error``, a flag the memory's message does not
    keep, so the failed call read as ok."""
    return isinstance(name, str) and text == f"Tool {name} not found. Please select a tool that is available."


RAISED = "Encountered error: "  # llama-index-core's call_tool / acall_tool: a tool that raised, its words after it


def raised(text: Any) -> bool:
    """Whether ``text`` is what LlamaIndex's ``call_tool`` and ``acall_tool`` (0.12 to 0.14: ``predict_and_call``,
    ``call_tool_with_selection``, the agents before the workflow ones) give for a tool that raised, "Encountered
    error: " and the exception's words, flagged ``is_error`` in the ``ToolOutput`` only, so the failed call read as
    ok. The workflow agents (``FunctionAgent``, ``ReActAgent``) give the exception's words alone, which no rule can
    tell from a result."""
    return isinstance(text, str) and text.startswith(RAISED)


def failed(text: Any, name: Any) -> bool:
    """Whether ``text``, the result of a call of tool ``name``, is LlamaIndex's own words for a failed call."""
    return not_found(text, name) or raised(text)


def to_messages(text: str, where: str, at: int) -> list[dict[str, Any]] | None:
    """The OpenAI chat messages of a ReAct reasoning ``text`` (the message ``at`` of its conversation): a call per
    action, its observation the result; None where ``text`` is not such reasoning (no thought opening it, no action,
    steps out of the ReAct order, an action without its observation, no answer last), read as words, as before."""
    fields = _fields(text)
    if fields is None or not any(label == "Action" for label, _ in fields):
        return None
    out: list[dict[str, Any]] = []
    i, pending = 0, None
    while i < len(fields):
        label, value = fields[i]
        labels = [f[0] for f in fields[i:i + 3]]
        if label == "Thought" and labels == ["Thought", "Action", "Action Input"] and pending is None:
            pending = f"react-{at}-{len(out)}"
            out.append({"role": "assistant", "content": value or None, "tool_calls": [chat_call(
                pending, fields[i + 1][1].strip(), _arguments(fields[i + 2][1].strip()), where)]})
            i += 3
        elif label == "Observation" and pending is not None:
            name = out[-1]["tool_calls"][0]["function"]["name"]
            out.append({"role": "tool", "tool_call_id": pending, "content": value,
                        **({FAILED: True} if failed(value, name) else {})})
            pending, i = None, i + 1
        elif label == "Thought" and labels[:2] == ["Thought", "Answer"] and pending is None:
            out.append({"role": "assistant", "content": fields[i + 1][1]})
            i += 2
        else:
            return None
    # the agent keeps its reasoning once it answered (finalize): each action's observation, then the answer; a
    # model's words that only look like an action (no observation: no tool ran) are words
    return out if pending is None and out[-1]["role"] == "assistant" and "tool_calls" not in out[-1] else None
