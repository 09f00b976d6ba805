"""One marker for a recall's output stored by every adapter (integrations.scopes.recalled): smolagents' callback
and the Agents SDK's session each wrote their own, the second saying "[1 memories recalled: stored already]"."""

from __future__ import annotations

from sam_model.integrations import scopes


def test_the_marker_counts_memories_as_english_does():
    assert scopes.recalled(1) == "[1 memory recalled: stored already]"
    assert scopes.recalled(3) == "[3 memories recalled: stored already]"

