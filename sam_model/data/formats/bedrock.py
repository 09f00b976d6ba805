"""Amazon Bedrock Converse messages (Converse / ConverseStream; Strands Agents keeps ``agent.messages`` so).

A message is ``{"role": "user" | "assistant", "content": [block]}`` where each block holds one member of a union,
keyed by its name (no ``type``, unlike Anthropic's): ``{"text"}`` is words, an assistant's ``{"toolUse":
{"toolUseId", "name", "input"}}`` a tool call, a user's ``{"toolResult": {"toolUseId", "content": [{"text"} |
{"json"} | ...], "status"}}`` its answer (text and JSON parts, the JSON written as JSON), one tool message each
before the user's own words. ``status: "error"`` flags the call as failed, as Anthropic's ``is_error`` does (read as
an error whatever the words say, ``Document not found: ...`` too: toolstate's extension of the spec). ``guardContent``
text and ``citationsContent`` text are words the model saw or said; ``reasoningContent`` is not words said, and it,
images, documents, cache points and server tools (``type: server_tool_use``, their results inside the model's message)
are counted, not read. The conversation's ``system`` blocks are its policy; a logged request body reads as a
conversation (``modelId``, ``toolConfig`` and the like are passed over), and its response's ``output.message``
as the last message.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from sam_model.data.formats.base import Blocks, Chat, TranscriptFormatError, each, read_blocks, result_text
from sam_model.io import json_type

ROLES = ("user", "assistant", "system")  # system: a policy given as a message, as the live path may
READ = ("text", "toolUse", "toolResult", "guardContent", "citationsContent")
KEYS = (*READ, "reasoningContent", "image", "document", "video", "audio", "cachePoint", "searchResult")
BLOCKS = Blocks("content block", "text", "toolUse", "input", "toolResult", "toolUseId",
                ("status", "error", "success"))


def to_chat(messages: list[Any], where: str) -> Chat:
    chat = Chat()
    for i, m, w in each(messages, where):
        role = m.get("role")
        if role not in ROLES:
            raise TranscriptFormatError(w, f"role {str(role)[:40]!r} is not a Converse role (expected user or "
                                           "assistant; the system prompt is the conversation's 'system')")
        content = m.get("content")
        if not isinstance(content, (list, str, type(None))):
            raise TranscriptFormatError(w, f"'content' is {json_type(content)}, expected a list of content blocks")
        blocks = [_typed(b, j, role, w, chat.ignored) for j, b in enumerate(content)] \
            if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        read_blocks(chat, role, blocks, w, f"message {i}", BLOCKS,
                    lambda b, at: _result(b.get("content"), at, chat.ignored))
    return chat


def _typed(b: Any, j: int, role: str, where: str, ignored: Counter) -> Any:
    """One Converse block as the typed block the shared reader reads (a block it does not read: its name)."""
    if not isinstance(b, Mapping):
        raise TranscriptFormatError(where, f"content block {j} is {json_type(b)}, expected an object such as "
                                           "{\"text\": ...}")
    kinds = [k for k in b if k in READ]
    if len(kinds) > 1:
        raise TranscriptFormatError(where, f"content block {j} holds {' and '.join(kinds)}; a Converse block holds "
                                           "one (write each as a block of its own)")
    if not kinds:  # an image, reasoning, a cache point, or another format's typed block: counted by its name
        other = b.get("type") if isinstance(b.get("type"), str) else next(iter(b), "empty block")
        return {"type": next((k for k in b if k in KEYS), other)}
    kind, value, at = kinds[0], b[kinds[0]], f"content block {j}"
    if kind == "text":
        if not isinstance(value, str):
            raise TranscriptFormatError(where, f"{at}: 'text' is {json_type(value)}, expected a string")
        return {"type": "text", "text": value}
    if not isinstance(value, Mapping):
        raise TranscriptFormatError(where, f"{at}: '{kind}' is {json_type(value)}, expected an object")
    if kind == "guardContent":  # words to assess with the guardrail, {"text": {"text", "qualifiers"}}, or an image
        if "text" not in value:
            return {"type": kind}
        text = value["text"].get("text") if isinstance(value["text"], Mapping) else None
        if not isinstance(text, str):
            raise TranscriptFormatError(where, f"{at}: " + 'guardContent without its words as {"text": {"text": "..."}}')
        return {"type": "text", "text": text}
    if kind == "citationsContent":  # the generated text, with where it came from
        return {"type": "text", "text": _result(value.get("content"), f"{where}, {at}", ignored)}
    if value.get("type") == "server_tool_use" or (kind == "toolResult" and role == "assistant"):
        return {"type": f"server {kind}"}  # run by Bedrock inside the model's turn, as Anthropic's server tools
    if kind == "toolResult":
        return {**value, "type": kind}  # its own type (the tool's kind) is not the block's
    call_id = value.get("toolUseId")
    if not isinstance(call_id, (str, int)) or isinstance(call_id, bool) or call_id == "":
        raise TranscriptFormatError(where, f"{at}: toolUse without a 'toolUseId' (its result answers by it)")
    return {"type": kind, "id": call_id, "name": value.get("name"), "input": value.get("input")}


def _result(content: Any, where: str, ignored: Counter) -> str:
    """A tool result's content: its text and JSON parts (the JSON as JSON) joined by newlines; others counted."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise TranscriptFormatError(where, f"'content' is {json_type(content)}, expected a list of "
                                           "{\"text\"} or {\"json\"} parts")
    texts = []
    for j, part in enumerate(content):
        if not isinstance(part, Mapping):
            raise TranscriptFormatError(where, f"content part {j} is {json_type(part)}, expected an object such as "
                                               "{\"text\": ...}")
        if "text" in part:
            if not isinstance(part["text"], str):
                raise TranscriptFormatError(where, f"content part {j}: 'text' is {json_type(part['text'])}, "
                                                   "expected a string")
            texts.append(part["text"])
        elif "json" in part:
            texts.append(result_text(part["json"]))
        else:
            ignored[next(iter(part), "empty part")] += 1
    return "\n".join(texts)


def sniff(messages: list[Any]) -> bool:
    """Blocks keyed by a Converse member and without a ``type`` (every other format's blocks have one); never
    messages carrying OpenAI chat's tool use, which Converse has none of."""
    if any(isinstance(m, Mapping) and (m.get("role") in ("tool", "function") or "tool_calls" in m) for m in messages):
        return False
    return any(isinstance(m, Mapping) and isinstance(m.get("content"), list) and any(
        isinstance(b, Mapping) and "type" not in b and any(k in b for k in KEYS) for b in m["content"])
        for m in messages)


def policy(system: Any, where: str) -> str:
    """The ``system`` parameter: a list of ``{"text"}`` blocks (cache points and the like passed over), or a string."""
    if isinstance(system, str):
        return system
    if not isinstance(system, list):
        raise TranscriptFormatError(f"{where}, system", f"'system' is {json_type(system)}, expected a list of "
                                                        "{\"text\": ...} blocks")
    blocks = [_typed(b, j, "system", f"{where}, system", Counter()) for j, b in enumerate(system)]
    return "\n".join(b["text"] for b in blocks if b["type"] == "text")


INVOCATION_LOG = (
    "a Bedrock model invocation log record (schemaType ModelInvocationLog: one model call as Bedrock's invocation "
    "logging writes it to CloudWatch or S3), not a conversation: its records name no conversation, so they are not "
    "read; log each conversation's last call as the bedrock format's line, {\"id\": CONVERSATION_ID, "
    "**record[\"input\"][\"inputBodyJson\"], \"output\": record[\"output\"][\"outputBodyJson\"][\"output\"]}")


def is_invocation_log(obj: Any) -> bool:
    """A record of Bedrock's model invocation logging: its request under ``input.inputBodyJson``, which the
    Responses reader (``input`` a list of items) and the id check read as a conversation of theirs and refused for
    the wrong field ("conversation without 'id'", "'input' is an object"); found by a walkthrough."""
    return isinstance(obj, Mapping) and (obj.get("schemaType") == "ModelInvocationLog" or (
        isinstance(obj.get("input"), Mapping) and "inputBodyJson" in obj["input"]))


def with_output(obj: Mapping[str, Any], where: str) -> Any:
    """A line's ``messages``, then its Converse response's ``output.message`` (the model's answer to them)."""
    messages, out = obj.get("messages"), obj.get("output")
    if not (isinstance(out, Mapping) and "message" in out and isinstance(messages, list)):
        return messages
    if not isinstance(out["message"], Mapping):
        raise TranscriptFormatError(where, f"'output.message' is {json_type(out['message'])}, expected a message "
                                           "{\"role\": \"assistant\", \"content\": [...]}")
    return [*messages, out["message"]]
