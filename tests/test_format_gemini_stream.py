"""Vertex AI's streamed function call arguments (``streamFunctionCallArguments``): a call comes as a run of
``functionCall`` pieces, the first naming it (``willContinue: true``), the next ones with ``partialArgs`` (a value at a
JSON path, a string continued across pieces while its ``willContinue`` says so), an empty one ending it; the SDK's
chat history keeps a content per chunk. Read a part at a time, the first piece was a call of no arguments and the
next a call of no name (refused as such), and a call given as one piece with its partialArgs was read silently with
none. They are assembled into the call's args; a stream the log cuts is refused in one line naming where it began."""

from __future__ import annotations

import json

import pytest
from test_formats import ARGS2, gemini_contents, snake_case

from sam_model.data.callshapes import as_calls
from sam_model.data.formats import to_chat
from sam_model.data.transcripts import TranscriptFormatError, iter_transcript_events


def piece(partials: list[dict] | None = None, more: bool = True, **fields) -> dict:
    """One chunk's model content: a functionCall piece."""
    fc = {**fields, **({"partialArgs": partials} if partials else {}), **({"willContinue": True} if more else {})}
    return {"role": "model", "parts": [{"functionCall": fc}]}


def streamed() -> list[dict]:
    """gemini_contents with its cancel call's arguments streamed: the reason in three pieces of one string, the rest
    a piece each (the refund a bool, the cabin after them), then the empty piece that ends the call."""
    contents = gemini_contents()
    at = next(i for i, c in enumerate(contents) if "functionCall" in c["parts"][0] and c["parts"][0]["functionCall"].get(
        "id") == "c2")
    pieces = [piece(id="c2", name="cancel"),
              piece([{"jsonPath": "$.reservation_id", "stringValue": "QX7Z9A"},
                     {"jsonPath": "$.user_id", "stringValue": "ann_", "willContinue": True}]),
              piece([{"jsonPath": "$.user_id", "stringValue": "lee_123"},
                     {"jsonPath": "$.reason", "stringValue": "change", "willContinue": True}]),
              piece([{"jsonPath": "$.reason", "stringValue": " of", "willContinue": True}]),
              piece([{"jsonPath": "$.reason", "stringValue": " plans"}, {"jsonPath": "$['refund']", "boolValue": True}]),
              piece([{"jsonPath": "$.cabin", "stringValue": "economy"}]),
              {"role": "model", "parts": [{"functionCall": {}}]}]
    return [*contents[:at], *pieces, *contents[at + 1:]]


def test_a_streamed_call_reads_as_the_call_it_assembles():
    """The stream's pieces read as the one call of gemini_contents, in REST JSON and in the SDK's dump alike."""
    whole = to_chat(gemini_contents(), "x").messages
    assert to_chat(streamed(), "x").messages == whole
    dumped = json.loads(json.dumps(snake_case(streamed())).replace('"partialArgs"', '"partial_args"').replace(
        '"jsonPath"', '"json_path"').replace('"stringValue"', '"string_value"').replace('"boolValue"', '"bool_value"')
                        .replace('"willContinue"', '"will_continue"'))
    assert to_chat(dumped, "x").messages == whole
    assert [m["tool_calls"][0]["function"]["arguments"] for m in whole if m.get("tool_calls")][-1] == ARGS2


def test_a_logged_stream_converts_as_the_unstreamed_conversation(tmp_path):
    plain, stream = tmp_path / "plain.jsonl", tmp_path / "stream.jsonl"
    plain.write_text(json.dumps({"id": "conv-1", "contents": gemini_contents()}) + "\n")
    stream.write_text(json.dumps({"id": "conv-1", "contents": streamed()}) + "\n")
    assert list(iter_transcript_events(stream)) == list(iter_transcript_events(plain))


def test_paths_into_objects_and_lists_and_numbers_and_null():
    contents = [{"role": "user", "parts": [{"text": "Book it."}]}, piece(name="book"),
                piece([{"jsonPath": "$.seats[0].row", "numberValue": 12.0}, {"jsonPath": "$.seats[0].seat",
                                                                           "stringValue": "A"}]),
                piece([{"jsonPath": "$.seats[1].row", "numberValue": 12.5}, {"jsonPath": '$["note x"]',
                                                                           "nullValue": None}], more=False)]
    (call,) = to_chat(contents, "x").messages[-1]["tool_calls"]
    assert call["function"]["arguments"] == {"seats": [{"row": 12, "seat": "A"}, {"row": 12.5}], "note x": None}


@pytest.mark.parametrize("after", [[], [{"role": "user", "parts": [{"text": "and?"}]}],
                                   [piece(name="other", more=False)]])
def test_a_cut_stream_is_refused_naming_where_it_began(after, tmp_path):
    """The log ends the stream while its last piece says more will come (the log's end, a user's turn, another
    call): its arguments are not all there, so it is refused, in one line naming the content and part it began at."""
    contents = [*gemini_contents()[:5], piece(name="cancel"),
                piece([{"jsonPath": "$.reservation_id", "stringValue": "QX7", "willContinue": True}]), *after]
    with pytest.raises(TranscriptFormatError) as err:
        to_chat(contents, "x")
    assert str(err.value).startswith("x, content 5, part 0: the streamed functionCall 'cancel' begun here is cut")
    assert "log the whole stream" in str(err.value) and "\n" not in str(err.value)
    path = tmp_path / "cut.jsonl"
    path.write_text(json.dumps({"id": "conv-1", "contents": contents}) + "\n")
    with pytest.raises(TranscriptFormatError, match=rf"^{path}:1.*content 5, part 0: the streamed functionCall"):
        list(iter_transcript_events(path))


def test_a_piece_without_the_stream_before_it_is_refused_saying_so():
    contents = [*gemini_contents()[:5], piece([{"jsonPath": "$.reservation_id", "stringValue": "QX7Z9A"}])]
    with pytest.raises(TranscriptFormatError, match=r"^x, content 5, part 0: a functionCall piece with no name: a "
                                                   r"streamed call's first piece, which names it, is not in the log"):
        to_chat(contents, "x")


def test_a_call_about_to_be_made_given_as_one_streamed_piece_is_assembled():
    """ScopedMemory.search(call=...) and live_state parse the call by as_calls: a functionCall holding its name and
    every partialArg read as a call of no arguments; one that says more will come is refused."""
    (call,) = as_calls({"functionCall": {"name": "cancel", "partialArgs": [
        {"jsonPath": "$.reservation_id", "stringValue": "QX7"}, {"json_path": "$.reservation_id", "string_value": "Z9A"}]}})
    assert call.arguments == {"reservation_id": "QX7Z9A"}  # appended, as google-adk and the Vercel AI SDK do
    (call,) = as_calls({"functionCall": {"name": "cancel", "partialArgs": [
        {"jsonPath": "$.reservation_id", "stringValue": "QX7", "willContinue": True},
        {"jsonPath": "$.reservation_id", "stringValue": "Z9A"}]}})
    assert call.arguments == {"reservation_id": "QX7Z9A"}
    with pytest.raises(TranscriptFormatError, match="streamed functionCall piece that says willContinue"):
        as_calls({"functionCall": {"name": "cancel", "willContinue": True}})


@pytest.mark.parametrize("second", ["$.reason", "$['reason']", '$["reason"]'])
@pytest.mark.parametrize("more", [True, False])
def test_a_string_given_again_at_its_path_is_appended_however_the_path_is_spelled(second, more):
    """A string's pieces were joined only where the one before spelled its path alike and said willContinue: the
    same path spelled $['reason'] after $.reason, or a piece after one without willContinue, replaced the text
    before it, silently (the reason read 'plans'). google-adk's StreamingResponseAggregator and the Vercel AI SDK's
    GoogleJSONAccumulator append every string piece of a path to what it holds: so does the reader."""
    first = {"jsonPath": "$.reason", "stringValue": "change of ", **({"willContinue": True} if more else {})}
    contents = [{"role": "user", "parts": [{"text": "Cancel it."}]}, piece(name="cancel"), piece([first]),
                piece([{"jsonPath": second, "stringValue": "plans"}], more=False)]
    (call,) = to_chat(contents, "x").messages[-1]["tool_calls"]
    assert call["function"]["arguments"] == {"reason": "change of plans"}
