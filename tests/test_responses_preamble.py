"""A Responses model often writes words before its call in one response (a preamble: a message item, then the
function_call). The importer reads a message and the calls right after it as one turn, deciding before the words;
live_state, given the items up to the call, decided at the words, so the state a live Responses agent computed
flagged values the training state did not (a walkthrough's property-management agent: the phone the user had just
given, an observation to the importer, was flagged needed). live_state now decides where the importer does."""

from __future__ import annotations

import json

from sam_model.data.transcripts import iter_transcript_events, live_state

USER = "The sink in 4B leaks. My phone is (415) 555-0142."
ARGS = {"phone": "(415) 555-0142", "unit": "4B"}


def test_a_responses_preamble_and_its_call_are_one_turn_for_live_state_as_for_the_importer(tmp_path):
    """The phone said turns earlier is needed; the unit, said by the user's last message (the importer's decision
    point, before the preamble), is an observation. Decided at the preamble, both were flagged."""
    first = {"role": "user", "content": "Hi, my phone is (415) 555-0142."}
    ask = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Which unit?"}]}
    unit = {"role": "user", "content": "Unit 4B, the kitchen sink leaks."}
    words = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me look."}]}
    call = {"type": "function_call", "call_id": "c1", "name": "lookup_tenant", "arguments": json.dumps(ARGS)}
    done = {"type": "function_call_output", "call_id": "c1", "output": '{"tenant_id": "TN-1"}'}
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"id": "r1", "input": [first, ask, unit, words, call, done]}) + "\n")
    events = list(iter_transcript_events(log))
    decided = next(e for e in events if e.get("useful_memory_steps"))
    assert decided["text"] == "Unit 4B, the kitchen sink leaks."  # before the preamble: one turn with the call
    got = live_state([first, ask, unit, words], call)
    assert got["uncertainty_flags"] == ["phone"]
    assert got == decided["state"]


def test_openai_chat_keeps_a_message_of_words_and_a_later_one_of_calls_two_turns(tmp_path):
    """OpenAI chat writes a preamble and its calls in one message; two assistant messages are two turns there, for
    the importer and live_state alike (unchanged)."""
    user = {"role": "user", "content": USER}
    words = {"role": "assistant", "content": "Let me look."}
    call = {"id": "c1", "type": "function", "function": {"name": "lookup_tenant", "arguments": json.dumps(ARGS)}}
    line = {"id": "o1", "messages": [user, words, {"role": "assistant", "content": None, "tool_calls": [call]},
                                      {"role": "tool", "tool_call_id": "c1", "content": "TN-1"}]}
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(line) + "\n")
    events = list(iter_transcript_events(log, allow_empty=True))
    decided = next(e for e in events if e.get("useful_memory_steps"))
    assert decided["text"] == "Let me look." and live_state([user, words], call)["uncertainty_flags"] == [
        "phone", "unit"]
