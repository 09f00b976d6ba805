"""SAM in Hugging Face smolagents: a step callback that stores each finished step, and a tool that recalls.

    pip install smolagents                 # this module imports it; nothing in the core does

    memory = ScopedMemory(SAMRetriever.from_pretrained("sam-general"))
    scopes = {"user_id": "mia", "agent_id": "hr-leave"}
    agent = ToolCallingAgent(tools=[get_leave_balance, SAMRecallTool(memory, **scopes)], model=model,
                             step_callbacks=[SAMStepCallback(memory, **scopes)])
    agent.run("Book my annual leave from 3 to 7 August")

:class:`SAMStepCallback` is a smolagents step callback: smolagents calls it with each finished ``ActionStep`` (a
list of ``step_callbacks``; a dict of them may register it for ``PlanningStep`` and ``FinalAnswerStep`` too) and the
agent, before the step joins ``agent.memory.steps``. Each call reads the agent's memory as a dump of it holds it so
far (``[agent.memory.system_prompt.dict(), *agent.memory.get_succinct_steps()]`` and the step, through
``json.dump(..., default=str)``) with the ``smolagents`` log reader (sam_model.data.formats.smolagents: the one
code path), and adds to ScopedMemory the chat messages it read past the last call's. So the system prompt (the
policy) and each run's ``TaskStep``, which no callback is called for, are stored in their place, each step once
however it is registered, and the memories stored while the agent runs are those ``sam-data transcripts`` makes of
the dumped memory: what SAM was trained on, but for the recall tool's output. A ``FinalAnswerStep`` adds nothing
(its answer is its last action step's). Called without the agent (by hand) it adds the step alone: add each run's
task first (``{"task": task}``).

A recall's memories are the store's already: stored as the step's observation, each recall copied them under a new
step, in the bank and in the training data read of it (a memory recalled each run came back once more each run).
The callbacks of a store replace the text of its recall tools' recent outputs (``KEEP`` a user, for its last
``USERS`` users) in a step's ``observations`` (a ToolCallingAgent's recall_memory result, what a CodeAgent's code
printed of it) with a marker, ``[3 memories recalled: stored already]``, for the memories a search of the callback's
scopes finds (a copy would be found twice); those it does not (another agent's or run's of the user, no user's) are
news there and kept, under their numbers after the marker; in a step that called the recall tool by its name or a
managed agent (whose answer may quote it); where the text stands on lines of its own. The same lines of another
tool, or the same words inside a line of other output, are that output's. The call itself, the step's other output
and "No memories found." are stored as they were. A dump of the agent's memory still holds the
recalls: ``sam-data transcripts`` reads each, by the head SAMRecallTool writes (sam_model.data.formats.recalls), as
the marker.

:class:`SAMRecallTool` is a smolagents ``Tool`` (``recall_memory(query)``) the agent calls to search the scopes'
memories (under the head ``[3 memories recalled by SAM]``, what the reader knows a recall by): ranked by the
scopes' live state (the state of the newest step a callback of the same scopes added: the
agent's current task state, ScopedMemory.live_state) and the query's words, the best ``k`` returned numbered (a
memory's further lines indented). Give both the same scopes (a user's, and the agent's: each run a task of that user's memory), or the tool
ranks by the empty state of scopes no step was added to. smolagents has
no hook before a step's model call (callbacks run after a step, and a step's memory is both the next model input and
what the log reader reads), so recalling is a tool call the agent chooses, stored as its step like any other.

Scopes (``user_id``, ``agent_id``, ``run_id``, at least one) are fixed when each is made. One made without
``user_id`` is no user's: its search reads only memories of no user (ScopedMemory's scopes are filters, so
``agent_id="hr-leave"`` alone matched each user's memories with that agent too: sam_model.integrations.autogen
had that leak).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

try:
    import smolagents
    from smolagents import Tool
except ImportError as exc:  # an optional integration: said in one line, not a traceback into smolagents' imports
    raise ImportError(f"sam_model.integrations.smolagents needs smolagents ({exc}): pip install smolagents, or use "
                      "ScopedMemory directly") from None
if not hasattr(smolagents, "AgentMemory"):  # before 1.8: agent.logs, no agent.memory nor step.dict() to read
    raise ImportError(f"sam_model.integrations.smolagents needs smolagents 1.8 or later (found "
                      f"{getattr(smolagents, '__version__', 'a version')}, whose agents keep no agent.memory): pip "
                      "install -U smolagents")

from sam_model.data.formats.recalls import HEAD_RE, head, recalled
from sam_model.data.formats.smolagents import step_kind, to_chat
from sam_model.integrations.fitting import cut_as_importer
from sam_model.integrations.scopes import fixed_scopes, numbered, user_filter
from sam_model.limits import check_k
from sam_model.memory import ScopedMemory

log = logging.getLogger(__name__)

NOTHING = "No memories found."
# each user's last recalls of a store, looked for in the steps its callbacks read (a recall is a step's, or a managed
# agent's run's), for the store's last USERS users recalling: kept for the whole store, 64 recalls of other users
# made while a user's step ran pushed that user's out, and it was stored again. Kept as digests of their lines (a
# few bytes a recall, not the memories' text in the process: bounded whatever the memories' size)
KEEP, USERS = 64, 1024
Scopes = tuple[str | None, str | None, str | None]  # a memory's user_id, agent_id and run_id


@dataclass(frozen=True)
class _Kept:
    """One recall as kept: its number of lines, their digest, its tool's name, and for each memory it returned (in
    its order) its number of lines and its scopes, which say where a search finds it (visible)."""

    size: int
    digest: bytes
    tool: str
    found: tuple[tuple[int, Scopes], ...]


_recalls: weakref.WeakKeyDictionary[ScopedMemory, OrderedDict[str | None, deque[_Kept]]] = \
    weakref.WeakKeyDictionary()
_recalls_lock = threading.Lock()


def _digest(lines: list[str]) -> bytes:
    """A recall's lines as kept: a digest, as the process need not hold the memories' text to find them again."""
    return hashlib.blake2b("\n".join(lines).encode(), digest_size=16).digest()


def _recalled(memory: ScopedMemory, user_id: str | None, text: str, found: list[dict[str, Any]], tool: str) -> None:
    """Keep ``text``, the output of the recall tool named ``tool`` of the user ``user_id`` (None: no user's), the
    search results ``found`` numbered under a head, for the callbacks of ``memory`` to leave out what their scopes
    hold already (masked_step)."""
    lines = text.strip().split("\n")
    sizes = [hit["memory"].count("\n") + 1 for hit in found[:-1]]
    sizes.append(len(lines) - 1 - sum(sizes))  # the last memory's: the rest (strip may have cut its blank end)
    kept = _Kept(len(lines), _digest(lines), tool, tuple(
        (n, (hit["user_id"], hit["agent_id"], hit["run_id"])) for n, hit in zip(sizes, found)))
    with _recalls_lock:
        users = _recalls.setdefault(memory, OrderedDict())
        users.setdefault(user_id, deque(maxlen=KEEP)).append(kept)
        users.move_to_end(user_id)
        if len(users) > USERS:
            users.popitem(last=False)


def visible(scopes: dict[str, str | None], where: Scopes) -> bool:
    """Whether a search in ``scopes`` (an adapter's: user_filter's no-user filter where it has no user) finds a
    memory stored in the scopes ``where``: each scope given is the memory's, and a memory of no user only there."""
    user, agent, run = scopes["user_id"], scopes["agent_id"], scopes["run_id"]
    return where[0] == user and agent in (None, where[1]) and run in (None, where[2])


def _as_stored(lines: list[str], found: tuple[tuple[int, bool], ...]) -> list[str]:
    """A recall's ``lines`` as a callback of some scopes stores them, given its memories' sizes and whether a search
    of the scopes finds each (``found``, in the recall's order): the marker for those a search of the scopes finds
    (stored already: a copy would come back twice), then the others' lines as the recall numbered them (news in
    the scopes: left out, they were lost from them). All visible: the marker alone; none: the recall as it was."""
    shown, i, out = 0, 1, []
    for size, seen in found:
        shown += seen
        if not seen:
            out += lines[i:i + size]
        i += size
    return [recalled(shown)] + out if shown else lines


def masked_step(d: dict[str, Any], memory: ScopedMemory, scopes: dict[str, str | None],
               managed: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A step's dict with the text of each recent recall of ``memory`` in its ``observations`` (a ToolCallingAgent's
    recall_memory output, a CodeAgent's printed one) replaced by a marker for the memories a search of ``scopes``
    finds (a copy of each would be found twice), the others kept (news in the scopes), the call itself kept. By
    text: a CodeAgent's observations are its code's printed logs, what a recall printed among the rest. Only in a
    step that called the recall's tool (by its name), or one of the ``managed`` agents (whose answer may quote its
    recall): the same lines of another tool are its output. Only the recalls of the scopes' user's tools (None: of
    no user's): another user's memories, or those of no user, are never visible in a user's scopes. Kept by
    whether each memory is visible, not by the tool's scopes: a recall of a user-wide tool in a step of the user's
    shop agent that gave her hr memories was left out, lost from the shop scope, and one of her hr tool in a step
    of her user-wide callback stored again, found twice by her searches. A recall's text is matched as whole lines
    (a print of it, a tool's result): inside a line it is other output's."""
    seen = d.get("observations")
    if not isinstance(seen, str) or not seen:
        return d
    with _recalls_lock:
        own = list(_recalls.get(memory, {}).get(scopes["user_id"], ()))
    called = _called(d)
    quoting = any(called(name) for name in managed)
    given = {(k.size, k.digest): tuple((n, visible(scopes, where)) for n, where in k.found)
             for k in own if quoting or called(k.tool)}
    if not given:
        return d
    sizes = sorted({size for size, _ in given}, reverse=True)  # longest first: a recall holding a shorter one's whole
    lines, out, i = seen.split("\n"), [], 0
    while i < len(lines):  # a recall begins with its head: only there are its sizes of lines hashed
        size = next((n for n in sizes if (n, _digest(lines[i:i + n])) in given), 0) if HEAD_RE.match(
            lines[i] + "\n") else 0
        out += _as_stored(lines[i:i + size], given[size, _digest(lines[i:i + size])]) if size else [lines[i]]
        i += size or 1
    return d if out == lines else {**d, "observations": "\n".join(out)}


def _called(d: dict[str, Any]) -> Callable[[str], bool]:
    """Whether the step ``d`` called a tool of the name given: a ToolCallingAgent's call of it, or a CodeAgent's
    code calling it (its python_interpreter call's arguments, ``code_action``)."""
    calls = [c.get("function") for c in d.get("tool_calls") or [] if isinstance(c, dict)]
    names = {f.get("name") for f in calls if isinstance(f, dict)}
    code = "\n".join(t for t in (d.get("code_action"), *(f.get("arguments") for f in calls if isinstance(f, dict)))
                     if isinstance(t, str))
    return lambda name: name in names or re.search(rf"(?<![\w.]){re.escape(name)}\s*\(", code) is not None


def _unbytes(value: Any) -> Any:
    """json.dump's ``default``: str() as a dump written with ``default=str`` holds it, but an image's bytes (a step's
    ``observations_images``, which the reader counts) as an empty text, not a repr of megabytes."""
    return "" if isinstance(value, (bytes, bytearray)) else str(value)


def step_dict(step: Any) -> dict[str, Any]:
    """A memory step as a dump of the agent's memory holds it: ``step.dict()`` without ``model_input_messages``
    (``get_succinct_steps()``: the system prompt is its own step), through JSON (``json.dump(..., default=str)``),
    so what is stored is what ``sam-data transcripts`` reads of the dump."""
    d = {k: v for k, v in step.dict().items() if k != "model_input_messages"}
    return json.loads(json.dumps(d, default=_unbytes))


@dataclass
class _Read:
    """What a callback has read of one agent's memory: its ``steps`` list (a run with ``reset=True`` makes a new
    one), each step's dict (each dumped once; the step held, so that its id is not reused while kept) and how many
    of the dump's chat messages were added."""

    memory: ScopedMemory
    scopes: dict[str, str | None]
    steps: list[Any] | None = None
    managed: frozenset[str] = frozenset()  # the agent's managed agents' names: their answers may quote a recall
    dicts: dict[int, tuple[Any, dict[str, Any], dict[str, Any]]] = field(default_factory=dict)
    added: int = 0
    last: Any = None  # the step of the last call: checked at the next one for what a later callback wrote into it

    def dumped(self, step: Any) -> dict[str, Any]:
        """The step's dict as dumped (the first time it was read)."""
        return self._read(step)[1]

    def stored(self, step: Any) -> dict[str, Any]:
        """The step's dict as stored: the recalls in it when first read left out (masked_step)."""
        return self._read(step)[2]

    def _read(self, step: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
        if id(step) not in self.dicts:
            d = step_dict(step)
            self.dicts[id(step)] = (step, d, masked_step(d, self.memory, self.scopes, self.managed))
        return self.dicts[id(step)]


class SAMStepCallback:
    """A smolagents step callback that adds each finished step to ScopedMemory in fixed scopes (see the module doc).

    Each call reads the agent's memory dumped so far (its system prompt, ``agent.memory.steps`` and the step, which
    joins them after the callbacks) with the reader, as ``sam-data transcripts`` reads the dump, and adds the chat
    messages read past those of the last call. Not each step alone: a CodeAgent's step is read with what came before
    it (the prompt's tool signatures, which name a positional argument; a name an earlier step's code bound): a step
    read alone (ScopedMemory keeps no scope's earlier code) left out ``get_user(uid)``'s argument where an earlier
    step bound ``uid``, and without its model input named ``find_cover("brand", ...)``'s ``arg1``, not ``team``. A run with ``reset=True``
    makes a new ``agent.memory.steps``: read from its start (its system prompt again, the policy unchanged). Each
    call reads the whole memory again, as smolagents writes it whole into each model input. A step is read once, when
    called: give it last in ``step_callbacks``, as what a callback after it writes into the step is not stored (its
    next call finds the step changed and says so in a warning).

    What was read is kept for each agent's memory (weakly: an agent dropped is forgotten), so one callback may serve
    several agents (a manager and its managed agents, given one ``step_callbacks`` list; agents in threads): with one
    record for all, a call for another agent's memory started it over, and each agent's earlier runs were stored
    again whenever another agent's step came between. The agents' messages then join the scopes' one conversation in
    the order their steps finish: give agents that run at once a ``run_id`` each."""

    def __init__(self, memory: ScopedMemory, *, user_id: str | None = None, agent_id: str | None = None,
                 run_id: str | None = None) -> None:
        self.memory, self.scopes = memory, fixed_scopes("SAMStepCallback", user_id, agent_id, run_id)
        self._reads: weakref.WeakKeyDictionary[Any, _Read] = weakref.WeakKeyDictionary()  # agent.memory -> read
        self._lock = threading.Lock()

    def __call__(self, step: Any, agent: Any = None) -> None:
        """Add what ``step`` (and, with ``agent``, the memory before it) adds to the dump's chat messages."""
        if agent is None:  # a callback of one argument: the step alone, read as the reader reads it
            d = masked_step(step_dict(step), self.memory, self.scopes)
            if step_kind(d) != "final":
                self.memory.add([d], **self.scopes)
            return
        memory = agent.memory
        with self._lock:
            read = self._reads.get(memory)
            if read is None or memory.steps is not read.steps:
                read = self._reads[memory] = _Read(self.memory, self.scopes, memory.steps,
                                                   frozenset(getattr(agent, "managed_agents", None) or ()))
            if step_kind(read.dumped(step)) is None:  # keys no smolagents the reader knows writes
                raise ValueError(f"SAMStepCallback: smolagents {getattr(smolagents, '__version__', '')} writes its "
                                 f"{type(step).__name__} with the keys {', '.join(list(read.dumped(step))[:8])}, which "
                                 "the smolagents reader does not read (it reads the steps of smolagents 1.8 to 1.26: an "
                                 "ActionStep with step or step_number, tool_calls, observations): pip install -U "
                                 "smolagents")
            if read.last is not None and read.last is not step and step_dict(read.last) != read.dumped(read.last):
                log.warning("SAMStepCallback: a callback after it changed the step it read (%s %s): what it wrote is "
                            "not stored; give SAMStepCallback last in step_callbacks", type(read.last).__name__,
                            getattr(read.last, "step_number", ""))
            read.last = step
            steps = [*memory.steps, *([] if any(s is step for s in memory.steps) else [step])]
            dump = [step_dict(memory.system_prompt), *(read.stored(s) for s in steps)]
            name = getattr(agent, "name", None)
            chat = to_chat([d for d in dump if step_kind(d) != "final"],  # its recalls left out by their scopes
                           f"agent {name}'s memory" if name else "agent.memory", recalls=False)
            if new := chat.messages[read.added:]:
                self.memory.add([cut_as_importer(m, chat.sources[read.added + i], log) for i, m in enumerate(new)],
                                **self.scopes)
            read.added = len(chat.messages)


class SAMRecallTool(Tool):
    """``recall_memory(query)``: the scopes' best memories for the agent's current state and the query, as text."""

    name = "recall_memory"
    description = ("Searches your long-term memory (earlier steps, tool results and conversations with this user) "
                   "for what you need now, e.g. an id, a date or a preference said before. Returns the best "
                   "memories, numbered, best first (a memory's further lines indented).")
    inputs = {"query": {"type": "string", "description": "what you want to remember, in a few words"}}
    output_type = "string"

    def __init__(self, memory: ScopedMemory, *, user_id: str | None = None, agent_id: str | None = None,
                 run_id: str | None = None, k: int = 5) -> None:
        self.memory, self.scopes, self.k = memory, fixed_scopes("SAMRecallTool", user_id, agent_id, run_id), check_k(k)
        self.filters = user_filter(user_id)
        super().__init__()

    def search(self, query: str) -> list[dict[str, Any]]:
        """The ``k`` best memories of the scopes (ScopedMemory.search's results), ranked by the live state."""
        return self.memory.search(query, state="live", limit=self.k, filters=self.filters, **self.scopes)["results"]

    def forward(self, query: str) -> str:
        """The memories numbered, best first (scopes.numbered: a memory's further lines indented); the text kept
        for the store's step callbacks, which store a marker in its place (masked_step)."""
        found = self.search(query)
        if not found:
            return NOTHING
        text = f"{head(len(found))}\n{numbered(found)}"
        _recalled(self.memory, self.scopes["user_id"], text, found, self.name)
        return text
