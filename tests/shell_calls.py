"""A shell call's labels after some user turns: the one helper the shell-rule tests share."""

from __future__ import annotations

from sam_model.data.toolstate import ToolCall, TranscriptState


def needed(command: str, *earlier: str) -> tuple[dict, list[int]]:
    """The needed values and labels of one ``Bash`` call made after a user turn for each of ``earlier``."""
    st = TranscriptState()
    for text in earlier:
        st.add({"role": "user", "content": text})
    st.add({"role": "assistant", "content": "Looking."})
    d = st.decide([ToolCall("Bash", {"command": command}, "x")])
    return d.needed, d.labels
