"""Stop 59's reader leftovers (its note's "Left" and final review): each test fails on the code before its fix."""

from __future__ import annotations

from test_format_gemini_stream import piece

from sam_model.data.formats import to_chat


class Counted(str):
    """A streamed piece that counts the characters each ``+`` joining it to the text before copies (``old + piece``
    tries ``Counted.__radd__`` first, a subclass of str overriding it): how the reader's cost grows, without timing."""

    copied = 0

    def __radd__(self, other: str) -> str:
        Counted.copied += len(other) + len(self)
        return str.__add__(other, str(self))


def test_a_long_streamed_string_is_joined_once_not_piece_by_piece():
    """Gemini/Vertex streamed string arguments were appended piece by piece (old + piece), each piece copying the
    text so far: quadratic in the pieces, 20,000 chunks of an argument copied ~2 * 10^9 characters. The pieces are
    kept and joined once when the call ends: the same arguments, no characters copied by +."""
    n = 20_000
    texts = [f"{k:05d}|" for k in range(n)]
    Counted.copied = 0
    contents = [{"role": "user", "parts": [{"text": "Write it."}]}, piece(name="write"),
                piece([{"jsonPath": "$.path", "stringValue": "a.py"}]),
                *(piece([{"jsonPath": "$.text", "stringValue": Counted(t)}]) for t in texts),
                piece([{"jsonPath": "$.mode", "numberValue": 6.0}], more=False)]
    (call,) = to_chat(contents, "x").messages[-1]["tool_calls"]
    assert call["function"]["arguments"] == {"path": "a.py", "text": "".join(texts), "mode": 6}
    assert type(call["function"]["arguments"]["text"]) is str
    assert Counted.copied <= len("".join(texts))  # linear: at most the text once (quadratic before: ~n^2 / 2 * 6)


def test_a_streamed_string_replaced_by_a_value_or_whole_args_keeps_the_last():
    """What a piece gives whole at a streamed string's path replaces it, as before (the pieces are not joined
    after it): a number at the path, then a string streamed again from scratch; args given whole by a piece."""
    contents = [{"role": "user", "parts": [{"text": "Go."}]}, piece(name="go"),
                piece([{"jsonPath": "$.a", "stringValue": "x"}, {"jsonPath": "$.a", "stringValue": "y"},
                       {"jsonPath": "$.a", "numberValue": 3.0}, {"jsonPath": "$.a", "stringValue": "z"},
                       {"jsonPath": "$.b", "stringValue": "p"}, {"jsonPath": "$.b", "stringValue": "q"}]),
                piece(args={"b": "whole"}),
                piece([{"jsonPath": "$.b", "stringValue": "+r"}, {"jsonPath": "$.c[0]", "stringValue": "l"},
                       {"jsonPath": "$.c[0]", "stringValue": "m"}], more=False)]
    (call,) = to_chat(contents, "x").messages[-1]["tool_calls"]
    assert call["function"]["arguments"] == {"a": "z", "b": "whole+r", "c": ["lm"]}
