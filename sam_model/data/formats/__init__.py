"""The log formats agents write, one reader each, all yielding the chat messages the labelling rule reads.

One rule (:mod:`sam_model.data.toolstate`), many readers: a conversation written by hand in every format below
gives the same agent-log lines (tests/test_formats.py). The importer (:mod:`sam_model.data.transcripts`) tells the
format of a file from its content (``--format NAME`` forces one), and :func:`to_chat` tells it for a running
conversation, so ``live_state`` and the LangChain adapter take the messages in any of them.

    sam-data formats        # this table
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sam_model.data.formats import (
    adk,
    agent_framework,
    anthropic,
    autogen,
    bedrock,
    chat,
    claude_code,
    claude_stream,
    codex,
    codex_exec,
    gemini,
    gemini_cli,
    langchain_messages,
    langfuse,
    llamaindex,
    mini_swe_agent,
    openhands,
    openhands_v1,
    otel,
    pydantic_ai,
    responses,
    smolagents,
    swe_agent,
    tau2,
)
from sam_model.data.formats.base import Chat, Conversation, TranscriptFormatError
from sam_model.io import json_type

__all__ = ["FORMATS", "Chat", "Conversation", "Format", "TranscriptFormatError", "detect", "is_log_message", "tool_mark_kinds",
           "tool_marks", "to_chat"]


@dataclass(frozen=True)
class Format:
    """A format: its name (``--format NAME``), what a file of it holds, and its reader of one conversation."""

    name: str
    title: str
    file: str
    to_chat: Callable[[list[Any], str], Chat]
    sniff: Callable[[list[Any]], bool]


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("openai", "OpenAI chat messages (Chat Completions)",
           '.jsonl of {"id", "messages"} lines, or a .json list of them', chat.to_chat, chat.sniff),
    Format("tau1", "tau-bench v1 trajectories",
           ".json list of {task_id, trial, traj}, named {model}-{domain}.json[.gz]", chat.to_chat, lambda m: False),
    Format("tau2", "tau2-bench results", '.json {info, tasks, simulations: [{task_id, trial, messages}]}',
           tau2.to_chat, tau2.sniff),
    Format("anthropic", "Anthropic Messages (tool_use / tool_result blocks)",
           '.jsonl of {"id", "system"?, "messages"} lines, or a .json list', anthropic.to_chat, anthropic.sniff),
    Format("responses", "OpenAI Responses API items (function_call / function_call_output)",
           '.jsonl of {"id", "instructions"?, "input", "output"} (or "items") lines, or a .json list; lines '
           'chained by "previous_response_id" (a request a line) are one conversation; an OpenAI Agents SDK run\'s '
           'items, {"id", "instructions"?, "messages": result.to_input_list()} lines, or its SQLiteSession database '
           '(.db, each session a conversation)',
           responses.to_chat, responses.sniff),
    Format("otel", "OpenTelemetry spans, OTLP JSON (GenAI semantic conventions v1.37+, or OpenInference: Phoenix)",
           '.json {"resourceSpans": [...]}, or the collector file exporter\'s lines of them (.jsonl, .json or no '
           'extension), or its folder (the rotated files read together)',
           otel.to_chat, otel.sniff),
    Format("langchain", "LangChain / LangGraph messages (messages_to_dict, dumpd or model_dump)",
           '.jsonl of {"id", "messages"} lines (a LangGraph state\'s messages), or a .json list',
           langchain_messages.to_chat, langchain_messages.sniff),
    Format("swe-agent", "SWE-agent trajectories (function calls, or text commands such as open src/x.py 100)",
           '.traj {history, trajectory, info} (one run: {instance_id}.traj), or a folder of them',
           swe_agent.to_chat, swe_agent.sniff),
    Format("bedrock", "Amazon Bedrock Converse messages (toolUse / toolResult blocks; Strands Agents' messages)",
           '.jsonl of {"id", "system"?, "messages"} lines (a Converse request with an "id"; its response\'s '
           '"output" is the last message), or a .json list; or a Strands Agents session folder: '
           'session_<id>/agents/agent_<id>/messages/message_<N>.json', bedrock.to_chat, bedrock.sniff),
    Format("gemini", "Gemini contents (google-genai SDK, Gemini API, Vertex AI: functionCall / functionResponse parts)",
           '.jsonl of {"id", "system_instruction"?, "contents"} lines, or a .json list (camelCase or snake_case)',
           gemini.to_chat, gemini.sniff),
    Format("openhands", "OpenHands (OpenDevin) trajectories: the event stream of actions and observations",
           '.json list of events (the save_trajectory_path setting; a folder of them), or the .jsonl of an evaluation: '
           '{"instance_id", "history"} lines; or a session store: sessions/<sid>/events/<id>.json', openhands.to_chat,
           openhands.sniff),
    Format("openhands-v1", "OpenHands V1 events (software-agent-sdk, OpenHands 1.x: ActionEvent, ObservationEvent, ...)",
           '.json list of {"kind", "id", "source", ...} events, a conversation folder (events/event-NNNNN-ID.json), or '
           'an evaluation\'s output.jsonl: {"instance_id", "history"} lines', openhands_v1.to_chat, openhands_v1.sniff),
    Format("codex", "Codex CLI session rollouts (OpenAI Codex: session_meta, response_item, event_msg lines)",
           'one session a .jsonl of {"timestamp", "type", "payload"} lines (rollout-<time>-<id>.jsonl), or a folder '
           'of them: ~/.codex/sessions (YYYY/MM/DD/rollout-*.jsonl) read whole', codex.to_chat, codex.sniff),
    Format("claude-code", "Claude Code session transcripts and headless output (user / assistant API messages, one "
           "a line)", '~/.claude/projects/<project>/<session id>.jsonl (a subagent\'s: <session id>/subagents/agent-'
           '<id>.jsonl), or a project folder of them; or the stdout of claude -p --output-format stream-json '
           '--verbose ({"type": "system" | "assistant" | "user" | "result", "session_id", ...} lines; runs appended: '
           'one conversation a session)', claude_code.to_chat, claude_code.sniff),
    Format("codex-exec", "Codex CLI headless output (codex exec --json: thread.started, item.started / item.completed "
           "events)", 'the stdout of codex exec --json: a .jsonl of {"type": "thread.started" | "item.completed" | '
           '..., ...} events (runs appended: one conversation a thread; it holds no prompt)', codex_exec.to_chat,
           codex_exec.sniff),
    Format("gemini-cli", "Gemini CLI session files (google-gemini/gemini-cli's chat recording: user / gemini "
           "messages, their toolCalls with result and status)", '~/.gemini/tmp/<project hash>/chats/session-<time>-'
           '<id>.jsonl ({"sessionId", "projectHash", ...} then message records {"id", "type", "content", '
           '"toolCalls"?}, one a line), or .json (one {"sessionId", "projectHash", "messages": [...]}) in versions '
           'before 2026, or a chats folder of them', gemini_cli.to_chat, gemini_cli.sniff),
    Format("mini-swe-agent", "mini-swe-agent trajectories (its shell commands: ```bash blocks, or v2's bash tool calls)",
           '.traj.json {"info", "messages", "trajectory_format"} (one run: {instance_id}/{instance_id}.traj.json), or '
           'a folder of them', mini_swe_agent.to_chat, mini_swe_agent.sniff),
    Format("pydantic-ai", "Pydantic AI message history (all_messages_json(): request / response messages of parts: "
           "user-prompt, tool-call, tool-return, retry-prompt)", '.jsonl of {"id", "messages"} lines (the messages '
           'as all_messages_json() writes them), a .json list of those, or one conversation a .json file (its '
           'history as written; a folder of them)', pydantic_ai.to_chat, pydantic_ai.sniff),
    Format("autogen", "AutoGen messages (Microsoft autogen-agentchat: save_state()'s model context, UserMessage, "
           "AssistantMessage of FunctionCalls, FunctionExecutionResultMessage; or run()'s TaskResult messages)",
           'one conversation a .json file '
           'holding await agent.save_state() (an AssistantAgentState; a team\'s TeamState or a SocietyOfMindAgent\'s '
           'state: each assistant\'s, at any depth), or a folder of them (beside them the agent\'s or team\'s '
           'dump_component() .json: its system_message the policy); or a .jsonl of {"id", "messages": state["llm_context"]["messages"]} lines, or of '
           '{"id", "messages"} lines of the runs\' TaskResult.messages (TextMessage, ToolCallRequestEvent, ...)',
           autogen.to_chat, autogen.sniff),
    Format("smolagents", "Hugging Face smolagents memory (agent.memory's steps: TaskStep, ActionStep with tool_calls "
           "or a CodeAgent's code, observations; or write_memory_to_messages()'s tool-call / tool-response messages)",
           'one conversation a .json file holding agent.memory.get_full_steps() (or get_succinct_steps(), '
           'agent.memory.system_prompt.dict() first) or [m.dict() for m in agent.write_memory_to_messages()], or a '
           'folder of them; or a .jsonl of {"id", "system_prompt"?, "steps"} lines, or of {"id", "messages": '
           '[m.dict() for m in agent.write_memory_to_messages()]} lines',
           smolagents.to_chat, smolagents.sniff),
    Format("llamaindex", "LlamaIndex chat history (llama-index-core ChatMessage.model_dump(): text and tool_call "
           "blocks, tool messages naming additional_kwargs.tool_call_id; FunctionAgent / AgentWorkflow memory)",
           'one conversation a .json file holding [m.model_dump(mode="json") for m in memory.get_all()], or a folder '
           'of them; or a .jsonl of {"id", "messages": [...]} lines of them',
           llamaindex.to_chat, llamaindex.sniff),
    Format("adk", "Google Agent Development Kit sessions (google-adk session.model_dump_json(): events of an author "
           "and a Gemini content, function_call / function_response parts; sub-agents' events the assistant's)",
           'one session a .json file holding session.model_dump_json() (a "system" field beside its events the '
           'agent\'s instruction, which the session does not hold), a .jsonl of them, one a line, or a folder of them; '
           'or the SQLite session database the app keeps them in (DatabaseSessionService, SqliteSessionService)',
           adk.to_chat, adk.sniff),
    Format("agent-framework", "Microsoft Agent Framework sessions (agent-framework-core session.to_dict(): its "
           "history provider's messages of contents: text, function_call, function_result)",
           'one session a .json file holding session.to_dict() (an "instructions" field beside it the agent\'s '
           'instructions, which the session does not hold), a .jsonl of them, one a line, or a folder of them (a '
           'FileSessionStore\'s); or a FileHistoryProvider\'s <session_id>.jsonl, one message a line, or its folder; '
           'either store\'s .msgpack (serialization_format="msgpack") likewise',
           agent_framework.to_chat, agent_framework.sniff),
    Format("langfuse", "Langfuse traces (the public API's traces and observations: GENERATION observations' input "
           "and output messages, TOOL observations)", 'a .json trace (GET /api/public/traces/{traceId}, or the UI\'s '
           'Download JSON), a list of them, a page {"data", "meta"} of traces or of observations (GET '
           '/api/public/v2/observations), or a .jsonl of them, one a line, or a folder of those; a session\'s traces '
           'are one conversation',
           langfuse.to_chat, langfuse.sniff),
)}
# langchain's ai blocks: anthropic's; SWE-agent's items carry OpenAI's tool_calls (and tau2's sniff: none of its marks);
# gemini's parts have no "type", which otel's (any role and parts) would take; bedrock's blocks have no "type",
# which every other format's blocks (anthropic's tool_use included) have; an OpenHands event has no role and one of
# action / observation (a SWE-agent step has both), an OpenHands V1 event no role and a kind; a Claude Code entry no
# role and the type user or assistant of the API message it holds; a Codex rollout line wraps a Responses item in a
# payload (responses' sniff reads the type beside it, which is none of its items'); neither takes the other's lines
# (a Claude Code entry has no payload, a rollout line's type is neither user nor assistant); Claude Code's stream-json
# messages are its entries' user and assistant messages (claude-code's sniff takes them: the same reader); a codex
# exec event's type has a dot, which no other format's messages have; a Gemini CLI message record's type gemini, which
# no other format's has (its user records have neither a role nor a Claude Code entry's message); a mini-swe-agent
# message's extra (the harness's parsed actions, a format error's interrupt_type, an observation's raw_output) or exit
# role no other's has, and its v2 Responses-model runs hold function_call_output items, which responses' sniff would take;
# a Pydantic AI message has no role and a kind request or response beside its parts; an AutoGen message no role and a
# type that names its class (UserMessage, ...), which no other format's type is; a smolagents step no role and its
# dataclass's keys (step_number with observations, task), its messages the roles tool-call / tool-response; a
# LlamaIndex message a role beside additional_kwargs, which no other format's message with a role has; an ADK event
# no role and an author beside an invocation_id, which no other format's has; an Agent Framework message the type
# message of a Responses message item, its contents (plural) where the item has content: before responses; a Langfuse
# observation no role and a type GENERATION (or SPAN, TOOL, ...) beside a startTime, which no other format's has
_SNIFF_ORDER = ("langfuse", "claude-code", "gemini-cli", "openhands-v1", "openhands", "codex", "codex-exec", "mini-swe-agent",
                "pydantic-ai", "autogen", "smolagents", "llamaindex", "adk", "agent-framework", "responses", "gemini", "otel", "langchain", "bedrock", "anthropic", "swe-agent", "tau2", "openai")


def detect(messages: list[Any]) -> str:
    """The format of one conversation's messages, from their shape (``openai`` when nothing else fits)."""
    return next((name for name in _SNIFF_ORDER if FORMATS[name].sniff(messages)), "openai")


def is_log_message(m: Any) -> bool:
    """A dict one of the readers reads as a message (it has a ``role``, GenAI or Gemini ``parts`` or a Responses item
    ``type``, or is an OpenHands event, 0.x or V1, a Claude Code transcript entry or stream-json message, a Codex
    rollout line, a codex exec event, a Gemini CLI session record or a mini-swe-agent v2 model's response object;
    a Pydantic AI message holds ``parts``),
    rather than a framework's own message object. (A V1 event's ``kind`` took it for an agent-log event in
    ScopedMemory.add: 'missing required field text'; a rollout line was refused as neither a message nor an event, so
    a Codex session could not be added as written.)"""
    return isinstance(m, Mapping) and ("role" in m or isinstance(m.get("parts"), list) or m.get("type") in (
        *responses.CALLS, *responses.OUTPUTS, "mcp_call", "reasoning", "message") or langchain_messages.is_message(m)
        or openhands.is_v1_event(m) or openhands.is_event(m) or claude_code.is_entry(m) or claude_stream.is_message(m)
        or codex.is_line(m) or codex_exec.is_event(m) or gemini_cli.is_record(m) or mini_swe_agent.is_message(m)
        or autogen.is_message(m) or smolagents.is_message(m) or adk.is_event(m) or langfuse.is_observation(m))


def to_chat(messages: list[Any], where: str = "conversation", format: str | None = None) -> Chat:
    """One conversation's messages, in ``format`` (None: detected), as chat messages."""
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; formats: {', '.join(FORMATS)}")
    if not isinstance(messages, list):
        raise TranscriptFormatError(where, f"the messages are {json_type(messages)}, expected a list")
    return FORMATS[format or detect(messages)].to_chat(messages, where)


# what a tool call looks like in each format, for the message of a conversation where none was read
_MARKS = (("content blocks of type tool_use", "anthropic"), ("content blocks of type tool_result", "anthropic"),
          ("items of type function_call", "responses"), ("items of type function_call_output", "responses"),
          ("parts of type tool_call", "otel"), ("parts of type tool_call_response", "otel"),
          ("tool calls with a top-level name (tau2)", "tau2"), ("'tool_calls' entries with a 'function'", "openai"),
          ("'function_call' fields (deprecated OpenAI functions)", "openai"),
          ("LangChain messages ({\"type\": \"ai\", ...})", "langchain"),
          ("SWE-agent history items (message_type, tool_call_ids, is_demo)", "swe-agent"),
          ("content blocks with a toolUse member (Converse)", "bedrock"),
          ("content blocks with a toolResult member (Converse)", "bedrock"),
          ("parts with a functionCall (Gemini)", "gemini"), ("parts with a functionResponse (Gemini)", "gemini"),
          ("OpenHands events (action or observation, no role)", "openhands"),
          ("OpenHands V1 events (kind ActionEvent or ObservationEvent)", "openhands-v1"),
          ("Codex rollout lines with tool calls (response_item function_call, local_shell_call)", "codex"),
          ("Claude Code entries holding tool_use or tool_result blocks", "claude-code"),
          ("codex exec --json events of tool calls (item command_execution, mcp_tool_call, file_change)", "codex-exec"),
          ("Gemini CLI messages with toolCalls (type gemini)", "gemini-cli"),
          ("mini-swe-agent messages with the commands the harness ran (extra.actions)", "mini-swe-agent"),
          ("Pydantic AI messages with tool-call or tool-return parts", "pydantic-ai"),
          ("AutoGen messages with FunctionCalls or their results (AssistantMessage, FunctionExecutionResultMessage, "
           "ToolCallRequestEvent, ToolCallExecutionEvent)", "autogen"),
          ("smolagents steps or messages with tool calls (ActionStep tool_calls or code_action, tool-call)",
           "smolagents"),
          ("LlamaIndex messages with tool_call blocks or tool_call_ids (ChatMessage.model_dump())", "llamaindex"),
          ("ADK events with function_call or function_response parts (google-adk sessions)", "adk"),
          ("Agent Framework messages with function_call or function_result contents (session.to_dict())",
           "agent-framework"),
          ("Langfuse GENERATION observations whose output holds tool calls", "langfuse"))


def tool_mark_kinds() -> list[str]:
    """Every sign of tool use :func:`tool_marks` looks for, each once, for the message of a file where none was
    seen: told from the marks themselves, so a new format's are named there too (a hand-written list missed three)."""
    return list(dict.fromkeys(what for what, _ in _MARKS))


def tool_marks(messages: Any) -> list[tuple[str, str]]:
    """Signs of tool use in raw messages, as (what was seen, the format whose reader reads it)."""
    found: set[int] = set()
    autogen_context = isinstance(messages, list) and autogen.sniff(messages)
    for m in messages if isinstance(messages, list) else []:
        if not isinstance(m, Mapping):
            continue
        blocks = [b for key in ("content", "parts") if isinstance(m.get(key), list) for b in m[key]]
        types = {t for t in (*(b.get("type") for b in blocks if isinstance(b, Mapping)), m.get("type"))
                 if isinstance(t, str)}  # a "type" that is an object or a list was a TypeError, a traceback
        for i, t in enumerate(("tool_use", "tool_result", "function_call", "function_call_output", "tool_call",
                               "tool_call_response")):
            if t in types:
                found.add(i)
        calls = m.get("tool_calls") if isinstance(m.get("tool_calls"), list) and not smolagents.step_kind(m) else []
        if any(isinstance(c, Mapping) and "function" not in c and "name" in c and "args" not in c for c in calls):
            found.add(6)
        if any(isinstance(c, Mapping) and "function" in c for c in calls):
            found.add(7)
        if "function_call" in m:
            found.add(8)
        if langchain_messages.is_message(m) and not autogen_context:  # AutoGen's SystemMessage is a class name too
            found.add(9)
        if any(k in m for k in swe_agent.MARKS):
            found.add(10)
        for i, key in ((11, "toolUse"), (12, "toolResult")):
            if any(isinstance(b, Mapping) and key in b for b in blocks):
                found.add(i)
        held = {gemini.camel(str(k)) for b in blocks if isinstance(b, Mapping) for k, v in b.items() if v is not None}
        found.update(i for i, kind in ((13, "functionCall"), (14, "functionResponse")) if kind in held)
        if openhands.is_event(m):
            found.add(15)
        if openhands.is_v1_event(m) and m["kind"] in ("ActionEvent", *openhands_v1.RESULTS):
            found.add(16)
        if codex.is_line(m) and isinstance(m["payload"], Mapping) and m["payload"].get("type") in codex.CALL_ITEMS:
            found.add(17)
        if claude_code.holds_tools(m):
            found.add(18)
        if codex_exec.is_event(m) and isinstance(m.get("item"), Mapping) and \
                codex_exec.item_type(m["item"]) in codex_exec.CALLS:
            found.add(19)
        if gemini_cli.holds_tools(m):
            found.add(20)
        if isinstance(m.get("extra"), Mapping) and m["extra"].get("actions"):
            found.add(21)
        if pydantic_ai.is_message(m) and any(isinstance(p, Mapping) and p.get("part_kind") in (
                "tool-call", "tool-return", "retry-prompt") for p in m["parts"]):
            found.add(22)
        if autogen.is_message(m) and (m["type"] in ("FunctionExecutionResultMessage", autogen.REQUEST,
                                                     autogen.EXECUTION) or (
                m["type"] == "AssistantMessage" and isinstance(m.get("content"), list))):
            found.add(23)
        if (smolagents.step_kind(m) == "action" and (m.get("tool_calls") or m.get("code_action"))) or m.get(
                "role") == "tool-call":
            found.add(24)
        if llamaindex.is_message(m) and (isinstance(m["additional_kwargs"].get("tool_calls"), list) or any(
                llamaindex.is_call_block(b) for b in (m["blocks"] if isinstance(m.get("blocks"), list) else []))
                or "tool_call_id" in m["additional_kwargs"]):
            found.add(25)
        parts = m["content"].get("parts") if adk.is_event(m) and isinstance(m.get("content"), Mapping) else None
        if isinstance(parts, list) and any(isinstance(p, Mapping) and {gemini.camel(str(k)) for k, v in p.items()
                                           if v is not None} & {"functionCall", "functionResponse"} for p in parts):
            found.add(26)
        if agent_framework.is_message(m) and any(isinstance(c, Mapping) and c.get("type") in (
                "function_call", "function_result") for c in m["contents"]):
            found.add(27)
        if langfuse.is_observation(m) and m.get("type") == "GENERATION" and langfuse.calls_in(m):
            found.add(28)
    if found & {2, 3} and isinstance(messages, list) and codex.is_old_meta(messages[0]):  # a rollout before the
        found = found - {2, 3} | {17}  # wrapper: its bare Responses items are the codex reader's
    return [_MARKS[i] for i in sorted(found)]


def main(argv: list[str] | None = None) -> int:
    """``sam-data formats``: the formats the transcript importer reads."""
    if argv and argv[0] in ("-h", "--help"):
        print("usage: sam-data formats\n\nList the log formats `sam-data transcripts` reads (auto-detected from "
              "content; --format NAME forces one).")
        return 0
    width = max(map(len, FORMATS))
    for f in FORMATS.values():
        print(f"{f.name:<{width}}  {f.title}\n{'':<{width}}  file: {f.file}")
    print("\nsam-data transcripts IN OUT.jsonl [--format NAME]   (detected from the content when --format is not given)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
