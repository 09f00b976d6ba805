"""sam_preload_memory where ADK inserts the recall right before another agent's "For context:" note: the turn's
user contents after the current agent's own tool call and result open with that note (a sub-agent's answer, shown
to the coordinator the user comes back to), the user's question after it. Run with the real Runner (google-adk's
side venv); skipped without it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from test_adk_memory import POLICY, REAL, adapter, run  # noqa: F401 (adapter: a fixture)

from sam_model.memory import HashingEncoder, ScopedMemory

pytestmark = pytest.mark.skipif(not REAL, reason="google-adk is not installed (run with its side venv)")


def _note(content: Any) -> bool:
    """Whether a content holds ADK's note of another agent's turn (in any of its parts: the recall merged into one
    leads it)."""
    return content.role == "user" and any((p.text or "").startswith("For context:") for p in content.parts)


def test_the_recall_before_another_agents_note_goes_in_the_users_question_not_the_note(adapter):  # noqa: F811
    """Turn one: the coordinator transfers to bookings, which answers. Turn two goes to the coordinator (bookings
    may not transfer back): its request holds its transfer call and result, then bookings' answer as a "For
    context:" note, then the question; ADK inserts the recall before the note, and sam_preload_memory merged it
    into the note, the recall read as bookings' transcript. It goes in the question's content, first parts, the
    question's text last; no note holds it, the request holds it once, and the session never."""
    from google.adk.agents import LlmAgent
    from test_adk_memory import Scripted

    store = ScopedMemory(HashingEncoder(64))
    store.add("Ann's reservation is QX7Z9A", user_id="ann_lee_123", agent_id="airline")
    bookings = LlmAgent(name="bookings", instruction=POLICY, disallow_transfer_to_parent=True,
                        model=Scripted(script=[["It is QX7Z9A."]], requests=[]))
    model = Scripted(script=[[{"name": "transfer_to_agent", "args": {"agent_name": "bookings"}}],
                             ["Your flight leaves at 9."]], requests=[])
    coordinator = LlmAgent(name="coordinator", instruction=POLICY, sub_agents=[bookings], model=model,
                           tools=[adapter.sam_preload_memory])
    session = asyncio.run(run(coordinator, ["Which reservation was it?", "When does my flight leave?"],
                              memory=adapter.SAMMemoryService(store)))
    assert len(model.requests) == 2
    contents = model.requests[1].contents
    notes = [c for c in contents if _note(c)]
    assert notes and not any("PAST_CONVERSATIONS" in (p.text or "") for c in notes for p in c.parts), notes
    asked = contents[-1]
    texts = [p.text for p in asked.parts]
    assert asked.role == "user" and "<PAST_CONVERSATIONS>" in texts[0] and "QX7Z9A" in texts[0], texts
    assert texts[-1] == "When does my flight leave?"
    assert sum("PAST_CONVERSATIONS" in (p.text or "") for c in contents for p in c.parts) == 1
    said = json.dumps(json.loads(session.model_dump_json()))
    assert "PAST_CONVERSATIONS" not in said and "When does my flight leave?" in said
