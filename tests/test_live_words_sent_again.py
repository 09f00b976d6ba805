"""A whole history of words alone sent again exactly, as the scope's last add: what it stores, and why."""

from __future__ import annotations

from test_live_leftovers_61 import _words
from test_live_leftovers_63 import _memory, stored


def test_documents_behaviour_a_history_of_words_alone_sent_again_exactly_stores_its_reply_again():
    """Documents behaviour (README, "A conversation of words alone"): [Hi], then [Hi, Hello], then [Hi, Hello]
    again stores "Hello" twice. The third add, byte for byte the scope's last, is that add retried (its answer
    lost), or a second run made at once from [Hi] whose model replied alike (each run adds its whole history): the
    same adds in the same order. Words alone hold nothing written once (a call's id, a time) to tell the two apart;
    read once, the second run's reply would be lost, and a lost memory is worse than one stored twice."""
    hi, hello = _words("user", "Hi"), _words("assistant", "Hello")
    memory = _memory()
    for add in ([hi], [hi, hello], [hi, hello]):
        memory.add(add, user_id="t", run_id="r")
    assert [e[2] for e in stored(memory)] == ["Hi", "Hello", "Hello"]
