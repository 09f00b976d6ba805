"""A call's decision after some user turns: the one helper the labelling-rule tests share."""

from __future__ import annotations

from typing import Any

from sam_model.data.toolstate import ToolCall, TranscriptState


def decide(tool: str, arguments: dict[str, Any], *earlier: str):
    """The decision on one call to ``tool`` made after a user turn for each of ``earlier`` and the agent's words."""
    st = TranscriptState()
    for text in earlier:
        st.add({"role": "user", "content": text})
    st.add({"role": "assistant", "content": "Looking."})
    return st.decide([ToolCall(tool, arguments, "x")])


def needed(command: str, *earlier: str) -> tuple[dict, list[int]]:
    """The needed values and labels of one ``Bash`` call made after a user turn for each of ``earlier``."""
    d = decide("Bash", {"command": command}, *earlier)
    return d.needed, d.labels
