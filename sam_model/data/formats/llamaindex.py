"""LlamaIndex chat history: ``ChatMessage.model_dump()`` of an agent's memory (llama-index-core 0.12 and later).

A LlamaIndex agent (``FunctionAgent``, ``AgentWorkflow``) keeps its conversation in a ``Memory``; what a program saves
is ``[m.model_dump(mode="json") for m in memory.get_all()]`` (``model_dump()`` keeps an image's url or path as
an object ``json.dump`` refuses). (``ctx.to_dict()`` of the workflow's Context holds no messages in
llama-index-core 0.14: it skips the memory as unserializable.) Each message is ``{"role", "additional_kwargs",
"blocks"}``: the words are its ``text`` blocks (``ChatMessage.content`` joins them with a newline), a tool call a
``tool_call`` block ``{"tool_call_id", "tool_name", "tool_kwargs"}`` (the arguments an object, or the model's JSON
text), and a tool's result a ``tool`` message naming the call in ``additional_kwargs.tool_call_id``: the words of a
tool that raised are its exception's, with no flag (:func:`_failed`: a program's copy of it in
``additional_kwargs.is_error`` is read, and LlamaIndex's own words for a tool it lacks or, from its
``call_tool``, one that raised: "Encountered error: ..."). The OpenAI
integration writes each call twice, as a block and as the SDK's ``tool_calls`` in ``additional_kwargs`` (``{"id",
"function": {"name", "arguments"}}``): the blocks are read, the copy only where a message has no call blocks (an
integration, or a version before 0.14, that wrote only it; a version before 0.12 wrote ``content`` and no blocks).
Gemini's ``model`` and Cohere's ``chatbot`` are the assistant. A ``ReActAgent``'s calls are in its words
(:mod:`.llamaindex_react`). Other blocks (``thinking``, images, audio, documents)
are counted, not read. One code path: the messages become OpenAI chat messages, read by :mod:`.chat`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from sam_model.data.formats import chat, llamaindex_react
from sam_model.data.formats.base import FAILED, Chat, TranscriptFormatError, chat_call, each, failure
from sam_model.io import json_type

CONTEXT = ("a LlamaIndex workflow Context (ctx.to_dict()), which holds no chat messages to read (llama-index-core "
           "leaves the agent's memory out of it); save the memory's messages after each run instead, json.dump([m."
           "model_dump(mode='json') for m in memory.get_all()], f), a .json a conversation (sam-data formats: "
           "llamaindex)")
ASSISTANTS = ("model", "chatbot")  # MessageRole.MODEL (Gemini), MessageRole.CHATBOT (Cohere): the assistant
# OpenAI's own fields of a message, which no ChatMessage.model_dump() holds: an exporter writing OpenAI messages with
# an additional_kwargs beside them (LangChain's copy) wrote OpenAI's, which the openai reader reads
OPENAI = ("tool_calls", "tool_call_id", "function_call")


def is_message(m: Any) -> bool:
    """A ``ChatMessage.model_dump()``: a role beside ``additional_kwargs`` and its ``blocks`` (or, before 0.12, its
    ``content``), and no ``type``: a LangChain ``ChatMessage``'s model_dump holds a role and additional_kwargs too,
    beside its type ``chat`` (a LangChain conversation holding one was taken for LlamaIndex's). Nor OpenAI's own
    fields (:data:`OPENAI`): an OpenAI message an exporter gave an ``additional_kwargs`` is OpenAI's."""
    return isinstance(m, Mapping) and "role" in m and "type" not in m and isinstance(
        m.get("additional_kwargs"), Mapping) and (isinstance(m.get("blocks"), list) or "content" in m) and not any(
        k in m for k in OPENAI)


def sniff(messages: list[Any]) -> bool:
    """LlamaIndex's messages, none holding OpenAI's own fields: an OpenAI conversation whose messages all carry an
    ``additional_kwargs`` (its user's words none of OpenAI's fields) was read by this reader, its ``tool_calls`` and
    ``tool_call_id`` unread ("no tool call read by the llamaindex reader"), where the openai reader read it before."""
    return any(is_message(m) for m in messages) and not any(
        isinstance(m, Mapping) and any(k in m for k in OPENAI) for m in messages)


def is_call_block(block: Any) -> bool:
    """A ``tool_call`` content block (``ToolCallBlock``): the one test of a call the reader, the searches by call
    (callshapes), the tool marks and the resent rule share."""
    return isinstance(block, Mapping) and block.get("block_type") == "tool_call"


def is_history(doc: Any) -> bool:
    """One conversation's saved history (a ``.json`` of ``[m.model_dump() for m in memory.get_all()]``): a list of
    LlamaIndex messages and nothing else (a list of conversations was taken for it otherwise)."""
    return isinstance(doc, list) and bool(doc) and all(is_message(m) for m in doc)


def is_context(doc: Any) -> bool:
    """A workflow Context's ``ctx.to_dict()``: ``is_running`` beside its ``state`` (llama-index-workflows 2.x) or its
    ``globals`` (before); it was refused as "expected a tau-bench trajectory", or in a folder as no OpenHands one."""
    return isinstance(doc, Mapping) and "is_running" in doc and isinstance(doc.get("state", doc.get("globals")),
                                                                            Mapping)


def _blocks(m: Mapping[str, Any], where: str) -> list[Mapping[str, Any]]:
    blocks = m.get("blocks")
    if blocks is None:
        return [{"block_type": "text", "text": m["content"]}] if isinstance(m.get("content"), str) else []
    if not isinstance(blocks, list):
        raise TranscriptFormatError(where, f"'blocks' is {json_type(blocks)}, expected a list of content blocks")
    for j, b in enumerate(blocks):
        if not isinstance(b, Mapping) or not isinstance(b.get("block_type"), str):
            raise TranscriptFormatError(f"{where}, block {j}", "a content block must be an object with a "
                                                                "'block_type' (text, tool_call, image, ...)")
    return blocks


def _kwargs_calls(kwargs: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    """``additional_kwargs.tool_calls`` as OpenAI calls: the SDK's (``{"id", "function"}``), a ``ToolSelection``'s
    dump (``{"tool_id", "tool_name", "tool_kwargs"}``), or what the Anthropic and Bedrock Converse integrations wrote
    before ``ToolCallBlock`` (an Anthropic ``ToolUseBlock``'s dict ``{"id", "name", "input"}``, a Converse
    ``{"toolUseId", "name", "input"}``): those were refused, the whole conversation with them."""
    calls = kwargs.get("tool_calls") or []
    if not isinstance(calls, list):
        raise TranscriptFormatError(where, f"additional_kwargs.tool_calls is {json_type(calls)}, expected a list")
    out = []
    for j, c in enumerate(calls):
        w = f"{where}, additional_kwargs.tool_calls {j}"
        if isinstance(c, Mapping) and isinstance(c.get("function"), Mapping):
            out.append(chat_call(c.get("id"), c["function"].get("name"), c["function"].get("arguments"), w))
        elif isinstance(c, Mapping) and "tool_name" in c:
            out.append(chat_call(c.get("tool_id"), c["tool_name"], c.get("tool_kwargs"), w))
        elif isinstance(c, Mapping) and "name" in c and "input" in c:  # Anthropic's ToolUseBlock, Converse's toolUse
            out.append(chat_call(c.get("id", c.get("toolUseId")), c["name"], c["input"], w))
        else:
            raise TranscriptFormatError(w, "a tool call must be {\"id\", \"function\": {\"name\", \"arguments\"}}, "
                                           "{\"tool_id\", \"tool_name\", \"tool_kwargs\"} or {\"id\" (or "
                                           "\"toolUseId\"), \"name\", \"input\"}")
    return out


WORDS = {"true": True, "false": False}  # a flag the program wrote as text: str(True), a JSON text, in any case


def _failed(kwargs: Mapping[str, Any], message: Mapping[str, Any], names: Mapping[str, str],
            where: str) -> dict[str, bool]:
    """A tool message's failure flag: ``additional_kwargs.is_error``, where the program saving the memory copied it
    from the ``ToolCallResult`` event's ``tool_output.is_error`` (the memory keeps none: a tool that raised leaves
    its exception's words alone), true or false, or the words ``"true"`` / ``"false"`` of a program that wrote it as
    text (until conversion version 194 such a file was refused whole; another value still is, naming the field);
    else LlamaIndex's own words for a failed call (:func:`.llamaindex_react.failed`)."""
    if kwargs.get(FAILED) is not None:
        flag = kwargs[FAILED]
        flag = WORDS.get(flag.strip().lower(), flag) if isinstance(flag, str) else flag
        return failure(flag, True, False, f"additional_kwargs.{FAILED}", where)
    name = names.get(message.get("tool_call_id", ""))
    return {FAILED: True} if llamaindex_react.failed(message["content"], name) else {}


def to_chat(messages: list[Any], where: str) -> Chat:
    out, ignored = [], Counter()
    names: dict[str, str] = {}  # each call's id -> its tool's name
    for i, m, w in each(messages, where):
        blocks = _blocks(m, w)
        if not isinstance(m.get("additional_kwargs", {}), Mapping):
            raise TranscriptFormatError(w, f"'additional_kwargs' is {json_type(m['additional_kwargs'])}, expected "
                                           "an object")
        kwargs = m.get("additional_kwargs") or {}
        texts = [b.get("text") for b in blocks if b["block_type"] == "text"]
        if any(not isinstance(t, str) for t in texts):
            raise TranscriptFormatError(w, "a text block without a 'text' string")
        calls = [chat_call(b.get("tool_call_id"), b.get("tool_name"), b.get("tool_kwargs"), f"{w}, block {j}")
                 for j, b in enumerate(blocks) if is_call_block(b)]
        ignored.update(f"{b['block_type']} blocks" for b in blocks if b["block_type"] not in ("text", "tool_call"))
        role = "assistant" if m.get("role") in ASSISTANTS else m.get("role")
        message: dict[str, Any] = {"role": role, "content": "\n".join(texts) if texts else None}
        if role == "assistant" and (calls or (calls := _kwargs_calls(kwargs, w))):
            message["tool_calls"] = calls
        elif role == "assistant" and message["content"] and (react := llamaindex_react.to_messages(
                message["content"], w, i)):  # a ReActAgent's reasoning, its calls in its words
            out.extend(react)
            continue
        if role == "tool":
            if kwargs.get("tool_call_id") is not None:
                message["tool_call_id"] = str(kwargs["tool_call_id"])
            if isinstance(kwargs.get("name"), str):
                message["name"] = kwargs["name"]
            message.update(_failed(kwargs, message, names, w))
        names.update((c["id"], c["function"]["name"]) for c in message.get("tool_calls") or [])
        out.append(message)
    read = chat.to_chat(out, where)
    read.ignored.update(ignored)
    return read

