"""Review of the two-conversation rule (sam_model.memory.resent.opening) with the formats beside it: Responses
items, whose input list opens with its system or developer message where the caller gives no ``instructions``,
were left out of it, so two sessions of one Responses loop adding their whole lists (no ids: ``store=False``)
took each other's mark, and each stored its earlier turns again (12 memories for 8)."""

from __future__ import annotations

import pytest

from sam_model.memory import HashingEncoder, ScopedMemory


def _memory() -> ScopedMemory:
    return ScopedMemory(HashingEncoder(16))


def stored(memory: ScopedMemory) -> list[str]:
    got = sorted(memory.get_all(user_id="t", run_id="r", limit=None)["results"], key=lambda r: r["step"])
    return [r["memory"] for r in got]


def responses(topic: str, role: str) -> list[dict]:
    """A Responses loop's input list (``store=False``: no item holds an id), its instructions as its first item."""
    return [{"role": role, "content": "You are the concierge of Hotel Aurora."},
            {"role": "user", "content": f"Hi, about {topic}."},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"{topic}: when?"}]},
            {"role": "user", "content": f"{topic} at 7."},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"{topic}: done."}]}]


def interleaved(first: list, second: list, ends: list[tuple[int, int]]) -> tuple[list, list]:
    """(what a scope stores of two lists added whole after each turn, taking turns; of each turn's new items)."""
    whole, new, at = _memory(), _memory(), [0, 0]
    for ends_now in ends:
        for i, (items, end) in enumerate(zip((first, second), ends_now)):
            whole.add(items[:end], user_id="t", run_id="r")
            new.add(items[at[i]:end], user_id="t", run_id="r")
            at[i] = end
    return stored(whole), stored(new)


@pytest.mark.parametrize("role", ["developer", "system"])
def test_two_responses_loops_opening_with_their_instructions_store_each_item_once(role):
    whole, new = interleaved(responses("a table", role), responses("a taxi", role), [(3, 3), (5, 5)])
    assert whole == new and len(new) == 8


def test_documents_behaviour_a_save_from_before_the_lists_rule_stores_the_earlier_turns_again_once(tmp_path):
    """Documents behaviour (README): a save made mid-conversation before Responses items and Gemini contents followed
    the whole-history rule holds no kept add of them, so the first whole list added after loading it is read with
    the open turn alone, as before, storing the earlier turns' bare messages (Gemini: every content) again once;
    the next list reads its start once."""
    import json

    import test_live_gemini_turn as gemini
    import test_live_responses as responses_log

    for module, ends, want in ((responses_log, [2, 8, 13], (12, 15)), (gemini, [2, 7, 10], (10, 17))):
        msgs, memory = module.conversation(), _memory()
        for end in ends[:2]:
            memory.add(msgs[:end], user_id="t", run_id="r")
        saved = memory.save(tmp_path / module.__name__)
        d = json.loads((saved / "scoped.json").read_text())
        (saved / "scoped.json").write_text(json.dumps({k: v for k, v in d.items() if k not in ("sent", "given")}))
        loaded = ScopedMemory.load(saved, HashingEncoder(16))
        for m in (memory, loaded):
            m.add(msgs[:ends[2]], user_id="t", run_id="r")
        assert (len(module.stored(memory)), len(module.stored(loaded))) == want
        before = module.stored(loaded)
        loaded.add([*msgs[:ends[2]], {"role": "user", "parts": [{"text": "Thanks."}]} if module is gemini
                    else {"role": "user", "content": "Thanks."}], user_id="t", run_id="r")
        assert module.stored(loaded)[:len(before)] == before and len(module.stored(loaded)) == len(before) + 1


DEV = {"role": "developer", "content": "You are the concierge of Hotel Aurora."}
U1, U2 = {"role": "user", "content": "Hi, a table tonight."}, {"role": "user", "content": "Two, at 7."}


def said(text: str, i: int) -> dict:
    return {"type": "message", "role": "assistant", "id": f"msg_{i}", "content": [{"type": "output_text", "text": text}]}


@pytest.mark.parametrize("opening", [[DEV], []], ids=["developer first", "words first"])
def test_a_responses_list_added_whole_at_each_message_stores_its_first_words_once(opening):
    """An agent adding its whole input list at each message (before each response, then with it): the first list,
    bare messages alone, reads as OpenAI chat, and the next, holding the response, as Responses items, read against
    its own format's kept adds alone: the user's first words were stored twice, though the README says to add the
    whole list each time. A Responses list reads the OpenAI chat adds too (its first bare messages are read so)."""
    items = [*opening, U1, said("For how many?", 1), U2, said("Booked.", 2)]
    memory, new = _memory(), _memory()
    for end in range(len(opening) + 1, len(items) + 1):
        memory.add(items[:end], user_id="t", run_id="r")
    for add in ([*opening, U1], *([m] for m in items[len(opening) + 1:])):
        new.add(add, user_id="t", run_id="r")
    assert stored(memory) == stored(new) and stored(new).count(U1["content"]) == 1


def test_gemini_contents_added_whole_at_each_message_store_the_first_words_once():
    """A whole contents list added at each message, its first a content alone: that add was read with the open turn
    and kept no add (an add of one content was never a whole list), so the next list, opening with it, stored the
    user's first words twice (the README says to add the whole list each time)."""
    import test_live_gemini_turn as gemini

    contents = [gemini.text("user", "Hi, a table tonight."), gemini.text("model", "For how many?"),
                gemini.text("user", "Two, at 7."), gemini.text("model", "Booked.")]
    memory = _memory()
    for end in range(1, len(contents) + 1):
        memory.add(contents[:end], user_id="t", run_id="r")
    assert stored(memory) == ["Hi, a table tonight.", "For how many?", "Two, at 7.", "Booked."]
    memory, note = _memory(), gemini.text("user", "Note: the guest is vegetarian.")
    for add in (contents[:2], [note], contents):  # guard: a content alone between two lists is apart, as before
        memory.add(add, user_id="t", run_id="r")
    assert stored(memory) == [*[c["parts"][0]["text"] for c in contents[:2]], note["parts"][0]["text"],
                              *[c["parts"][0]["text"] for c in contents[2:]]]
