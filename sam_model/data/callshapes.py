"""What a live agent hands :func:`~sam_model.data.toolstate.live_state`, in its own API's shapes: the calls about to
be made, a tool's definition or its argument names, a system text kept apart from the messages.

An agent holds an OpenAI ``tool_calls`` entry, an Anthropic ``tool_use``, a Gemini ``functionCall`` or a Bedrock
``toolUse``, and declares its tools as its API wants them; the labelling rule reads a
:class:`~sam_model.data.chatmessages.ToolCall` and a list of argument paths. This module turns the one into the
other, and refuses what is neither with an error that says what to give (a string had been read character by
character, a bare ``properties`` mapping flagged nothing). live_state and a scoped memory's search by call
(ScopedMemory.live_state(call=...)) both parse here, so the two compute one state.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sam_model.data.argumentleaves import raw_patch
from sam_model.data.chatmessages import MAX_ARGUMENT_DEPTH, ToolCall, parse_tool_calls
from sam_model.data.formats import autogen, llamaindex, pydantic_ai
from sam_model.data.formats.base import TranscriptFormatError
from sam_model.data.formats.gemini_stream import assembled, camel_keys, streamed
from sam_model.io import json_type
from sam_model.limits import MAX_TEXT_CHARS


def system_text(policy: Any, where: str = "live_state's policy") -> str:
    """A system text kept apart from the messages, as its API keeps it: a string, a list of blocks or parts (Converse's
    and Anthropic's ``system``; their ``text``, cache points and the like passed over) or a Gemini Content."""
    if isinstance(policy, str):
        return policy
    parts = policy.get("parts", [policy]) if isinstance(policy, Mapping) else policy
    if not isinstance(parts, list):
        raise TypeError(f"{where} is {json_type(policy)}: give the system text, a list of text blocks or a Content "
                        "with parts")
    return "\n".join(p if isinstance(p, str) else p["text"] for p in parts if isinstance(p, str) or (
        isinstance(p, Mapping) and isinstance(p.get("text"), str) and not p.get("thought")))


CALL_SHAPE = ('{"name": "the_tool", "arguments": {...}} (or an OpenAI tool_calls entry {"function": {"name", '
              '"arguments"}}, an Anthropic tool_use or a Gemini functionCall)')


def as_calls(call: Any, where: str = "call") -> list[ToolCall]:
    """The calls of one assistant message about to be made: one call or a list of them, each a
    :class:`~sam_model.data.chatmessages.ToolCall` or in any format :func:`_as_call` reads. What live_state and a
    scoped memory's search by ``call`` (ScopedMemory.live_state(call=...)) both parse, so the two compute one state.
    Anything else, an empty list or a call with no tool name is a TranscriptFormatError naming ``where``
    (``call[1]``) and what to give: a string was read character by character, and a call without a name was 'tool
    call 0 has no function name' of no call the caller sent. A tool name longer than MAX_TEXT_CHARS is refused as
    ``call.name``: no add can have stored a call to it (its memory's text holds the name, and the add refuses it by
    that limit), and the state echoes the name, so a 300,000-character one was answered with a 300 KB state. A
    Pydantic AI response message is the calls of its ``tool-call`` parts (:func:`_response_calls`)."""
    names, call = call_names(call, where), _response_calls(call, where)
    one = isinstance(call, (Mapping, ToolCall))
    if not one and not isinstance(call, (list, tuple)):
        raise TranscriptFormatError(where, f"a tool call is expected, got {json_type(call)}: give {CALL_SHAPE}, or a "
                                           "list of them (the calls of one assistant message)")
    if not one and not call:
        raise TranscriptFormatError(where, f"an empty list: give the tool call about to be made, {CALL_SHAPE}")
    calls = [call] if one else list(call)
    out = []
    for i, c in enumerate(calls):
        at = names[i]
        if not isinstance(c, (Mapping, ToolCall)):
            raise TranscriptFormatError(at, f"a tool call is expected, got {json_type(c)}: give {CALL_SHAPE}")
        out.append(c if isinstance(c, ToolCall) else _as_call(c, at))
        if len(out[-1].name) > MAX_TEXT_CHARS:
            raise TranscriptFormatError(f"{at}.name", f"a tool name of {len(out[-1].name)} characters, more than the "
                                                      f"limit of {MAX_TEXT_CHARS} (a memory's text, which holds the "
                                                      "name): give the tool's name")
    return out


def call_names(call: Any, where: str = "call") -> list[str]:
    """What each call of ``call`` (as :func:`as_calls` reads it) is named in an error: ``where`` for one call,
    ``where[i]`` for a list's, ``where.parts[j]`` for a Pydantic AI response's tool-call parts."""
    if pydantic_ai.is_message(call) and call["kind"] == "response":
        return [f"{where}.parts[{j}]" for j, p in enumerate(call["parts"]) if pydantic_ai.is_call(p)]
    if _autogen_calls(call):
        return [f"{where}.content[{j}]" for j in range(len(call["content"]))]
    if _llamaindex_calls(call):
        return [f"{where}.blocks[{j}]" for j, b in enumerate(call["blocks"]) if llamaindex.is_call_block(b)]
    one = isinstance(call, (Mapping, ToolCall))
    return [where] if one else [f"{where}[{i}]" for i in range(len(call))]


def _response_calls(call: Any, where: str) -> Any:
    """A Pydantic AI response message (``ModelResponse``, as its JSON writes it: what a tool's ``ctx.messages[-1]``
    is) as the list of its ``tool-call`` parts, the calls it is about to make; any other call as it is. A response
    was 'a tool call with no tool name'; one without a call part is refused so."""
    if _autogen_calls(call):  # an AutoGen AssistantMessage or ToolCallRequestEvent: its FunctionCalls
        return call["content"]
    if _llamaindex_calls(call):  # a LlamaIndex assistant ChatMessage's dump: its tool_call blocks
        return [b for b in call["blocks"] if llamaindex.is_call_block(b)]
    if not (pydantic_ai.is_message(call) and call["kind"] == "response"):
        return call
    parts = [p for p in call["parts"] if pydantic_ai.is_call(p)]
    if not parts:
        raise TranscriptFormatError(where, "a Pydantic AI response without a tool-call part: give the response that "
                                           f"makes the call, or the call about to be made, {CALL_SHAPE}")
    return parts


def _autogen_calls(call: Any) -> bool:
    """An AutoGen ``AssistantMessage`` whose content is the ``FunctionCall`` s about to be made, as its model context
    holds it, or the ``ToolCallRequestEvent`` a run yields of them: either was 'a tool call with no tool name'."""
    return autogen.is_message(call) and call["type"] in ("AssistantMessage", autogen.REQUEST) \
        and isinstance(call.get("content"), list) and bool(call["content"])


def _llamaindex_calls(call: Any) -> bool:
    """A LlamaIndex assistant ``ChatMessage.model_dump()`` holding ``tool_call`` blocks, the calls it is about to
    make: it was 'a tool call with no tool name'."""
    return llamaindex.is_message(call) and isinstance(call.get("blocks"), list) and any(
        llamaindex.is_call_block(b) for b in call["blocks"])


def arguments_field(call: Any) -> str:
    """Where one call of any shape :func:`_as_call` reads holds its arguments, as a path from the call: ``input``
    (Anthropic's tool_use, Codex's custom tool call), ``args`` (a Gemini FunctionCall, a LangChain ToolCall),
    ``function.arguments`` (an OpenAI tool_calls entry), ``functionCall.args`` (a Gemini part),
    ``toolUse.input`` (Bedrock), else ``arguments``. An error about the arguments names the field the caller's own
    call has: ``call.arguments`` sent a user of Anthropic's or Gemini's shapes looking for a field they do not have."""
    if not isinstance(call, Mapping):
        return "arguments"  # a ToolCall
    wrapper = next((k for k in ("toolUse", "functionCall", "function_call") if isinstance(call.get(k), Mapping)), None)
    if wrapper is not None:
        return f"{wrapper}.{arguments_field(call[wrapper])}"
    if "function" in call:
        return "function.arguments"
    return _arguments_key(call)


def _arguments_key(call: Mapping[str, Any]) -> str:
    """The key of an unwrapped call (no ``function``) that holds its arguments: what :func:`_as_call` reads and
    :func:`arguments_field` names, one rule."""
    return next((k for k in ("arguments", "input", "args", "tool_kwargs") if k in call), "arguments")


def argument_names(call: Any, where: str = "call") -> list[str]:
    """The arguments field of each call of ``call`` as an error names it (:func:`check_arguments`): the call's name
    (:func:`call_names`) and its own field (:func:`arguments_field`), e.g. ``call.input``, ``call[1].function.arguments``."""
    names, call = call_names(call, where), _response_calls(call, where)
    calls = [call] if isinstance(call, (Mapping, ToolCall)) else list(call)
    return [f"{name}.{arguments_field(c)}" for c, name in zip(calls, names, strict=True)]


def check_arguments(calls: Sequence[ToolCall], fields: Sequence[str]) -> None:
    """Refuse a call about to be made whose arguments are not a JSON object (JSON text that does not parse, a list, a
    number, an object nested past MAX_ARGUMENT_DEPTH): a ValueError naming its arguments field (``fields[i]``, as
    the caller's own call has it: :func:`argument_names`, e.g. ``call[1].input`` or
    ``messages[5].tool_calls[0].function.arguments``), what they are and what to send. The readers keep such
    arguments as their raw text, which a recorded call may hold (training data), but a raw text has no argument to
    flag: the state of the call flagged none, and the search answered as if the call needed nothing, silently. A call
    about to be made is the agent's own, so it can send the arguments it will call the tool with. A freeform patch
    (Codex's ``apply_patch`` custom tool call, its input the patch itself) is no JSON and is read: its paths are its
    argument values (argumentleaves.raw_patch). One rule for every entry point: live_state, ScopedMemory's search
    and live_state by call, the LangChain state_from_messages."""
    for c, field in zip(calls, fields, strict=True):
        if c.valid or raw_patch(c) is not None:
            continue
        try:
            decoded = json.loads(c.arguments)
            what = (f"an object nested more than {MAX_ARGUMENT_DEPTH} levels deep" if isinstance(decoded, dict)
                    else f"{json_type(decoded)} in JSON, not an object")
        except (ValueError, RecursionError) as err:
            what = f"not valid JSON ({str(err)[:80]})" if isinstance(err, ValueError) else "nested too deep to read"
        raise ValueError(f"{field}: {what}: give the arguments the tool will be called with, a JSON object "
                         "(or its JSON text), so that the call's state says which of them the memories must fill")


def _as_call(call: Mapping[str, Any], where: str = "tool call") -> ToolCall:
    """A call in any format: an OpenAI ``tool_calls`` entry, ``{"name", "arguments"}`` (tau2, GenAI parts,
    Responses ``function_call`` with ``call_id``), an Anthropic ``tool_use`` block (``input``), a Bedrock Converse
    ``toolUse`` block or its content (``toolUseId``; Strands' ToolUse), a LangChain ``ToolCall`` or a Gemini
    ``functionCall`` (``args``), or the Gemini part that holds one, or a Pydantic AI ``tool-call`` part
    (``tool_name``, ``args``, ``tool_call_id``), or LlamaIndex's ``ToolCallBlock`` or ``ToolSelection`` dumped
    (``tool_name``, ``tool_kwargs``, ``tool_call_id`` or ``tool_id``)."""
    call = next((call[k] for k in ("toolUse", "functionCall", "function_call") if isinstance(call.get(k), Mapping)),
                call)
    if "tool_name" in call and not any(k in call for k in ("name", "function")):  # a Pydantic AI ToolCallPart, or
        # LlamaIndex's ToolCallBlock / ToolSelection (tool_kwargs, tool_id): their arguments were read as none, so
        # the state flagged nothing and the search ranked as if the call needed no memory, silently
        call = {"name": call["tool_name"], "args": call.get("args", call.get("tool_kwargs")),
                "id": call.get("tool_call_id", call.get("tool_id"))}
    fn = call.get("function")
    name = fn.get("name") if isinstance(fn, Mapping) else call.get("name")
    if not isinstance(name, str) or not name:
        raise TranscriptFormatError(where, f"a tool call with no tool name: give {CALL_SHAPE}")
    if "function" in call:
        return parse_tool_calls({"tool_calls": [call]}, where)[0]
    args = assembled(call, where) if streamed(camel_keys(call)) else call.get(_arguments_key(call))  # Vertex's streamed arguments
    fn = {"name": name, "arguments": args}
    call_id = call.get("call_id", call.get("id", call.get("toolUseId")))
    return parse_tool_calls({"tool_calls": [{"function": fn, "id": call_id}]}, where)[0]


TOOL_SHAPE = ('OpenAI\'s {"type": "function", "function": {"name", "parameters"}}, a function declaration {"name", '
              '"parameters"}, Anthropic\'s {"name", "input_schema"} or Bedrock\'s {"toolSpec": {"name", "inputSchema"}}')
_SCHEMA_KEYS = ("parameters", "input_schema", "inputSchema", "parametersJsonSchema")


def tool_definition(tool: Mapping[str, Any], where: str = "tool") -> tuple[str, Mapping[str, Any]]:
    """The name and parameters schema of a tool as an agent declares it to its model (``TOOL_SHAPE``; Responses'
    flat ``{"type": "function", "name", "parameters"}`` and a Gemini FunctionDeclaration are the function shape).
    An agent holds these, not a bare schema: given as ``arguments`` they were read as a schema without
    ``properties``, so the state flagged no argument and nothing said why. A mapping of none of these shapes is a
    ValueError naming ``where``."""
    spec = tool.get("function", tool.get("toolSpec", tool))
    name = spec.get("name") if isinstance(spec, Mapping) else None
    key = next((k for k in _SCHEMA_KEYS if isinstance(spec, Mapping) and k in spec), None)
    if not isinstance(name, str) or not name or (key is None and spec is tool and tool.get("type") != "function"):
        raise ValueError(f"live_state's {where} is a mapping but not a tool definition (keys "
                         f"{sorted(map(str, tool))[:6]}): give {TOOL_SHAPE}")
    schema = spec.get(key) if key else {}
    if isinstance(schema, Mapping) and isinstance(schema.get("json"), Mapping):  # Bedrock's inputSchema
        schema = schema["json"]
    if not isinstance(schema, Mapping):
        raise ValueError(f"live_state's {where}.{key} is {json_type(schema)}: a JSON-schema object is expected")
    return name, schema


def argument_schema(arguments: Any) -> Mapping[str, Any] | Sequence[str]:
    """``live_state``'s ``arguments`` as schema_paths reads them: a list of paths, a JSON-schema parameters object, or a
    tool definition (its parameters). A string was read character by character (``"account_id"`` flagged ``a``,
    ``c``, ...) and a mapping of neither (the ``properties`` without their wrapper) flagged nothing; both are a
    ValueError saying what to give."""
    if arguments is None:
        return []
    if isinstance(arguments, str) or not isinstance(arguments, (Mapping, list, tuple)):
        raise ValueError(f"live_state's arguments is {json_type(arguments)}: give a list of argument names, the "
                         f"parameters' JSON schema or the tool's definition ({TOOL_SHAPE})")
    if not isinstance(arguments, Mapping):
        if not all(isinstance(a, str) and a for a in arguments):
            raise ValueError("live_state's arguments: a list of argument names (strings) is expected")
        return arguments
    if any(k in arguments for k in ("function", "toolSpec", *_SCHEMA_KEYS)):
        return tool_definition(arguments, "arguments")[1]
    if arguments and "properties" not in arguments and "type" not in arguments:
        raise ValueError(f"live_state's arguments is a mapping with neither 'properties' nor 'type' (keys "
                         f"{sorted(map(str, arguments))[:6]}): give the parameters' JSON schema "
                         '{"type": "object", "properties": {...}}, a list of argument names or the tool\'s definition')
    return arguments


def schema_paths(arguments: Mapping[str, Any] | Sequence[str], prefix: str = "") -> list[str]:
    """Leaf paths of a JSON-schema ``parameters`` object (objects add ``.key``, arrays keep the path), or
    the given list of paths as they are. Types in any case: Gemini's declarations write ``OBJECT`` / ``ARRAY``."""
    if not isinstance(arguments, Mapping):
        return [str(a) for a in arguments]
    props = arguments.get("properties")
    if props is None and _is_array(arguments):
        return schema_paths(arguments.get("items") or {}, prefix)
    if not isinstance(props, Mapping):
        return [prefix] if prefix else []
    out: list[str] = []
    for key, sub in props.items():
        path = f"{prefix}.{key}" if prefix else key
        sub = sub if isinstance(sub, Mapping) else {}
        nested = sub.get("items") if _is_array(sub) else sub
        out += schema_paths(nested, path) if isinstance(nested, Mapping) and (
            "properties" in nested or _is_array(nested)) else [path]
    return out


def _is_array(schema: Mapping[str, Any]) -> bool:
    return str(schema.get("type")).lower() == "array"
