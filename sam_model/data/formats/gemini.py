"""Google Gemini conversations: the ``contents`` of the google-genai SDK, the Gemini API and Vertex AI.

Contents ``{"role": "user" | "model", "parts": [...]}`` (``function``/``tool``: older Vertex logs' result turns; no
role: ``user``, as the API reads it), in REST JSON's camelCase or the SDK's ``model_dump()`` snake_case (unset fields
null). A part holds one of ``text``, ``functionCall`` ``{"name", "args", "id"?}``, ``functionResponse`` ``{"name",
"response", "id"?, "parts"?}`` (a tool message, before the turn's words; the media ``parts`` of a multimodal result
counted), or media and built-in tools (``inlineData``, ``executableCode``, ...), counted, not read, as are thoughts
(``text`` with ``thought: true``: reasoning, not words said to the user). Consecutive model contents are one turn
(the SDK's chat history keeps a streamed answer as one content per chunk), their text joined as ``response.text``
joins it, their calls parallel calls. A response
answers the call of its ``id``, else (the SDK's automatic function calling writes none) the earliest unanswered call
of its ``name``; ``{"output" | "result": x}`` reads as x, ``{"error": e}`` as ``Error: e``, other objects as JSON;
a response with an ``error`` (the API's key for error details) flags the call as failed (toolstate's extension).
A call whose arguments Vertex AI streamed (``partialArgs`` pieces, a content a chunk) is assembled
(:mod:`sam_model.data.formats.gemini_stream`), a stream the log cuts refused.
``system_instruction`` (or a request dump's ``config.system_instruction``) is the policy, and a ``system`` message
put before a running conversation too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sam_model.data.formats.base import FAILED, Chat, TranscriptFormatError, chat_call, each, result_text
from sam_model.data.formats.gemini_stream import CUT, Stream, camel, camel_keys, streamed
from sam_model.io import json_type

ROLES = {"user": "user", "model": "assistant", "function": "user", "tool": "user", None: "user", "system": "system"}
KINDS = ("text", "functionCall", "functionResponse", "inlineData", "fileData", "executableCode",
         "codeExecutionResult", "toolCall", "toolResponse")
META = ("thought", "thoughtSignature", "videoMetadata", "mediaResolution", "partMetadata")


def part(p: Any, where: str) -> tuple[str, Any]:
    """(kind, value) of one part: the field it holds, in camelCase (``thought`` for a thought's text)."""
    if not isinstance(p, Mapping):
        raise TranscriptFormatError(where, f"a part must be an object such as {{\"text\": ...}}, got {json_type(p)}")
    fields = {camel(str(k)): v for k, v in p.items() if v is not None}
    kinds = [k for k in fields if k in KINDS]
    if len(kinds) > 1:
        raise TranscriptFormatError(where, f"the part holds {' and '.join(kinds)}; a Gemini part holds one of them")
    kind = kinds[0] if kinds else next((k for k in fields if k not in META), next(iter(fields), "empty part"))
    value = fields.get(kind)
    if kind == "text" and not isinstance(value, str):
        raise TranscriptFormatError(where, f"'text' is {json_type(value)}, expected a string")
    if kind in ("functionCall", "functionResponse") and not isinstance(value, Mapping):
        raise TranscriptFormatError(where, f"'{kind}' is {json_type(value)}, expected an object with a 'name'")
    return ("thought" if kind == "text" and fields.get("thought") else kind), value


def to_chat(contents: list[Any], where: str) -> Chat:
    chat = Chat()
    pending: list[tuple[str, str]] = []  # (name, id) of the calls not yet answered, in call order
    turn: dict[str, Any] | None = None  # the model turn that the next model content continues
    stream: tuple[Stream, str] | None = None  # the turn's streamed call (gemini_stream) and its name
    for i, c, w in each(contents, where, "content"):
        role = c.get("role")
        if not isinstance(role, (str, type(None))) or role not in ROLES:
            raise TranscriptFormatError(w, f"role {str(role)[:40]!r} is not a Gemini role (expected user or model)")
        parts = c.get("parts") or ([{"text": c["content"]}] if isinstance(c.get("content"), str) else [])
        if not isinstance(parts, list):
            raise TranscriptFormatError(w, f"'parts' is {json_type(parts)}, expected a list of parts")
        texts, calls = [], []
        for j, p in enumerate(parts):
            at = f"{w}, part {j}"
            kind, v = part(p, at)
            if kind in ("functionCall", "functionResponse") and (kind == "functionCall") != (role == "model"):
                raise TranscriptFormatError(at, f"a {kind} in a {role or 'user'} turn: the model calls functions, "
                                                "the user's turns answer them")
            if kind == "text":
                texts += [v] if v else []
            elif kind == "functionCall":
                call, stream = _call(chat, v, stream, f"gemini-{i}-{j}", at)
                if call is not None:
                    calls.append(call)
                    pending.append((call["function"]["name"], call["id"]))
            elif kind == "functionResponse":
                chat.add(_result(v, pending, at), f"content {i}")
                media = v.get("parts")  # a multimodal result's images and files (FunctionResponsePart): counted
                if not isinstance(media, (list, type(None))):
                    raise TranscriptFormatError(at, f"the functionResponse's 'parts' is {json_type(media)}, expected "
                                                    "a list of parts such as {\"inlineData\": ...}")
                chat.ignored.update(part(m, f"{at}, functionResponse part {k}")[0] for k, m in enumerate(media or []))
            else:
                chat.ignored[kind] += 1
        if ROLES[role] != "assistant":
            if stream is not None and stream[0].going:
                raise stream[0].cut(stream[1])
            turn, stream = None, None
            if texts:
                chat.add({"role": ROLES[role], "content": "\n".join(texts)}, f"content {i}")
        elif texts or calls:
            if turn is None:
                turn = {"role": "assistant", "content": None}
                chat.add(turn, f"content {i}")
            turn["content"] = (turn["content"] or "") + "".join(texts) or None
            if calls:
                turn["tool_calls"] = [*turn.get("tool_calls", []), *calls]
    if stream is not None and stream[0].going:
        raise stream[0].cut(stream[1])
    return chat


def _call(chat: Chat, v: Mapping[str, Any], stream: tuple[Stream, str] | None, default_id: str,
          where: str) -> tuple[dict[str, Any] | None, tuple[Stream, str] | None]:
    """(the call a functionCall part makes, None for a later piece of a streamed call; the model turn's streamed call
    after it): a piece with no name continues the stream that will continue, and the empty piece after its last
    ends it (counted); a named piece while a stream will continue cuts that stream (refused); a named piece with
    partialArgs or willContinue begins one (gemini_stream.Stream fills the call's args in place)."""
    fc = camel_keys(v)
    if stream is not None and stream[0].going:
        if not fc.get("name"):
            stream[0].feed(fc, where)
            return None, stream
        raise stream[0].cut(stream[1])
    if not fc.get("name") and (streamed(fc) or all(x is None for x in fc.values())):
        if stream is not None and not fc.get("partialArgs"):
            chat.ignored["ends of streamed function calls"] += 1  # the empty piece after a stream's last
            return None, stream
        raise TranscriptFormatError(where, "a functionCall piece with no name: a streamed call's first piece, which "
                                           f"names it, is not in the log before it; {CUT}")
    call = chat_call(v.get("id") or default_id, v.get("name"), {} if streamed(fc) else v.get("args"), where)
    if not streamed(fc):
        return call, stream
    started = Stream(call["function"]["arguments"], where)
    started.feed(fc, where)
    return call, (started, call["function"]["name"])


def _result(r: Mapping[str, Any], pending: list[tuple[str, str]], where: str) -> dict[str, Any]:
    """A functionResponse as a tool message: the call of its id, else the earliest unanswered call of its name."""
    rid = None if r.get("id") in (None, "") else str(r["id"])
    name = r["name"] if isinstance(r.get("name"), str) and r["name"] else None
    match = next((p for p in pending if (p[1] == rid if rid else p[0] == name)), None)
    if match:
        pending.remove(match)
    name = name or (match[0] if match else None)
    if name is None:
        raise TranscriptFormatError(where, "functionResponse without a 'name' (the function whose result it is)")
    call_id = rid or (match[1] if match else None)
    response = r.get("response")
    failed = isinstance(response, Mapping) and response.get("error") is not None
    return {"role": "tool", "name": name, "content": response_text(response),
            **({"tool_call_id": call_id} if call_id else {}), **({FAILED: True} if failed else {})}


def response_text(r: Any) -> str:
    """A function's ``response`` as the text of its event."""
    if isinstance(r, Mapping) and r and set(r) <= {"output", "result", "error"}:
        if r.get("error") is not None:
            error = result_text(r["error"])
            return error if error.lower().startswith("error") else f"Error: {error}"
        return result_text(r.get("output", r.get("result")))
    return result_text(r)


def turn_open(contents: list[Any]) -> bool:
    """Whether a model content given after ``contents`` joins the model turn they end in (:func:`to_chat` reads the
    words and a call after them as one turn, decided before the words): the contents after the last of another role
    hold words or a call. A user's content without text (an image alone, an empty one) closes the model's turn
    without a message of its own, so the chat still ends in the model's words, but a call after it is a turn of its
    own, decided at them (toolstate.live_state decided before them until 2026-12-06)."""
    k = len(contents)
    while k and isinstance(contents[k - 1], Mapping) and contents[k - 1].get("role") == "model":
        k -= 1
    return any(kind == "functionCall" or kind == "text" and value
               for c in contents[k:] for j, p in enumerate(_parts(c))
               for kind, value in [part(p, f"content, part {j}")])


def _parts(c: Mapping[str, Any]) -> list[Any]:
    """A content's parts as :func:`to_chat` reads them (a ``content`` string: one text part)."""
    parts = c.get("parts") or ([{"text": c["content"]}] if isinstance(c.get("content"), str) else [])
    return parts if isinstance(parts, list) else []


def sniff(contents: list[Any]) -> bool:
    """Contents whose parts are keyed by what they hold (OpenTelemetry's GenAI parts carry a ``type``)."""
    return any(isinstance(c, Mapping) and isinstance(c.get("parts"), list) and any(
        isinstance(p, Mapping) and "type" not in p and any(camel(str(k)) in KINDS for k in p) for p in c["parts"])
        for c in contents)


def policy(obj: Mapping[str, Any], where: str) -> str:
    """The conversation's system instruction: a Content, a part, a list of parts or a string."""
    config = obj.get("config") if isinstance(obj.get("config"), Mapping) else {}
    value = next((src[k] for src in (obj, config) for k in ("system_instruction", "systemInstruction")
                  if src.get(k) is not None), "")
    if isinstance(value, str):
        return value
    parts = value.get("parts", [value]) if isinstance(value, Mapping) else value
    if not isinstance(parts, (list, type(None))):
        raise TranscriptFormatError(f"{where}, system_instruction", f"is {json_type(value)}, expected a string or a "
                                                                    "Content {\"parts\": [{\"text\": ...}]}")
    found = [part({"text": p} if isinstance(p, str) else p, f"{where}, system_instruction, part {j}")
             for j, p in enumerate(parts or [])]
    return "\n".join(v for kind, v in found if kind == "text")
