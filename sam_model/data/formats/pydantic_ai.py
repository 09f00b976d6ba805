"""Pydantic AI message history: what ``result.all_messages_json()`` (``ModelMessagesTypeAdapter.dump_json``) writes.

A conversation is a list of messages ``{"kind": "request" | "response", "parts": [...]}``, every part naming its own
``part_kind``. A request's parts: ``system-prompt`` (the policy, as every format's system text is), ``user-prompt``
(the user's words: a string, or a list of strings, ``text-content`` and ``structured-content`` items and media, the
media counted), ``tool-return`` (a tool's result answering ``tool_call_id``: its ``content`` a string, or the JSON
data the tool returned, read as its JSON text, the files it returned counted; an ``outcome`` other than ``success``
flags the call as failed, as Anthropic's ``is_error`` does), ``speech`` (a realtime session's: the user's spoken
words, its ``transcript``) and ``retry-prompt`` (Pydantic AI's answer to a call whose arguments failed validation,
or whose tool raised ``ModelRetry``: read as that call's failed result, its text the one the model is shown, the
validation errors as JSON then "Fix the errors and try again."; one without a ``tool_name`` answers no call, the
model's output having failed validation, and is counted, not read: no one said its words). A request's
``instructions`` (an agent's ``instructions=``, sent with every request in place of a system prompt) is the policy,
told again only where it changes. A response's parts: ``text`` and ``speech`` (the words), ``tool-call`` (``args``
an object, a JSON string, or null) and ``thinking``, built-in tools, files and the like, counted, not read. A
``compaction`` part (a summary replacing earlier messages) is read where the application wrote it, in a request, as
the user's words, the voice Pydantic AI sends and traces it in (:func:`_summary`); a provider's, in a response, is
counted (:func:`_provided`: the history keeps the turns it summarizes, and the traces leave it out). An ``instruction-delta`` (an instruction block replaced from there on, operator authority) is the policy,
a system message (:func:`_policy`). Pydantic AI writes no ``capability`` part: a capability's instructions are an
``instruction-delta`` whose id names it, and one loaded on demand is the model's ``load_capability`` call and its
return (``tool_kind`` ``capability-load``), read as any call and result; the ``tool-availability-delta`` naming the
tools it brings, bookkeeping, is counted.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from sam_model.data.formats.base import FAILED, Chat, TranscriptFormatError, chat_call, each, result_text
from sam_model.io import json_type

KINDS = ("request", "response")
OUTCOMES = ("success", "failed", "denied", "interrupted", "retried")  # a tool return's; all but the first failed
# a user prompt's list items that are words (plain strings are too): StructuredContent is a TextContent whose content
# is the text models are sent (its value rendered once, when made)
TEXT_ITEMS = ("text-content", "structured-content")


def is_message(m: Any) -> bool:
    """A Pydantic AI message: a request or response kind and a list of parts, and no role. Its parts are not asked
    to name their ``part_kind`` here, nor to be there: a request interrupted before it was sent has none, and a part
    without one is refused by its place (a live add of such a message was 'message without role', as OpenAI chat)."""
    return isinstance(m, Mapping) and m.get("kind") in KINDS and isinstance(m.get("parts"), list) and "role" not in m


def is_call(part: Any) -> bool:
    """A response's ``tool-call`` part."""
    return isinstance(part, Mapping) and part.get("part_kind") == "tool-call"


def is_history(doc: Any) -> bool:
    """A whole message history (``all_messages_json()``'s list), as a file of one conversation holds it."""
    return isinstance(doc, list) and bool(doc) and is_message(doc[0])


AS_JSON = ("give the messages as JSON, json.loads(result.new_messages_json()) or "
           "ModelMessagesTypeAdapter.dump_python(messages, mode='json')")
UNNAMED = ("a Pydantic AI message history without a conversation id (all_messages_json() written as a line): write "
           "each conversation once, when it ends, as {\"id\": CONVERSATION_ID, \"messages\": "
           "json.loads(result.all_messages_json())} a line, or its history alone to a .json file of its own, named by "
           "the conversation")


def misnamed(m: Any) -> bool:
    """A message with no role whose ``kind`` is not a Pydantic AI message's, its parts each naming a ``part_kind``
    (as only Pydantic AI's do): a misspelt kind ("reqest"), which :func:`to_chat` refuses by its field. Alone, such a
    message was read as OpenAI chat, 'message without role'."""
    parts = m.get("parts") if isinstance(m, Mapping) else None
    return (isinstance(parts, list) and bool(parts) and "role" not in m and m.get("kind") not in KINDS
            and all(isinstance(p, Mapping) and isinstance(p.get("part_kind"), str) for p in parts))


def sniff(messages: list[Any]) -> bool:
    return any(is_message(m) or misnamed(m) for m in messages)


def _kind_error(kind: Any) -> str:
    """What a message's ``kind`` that is not a Pydantic AI message's is, and the one it was likely meant to be."""
    # by its letters, not their case: "Request" and "RESPONSE" (a hand-written or enum-named kind) are near too
    near = difflib.get_close_matches(kind.lower(), KINDS, n=1, cutoff=0.6) if isinstance(kind, str) else []
    return (f"'kind' is {json.dumps(kind, default=str)[:40]}, expected \"request\" or \"response\" (a Pydantic AI "
            "ModelMessage)" + (f"; did you mean \"{near[0]}\"?" if near else ""))


def to_chat(messages: list[Any], where: str) -> Chat:
    chat = Chat()
    told = ""  # the instructions said so far
    for i, m, w in each(messages, where):
        kind, parts, source = m.get("kind"), m.get("parts"), f"message {i}"
        if m.get("role") == "system" and kind is None:  # a policy given as a chat message, as the live path may
            chat.add({"role": "system", "content": _string(m.get("content"), w)}, source)
            continue
        if kind not in KINDS:
            raise TranscriptFormatError(w, _kind_error(kind) if "kind" in m else "no 'kind' (a Pydantic AI message "
                                        "says \"request\" or \"response\"; every message of a dump has one)")
        if not isinstance(parts, list):
            raise TranscriptFormatError(w, f"'parts' is {json_type(parts)}, expected a list of parts")
        instructions = m.get("instructions")
        if kind == "request" and isinstance(instructions, str) and instructions and instructions != told:
            chat.add({"role": "system", "content": instructions}, source)
            told = instructions
        (_request if kind == "request" else _response)(chat, parts, w, source)
    return chat


def _kind(p: Any, j: int, where: str) -> str:
    if not isinstance(p, Mapping):
        raise TranscriptFormatError(where, f"part {j} is {json_type(p)}, expected an object with a 'part_kind'")
    kind = p.get("part_kind")
    if not isinstance(kind, str):
        raise TranscriptFormatError(where, f"part {j} has no 'part_kind' (a Pydantic AI part names its own: "
                                           "user-prompt, tool-return, text, tool-call, ...)")
    return kind


def _request(chat: Chat, parts: list[Any], where: str, source: str) -> None:
    for j, p in enumerate(parts):
        kind, at = _kind(p, j, where), f"{where}, part {j}"
        if kind == "system-prompt":
            chat.add({"role": "system", "content": _string(p.get("content"), at)}, source)
        elif kind == "user-prompt":
            words = _prompt(p.get("content"), at, chat)
            if words:
                chat.add({"role": "user", "content": words}, source)
        elif kind == "tool-return":
            outcome = p.get("outcome", "success")
            if outcome not in OUTCOMES:
                raise TranscriptFormatError(at, f"'outcome' is {json.dumps(outcome, default=str)[:40]}, expected "
                                                f"one of {', '.join(OUTCOMES)}")
            try:
                returned = _returned(p.get("content"), p.get(RECORD), chat)
            except (TypeError, ValueError) as e:  # dump_python(messages) without mode='json': a date, a Decimal
                raise TranscriptFormatError(at, f"'content' is not JSON data ({e}): {AS_JSON}") from None
            chat.add({"role": "tool", "tool_call_id": _call_id(p, at), "content": returned,
                      **({FAILED: True} if outcome != "success" else {})}, source)
        elif kind == "speech":  # a realtime session's: the user's spoken words, sent to other models as a prompt
            words = _transcript(p, at, chat)
            if words:
                chat.add({"role": "user", "content": words}, source)
        elif kind == "compaction":  # the application's summary: sent as user-voice text, as its traces say
            words = _summary(p, at, chat)
            if words:
                chat.add({"role": "user", "content": words}, source)
        elif kind == "instruction-delta":
            _policy(chat, p, at, source)
        elif kind == "retry-prompt" and p.get("tool_name") is not None:
            chat.add({"role": "tool", "tool_call_id": _call_id(p, at), "content": retry_text(p.get("content"), at),
                      FAILED: True}, source)
        else:  # retry-prompt without a tool (the output's), retry-feedback, tool-availability-delta, ...
            chat.ignored["retry-prompt without a tool" if kind == "retry-prompt" else kind] += 1


def _response(chat: Chat, parts: list[Any], where: str, source: str) -> None:
    texts, calls = [], []
    for j, p in enumerate(parts):
        kind, at = _kind(p, j, where), f"{where}, part {j}"
        if kind == "text":
            texts.append(_string(p.get("content"), at))
        elif kind == "speech":  # the model's spoken words, as a text part
            texts.append(_transcript(p, at, chat))
        elif kind == "compaction":  # a provider's summary (Anthropic's readable, OpenAI's not): counted, _provided
            _provided(p, at, chat)
        elif kind == "tool-call":
            args = p.get("args")
            if args is not None and not isinstance(args, (str, Mapping)):
                raise TranscriptFormatError(at, f"'args' is {json_type(args)}, expected an object, a JSON string or "
                                                "null")
            calls.append(chat_call(p.get("tool_call_id"), p.get("tool_name"), args, at))
        else:  # thinking (not words said), built-in tools run by the provider, files, ...
            chat.ignored[kind] += 1
    text = "\n".join(t for t in texts if t)
    if text or calls:
        chat.add({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})}, source)


def _summary(p: Mapping[str, Any], where: str, chat: Chat) -> str:
    """A request's ``compaction`` part's summary of the turns it replaced, to be read in the voice Pydantic AI gives
    it: the application's is sent to every model as user-voice text and traced as a ``user`` message (a provider's,
    in a response, is counted: :func:`_provided`). Not policy: a summary restates what was said
    (an employee id, a date), and read as a system message it made those values common knowledge, labelled
    ``policy`` where the turns before it say them. One without text (OpenAI's, encrypted) is counted."""
    return _optional_text(p, "content", where, chat, "compaction without a summary")


def _provided(p: Mapping[str, Any], where: str, chat: Chat) -> None:
    """A response's ``compaction`` part, a provider's summary of the turns before it, which the provider reads in place
    of them: counted, not read (its content checked). The history keeps the turns it summarizes, which are read, so
    a later call traces to the turn that said its value, not to the summary's paraphrase (as Claude Code's compaction
    summary and OpenHands' condensation are counted); and Pydantic AI's traces leave the part out of a response's
    output messages (no OpenTelemetry part type maps it), so the OpenTelemetry reader of the same run reads no such
    words. Until conversion version 137 it was read as the model's words: a second memory of the values it restates,
    credited with them under ``--label latest``, that the run's traces did not hold."""
    _optional_text(p, "content", where)
    chat.ignored["compaction (a provider's summary)" if p.get("content") else "compaction without a summary"] += 1


def _policy(chat: Chat, p: Mapping[str, Any], where: str, source: str) -> None:
    """An ``instruction-delta``'s replacement of an instruction block from here on, as a system message: policy, as a
    request's ``instructions`` are, and as Pydantic AI traces it (a ``system`` message at operator authority). A
    withdrawn block, and a block below operator authority (a capability's instructions the application does not
    vouch for, which Pydantic AI sends as framed data, not in its voice) are counted, not read."""
    content = _optional_text(p, "content", where)
    if p.get("authority", "operator") != "operator":
        chat.ignored["instruction-delta below operator authority"] += 1
    elif not content:
        chat.ignored["instruction withdrawn"] += 1
    else:
        chat.add({"role": "system", "content": content}, source)


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise TranscriptFormatError(where, f"'content' is {json_type(value)}, expected a string")
    return value


def _transcript(p: Mapping[str, Any], where: str, chat: Chat) -> str:
    """A speech part's words: its ``transcript``; one without (transcription unavailable) is counted."""
    return _optional_text(p, "transcript", where, chat, "speech without a transcript")


def _optional_text(p: Mapping[str, Any], field: str, where: str, chat: Chat | None = None,
                   counted: str = "") -> str:
    """``p[field]``, a string or null ("" for null or missing; another type refused naming the field); an empty one
    counted in ``chat``'s ignored parts as ``counted`` where given (a summary, a transcript the part lacks)."""
    text = p.get(field)
    if text is not None and not isinstance(text, str):
        raise TranscriptFormatError(where, f"'{field}' is {json_type(text)}, expected a string or null")
    if not text and chat is not None:
        chat.ignored[counted] += 1
    return text or ""


def _call_id(p: Mapping[str, Any], where: str) -> str:
    cid = p.get("tool_call_id")
    if cid is None or cid == "":
        raise TranscriptFormatError(where, f"{p.get('part_kind')} without a 'tool_call_id' (the call it answers)")
    if isinstance(cid, bool) or not isinstance(cid, (str, int)):  # an int: as a call's id is read (chat_call)
        raise TranscriptFormatError(where, f"'tool_call_id' is {json_type(cid)}, expected a string")
    return str(cid)


def _prompt(content: Any, where: str, chat: Chat) -> str:
    """A user prompt's words: a string, or the strings and text items of a list (media counted, not read)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TranscriptFormatError(where, f"'content' is {json_type(content)}, expected a string or a list")
    texts = []
    for k, item in enumerate(content):
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, Mapping) and item.get("kind") in TEXT_ITEMS:
            texts.append(_string(item.get("content"), f"{where}, item {k}"))
        elif isinstance(item, Mapping) and isinstance(item.get("kind"), str):
            chat.ignored[item["kind"]] += 1
        elif isinstance(item, Mapping):  # an OpenAI {"type": "text"} part written by hand was counted as 'None'
            raise TranscriptFormatError(where, f"item {k} has no 'kind' (a Pydantic AI user content item names its "
                                               "own: text-content, image-url, binary, ...)")
        else:
            raise TranscriptFormatError(where, f"item {k} is {json_type(item)}, expected a string or an object "
                                               "with a 'kind'")
    return "\n".join(texts)


URLS = ("image-url", "audio-url", "video-url", "document-url")  # FileUrl kinds
RECORD = "content_file_digests"  # a tool return's record of the files its content held when written


def _is_file(item: Any, record: Any) -> bool:
    """A file in a tool's return as Pydantic AI loads one: a ``binary`` item with its ``data`` and ``media_type``; a
    URL or ``uploaded-file`` item the part's ``content_file_digests`` records (the digest of its JSON, keys sorted),
    or, in a history written before such records, one with its ``url`` (``file_id``). Data shaped otherwise, a
    tool's own ``{"kind": "binary", "label": ...}`` among it, is data."""
    if not isinstance(item, Mapping):
        return False
    kind = item.get("kind")
    if kind == "binary":
        return "data" in item and "media_type" in item
    if kind not in (*URLS, "uploaded-file"):
        return False
    if isinstance(record, list):
        text = json.dumps(item, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest() in record
    return isinstance(item.get("url" if kind in URLS else "file_id"), str)


def _returned(content: Any, record: Any, chat: Chat) -> str:
    """A tool's return as the model read it (``model_response_str``): a string as it is, data as its JSON text; the
    files it returned counted, not read: a file alone, or files and nothing else, are no text (a screenshot's was its
    base64, a list of files '[]'), and a list left one item by its files is that item."""
    items = content if isinstance(content, list) else [content]
    kinds = [x["kind"] if _is_file(x, record) else None for x in items]
    if not any(kinds):
        return result_text(content)
    for kind in filter(None, kinds):
        chat.ignored[kind] += 1
    data = [x for x, kind in zip(items, kinds, strict=True) if kind is None]
    return result_text(data[0] if len(data) == 1 else data or None)


def retry_text(content: Any, where: str) -> str:
    """What Pydantic AI shows the model of a retry (``RetryPromptPart.model_response``): a ``ModelRetry`` message as
    written, or the validation errors (without their ``ctx`` and ``url``) as JSON, then the request to fix them."""
    if isinstance(content, str):
        return f"{content}\n\nFix the errors and try again."
    if not isinstance(content, list):
        raise TranscriptFormatError(where, f"'content' is {json_type(content)}, expected a string or a list of "
                                           "validation errors")
    errors = [{k: v for k, v in e.items() if k not in ("ctx", "url")} if isinstance(e, Mapping) else e
              for e in content]
    plural = "" if len(errors) == 1 else "s"
    return (f"{len(errors)} validation error{plural}:\n```json\n{json.dumps(errors, indent=2, ensure_ascii=False)}"
            "\n```\n\nFix the errors and try again.")
