"""The MCP face of ``sam-serve``: four memory tools for agents (the ``mcp`` SDK's MCPServer).

- ``remember(text | messages, user_id, agent_id, run_id, metadata)``: store what was said or done: one user message
  (``text``), or the conversation's new chat messages in any format ScopedMemory.add reads (``messages``: the
  agent's tool calls and their results too, so that a recall by ``call`` traces arguments to them), checked as
  sam-serve's HTTP add checks its ``messages`` (ScopedMemory's ``check_add``, with the scope's open turn, whose
  messages are then written; at most ``MAX_ADD_ITEMS`` messages and as many tool calls; over HTTP the same body
  limit, the middleware being the HTTP app's);
- ``recall(query, user_id, agent_id, run_id, state, call, limit, step, task_start, used_order)``: the memories that matter now
  — with ``state`` (the agent's state: phase, constraints, uncertainty flags, ...) or ``call`` (the tool call about
  to be made, whose state the memory computes from the scope's recorded conversation) SAM's state-adaptive query,
  else a plain one; ``step`` (optional: the step of the message being answered, already remembered) leaves that
  message and later ones out, as ScopedMemory.search does. The step is the memory's numbering (every message, call
  and result of the scope's conversation takes one), which a model cannot count for itself: it counts turns, or
  misses the tool results it remembered. So remember answers each memory's ``step`` beside its id, as recall's
  results carry theirs, and the tool's schema says to copy it from there. A recall without a step is made now,
  the newest memory included, rather than at the scope's newest message: an agent that remembers a fact and
  recalls it later (README's example: "my budget is $300", then "budget?") must find it, and a default that hid
  the newest memory would hide that fact without a word; a recall by ``call`` leaves the decision point's own
  message out already;
- ``forget(memory_id, user_id, agent_id, run_id)``: delete a memory (the scopes given must be its own).
- ``forget_all(user_id, agent_id, run_id)``: delete every memory of the scopes, as the HTTP ``DELETE
  /v1/memories?<scope>`` (Mem0's delete_all) does, logged alike: a user who wants all of theirs gone had to forget
  them one id at a time, and an id missed (or a new one) kept its words.

Over HTTP (mounted at ``/mcp`` of the HTTP service) each call carries the tenant's key as the HTTP API does
(``Authorization: Bearer <key>`` or ``X-API-Key``); an unknown key is refused, and a key the keys file fixes to a
scope (``{"key": ..., "user_id": "alice"}``) serves that scope only, by the rule of ``--user-id`` below (the tools'
descriptions stay generic there: the key is per request, the tools one server's). Over stdio (``sam-serve --stdio``,
for an agent that launches the memory as a subprocess) there are no headers: the tenant is the one the command
names, and ``--user-id`` (``--agent-id``, ``--run-id``) fixes the scope the process serves: the tools' scope
arguments default to it, their descriptions say so (the model need not pass it, and cannot see its own session's
id), and a call giving another value for a fixed scope is refused, never widened or switched (``forget_all()`` with
``--user-id me`` deletes only me's memories). Writes take the same write-ahead log as HTTP writes (Tenant.write: an
MCP remember is logged as the HTTP add of the same messages is) and, like them, are answered before the checkpoint
they make due is written. What the memory refuses (an unknown key or id, an empty text, a message with no content,
no scope) comes back as the tool's error with the memory's one-line reason; an argument of the wrong type, missing
or unknown, as one line naming it and what it takes. A message giving a key twice in one object is refused unread
on both transports (sam_model.serve.jsonrpc), and over stdio a line that is no UTF-8 too (sam_model.serve.stdio):
the SDK read the last value, and each such byte as U+FFFD.
"""


import logging
import signal
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sam_model.limits import MAX_ADD_ITEMS, MAX_BODY_BYTES
from sam_model.memory.scoped import SCOPE_KEYS
from sam_model.serve.scopes import check_fixed, refusal, within
from sam_model.serve.stdio import strict_stdio
from sam_model.serve.tenants import Caller, Tenant, Tenants
from sam_model.serve.wal import LogWriteError

log = logging.getLogger("sam_model.serve")

CALL = ("The tool call you are about to make, before you make it: {\"name\": \"book_flight\", \"arguments\": "
        "{\"user_id\": \"mia_li_3668\", ...}} (or a list of the calls you are about to make together). Instead of "
        "state: the memory works out your state for that call from this user's (run's) conversation as recorded "
        "so far (the tool as the phase, the arguments whose values were said earlier as what you need) and ranks "
        "the memories for that state, as the model was trained to; the answer's 'state' shows it. Give the same "
        "user_id, agent_id and run_id the conversation was added with. With an empty query, the conversation's "
        "newest message is the query.")
STEP = ("Optional: leave it out to search over every memory of this user (run), the newest message included. Give "
        "the 'step' remember answered for the message you are answering (each result of remember and of recall has "
        "one; it is also the number after the last '#' of the memory's id: \"mia#7\" is 7) to leave that message "
        "and any later one out of the results (you have them in your context), as the model was evaluated. It is "
        "the memory's own numbering, not your count of turns or messages: every message, tool call and tool result "
        "remembered for this user (run) takes a step, from 0. An integer >= 0; it never widens whose memories are "
        "searched.")
TASK_START = ("Optional, rarely needed: leave it out. The step where your current task began (default: where the "
              "recorded conversation says it did); only a model with time features reads it. An integer >= 0.")
USED_ORDERS = ("model", "latest", "needed", "off")  # a recall's used_order (HTTP's search body takes the same)
USED_ORDER = ("Optional: the memories your earlier tool calls of this task took values from first: 'model' in the "
              "model's order, 'latest' by their latest use, 'needed' by it but only those that supplied a slot this "
              "call needs, 'off' not. Leave it out for the server's default.")
TEXT = "One thing the user said or you learnt, as a user message (instead of messages)."
MESSAGES = ("Instead of text: the conversation's messages since your last remember, in order, as your API writes "
            "them (OpenAI {\"role\", \"content\", \"tool_calls\"} and {\"role\": \"tool\", \"tool_call_id\", "
            "\"content\"}; Anthropic tool_use / tool_result blocks; Gemini contents; Bedrock Converse): the user's "
            f"turns, your replies, your tool calls and their results. At most {MAX_ADD_ITEMS} messages and "
            f"{MAX_ADD_ITEMS} tool calls; send each message once.")


def fixed_scopes(scopes: Mapping[str, str | None] | None) -> dict[str, str]:
    """The scopes a server is fixed to (``{"user_id": "me"}``), the unset ones left out; a bad value (empty, holding
    '/', too long) is refused in one line naming its option, before the model loads."""
    return check_fixed(scopes, _option)


def _option(scope: str) -> str:
    """The sam-serve option that fixes a scope: ``user_id``'s is ``--user-id``."""
    return "--" + scope.replace("_", "-")


def create_mcp(tenants: Tenants, search: Callable[..., dict] | None = None, stdio_tenant: str | None = None,
               scopes: Mapping[str, str | None] | None = None, max_body: int = MAX_BODY_BYTES) -> MCPServer:
    """The MCP server over ``tenants``; ``stdio_tenant``: the tenant of calls that carry no HTTP headers; ``scopes``:
    the scopes every call is fixed to (sam-serve --stdio with --user-id, --agent-id, --run-id); ``max_body``: a stdio
    line's bytes at most (sam-serve --max-body-mb; over HTTP the app's limit)."""
    fixed = fixed_scopes(scopes)
    server = _Server("sam-memory", instructions="Long-term memory for this agent: remember the conversation as it "
                       "goes (your tool calls and their results too), recall what matters before a tool call, "
                       "forget what is wrong (forget_all: all of a user's).")
    server.max_body = max_body
    run_search = search or (lambda tenant, **kw: tenant.memory.search(**kw))

    def write(ctx: Context, op: str, args: dict[str, Any], field: str | None = None) -> dict:
        """A logged write, answered before its checkpoint (if due) is written, on a thread of its own."""
        def call(tenant: Tenant, args: dict[str, Any]) -> dict:
            if op == "delete":  # its log record names the scopes given (the memory must be theirs), as HTTP's does
                args = {n: v for n, v in args.items() if v is not None}
            out = tenant.write(op, args, checkpoint=False, field=field)
            tenant.checkpoint_in_background()
            return out
        return answer(ctx, args, call)

    def answer(ctx: Context, args: dict[str, Any], call: Callable[[Tenant, dict[str, Any]], dict]) -> dict:
        """``call(tenant, args)`` with ``args``' scopes (None: not given) inside the fixed ones, the server's
        (stdio's --user-id) and the caller's key's: filled in, another value refused, never widened or switched
        (sam_model.serve.scopes.within: the HTTP routes' rule). Its refusals (and a write the log could not take)
        as ToolErrors: their text reaches the agent."""
        try:
            caller = caller_of(ctx)
            return call(caller.tenant, caller.within(within(args, fixed, lambda n: f"this server ({_option(n)})")))
        except (KeyError, ValueError, TypeError, PermissionError, LogWriteError) as err:  # a full disk: retry
            raise ToolError(refusal(err)) from None

    def named(user_id: str | None, agent_id: str | None, run_id: str | None) -> dict[str, str | None]:
        return dict(zip(SCOPE_KEYS, (user_id, agent_id, run_id)))

    # a scope argument's description: what the model sees (the SDK builds the tools' schemas from these annotations)
    User, Agent, Run = (Annotated[str | None, Field(description=None if name not in fixed else (
        f"Leave it out: fixed to {fixed[name]!r} for this server; another value is refused."))]
        for name in SCOPE_KEYS)

    def caller_of(ctx: Context) -> Caller:
        """The tenant of the call's key (over HTTP) with the scopes the key fixes, or the stdio tenant."""
        headers = ctx.headers
        if headers is None and stdio_tenant is not None:
            return Caller(tenants.tenants[stdio_tenant], {})
        headers = headers or {}
        caller = tenants.of_headers(headers.get("authorization"), headers.get("x-api-key"))
        if caller is None:
            raise PermissionError("missing or unknown API key: send 'Authorization: Bearer <key>' or 'X-API-Key'")
        return caller

    @server.tool()
    def remember(ctx: Context, text: Annotated[str | None, Field(description=TEXT)] = None,
                 messages: Annotated[list[dict[str, Any]] | None,
                                     Field(description=MESSAGES, max_length=MAX_ADD_ITEMS)] = None,
                 user_id: User = None, agent_id: Agent = None, run_id: Run = None,
                 metadata: dict[str, Any] | None = None) -> dict:
        """Record what happened in the user's (agent's, run's) memory: after each user turn and each tool result,
        the messages since your last remember (your tool calls and their results too: recall with call traces your
        next call's arguments to them), or one fact as text. Answers each memory stored or changed with its id and
        'step' (what recall's step takes for the message you are answering)."""
        try:
            data, field = _given(text, messages), "text" if messages is None else "messages"
        except (ValueError, TypeError) as err:
            raise ToolError(str(err)) from None
        # HTTP add's checks (Tenant.write, with the scope's open turn), naming this tool's field
        return write(ctx, "add", {"data": data, **named(user_id, agent_id, run_id), "metadata": metadata}, field)

    @server.tool()
    def recall(query: str, ctx: Context, user_id: User = None, agent_id: Agent = None, run_id: Run = None,
               state: dict[str, Any] | str | None = None,
               call: Annotated[dict[str, Any] | list[dict[str, Any]] | None, Field(description=CALL)] = None,
               limit: int = 5, step: Annotated[int | None, Field(description=STEP)] = None,
               task_start: Annotated[int | None, Field(description=TASK_START)] = None,
               used_order: Annotated[str | None, Field(description=USED_ORDER)] = None) -> dict:
        """The memories that matter for the query, best first, with scores: ranked for the agent's state when one
        is given ({"phase": ..., "constraints": {...}, "uncertainty_flags": [...]}, or "live": the state of the
        scope's newest memory), or for the tool call you are about to make (call), else by the query's words."""
        # step and task_start are checked by the memory (a negative one refused in its words, as over HTTP)
        if used_order not in (None, *USED_ORDERS):  # the schema's string alone: said here, naming the argument
            raise ToolError(f"argument 'used_order' must be {', '.join(map(repr, USED_ORDERS))} or null (the "
                            f"server's default), got {used_order[:40]!r}")
        return answer(ctx, named(user_id, agent_id, run_id), lambda t, where: run_search(
            t, query=query, state=state, call=call, **where, limit=limit, filters=None, threshold=None, step=step,
            task_start=task_start, used_order=used_order))

    @server.tool()
    def forget(memory_id: str, ctx: Context, user_id: User = None, agent_id: Agent = None, run_id: Run = None) -> dict:
        """Delete one memory (its id comes from remember or recall); with user_id (agent_id, run_id) only if it is
        that user's (agent's, run's) memory."""
        return write(ctx, "delete", {"memory_id": memory_id, **named(user_id, agent_id, run_id)})

    @server.tool()
    def forget_all(ctx: Context, user_id: User = None, agent_id: Agent = None, run_id: Run = None) -> dict:
        """Delete every memory of the user (agent, run) and its recorded conversation; give at least one of them.
        With user_id alone, every memory of that user goes, with any agent or run; with agent_id alone, every memory
        of that agent goes, whichever user's it was (to clear one user's memories with this agent, give both)."""
        return write(ctx, "delete_all", named(user_id, agent_id, run_id))

    said = ", ".join(f"{name} {value!r}" for name, value in fixed.items())
    for tool in server._tool_manager.list_tools():  # the SDK has no option for it (mcp 2.x): its tools' own models
        tool.fn_metadata.arg_model = _refusing_unknown(tool.fn_metadata.arg_model)
        tool.parameters["additionalProperties"] = False
        if fixed:  # what the model reads: it need not (and cannot usefully) pass these
            tool.description = (f"{tool.description} This server serves {said} only: leave "
                                 f"{' and '.join(fixed)} out (filled in for you; another value is refused).")
    return server


def _given(text: str | None, messages: list[dict[str, Any]] | None) -> str | list[dict[str, Any]]:
    """What a remember stores: its text or its messages, exactly one of them."""
    if (text is None) == (messages is None):
        raise ValueError(("give text or messages, not both" if text is not None else "give text or messages") +
                         ": text for one thing said, messages for the conversation's new messages (tool calls and "
                         "their results included)")
    return text if messages is None else messages


class _Server(MCPServer):
    """The SDK's server, whose refusal of a tool's arguments is one line naming each bad argument and what it takes
    (the SDK's was pydantic's: four lines a mistyped argument, with a link to pydantic's docs)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as err:
            if not isinstance(err.__cause__, ValidationError) or (tool := self._tool_manager.get_tool(name)) is None:
                raise
            raise ToolError(f"Error executing tool {name}: {_arguments_error(err.__cause__, tool.parameters)}") \
                from err.__cause__  # the SDK then logs the fields only, never the caller's values

    max_body = MAX_BODY_BYTES  # a stdio line's bytes at most (create_mcp's)

    async def run_stdio_async(self) -> None:
        """The SDK's, over stdin's lines read as bytes (sam_model.serve.stdio): a line that is no UTF-8 or gives a key
        twice is refused in a JSON-RPC parse error, where the SDK's reading changed or lost what it said. SIGINT or
        SIGTERM stops it as the end of input does, without waiting on stdin: the process then checkpoints and exits
        (SIGINT left it waiting in stdin's read until the client wrote or closed; SIGTERM ended it unsaved)."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(_stop_on_signal, tg.cancel_scope)
            async with strict_stdio(max_body=self.max_body) as (read_stream, write_stream):
                await self._lowlevel_server.run(read_stream, write_stream,
                                                self._lowlevel_server.create_initialization_options())
            tg.cancel_scope.cancel()


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    """Cancel ``scope`` (the stdio server) at SIGINT or SIGTERM; where signals cannot be received (Windows, a thread
    other than the main one), nothing."""
    try:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for received in signals:
                log.info("sam-serve: %s received, stopping", signal.Signals(received).name)
                scope.cancel()
                return
    except (NotImplementedError, ValueError, RuntimeError):  # no signals here: the process's default stands
        return


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"),
               (dict, "object"), (type(None), "null"))


def _arguments_error(err: ValidationError, schema: dict[str, Any]) -> str:
    """One line for a tool's refused arguments: each bad one by name, what its schema takes and the JSON type it
    got (not its value: that is the caller's data)."""
    props = schema.get("properties", {})
    out: dict[str, str] = {}
    for e in err.errors():
        name = str(e["loc"][0]) if e["loc"] else "arguments"
        if name in out:
            continue  # a union's every branch failed: said once, from the schema
        if e["type"] == "extra_forbidden":
            out[name] = f"unknown argument {name!r} (the tool takes {', '.join(props)})"
        elif e["type"] == "missing":
            out[name] = f"argument {name!r} is missing"
        elif e["type"] == "too_long":
            out[name] = (f"argument {name!r} has {e['ctx']['actual_length']} items, more than the limit of "
                         f"{e['ctx']['max_length']}: send them in several calls, in order")
        else:
            got = next((t for py, t in _JSON_TYPES if isinstance(e["input"], py)), type(e["input"]).__name__)
            out[name] = f"argument {name!r} must be {_takes(props.get(name, {}))}, got {got}"
    return "; ".join(out.values())


def _takes(prop: dict[str, Any]) -> str:
    """What a JSON-schema property takes, in words: ``{"anyOf": [{"type": "string"}, {"type": "null"}]}`` is
    'a string or null'."""
    kinds = [p.get("type") for p in prop.get("anyOf", [prop])]
    words = [("null" if k == "null" else f"an {k}" if k in ("integer", "object", "array") else f"a {k}")
             for k in kinds if k]
    return " or ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words) or "valid"


def _refusing_unknown(model: type[BaseModel]) -> type[BaseModel]:
    """A tool's argument model that refuses an argument it does not name (and ``limit: true``): the SDK's ignores it, so
    ``remember(user_id="mia", agnet_id="bot")`` was stored without its agent, and ``recall(all_scopes=True)``
    answered as if it had not been asked."""
    return type(model.__name__, (model,), {"__module__": model.__module__,  # numbers strict too, as over HTTP
                                           "model_config": ConfigDict(extra="forbid", strict=True)})


__all__ = ["create_mcp", "fixed_scopes"]
