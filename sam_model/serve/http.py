"""The HTTP API of ``sam-serve``: Mem0's memory operations per user/agent/run, one tenant per API key.

    POST   /v1/memories                 add        {"messages": "..." | [{"role", "content"}] | [events],
                                                    "user_id", "agent_id", "run_id", "metadata"}
    POST   /v1/memories/search          search     {"query", "state" | "call", "user_id", ..., "limit", "filters",
                                                    "threshold", "step", "task_start", "used_order"}
    GET    /v1/memories?user_id=...     get_all    (scopes and limit as query parameters)
    GET    /v1/memories/{id}            get        (ids hold '/' and '#': URL-encode them, '#' as %23)
    PUT    /v1/memories/{id}            update     {"data": "new text"}
    DELETE /v1/memories/{id}            delete
    DELETE /v1/memories?user_id=...     delete_all
    GET    /v1/history/{id}             history
    GET    /health                      liveness (no key): {"status": "ok"}, nothing else

Every call but /health needs ``Authorization: Bearer <key>`` (or ``X-API-Key: <key>``): 401 without a known key
(at /mcp too, before the MCP SDK reads the request: _KeyFirst).
A key the keys file fixes to a scope (``{"key": ..., "user_id": "alice"}``: sam_model.serve.tenants) serves that
scope only: every call's scope is filled in with it, a call naming another value (a scope, or a scope in a search's
``filters``) is a 403 naming the field and the key's value, and nothing is widened (a get_all or delete_all by agent
alone reaches only alice's memories; another user's memory id is a 404, its history ``[]``, as another tenant's).
Bodies are pydantic models: a missing or mistyped field is a 422 naming it, one line a problem and no input echoed
(sam_model.serve.invalid); what the memory refuses (an empty
text, a message with no content, a scope with '/', a bad filter operator, no scope on a search) is a 422
with the memory's one-line reason; an unknown id is a 404; a body over the limit (``sam-serve --max-body-mb``, 5 MB by
default: sam_model.limits.MAX_BODY_BYTES) a 413 saying what to do, refused before it is read whole (a Content-Length
that is no number a 400); a write the log could not take (a full disk) a 503, and nothing of it is applied. The
answers are ScopedMemory's (Mem0's shapes); an add's ``skipped`` says what of its messages was not stored (a
message or a part of images alone: memories hold text). A search by ``call`` (the tool call about to be made, in
the shapes live_state takes) ranks by that call's decision-point state, computed from the scope's recorded
conversation as the transcript importer computes it for training (ScopedMemory.search), and answers it as
``"state"`` beside the results; ``call`` with ``state`` is a 422. ``step`` (and ``task_start``), as ScopedMemory.search
takes them: a search at the step of the message the agent is answering leaves that message and the later ones of the
scopes' conversation out (a search with none is made now, and a message added before it is among its results); a
step only narrows what the scopes hold, never widens them.
Writes go through the tenant's write-ahead log (sam_model.serve.tenants): a 2xx means it is on disk.
"""


import json
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl, unquote_to_bytes

from fastapi import BackgroundTasks, Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from starlette.datastructures import Headers

from sam_model.io import SAMFileError, unique_keys
from sam_model.limits import (
    MAX_ADD_ITEMS,
    MAX_BODY_BYTES,
    MAX_K,
    MAX_METADATA_DEPTH,
    MAX_TEXT_CHARS,
    check_scope,
)
from sam_model.memory.scopedinput import FIT_CHARS
from sam_model.serve import invalid
from sam_model.serve.jsonrpc import parse_error, unreadable
from sam_model.serve.jsonrpc import unauthorized as rpc_unauthorized
from sam_model.serve.scopes import FixedScopeError, refusal
from sam_model.serve.tenants import Caller, Tenant, Tenants, not_here
from sam_model.serve.wal import LogWriteError

STEP = ("the step of the message the agent is answering, already added (its add's result's 'step', as a search "
        "result's or GET /v1/memories/{id}'s: the number after its id's last '#', not the agent's own count of "
        "messages): it and the later memories of the scopes' conversation are "
        "left out, as evaluate.py ranks a decision point over the events before it; an integer >= 0. Leave it out "
        "to search now, over every memory of the scopes (the newest included); it never widens the scopes searched")
TASK_START = ("the step where the agent's current task began (default: where the scopes' conversation says it did); "
              "read by a model with time features only; an integer >= 0, or leave it out")
USED_ORDER = ("the memories the scope's earlier tool calls of this task took values from first: 'model' in the "
              "model's order, 'latest' by their latest use, 'needed' by it but only those that supplied a slot "
              "this call needs, 'off' not; leave it out for the server's default (its "
              "store's used_order). This search's alone; it never widens the scopes searched")
# a scope field: sam_model.limits.check_scope, the memory's own rule (no '/', no control or invisible character, in
# NFC, at most MAX_SCOPE_CHARS), refused by the field's name before the call reaches the memory
Scope = Annotated[str | None, Field(default=None), AfterValidator(lambda v, info: check_scope(v, info.field_name))]
# a read's or delete's scope field: the same rule but for a value no add may name any more (limits.scope_flaw), which
# the memory takes where it still holds memories saved under it before the rule came (ScopedMemory._held), so their
# user can list, export and erase them; refused there, in the memory's words, where it holds none
HeldScope = Annotated[str | None, Field(default=None),
                      AfterValidator(lambda v, info: check_scope(v, info.field_name, held=lambda _: True))]


class Body(BaseModel):
    # a misspelt field is a 422, not silently ignored; a number is a number ({"limit": true} was 1, "0.5" was 0.5)
    model_config = ConfigDict(extra="forbid", strict=True)


class ScopeQuery(Body):
    """The scopes of get_all and delete_all, as query parameters: a misspelt one (``runId``) is a 422 (it was
    ignored, and ``DELETE /v1/memories?user_id=mia&runId=trip-2`` deleted every memory of mia's)."""
    model_config = ConfigDict(extra="forbid", strict=False)  # query parameters are text: limit=5 is parsed

    user_id: HeldScope = None
    agent_id: HeldScope = None
    run_id: HeldScope = None


class ListQuery(ScopeQuery):
    limit: int = Field(default=100, ge=0, le=1_000_000)


class AddBody(Body):
    # an empty list is refused by the memory's own rule (ScopedMemory.check_add), in its words, not pydantic's
    messages: str | Annotated[list[dict[str, Any]], Field(max_length=MAX_ADD_ITEMS)] = Field(
        description="a message text, chat messages (OpenAI {role, content}, or any format sam-data transcripts reads: Gemini contents, Converse messages, ...) or agent-log events ({kind, text})")
    user_id: Scope = None
    agent_id: Scope = None
    run_id: Scope = None
    metadata: dict[str, Any] | None = None


class SearchBody(Body):
    query: str = Field(max_length=MAX_TEXT_CHARS)
    state: dict[str, Any] | str | None = Field(default=None, description="the agent's state, 'live', or none")
    call: dict[str, Any] | list[dict[str, Any]] | None = Field(default=None, description=(
        "instead of state: the tool call about to be made ({\"name\", \"arguments\"}, an OpenAI tool_calls entry, an "
        "Anthropic tool_use, a Gemini functionCall) or a list of them; ranked by its decision-point state, computed "
        "from the scope's recorded conversation (answered as 'state'); the conversation's newest message, the decision "
        "point itself, is left out of the results (as evaluate.py ranks a decision point) and, with an empty query, "
        "is the observation"))
    user_id: HeldScope = None
    agent_id: HeldScope = None
    run_id: HeldScope = None
    limit: int = Field(default=5, ge=1, le=MAX_K)
    filters: dict[str, Any] | None = None
    threshold: float | None = None
    # checked by the memory (sam_model.limits.check_step: a 422 "step must be a non-negative integer (...)", as
    # in-process and over MCP); strict: "3", 1.5 and true are a 422 naming the field
    step: int | None = Field(default=None, description=STEP)
    task_start: int | None = Field(default=None, description=TASK_START)
    # this search's alone (the tenant's store keeps its StoreConfig.used_order); another value is a 422 naming it
    used_order: Literal["model", "latest", "needed", "off"] | None = Field(default=None, description=USED_ORDER)


class UpdateBody(Body):
    data: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)


class BodyLimit:
    """A body over ``limit`` bytes is a 413, refused before the app reads it: by its Content-Length, before a byte
    of it is read, and in any case once the bytes read pass the limit (a body sent chunked, or longer than the length
    it said where a server does not cut it there), read no further. A Content-Length that is no number is a 400
    (uvicorn answers one before the app; the app answers the same when served otherwise or called in-process).

    The limit (``sam-serve --max-body-mb``) bounds the memory one request holds, not what an add may store: its
    default takes an agent's session line as long as the live add's open turn holds whole (MAX_BODY_BYTES), which
    the add stores cut, with a note, as in-process and over MCP's stdio. It was 1.4 MB (one memory at the text limit
    in 4-byte UTF-8): a Claude Code line of a 2.25 MB tool result was refused ("split the memories"), and a sidecar,
    which forwards lines as they are written, cannot split one: the line was lost over HTTP alone. The 413 says what
    can be done: fewer messages an add, or, for one line past the limit, a larger --max-body-mb or its long text cut.

    A plain ASGI middleware: Starlette's ``@app.middleware("http")`` (BaseHTTPMiddleware) runs every request in a
    task group and streams every response through a memory channel, work the service need not do where its own
    Python is what bounds it (README "Served memory", "With the encoder on a GPU"); measured against it with a
    next-to-free encoder, six alternating pairs: +15.5 searches/s [-11.8, +42.8], no difference shown."""

    def __init__(self, app: Any, limit: int = MAX_BODY_BYTES):
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        size = dict(scope["headers"]).get(b"content-length")
        if size is not None:
            if not size.isdigit():  # not "over the limit" (it was a 413 saying so): a request no server can read
                return await JSONResponse({"detail": f"Content-Length header {size.decode('latin-1')[:40]!r} is not "
                                           "a number of bytes: send the body's size in bytes, or no Content-Length "
                                           "(chunked)"}, status_code=400)(scope, receive, send)
            digits = size.lstrip(b"0")  # more digits than the limit's is past it: int() of 4,300+ digits raised (a 500)
            if len(digits) > len(str(self.limit)):
                return await self._refuse(scope, receive, send)
            if int(digits or b"0") > self.limit:
                return await self._refuse(scope, receive, send, f"of {int(digits):,} bytes ")
        if scope["method"] not in ("POST", "PUT"):  # no route reads another method's body
            return await self.app(scope, receive, send)
        # read here, counting, with or without a length said: a Content-Length within the limit was trusted and the
        # app read what came, so a server that does not frame the body by it (uvicorn does: what follows is the next
        # request, tests/test_served_body_limit.py) or an in-process caller handed the app all it sent
        body, more = bytearray(), True  # extended in place: bytes += chunk copied the whole body at each chunk, so
        while more:  # a client sending a 5 MB body in small chunks made the server copy it a chunk's times over
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk, more = message.get("body", b""), message.get("more_body", False)
            if not more and not body:  # the whole body in one message (a small request's): taken as it is, no copy
                body = chunk
            else:
                body += chunk
            if len(body) > self.limit:
                return await self._refuse(scope, receive, send)
        body = bytes(body)  # rebound: the bytearray, alive in this frame while the app ran, held the body twice
        return await self.app(scope, _replaying(body, receive), send)

    async def _refuse(self, scope: dict, receive: Callable, send: Callable, size: str = "") -> None:
        await JSONResponse({"detail": too_large(self.limit, size)}, status_code=413)(scope, receive, send)


def _replaying(body: bytes, receive: Callable) -> Callable:
    """An ASGI ``receive`` handing on ``body``, read before the app, whole in one message (then ``receive``'s own)."""
    replayed = False

    async def replay() -> dict:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}
    return replay


def too_large(limit: int, size: str = "") -> str:
    """The 413's line: what the limit is, where it is set and what a client can do (``size``: the body's, if said)."""
    return (f"request body {size}over this server's limit of {limit:,} bytes (sam-serve --max-body-mb "
            f"{limit / 1e6:g}): send fewer messages an add (in order, each once); one message or session line this "
            f"long needs the server started with a larger --max-body-mb, or its long text cut (a memory stores its "
            f"first {FIT_CHARS:,} characters at most)")


def read_body(body: bytes) -> Any:
    """A request body's JSON, or an HTTPException (422) of one line saying what is wrong and what to do, where
    FastAPI answered 'There was an error parsing the body' (400) for bytes that are no UTF-8, nesting past Python's
    recursion limit, a number of more digits than Python reads, and a key given twice in one object (read as its
    last value, silently, as a query parameter given twice was: ``once`` in create_app). Broken JSON is left to FastAPI (its
    JSONDecodeError is answered by :func:`sam_model.serve.invalid.refusal`, naming the character)."""
    try:
        # a key given twice is refused (unique_keys): Python's reader kept the last value, so {"user_id": "mia",
        # "user_id": "bob"} wrote bob's memory where a proxy or a log reading the first saw mia's
        return json.loads(body, object_pairs_hook=unique_keys)
    except json.JSONDecodeError:
        raise
    except UnicodeDecodeError as err:
        why = f"is not UTF-8 (byte {err.object[err.start]:#04x} at position {err.start}): send JSON encoded as UTF-8"
    except RecursionError:
        why = f"nests objects or lists too deep to read: flatten it (metadata takes {MAX_METADATA_DEPTH} levels at most)"
    except ValueError as err:  # a key given twice (unique_keys' line), or a number past Python's digits
        why = (f"holds a number of more than {sys.get_int_max_str_digits()} digits, which is read as no number: send "
               "it as a string" if "integer string conversion" in str(err) else f"is refused: {str(err)[:120]}")
    raise HTTPException(422, f"the request body {why}") from None


class _UniqueKeys:
    """The MCP app at /mcp, its JSON-RPC bodies refused where a key is given twice in one object: the SDK reads them
    by pydantic, which kept the last value as Python's reader did (``remember(user_id="alice", user_id="bob")``
    stored bob's memory). Answered as the SDK answers a body it cannot parse (400, JSON-RPC error -32700), naming
    the key (sam_model.serve.jsonrpc, the rule of --stdio's lines too); a body that is no UTF-8 alike, in the routes'
    words (the SDK's named no byte and no fix); any other problem of the body is left to the SDK. So a body is read as JSON twice: the SDK's transport reads the body itself, with no way to take a
    message read already (--stdio's server takes its messages, read once). The first read costs about 0.1 ms on a
    25 kB call and 1.5 to 5 ms on a 1 MB one (a 2-core Xeon, 2026-12-07), less than a remember's encoding."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        chunks, more = [], True  # BodyLimit hands the body in one message, read whole within its limit
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if (why := unreadable(body)) is not None:  # a key given twice, or bytes that are no UTF-8
            return await JSONResponse(parse_error(why), status_code=400)(scope, receive, send)
        return await self.app(scope, _replaying(body, receive), send)


class _KeyFirst:
    """The MCP app at /mcp behind the routes' rule: a request with no key or an unknown one is a 401 before the SDK
    reads it (each tool still checks the key it is called with), its body the routes' line as a JSON-RPC error,
    which an MCP client shows. Found by a walkthrough: such a caller was answered 200 at /mcp, initialize and
    tools/list served and a tool's refusal a 200 whose result was the error, where every route answers 401
    (docs/serving.md, "Tenants")."""

    def __init__(self, app: Any, tenants: Tenants):
        self.app, self.tenants = app, tenants

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)  # what the routes' Header() and the tools' ctx.headers read
            if self.tenants.of_headers(headers.get("authorization"), headers.get("x-api-key")) is None:
                return await JSONResponse(rpc_unauthorized(NO_KEY), status_code=401, headers=BEARER)(
                    scope, receive, send)
        return await self.app(scope, receive, send)


NO_KEY = "missing or unknown API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'"
BEARER = {"WWW-Authenticate": "Bearer"}


class _Request(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            coding = self.headers.get("content-encoding", "identity").strip()
            if coding.lower() != "identity":  # gzip's bytes were 'not UTF-8 (byte 0x8b ...): send JSON as UTF-8'
                raise HTTPException(415, f"the request body is compressed (Content-Encoding {coding[:40]}), which "
                                         "this server does not read: send it uncompressed")
            self._json = read_body(await self.body())
        return self._json


class _Route(APIRoute):
    """Every route reads its body by :func:`read_body`."""

    def get_route_handler(self) -> Callable:
        handler = super().get_route_handler()

        async def reading(request: Request) -> Any:
            return await handler(_Request(request.scope, request.receive))
        return reading


def _refused(err: Exception, status: int) -> JSONResponse:
    return JSONResponse({"detail": refusal(err)}, status_code=status)


def _fields(request: Request) -> dict[str, list[str]]:
    """The fields the request's route takes, by where they go ("body", "query"): what a misspelt one is told."""
    dependant = getattr(request.scope.get("route"), "dependant", None)
    out: dict[str, list[str]] = {}
    for where, params in (("body", getattr(dependant, "body_params", [])),
                          ("query", getattr(dependant, "query_params", []))):
        for p in params:
            model = getattr(p.field_info, "annotation", None)
            names = list(model.model_fields) if isinstance(model, type) and issubclass(model, BaseModel) else [p.name]
            out.setdefault(where, []).extend(names)
    return out


def _invalid(request: Request, err: RequestValidationError) -> JSONResponse:
    """A body or query pydantic refuses: a 422 of one line a problem naming the field (sam_model.serve.invalid),
    never echoing the input, as every other refusal here."""
    return JSONResponse({"detail": invalid.refusal(err.errors(), _fields(request))}, status_code=422)


def create_app(tenants: Tenants, search: Callable[..., dict] | None = None, mcp_app: Any = None,
               lifespan: Any = None, max_body: int = MAX_BODY_BYTES) -> FastAPI:
    """The FastAPI app over ``tenants``. ``search(tenant, **body)``: how a search runs (default: the tenant's
    ScopedMemory.search; sam_model.serve.batching batches concurrent ones). ``mcp_app``: an ASGI app mounted at
    /mcp (sam_model.serve.mcp). ``max_body``: the largest request body in bytes (BodyLimit; MCP's at /mcp too)."""
    app = FastAPI(title="sam-serve", summary="SAM memory, served: Mem0's API per user/agent/run, one tenant per key",
                  lifespan=lifespan)
    app.router.route_class = _Route  # bodies read by read_body
    run_search = search or (lambda tenant, **kw: tenant.memory.search(**kw))

    app.add_middleware(BodyLimit, limit=max_body)
    app.add_exception_handler(RequestValidationError, _invalid)
    for exc, status in ((KeyError, 404), (ValueError, 422), (TypeError, 422)):
        app.add_exception_handler(exc, lambda _r, err, status=status: _refused(err, status))
    app.add_exception_handler(FixedScopeError, lambda _r, err: _refused(err, 403))  # not a 422: the key's limit
    app.add_exception_handler(SAMFileError, lambda _r, err: _refused(err, 500))
    app.add_exception_handler(LogWriteError, lambda _r, err: _refused(err, 503))  # not logged, not applied: retry

    def caller_of(authorization: Annotated[str | None, Header()] = None,
                  x_api_key: Annotated[str | None, Header()] = None) -> Caller:
        caller = tenants.of_headers(authorization, x_api_key)
        if caller is None:
            raise _Unauthorized
        return caller

    app.add_exception_handler(_UnauthorizedError, lambda _r, _e: JSONResponse({"detail": NO_KEY}, status_code=401,
                                                                             headers=BEARER))
    C = Annotated[Caller, Depends(caller_of)]  # every route's scopes pass through caller.within: the key's fixed ones

    def once(request: Request) -> None:
        """A query parameter given twice is a 422: FastAPI takes the last, so ``?user_id=mia&user_id=bob`` was a
        call about bob alone, whichever the client meant."""
        names = [k for k, _ in request.query_params.multi_items()]
        if twice := sorted({k for k in names if names.count(k) > 1}):
            raise ValueError(f"query parameter {twice[0]!r} given {names.count(twice[0])} times: give it once")

    def utf8(request: Request) -> None:
        """A query parameter or a path whose bytes are no UTF-8 is a 422: they were read with U+FFFD in place of each
        such byte, so a Latin-1 client's ``?user_id=Jos%E8`` (Josè) reached the memories of the user 'Jos\ufffd', as
        ``Jos%E9`` (José) or any other such name did: two users in one scope."""
        fix = "percent-encode the UTF-8 bytes of each character (é is %C3%A9)"
        raw = request.scope.get("query_string", b"").decode("latin-1")
        for name, value in parse_qsl(raw, keep_blank_values=True, encoding="latin-1"):
            try:
                value.encode("latin-1").decode("utf-8")
            except UnicodeDecodeError as err:
                shown = name.encode("latin-1").decode("utf-8", "replace")[:60]
                raise ValueError(f"query parameter {shown} is not UTF-8 (byte {err.object[err.start]:#04x} at "
                                 f"position {err.start}): {fix}") from None
        try:
            unquote_to_bytes(request.scope.get("raw_path") or b"").decode("utf-8")
        except UnicodeDecodeError as err:
            raise ValueError(f"the path is not UTF-8 (byte {err.object[err.start]:#04x} at position {err.start}): "
                             f"{fix}") from None

    # every route taking query parameters or a memory id; the key first (FastAPI solves it once a request): these
    # ran before it, so a caller with no key was told what was wrong with its query, a 422 where any call is a 401
    checked = [Depends(caller_of), Depends(once), Depends(utf8)]

    def write(tenant: Tenant, later: BackgroundTasks, op: str, args: dict[str, Any], field: str | None = None) -> Any:
        """A logged write, answered before its checkpoint (if due) is written: Starlette runs ``later``'s tasks
        after the response is sent (at 100k memories a checkpoint takes a few seconds)."""
        out = tenant.write(op, args, checkpoint=False, field=field)
        later.add_task(tenant.checkpoint_if_due)
        return out

    @app.get("/health")
    def health() -> dict:
        """Liveness, for a load balancer or a start script, without a key: that the service is up and nothing else
        (it told anyone the number of tenants, what a keyless caller has no business knowing)."""
        return {"status": "ok"}

    @app.post("/v1/memories")
    def add(body: AddBody, caller: C, later: BackgroundTasks) -> dict:
        """A message with no content (or a blank one) is a 422 naming ``messages[i].content``, an empty list one
        naming ``messages`` (ScopedMemory.add's own rule, checked before the add is logged to name this API's field,
        with the scope's open turn: an agent's session line past the length limit is stored cut, as in-process,
        Tenant.write); what was not stored (images) is the answer's ``skipped``. The messages the check read are the
        ones written: each format's reader runs once."""
        args = caller.within(body.model_dump())
        args["data"] = args.pop("messages")
        return write(caller.tenant, later, "add", args, "messages")

    @app.post("/v1/memories/search")
    def search_(body: SearchBody, caller: C) -> dict:
        return run_search(caller.tenant, **caller.within(body.model_dump()))

    @app.get("/v1/memories", dependencies=checked)
    def get_all(caller: C, query: Annotated[ListQuery, Query()]) -> dict:
        return caller.tenant.memory.get_all(**caller.within(query.model_dump()))

    def given(memory_id: str) -> str:
        if not memory_id:  # "/v1/memories/?user_id=mia": the trailing slash made it a call about the id ''
            raise KeyError("no memory id in the path: /v1/memories/{id} (URL-encoded); a scope's memories are "
                           "/v1/memories?user_id=... without the '/'")
        return memory_id

    def scoped(caller: Caller, query: ScopeQuery) -> dict[str, Any]:
        """The scopes a call by id was given (``?user_id=mia``), and those its key fixes: the memory must be theirs,
        else 404 as for an unknown id (a server that knows whose request it is passes them; an id of another user's
        memory then reaches nothing)."""
        return {n: v for n, v in caller.within(query.model_dump()).items() if v is not None}

    Scopes = Annotated[ScopeQuery, Query()]

    @app.get("/v1/memories/{memory_id:path}", dependencies=checked)
    def get(memory_id: str, caller: C, query: Scopes) -> dict:
        where = scoped(caller, query)
        found = caller.tenant.memory.get(given(memory_id), **where)
        if found is None:
            raise KeyError(not_here(memory_id, where))
        return found

    @app.put("/v1/memories/{memory_id:path}", dependencies=checked)
    def update(memory_id: str, body: UpdateBody, caller: C, later: BackgroundTasks, query: Scopes) -> dict:
        return write(caller.tenant, later, "update", {"memory_id": given(memory_id), "data": body.data,
                                                      **scoped(caller, query)})

    @app.delete("/v1/memories/{memory_id:path}", dependencies=checked)
    def delete(memory_id: str, caller: C, later: BackgroundTasks, query: Scopes) -> dict:
        return write(caller.tenant, later, "delete", {"memory_id": given(memory_id), **scoped(caller, query)})

    @app.delete("/v1/memories", dependencies=checked)
    def delete_all(later: BackgroundTasks, caller: C, query: Annotated[ScopeQuery, Query()]) -> dict:
        return write(caller.tenant, later, "delete_all", caller.within(query.model_dump()))

    @app.get("/v1/history/{memory_id:path}", dependencies=checked)
    def history(memory_id: str, caller: C, query: Scopes) -> list:
        return caller.tenant.memory.history(given(memory_id), **scoped(caller, query))

    if mcp_app is not None:
        app.mount("/mcp", _KeyFirst(_UniqueKeys(mcp_app), tenants))
    return app


class _UnauthorizedError(Exception):
    """No or an unknown API key (answered 401)."""


_Unauthorized = _UnauthorizedError()

__all__ = ["MAX_BODY_BYTES", "AddBody", "SearchBody", "UpdateBody", "create_app"]
