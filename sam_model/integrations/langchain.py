"""SAM in LangChain: a retriever scoped on every Runnable path, a VectorStore, and memories for tool calls.

    pip install 'sam_model[langchain]'

    memory = ScopedMemory(SAMRetriever.from_pretrained("sam-general"))
    retriever = SAMLangChainRetriever(memory=memory, k=5)
    docs = retriever.invoke("which reservation?", config={"configurable": {"thread_id": "t1", "user_id": "mia"}})
    docs[0].page_content, docs[0].metadata["score"], docs[0].metadata["why"]

**Scopes, on every path.** ``user_id`` and ``agent_id`` come from the retriever's fields, the run's config
(``configurable.user_id`` / ``agent_id``; the run is LangGraph's ``thread_id``, or ``sam_run_id``) or keyword arguments, whichever
entry point LangChain routes through: ``invoke``, ``ainvoke``, ``batch``, ``abatch``, ``stream``,
``astream_events``, ``as_tool``, ``create_retriever_tool`` and a call inside a LangGraph node (whose config
LangChain passes down as the enclosing run's). Both ``invoke`` and ``ainvoke`` read the config once
(``ensure_config``: the one given, or the enclosing run's) into keyword arguments that ``_get_relevant_documents``
and ``_aget_relevant_documents`` search with. A search with no scope at all is refused (ValueError), never
widened to every user, unless the caller asks for every scope explicitly (``all_scopes=True``: the field,
``configurable.sam_all_scopes`` or the keyword). A scope the retriever is bound to (its field) and a different one
in the config is refused too.

**What it ranks by.** SAM searches by the agent's *state*, which a query string does not carry:

- ``config["configurable"]["sam_state"]`` (or ``state=``): a state as the agent keeps it (a State or mapping;
  ``"live"``: the scope's newest state, ScopedMemory.live_state);
- ``config["configurable"]["sam_messages"]`` (and optionally ``sam_tool_call``): the graph's messages, from which
  the decision-point state of the tool call about to be made is rebuilt exactly as the transcript importer
  writes it for training (sam_model.data.transcripts.live_state). When the last message is an AI message with tool
  calls and no ``sam_tool_call`` is given, those calls are the decision;
- otherwise the query text alone, a content search (ScopedMemory.search with no state).

**When it is made.** A search for a tool call rebuilt from the messages (``tool_call_memories`` too) whose
newest event is the newest of the run's recorded conversation (the messages were added before the search) is made
where ScopedMemory.search(call=) makes it, at that event (ScopedMemory.decision_point), so it is no candidate;
another search is made now (after every memory of the run). Either gives way to ``step`` (and ``task_start``), ``configurable.sam_step`` / ``sam_task_start`` or
keywords, as ScopedMemory.search takes them: the run's memories at or after ``step`` are then no candidates, as
evaluate.py ranks a decision point (an agent that wrote its current event before searching gives that event's
step, or it comes back first).

Documents carry the memory's own words, and as metadata its id, kind, step, episode, scopes, times, score and why
it ranked (sam_model.hit.Hit). :class:`SAMVectorStore` is the same memory as a LangChain ``VectorStore``
(``add_texts``, ``add_documents``, ``similarity_search``, ``delete``, ``get_by_ids``, ``as_retriever``). This module
and sam_model.integrations.langgraph are the only ones of sam_model that import ``langchain_core``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.messages import convert_to_openai_messages
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig, ensure_config
from langchain_core.runnables.config import run_in_executor
from langchain_core.vectorstores import VectorStore
from pydantic import ConfigDict, Field

from sam_model.data.callshapes import argument_names, arguments_field, as_calls, check_arguments
from sam_model.data.chatmessages import policy_of
from sam_model.data.formats import is_log_message, langchain_messages, to_chat
from sam_model.data.formats.base import FAILED
from sam_model.data.schema import State
from sam_model.data.toolstate import TranscriptState, live_state
from sam_model.limits import MAX_K, check_int, check_metadata, check_text
from sam_model.memory.scoped import ScopedMemory
from sam_model.memory.scopedresult import result

# configurable.run_id is not read: LangGraph servers put the run's own UUID there, beside thread_id
CONFIG_KEYS = ("sam_state", "sam_messages", "sam_tool_call", "sam_all_scopes", "user_id", "agent_id", "thread_id",
               "sam_run_id", "sam_step", "sam_task_start")
SEARCH_KEYS = ("state", "messages", "tool_call", "all_scopes", "user_id", "agent_id", "thread_id", "run_id", "k",
               "filters", "threshold", "step", "task_start")


def run_arguments(config: RunnableConfig | None, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The search's keyword arguments: the run config's (the given config, else the enclosing run's, as
    ``ensure_config`` reads it), then the caller's keywords on top. The one place a scope enters."""
    conf = dict(ensure_config(config).get("configurable") or {})
    out = {key.removeprefix("sam_"): conf[key] for key in CONFIG_KEYS if key in conf}
    out.update(kwargs)
    if out.get("run_id") is not None:  # the run scope by ScopedMemory's name (a keyword, or sam_run_id); LangChain's
        out["thread_id"] = run_scope(out.get("thread_id"), out.pop("run_id"))  # invoke takes run_id for its callbacks
    return out


def run_scope(thread_id: str | None, run_id: str | None) -> str | None:
    """The run scope: LangGraph's ``thread_id`` or ScopedMemory's ``run_id``; both, naming two runs, are refused."""
    if thread_id is not None and run_id is not None and thread_id != run_id:
        raise ValueError(f"thread_id={thread_id!r} and run_id={run_id!r} both name the run scope: give one")
    return thread_id if thread_id is not None else run_id


def openai_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """LangChain messages, or dicts in any log format sam_model.data.formats reads (OpenAI chat, tau2, Anthropic,
    Bedrock Converse, Responses items, GenAI parts, Gemini contents), as OpenAI chat dicts: what
    sam_model.data.toolstate reads."""
    return to_chat([d for i, m in enumerate(messages) for d in _as_dicts(m, i)], "messages").messages


def _as_dicts(m: Any, i: int) -> list[Any]:
    """One message as the dicts a reader takes: a LangChain dict read here on its own (beside message objects, which
    become OpenAI dicts, a list holding both was read whole as LangChain's and refused the objects as 'not a
    LangChain message': a history loaded from a file with the new turn appended), another format's dict as it is."""
    saved = _kept_calls_dump(m)
    if langchain_messages.is_message(m) or saved is not None:
        return [d for d in [langchain_messages.read(saved or m, f"messages, message {i}", Counter())] if d is not None]
    if is_log_message(m):
        return [m]
    d = convert_to_openai_messages(m)  # drops a ToolMessage's status: a failed call's flag, kept as the readers keep it
    return [{**d, FAILED: True} if getattr(m, "status", None) == "error" and d.get("role") == "tool" else d]


def _kept_calls_dump(m: Any) -> dict[str, Any] | None:
    """An AI message object's ``model_dump()`` where its calls are only the OpenAI ones an integration kept in
    ``additional_kwargs`` (``tool_calls``, or the deprecated ``function_call``): ChatOpenAI's call cut short parses as
    no call (``tool_calls`` empty, the call an ``invalid_tool_call``), and langchain_core's converter drops what it
    kept, so the object read as a turn without a call, silently, where its dump is read (and the cut call refused)
    by the LangChain reader. So is one with a good call beside a cut one (``tool_calls`` and ``invalid_tool_calls``),
    which the converter read as the good call alone; None for every other message (read as before)."""
    if isinstance(m, Mapping) or getattr(m, "type", None) not in ("ai", "AIMessageChunk") or (
            getattr(m, "tool_calls", None) and not getattr(m, "invalid_tool_calls", None)):
        return None
    extra = getattr(m, "additional_kwargs", None)
    if not isinstance(extra, Mapping) or not (extra.get("tool_calls") or isinstance(extra.get("function_call"), Mapping)):
        return None
    return m.model_dump()


def _as_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """A LangChain ToolCall ({"name", "args", "id"}) or an OpenAI tool call as {"name", "arguments", "id"}."""
    if "args" in call:
        args = call.get("args")  # not a mapping (a list): kept, and refused naming it (callshapes.check_arguments)
        return {"name": call.get("name"), "arguments": dict(args or {}) if args is None or isinstance(args, Mapping)
                else args, "id": call.get("id")}
    return dict(call)


def state_from_messages(messages: Sequence[Any], tool_call: Any = None) -> tuple[dict[str, Any], str]:
    """(the decision-point state, the observation) for a tool call about to be made after ``messages``.

    ``tool_call``: one call or a list (LangChain or OpenAI shape); None: the tool calls of a trailing AI message
    (which is then not part of the history), else the state of the last event without a decision.
    """
    state, observation, _ = _decision(messages, tool_call)
    return state, observation


def _decision(messages: Sequence[Any], tool_call: Any) -> tuple[dict[str, Any], str, bool]:
    """:func:`state_from_messages`, and whether the state is a tool call's (given, or the trailing AI message's):
    a search for a call is made at its decision point (SAMLangChainRetriever.search)."""
    msgs = openai_messages(messages)
    where, names = "tool_call", None
    if tool_call is None and msgs and msgs[-1].get("role") == "assistant" and msgs[-1].get("tool_calls"):
        tool_call, msgs = msgs[-1]["tool_calls"], msgs[:-1]
        where = f"messages[{len(messages) - 1}].tool_calls"  # the trailing message's: named as the caller sent it
        names = _trailing_fields(messages, len(tool_call), where)
    tracker = TranscriptState(policy=policy_of(msgs))
    for i, m in enumerate(msgs):
        tracker.feed(m, f"message {i}")
    observation = tracker.events[-1]["text"] if tracker.events else ""
    if tool_call is None:
        return (tracker.events[-1]["state"] if tracker.events else State().to_json()), observation, False
    calls = [tool_call] if isinstance(tool_call, Mapping) else list(tool_call)
    parsed = as_calls([_as_call(c) for c in calls], where)
    check_arguments(parsed, names if names is not None else argument_names(tool_call, where))  # live_state's rule
    return live_state(msgs, parsed), observation, True


def _trailing_fields(messages: Sequence[Any], n: int, where: str) -> list[str]:
    """Where the trailing assistant message's ``n`` calls hold their arguments, named in an error by the caller's
    messages that hold them and in their own shape (:func:`_argument_places`): ``messages[i].tool_calls[j].args``,
    ``messages[i].content[k].input``, or ``messages[i].arguments`` for a message that is one call (a Responses
    ``function_call`` item: the log's calls are items of their own, joined into one assistant message, and naming them
    all by the last item's place named a good call's item, which holds no tool_calls). Where the messages do not
    tell (a message read alone is no assistant message of calls), ``where[j].arguments`` as before."""
    counts: list[tuple[int, int]] = []  # (message, its calls)
    total, i = 0, len(messages) - 1
    while total < n and i >= 0:
        try:
            alone = openai_messages([messages[i]])
        except (ValueError, TypeError, KeyError):  # a reader's error (TranscriptFormatError is one)
            alone = []
        held = len(alone[-1].get("tool_calls") or ()) if alone and alone[-1].get("role") == "assistant" else 0
        if held:
            counts.append((i, held))
            total += held
        elif not alone or alone[-1].get("role") != "assistant":
            break
        i -= 1
    if total != n:
        return [f"{where}[{j}].arguments" for j in range(n)]
    out = []
    for m, held in reversed(counts):
        places = _argument_places(messages[m])
        out += [f"messages[{m}].{p}" for p in (places if len(places) == held else
                                                 [f"tool_calls[{j}].arguments" for j in range(held)])]
    return out


def _argument_places(message: Any) -> list[str]:
    """Where each call of one message, as the caller sent it, holds its arguments (a path from the message): its
    ``tool_calls`` (OpenAI's, a LangChain message's), a call item of its own (Responses), OpenAI's deprecated
    ``function_call``, its content blocks or parts (Anthropic's tool_use, Bedrock's toolUse, Gemini's functionCall),
    a Claude Code entry's ``message``, or where the LangChain reader finds a saved message's calls (``data.`` or
    ``kwargs.`` before them; ``additional_kwargs.tool_calls`` where it has no ``tool_calls``, as a model's output
    that parsed as no call is kept); each call's field as callshapes.arguments_field names it. Empty where none of
    these tells. Until 2026-12-06 these last shapes were named ``tool_calls[j].arguments``, which they have not."""
    if not isinstance(message, Mapping):
        saved = _kept_calls_dump(message)
        if saved is not None:  # read as its dump: named as the dump's error names it
            return _langchain_places(saved)
        calls = getattr(message, "tool_calls", None)
        return [f"tool_calls[{j}].{arguments_field(c)}" for j, c in enumerate(calls)] if isinstance(calls, list) else []
    saved = langchain_messages.unwrap(message)
    if saved is not None:
        at = "kwargs." if message.get("lc") == 1 else "data." if isinstance(message.get("data"), Mapping) else ""
        return [at + p for p in _langchain_places(saved[1])] if saved[0] == "ai" else []
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        return [f"tool_calls[{j}].{arguments_field(c)}" for j, c in enumerate(calls)]
    if isinstance(message.get("function_call"), Mapping) and message.get("role") == "assistant":
        return ["function_call.arguments"]
    if message.get("type") in ("function_call", "custom_tool_call"):
        return [arguments_field(message)]
    for key in ("content", "parts"):
        blocks = message.get(key)
        if isinstance(blocks, list):
            return [f"{key}[{k}].{arguments_field(b)}" for k, b in enumerate(blocks) if isinstance(b, Mapping) and (
                b.get("type") == "tool_use" or any(isinstance(b.get(w), Mapping) for w in ("toolUse", "functionCall")))]
    inner = message.get("message")  # a Claude Code (or stream-json) entry: the API message it holds
    return [f"message.{p}" for p in _argument_places(inner)] if isinstance(inner, Mapping) else []


def _langchain_places(data: Mapping[str, Any]) -> list[str]:
    """Where a saved LangChain ai message's calls hold their arguments, from its fields, as the LangChain reader
    takes them (langchain_messages._calls): its ``tool_calls``' ``args``, else (or where some of its output parsed as
    no call) the OpenAI calls an integration kept in ``additional_kwargs`` (``tool_calls``, or the deprecated
    ``function_call``)."""
    calls, extra = data.get("tool_calls"), data.get("additional_kwargs")
    extra = extra if isinstance(extra, Mapping) else {}
    if isinstance(calls, list) and calls and not langchain_messages.reads_kept(data):
        return [f"tool_calls[{j}].{arguments_field(c)}" for j, c in enumerate(calls)]
    if isinstance(extra.get("tool_calls"), list) and extra["tool_calls"]:
        return [f"additional_kwargs.tool_calls[{j}].{arguments_field(c)}" for j, c in enumerate(extra["tool_calls"])]
    return ["additional_kwargs.function_call.arguments"] if isinstance(extra.get("function_call"), Mapping) else []


class SAMLangChainRetriever(BaseRetriever):
    """A ``langchain_core`` retriever over a ScopedMemory (see the module doc)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any = Field(default_factory=ScopedMemory)
    """A sam_model.memory.ScopedMemory (the one store, scoped by user, agent and run); default: a new one on the
    packaged default retriever (sam-general)."""
    k: int = Field(default=5, ge=1, le=MAX_K)
    """Memories per search (a search's own ``k`` overrides it)."""
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    all_scopes: bool = False
    """Search every scope when none is given (off: such a search is refused)."""

    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        return super().invoke(input, config, **run_arguments(config, kwargs))

    async def ainvoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        return await super().ainvoke(input, config, **run_arguments(config, kwargs))

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[Document]:
        return self.search(query, **kwargs)

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> list[Document]:
        return await run_in_executor(None, self.search, query, **kwargs)

    def _bound(self, name: str, given: str | None) -> str | None:
        mine = getattr(self, name)
        if mine is not None and given is not None and given != mine:
            raise ValueError(f"this retriever is bound to {name}={mine!r}, the run asked for {name}={given!r}: "
                             "refused (make one retriever per scope, or leave the field unset)")
        return mine if given is None else given

    def search(self, query: str, *, state: Any = None, messages: Sequence[Any] | None = None, tool_call: Any = None,
               user_id: str | None = None, agent_id: str | None = None, thread_id: str | None = None,
               run_id: str | None = None, all_scopes: bool | None = None, k: int | None = None,
               filters: Mapping[str, Any] | None = None, threshold: float | None = None,
               step: int | None = None, task_start: int | None = None, **unknown: Any) -> list[Document]:
        """The Documents of one search (what every entry point ends in); keywords as in the module doc. The run
        scope is ``thread_id`` (LangGraph's) or ``run_id``; both, naming two runs, are refused."""
        if unknown:
            raise TypeError(f"SAMLangChainRetriever got unknown argument(s) {sorted(unknown)}; known: "
                            f"{list(SEARCH_KEYS)}")
        if not isinstance(self.memory, ScopedMemory):
            raise TypeError(f"SAMLangChainRetriever.memory must be a sam_model.memory.ScopedMemory, got "
                            f"{type(self.memory).__name__}")
        observation = query
        scopes = (self._bound("user_id", user_id), self._bound("agent_id", agent_id),
                  self._bound("run_id", run_scope(thread_id, run_id)))
        if state is None and messages is not None:
            state, last, is_call = _decision(messages, tool_call)
            observation = query or last
            point = self.memory.decision_point(*scopes) if is_call and step is None else None
            if point is not None and point[1] == last:  # the messages' current event is the run's newest recorded
                step = point[0]  # one: made where ScopedMemory.search(call=) makes it, that event no candidate
        found = self.memory.search(observation, state, *scopes,
                                   limit=check_int(self.k if k is None else k, "k", 1, MAX_K), filters=filters,
                                   threshold=threshold, step=step, task_start=task_start,
                                   all_scopes=self.all_scopes if all_scopes is None else all_scopes)  # a bool
        return [document(r) for r in found["results"]]


ID_KEY = "langchain_id"  # the metadata key under which a memory keeps the id add_texts was given for it
# SAM's own fields of a Document's metadata (a result's, sam_model.memory.scopedresult.result): what document() sets and
# add_documents leaves out (a searched Document added back stored them as its memory's metadata, stale)
DOCUMENT_FIELDS = ("id", "score", "created_at", "updated_at", "user_id", "agent_id", "run_id", "kind", "step",
                   "episode_id", "why", "chunk", "opens_task", "used")


def document(r: Mapping[str, Any], doc_id: str | None = None) -> Document:
    """A ScopedMemory result (sam_model.memory.scopedresult.result) as a Document: the memory's words, its
    DOCUMENT_FIELDS as metadata over the memory's own (a metadata key cannot pose as the memory's scope, id or
    score); ``doc_id``: the id to show (default: the id add_texts was given, else the memory's)."""
    meta = {key: r[key] for key in DOCUMENT_FIELDS if key in r}
    own = {k: v for k, v in r["metadata"].items() if k != ID_KEY}
    given = r["metadata"].get(ID_KEY)
    return Document(page_content=r["memory"], metadata={**own, **meta},
                    id=doc_id or (given if isinstance(given, str) else None) or str(r["id"]))


def tool_call_memories(retriever: SAMLangChainRetriever, messages: Sequence[Any],
                       config: RunnableConfig | None = None) -> dict[str, list[Document]]:
    """For each tool call of the last (AI) message, the memories the call's arguments need: one search per call
    with its decision-point state (what a LangGraph node runs before its tools), made as ScopedMemory.search(call=)
    makes it (the run's current message, recorded before the search, is no candidate). Keys are the calls' ids."""
    msgs = list(messages)
    calls = getattr(msgs[-1], "tool_calls", None) if msgs else None
    if calls is None and msgs and isinstance(msgs[-1], Mapping):
        calls = msgs[-1].get("tool_calls")
    out: dict[str, list[Document]] = {}
    for n, call in enumerate(calls or []):
        # the run's config (inside a LangGraph node: its user and thread), with the call added to it; a new
        # config would replace the run's "configurable" and search without its scopes
        conf: dict[str, Any] = dict(ensure_config(config))
        conf["configurable"] = {**dict(conf.get("configurable") or {}), "sam_messages": msgs[:-1],
                                "sam_tool_call": call}
        out[str(call.get("id") or n)] = retriever.invoke("", conf)
    return out


def _listed(values: Any, name: str) -> list:
    """``values`` as a list: a string is refused (``add_texts("hello")`` stored the memories h, e, l, l, o)."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a list (one entry per text), got {type(values).__name__} "
                        f"{str(values)[:40]!r}: wrap a single one as [{name.removesuffix('s')}]")
    return list(values)


def _check_batch(texts: list, metadatas: list | None, ids: list | None) -> None:
    """What add_texts writes, checked whole first: a bad text or metadata after good ones had left those stored,
    and the caller, given an error, had none of their ids."""
    for name, got in (("metadatas", metadatas), ("ids", ids)):
        if got is not None and len(got) != len(texts):
            raise ValueError(f"{name} has {len(got)} entries for {len(texts)} texts: give one per text")
    for n, text in enumerate(texts):
        check_text(text, f"texts[{n}]")
        check_metadata(None if metadatas is None else metadatas[n], f"metadatas[{n}]")
        if metadatas is not None and ID_KEY in (metadatas[n] or {}):
            raise ValueError(f"metadatas[{n}].{ID_KEY} is the store's own key (the id a memory was given): pass the "
                             "id as ids= instead")
        if ids is not None and ids[n] is not None and (not isinstance(ids[n], (str, int)) or str(ids[n]) == ""):
            raise ValueError(f"ids[{n}] must be a non-empty string (or null for the memory's own id), got {ids[n]!r}")


class SAMVectorStore(VectorStore):
    """A ScopedMemory as a LangChain ``VectorStore``: texts are written as user messages of their scope, searches
    are ScopedMemory.search (the same refusals: no scope, no search, unless ``all_scopes``).

    Scopes (``user_id``, ``agent_id``, ``run_id``) are the store's fields or keyword arguments of each call
    (``as_retriever(search_kwargs={"user_id": "mia"})``); ``similarity_search`` takes ``filter`` (Mem0-style
    metadata filters, sam_model.memory.scopedfilters.matches), ``state`` (SAM's state-adaptive query; without it the
    text alone is a content search) and ``step`` / ``task_start`` (when the query is made: the run's memories at or
    after ``step`` are no candidates; default now, ScopedMemory.search). Ids are the memories' own (``"mia#3"``),
    or the ones ``add_texts`` was given, kept in each memory's metadata (``langchain_id``): every store over the
    memory, and the memory saved and loaded, knows them.
    """

    def __init__(self, memory: ScopedMemory, *, user_id: str | None = None, agent_id: str | None = None,
                 run_id: str | None = None, all_scopes: bool = False, k: int = 4):
        if not isinstance(memory, ScopedMemory):
            raise TypeError(f"SAMVectorStore needs a sam_model.memory.ScopedMemory, got {type(memory).__name__}")
        self.memory, self.k = memory, k
        self.scopes = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        self.all_scopes = all_scopes

    def _scopes(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        out = dict(self.scopes)
        for name in out:
            given = kwargs.pop(name, None)
            if given is not None and out[name] is not None and given != out[name]:
                raise ValueError(f"this store is bound to {name}={out[name]!r}, the call asked for {name}={given!r}")
            out[name] = out[name] if given is None else given
        return out

    @staticmethod
    def _key(scopes: Mapping[str, Any]) -> tuple:
        return tuple(scopes.get(n) for n in ("user_id", "agent_id", "run_id"))

    def _given_ids(self, scopes: Mapping[str, Any]) -> dict[str, list[tuple[tuple, Any]]]:
        """Each id given to add_texts in the scopes ``scopes`` reach (every scope, with none bound) -> [(the scopes
        it was given in, its memory's id)], in write order: one pass over the memories per call, however many ids
        it looks up (a lookup per id was a pass per id: adding 2,000 documents with ids took 11 s, 0.2 s without).
        The ids live in the memories' metadata (ID_KEY), so they hold for every store over the memory and after a
        save and load (a map in the store object had lost them: a new store, or a restart, re-added "pin" beside
        the old one)."""
        out: dict[str, list[tuple[tuple, Any]]] = {}
        key = self._key(scopes)
        for r in self.memory.get_all(**scopes, limit=None, all_scopes=not any(key))["results"]:
            given = r["metadata"].get(ID_KEY)
            if isinstance(given, str):
                out.setdefault(given, []).append((self._key(r), r["id"]))
        return out

    def _named(self, i: str, scopes: Mapping[str, Any], index: Mapping[str, list]) -> tuple[Any, tuple] | None:
        """(the memory ``i`` names within ``scopes``, the key of that memory's own scopes), else None: another
        scope's memory is not there for this store. One rule for add_texts (which replaces that memory), get_by_ids
        and delete (add_texts had replaced only a memory given the id in exactly its scopes, while get_by_ids and
        delete reached the scopes a search reaches: a store of mia showed and found her bot's "pin", and an add of
        "pin" put a second "pin" beside it). In order: the memory given ``i`` (``index``: :meth:`_given_ids` of
        ``scopes``) in exactly ``scopes``; else in a scope they reach (a store of user mia: her bot's memories; with
        no scope bound, any), refused as ambiguous when several gave it; else the memory whose own id ``i`` is,
        within ``scopes`` (a chunk's id names its memory)."""
        key = self._key(scopes)
        found = index.get(i, [])
        own = [mid for k, mid in found if k == key]
        if own:
            return own[-1], key
        if len(found) > 1:
            raise ValueError(f"id {i!r} was given to add_texts in {len(found)} scopes: give user_id, agent_id or "
                             "run_id to say whose")
        if found:
            return found[-1][1], found[-1][0]
        hit = self.memory.get(i, **{n: scopes.get(n) for n in ("user_id", "agent_id", "run_id")})
        return None if hit is None else (hit["id"], self._key(hit))

    def _check_scope(self, scopes: Mapping[str, Any]) -> None:
        if not any(self._key(scopes)) and not self.all_scopes:  # as a search: no scope, no memory (bob's PIN)
            raise ValueError("no scope: give user_id, agent_id or run_id (the store's fields or the call's), or make "
                             "the store with all_scopes=True to reach every scope's memories by id")

    def _memory_id(self, i: str, scopes: Mapping[str, Any], index: Mapping[str, list]) -> Any:
        """The memory ``i`` names within ``scopes`` (:meth:`_named`), else None."""
        named = self._named(i, scopes, index)
        return None if named is None else named[0]

    def _replaced(self, i: str, scopes: Mapping[str, Any], index: Mapping[str, list]) -> tuple[Any, Mapping[str, Any]]:
        """(the memory an id given to add_texts replaces, or None; the scopes the new text is written in): the
        memory ``i`` names (:meth:`_named`), replaced in its own scopes, so that it stays where the store found it
        (LangChain's add_documents passes a Document's id: a searched Document added back with new words replaces
        its memory); else none, the text written in ``scopes``. Without a scope nothing is replaced (nor written:
        every memory belongs to a scope)."""
        named = self._named(i, scopes, index) if any(self._key(scopes)) else None
        if named is None:
            return None, scopes
        return named[0], dict(zip(("user_id", "agent_id", "run_id"), named[1]))

    def add_texts(self, texts: Iterable[str], metadatas: list[dict] | None = None, *, ids: list[str] | None = None,
                  **kwargs: Any) -> list[str]:
        """Write each text as one user message of the scopes (with its metadata); returns the ids. An id given
        (``ids``) is kept in the memory's metadata (``langchain_id``, shown as the Document's id, not in its
        metadata); the memory an id names for this store (:meth:`_named`: the one get_by_ids finds) is replaced by
        the new text, in that memory's own scopes (a searched Document added back: add_documents passes its id).
        Every text, metadata and id is checked before the first is written: a bad one (an id that names memories of
        two scopes) is refused with nothing stored."""
        texts = _listed(texts, "texts")
        scopes = self._scopes(kwargs)
        if kwargs:
            raise TypeError(f"add_texts got unknown argument(s) {sorted(kwargs)}")
        metadatas = None if metadatas is None else _listed(metadatas, "metadatas")
        ids = None if ids is None else _listed(ids, "ids")
        _check_batch(texts, metadatas, ids)
        out = []
        with self.memory.lock:  # a replacement is a lookup, an add and a delete: one step (the lock is the store's,
            # so a save of the store, or a SAMStore sharing it, never holds both versions)
            index = self._given_ids(scopes) if ids is not None and any(self._key(scopes)) else {}
            for given in {str(i) for i in ids or () if i is not None}:  # an ambiguous id: refused before any write
                self._replaced(given, scopes, index)
            for n, text in enumerate(texts):
                given = str(ids[n]) if ids is not None and ids[n] is not None else None
                meta = dict((metadatas or [None] * len(texts))[n] or {})
                old, into = None, scopes
                if given is not None:
                    old, into = self._replaced(given, scopes, index)
                    meta[ID_KEY] = given
                added = [r for r in self.memory.add(text, **into, metadata=meta or None)["results"]
                         if r["event"] == "ADD"]
                if old is not None and self.memory.store.has(old):  # an id given again: the text replaces it
                    self.memory.delete(old)  # (has: a chunked memory's id is no entry of the store's own)
                if given is not None:  # the index as the memory now holds it: the new memory, not the old
                    kept = [(k, mid) for k, mid in index.get(given, []) if mid != old]
                    index[given] = [*kept, (self._key(into), added[-1]["id"])]
                out.append(given if given is not None else str(added[-1]["id"]))
        return out

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """As VectorStore.add_documents (each Document's text, metadata and id to :meth:`add_texts`), less SAM's
        own fields in its metadata (DOCUMENT_FIELDS: score, why, scopes, times, ...): those of a searched Document
        added back were stored as its memory's metadata, stale, and shown as its own (a metadata key of one of these
        names is hidden under SAM's field on every Document anyway)."""
        docs = _listed(documents, "documents")
        for n, d in enumerate(docs):
            if not isinstance(d, Document):  # a Document passed alone is iterable: its (field, value) pairs
                raise TypeError(f"documents[{n}] must be a LangChain Document, got {type(d).__name__}: pass a list "
                                "of Documents")
        return super().add_documents([Document(page_content=d.page_content, id=d.id, metadata={
            k: v for k, v in (d.metadata or {}).items() if k not in DOCUMENT_FIELDS}) for d in docs], **kwargs)

    def similarity_search_with_score(self, query: str, k: int | None = None, filter: Mapping[str, Any] | None = None,
                                     **kwargs: Any) -> list[tuple[Document, float]]:
        scopes = self._scopes(kwargs)
        state, threshold = kwargs.pop("state", None), kwargs.pop("score_threshold", None)
        all_scopes = kwargs.pop("all_scopes", self.all_scopes)
        step, task_start = kwargs.pop("step", None), kwargs.pop("task_start", None)
        if kwargs:
            raise TypeError(f"similarity_search got unknown argument(s) {sorted(kwargs)}")
        found = self.memory.search(query, state, **scopes, limit=self.k if k is None else k, filters=filter,
                                   threshold=threshold, all_scopes=all_scopes, step=step,
                                   task_start=task_start)["results"]
        return [(document(r), r["score"]) for r in found]

    def similarity_search(self, query: str, k: int | None = None, **kwargs: Any) -> list[Document]:
        return [d for d, _ in self.similarity_search_with_score(query, k, **kwargs)]

    def _select_relevance_score_fn(self):
        return lambda score: score  # content scores are cosines already; SAM's are inner products

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The Documents of ``ids`` in the store's scopes (another scope's memory is not found, as an unknown id)."""
        out = []
        with self.memory.lock:
            self._check_scope(self.scopes)
            index = self._given_ids(self.scopes)
            for i in ids:
                mid = self._memory_id(str(i), self.scopes, index)
                got = None if mid is None else self.memory.get(mid)
                if got is not None:
                    out.append(document(got, str(i)))
        return out

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete the memories ``ids`` of the store's (and the call's) scopes, all of them or none: an id that is
        not there raises KeyError; no ids: every memory of the scopes."""
        scopes = self._scopes(kwargs)
        if kwargs:
            raise TypeError(f"delete got unknown argument(s) {sorted(kwargs)}")
        if ids is None:
            self.memory.delete_all(**scopes)
            return True
        with self.memory.lock:
            self._check_scope(scopes)
            index = self._given_ids(scopes)
            found = [self._memory_id(str(i), scopes, index) for i in ids]
            for i, mid in zip(ids, found):
                if mid is None:
                    raise KeyError(f"memory {i!r} is not in the store's scopes {scopes}")
            for mid in set(found):
                if self.memory.store.has(mid):  # a chunked memory's id too (`in` knew only memories stored whole)
                    self.memory.delete(mid)
        return True

    @classmethod
    def from_texts(cls, texts: list[str], embedding: Any = None, metadatas: list[dict] | None = None, *,
                   ids: list[str] | None = None, memory: ScopedMemory | None = None, **kwargs: Any) -> SAMVectorStore:
        """A store over ``memory`` (or a new ScopedMemory of the SAM model ``embedding``: a SAMRetriever or an
        encoder — SAM makes its own vectors, a LangChain ``Embeddings`` is not one) holding ``texts``."""
        if memory is None:
            if embedding is None or not hasattr(embedding, "encode_memories") and not hasattr(embedding, "encoder"):
                raise TypeError("SAMVectorStore.from_texts needs memory= (a ScopedMemory) or a SAM model as "
                                f"embedding (SAMRetriever.from_pretrained(...)), got {type(embedding).__name__}")
            memory = ScopedMemory(embedding)
        scopes = {name: kwargs.pop(name) for name in ("user_id", "agent_id", "run_id", "all_scopes", "k")
                  if name in kwargs}
        store = cls(memory, **scopes)
        store.add_texts(texts, metadatas, ids=ids, **kwargs)
        return store


__all__ = ["SAMLangChainRetriever", "SAMVectorStore", "document", "openai_messages", "result", "run_arguments",
           "state_from_messages", "tool_call_memories"]
