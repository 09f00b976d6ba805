"""One marker for a recall's output stored by every adapter (data.formats.recalls.recalled): smolagents' callback
and the Agents SDK's session each wrote their own, the second saying "[1 memories recalled: stored already]"."""

from __future__ import annotations

from sam_model.data.formats import recalls


def test_the_marker_counts_memories_as_english_does():
    assert recalls.recalled(1) == "[1 memory recalled: stored already]"
    assert recalls.recalled(3) == "[3 memories recalled: stored already]"

