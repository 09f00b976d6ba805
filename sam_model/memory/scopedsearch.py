"""ScopedMemory's search: what a search ranks by (a state, text alone, the scopes' live state, or the tool call
about to be made, traced through the scopes' own conversation), at which step of the scopes' episode it is made, and
the Mem0 answer it gives (module doc of sam_model.memory.scoped).

Apart from ScopedMemory because the search is its own idea, read top to bottom here: ScopedSearch is a mixin of
sam_model.memory.scoped.ScopedMemory (its only user), reading the memory's store, its conversations' trackers and
open turns, and the scope checks and result views every call shares (``_scopes``, ``search_scopes``, ``_record``,
``_result``), which stay with the memory. A search by call refuses arguments that are no JSON object
(sam_model.data.callshapes.check_arguments, the one rule of every path): their state would flag no argument, silently.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from sam_model.data.callshapes import argument_names, as_calls, check_arguments
from sam_model.data.chatmessages import ToolCall
from sam_model.data.eventtexts import call_text
from sam_model.data.formats import claude_code
from sam_model.data.schema import State, as_state
from sam_model.data.toolstate import TranscriptState
from sam_model.io import SAMFileError
from sam_model.limits import MAX_K, check_k, check_step, check_text
from sam_model.locking import locked
from sam_model.memory import live
from sam_model.memory.scopedfilters import matches
from sam_model.memory.scopedinput import _check_calls_size
from sam_model.memory.scopeduses import supplied_ids, supplied_steps, used_ids, used_steps, uses_known


class ScopedSearch:
    """A ScopedMemory's search (mixin of sam_model.memory.scoped.ScopedMemory; see the module doc)."""

    @locked
    def search(self, query: str, state: State | Mapping | str | None = None, user_id: str | None = None,
               agent_id: str | None = None, run_id: str | None = None, limit: int | None = None,
               filters: Mapping[str, Any] | None = None, threshold: float | None = None, *, call: Any = None,
               top_k: int | None = None, k: int | None = None, step: int | None = None, task_start: int | None = None,
               all_scopes: bool = False, query_vector: Any = None,
               prepared: tuple[str, dict[str, Any]] | None = None, used_order: str | None = None) -> dict[str, Any]:
        """The ``limit`` best memories of the scopes for the query, best first (Mem0's ``search``).

        ``state``: what to rank by (module doc): a State or mapping (SAM's state-adaptive query), None with text
        (a plain content query), ``"live"`` (the run's newest state); ``call``: instead of a state, the tool call
        about to be made (``{"name", "arguments"}``, an OpenAI ``tool_calls`` entry, ..., or a list of them): ranked
        by its decision-point state, computed from the scopes' recorded conversation (:meth:`live_state`), which the
        answer's ``"state"`` gives; ``limit`` (Mem0's name; ``top_k`` and ``k`` are the same): how many, default
        ``self.k``; ``filters``: Mem0-style metadata filters (``matches``), applied inside the search;
        ``threshold``: keep scores >= it; ``step`` / ``task_start``: when the query is made and where its task began
        (default: now, and the episode's current task), for a model with time features; the scopes' memories at or
        after ``step`` in their own episode are left out (the module doc), none when it is now. No scope at all is refused
        unless ``all_scopes=True``. ``query_vector``: the query, already encoded from ``prepared``, what
        :meth:`query_input` answered for these arguments (a server batching concurrent searches into one forward:
        the state is not traced again, and the results are ranked by the state the vector was encoded from).
        ``used_order``: "model" or "latest" puts the memories the task's earlier tool calls took values from
        (:meth:`used`) first, in the model's order or by their latest use, "needed" only those that supplied a slot
        the call needs (:meth:`supplied`), by their latest use, "off" none; None (default): the store's
        ``StoreConfig.used_order``, saved with it (MemoryStore.search_vector; what sam-serve's searches get)."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        n = self._limit(limit, top_k, k)
        scopes, rest = self.search_scopes(user_id, agent_id, run_id, filters, all_scopes)
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
            raise TypeError(f"threshold must be a number, got {threshold!r}")
        if threshold is not None and not math.isfinite(threshold):  # NaN kept nothing, silently
            raise ValueError(f"threshold must be a finite number, got {threshold!r}")
        kind, inputs = prepared or self.query_input(query, state, step=step, task_start=task_start, call=call,
                                                    **scopes)
        out: dict[str, Any] = {"results": []}
        if call is not None:  # the state it ranked by, which the caller did not send
            out["state"] = inputs["state"].to_json()
        ids = None
        if rest:
            ids = [h.id for h in self.store.get_all(**scopes) if matches(self._record(h), rest)]
            if not ids:
                return out
        q = self.encode_query(kind, [inputs])[0] if query_vector is None else query_vector
        used = self.used(inputs)
        order = self.store.config.used_order if used_order is None else used_order
        supplied = self.supplied(inputs) if order == "needed" and used else None  # read for the one order that
        # reads them, where a call of the task used something (a chat of no tool call: none, every search)
        ordered = order not in (None, "off")
        deep = min(n + len(used), MAX_K) if threshold is not None and used and ordered else n  # the used ones placed
        # first may score below the threshold: with as many more, ``n`` of those it keeps are among the hits (the rest
        # in the model's order, a deeper search starting with a shallower one's hits)
        if kind == "text":  # fold: one result per memory, its best chunk (ids are the memories', see result)
            step = inputs.get("step")  # a plain query made at a given step leaves that step and later out too
            hits = self.store.search_vector(q, deep, (), **scopes, ids=ids, fold=True,
                                            before=None if step is None else (inputs["episode"], step), used=used,
                                            used_order=used_order, supplied=supplied)
        else:  # made at its step in the scopes' own episode: the memories written before it are the candidates
            hits = self.store.search(inputs["state"], inputs["observation"], deep, **scopes, ids=ids,
                                     step=inputs["step"], task_start=inputs["task_start"], query_vector=q, fold=True,
                                     query_episode=inputs["episode"], used=used, used_order=used_order,
                                     supplied=supplied)
        known = self.uses_known(inputs)  # else (and of other episodes) a hit not among them says None, not False
        hits = [h if h.episode_id == inputs["episode"] and (known or h.used) else dataclasses.replace(h, used=None)
                for h in hits]
        if threshold is not None:
            hits = [h for h in hits if h.score >= threshold][:n]
        out["results"] = [self._result(h) for h in hits]
        return out

    @locked
    def query_input(self, query: str, state: State | Mapping | str | None = None, user_id: str | None = None,
                    agent_id: str | None = None, run_id: str | None = None, step: int | None = None,
                    task_start: int | None = None, call: Any = None) -> tuple[str, dict[str, Any]]:
        """What :meth:`search` encodes for these arguments: ``("text", {"text", "episode", "step"})`` (a plain query:
        text and no state; step None unless given) or ``("state", {"state", "observation", "episode", "step",
        "task_start"})`` (SAM's state-adaptive query; ``"live"`` or no text: the scopes' newest state; ``call``: the
        decision-point state of that call, and, when the query is blank, the words of the conversation's newest event
        as the observation, as evaluate.py reads a decision point, at that event's step; else step and task_start
        default to now and the current task). ``episode`` is the scopes' own (:meth:`episode_of`): its memories at or
        after ``step`` are no candidates (MemoryStore.search), so a search by call ranks the events before its
        decision point and a search at a given step those before it. :meth:`encode_query` turns a list of them (of
        one kind) into query vectors in one forward."""
        check_text(query, "query", empty=True)
        check_step(step), check_step(task_start, "task_start")
        self._scopes(user_id, agent_id, run_id, need=False, held=self._held)  # checked as live_state's: a '/' named another's
        episode = self.episode_of(user_id, agent_id, run_id)
        observation = query
        if call is not None:
            if state is not None:
                raise ValueError("give state or call, not both: call is the tool call about to be made, whose state "
                                 "is computed from the run's recorded conversation; state is one the agent made")
            state, said, decision = self._call_state(call, user_id, agent_id, run_id)
            observation = query if query.strip() else said
        elif state is None and query.strip() and getattr(self.store.encoder, "text_queries", False):
            return "text", {"text": query, "episode": episode, "step": step}
        if isinstance(state, str) and state != "live":
            raise ValueError(f"state must be a state mapping (phase, constraints, ...), 'live' or none, got "
                             f"{state[:40]!r}")
        if state is None or state == "live":
            state = self.live_state(user_id, agent_id, run_id)
        out = {"state": as_state(state), "observation": observation, "episode": episode,
               "step": self.store.next_step(episode) if step is None else step,
               "task_start": self.store.recorder.task_start(episode) if task_start is None else task_start}
        if call is not None and decision is not None and step is None:  # the decision point as evaluate.py reads
            # it: the newest event is the observation, made at its step, and the memories are those written before it
            out["step"] = decision
        return "state", out

    def used(self, inputs: Mapping[str, Any]) -> dict[str, int]:
        """The ids of the memories the earlier tool calls of the query's task took values from, for a
        :meth:`query_input` answer: read from the scopes' own conversation's labels before the query's step (now
        when none), from its task start on (the episode's current task when none is given: a text query's too)
        (sam_model.memory.scopeduses), each with the rank of its latest use. The search tells the store (u_m for a
        reuse model, r_m = 1/rank for one with task_recency; Hit.used, ``used`` in each result)."""
        episode = inputs["episode"]
        steps = used_steps(self._trackers.get(episode), self._base.get(episode, 0), self._labels.get(episode, {}),
                           inputs.get("step"), self._task_start(inputs))
        return used_ids(episode, steps)

    def supplied(self, inputs: Mapping[str, Any]) -> dict[str, list[str]]:
        """The slots each of :meth:`used`'s memories supplied: what the decisions of the query's task that used it
        needed (sam_model.memory.scopeduses.supplied_steps), for a search ordered "needed" (MemoryStore.search)."""
        episode = inputs["episode"]
        steps = supplied_steps(self._trackers.get(episode), self._base.get(episode, 0), self._labels.get(episode, {}),
                               self._needs.get(episode, {}), inputs.get("step"), self._task_start(inputs))
        return supplied_ids(episode, steps)

    def uses_known(self, inputs: Mapping[str, Any]) -> bool:
        """Whether :meth:`used` is every memory the query's task used: no decision point of it before the query's
        step had its labels dropped (agent-log events numbered on, ScopedMemory._unknown). Only the query's own
        episode's uses are ever read: a hit of another episode (a user's search reaching its runs' scopes) says
        None too."""
        return uses_known(self._unknown.get(inputs["episode"], ()), inputs.get("step"), self._task_start(inputs))

    def _task_start(self, inputs: Mapping[str, Any]) -> int | None:
        """The query's task start: given (None: unknown), else the episode's current task's (a text query's)."""
        return inputs["task_start"] if "task_start" in inputs else self.store.recorder.task_start(inputs["episode"])

    def encode_query(self, kind: str, inputs: Sequence[Mapping[str, Any]]) -> Any:
        """Query vectors (n, dim) for :meth:`query_input` answers of one ``kind``, in one encoder call."""
        enc = self.store.encoder
        if kind == "text":
            return enc.encode_text_queries([i["text"] for i in inputs])
        return enc.encode_queries([i["state"] for i in inputs], [i["observation"] for i in inputs],
                                  steps=[i["step"] for i in inputs], task_starts=[i["task_start"] for i in inputs])

    def _limit(self, limit, top_k, k) -> int:
        given = {name: v for name, v in (("limit", limit), ("top_k", top_k), ("k", k)) if v is not None}
        if len(set(given.values())) > 1:
            raise ValueError(f"give one of limit, top_k, k (they are the same), got {given}")
        return check_k(next(iter(given.values()), self.k), next(iter(given), "k"))

    @locked
    def live_state(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None, *,
                   call: Any = None) -> State:
        """The state of the scopes' newest event (an empty State when the episode has none); with ``call`` (a tool
        call about to be made, or a list of them: :meth:`search`), its decision-point state instead. The scopes are
        checked as a search's are: a value holding '/' named another combination's conversation (``user_id=
        "mia/bot"`` read mia's with agent bot), not the one given."""
        self._scopes(user_id, agent_id, run_id, need=False, held=self._held)
        if call is not None:
            return State.from_json(self._call_state(call, user_id, agent_id, run_id)[0])
        tracker = self._trackers.get(self.episode_of(user_id, agent_id, run_id))
        if tracker is not None and tracker.events:
            return State.from_json(tracker.events[-1]["state"])
        hits = self.store.get_all(episode_id=self.episode_of(user_id, agent_id, run_id))
        return State(phase=hits[-1].phase) if hits else State()

    def _call_state(self, call: Any, user_id: str | None, agent_id: str | None,
                    run_id: str | None) -> tuple[dict[str, Any], str, int | None]:
        """(the decision-point state of ``call`` after the scopes' recorded conversation, the words of its decision
        event, that event's step in the store or None when the conversation has none): what
        sam_model.data.toolstate.live_state gives for the conversation's messages and the call, read from the
        conversation's own tracker (TranscriptState.call_state: one code path), which it does not change.

        Only this combination of scopes' conversation feeds it (the one its messages were added with, episode_of);
        a scope with none (nothing added, or agent-log events alone) is the empty conversation: the phase is the
        call's tool, the rest empty, as live_state([], call) says. A call already in the conversation as its newest
        event (its assistant message added before the search) is refused: its state would be the one after it; not
        a Claude Code call's line of the open turn's response, decided before the response whatever of it was added
        (a response may make one call twice)."""
        given = call
        try:
            call = claude_code.given_calls(call)  # a Claude Code session's line of the call: its tool_use block
            calls = as_calls(call, "call")
        except SAMFileError as err:  # a client's mistake (a 422 over HTTP), not a damaged file
            raise ValueError(str(err)) from None
        _check_calls_size(calls, "call", "leave its bulk out of the call searched with")
        check_arguments(calls, argument_names(call))
        episode = self.episode_of(user_id, agent_id, run_id)
        tracker = self._trackers.get(episode) or TranscriptState(episode)
        turn = self._open.get(episode)
        made = set()
        # a Claude Code call's line of the open turn's response is decided before the response (live.deciding),
        # whatever of it was added: its response's other calls, alike or not, are no state after it
        own = turn is not None and turn.format == "claude-code" and claude_code.response_start(turn.lines, given) \
            is not None
        for event in reversed(tracker.events) if not own else ():  # the actions of the last assistant message
            if event["kind"] != "action":
                break
            made.add(event["text"])
        for i, c in enumerate(calls):
            if c.valid and call_text(c.name, c.arguments) in made:
                where = "call" if isinstance(call, (Mapping, ToolCall)) else f"call[{i}]"
                raise ValueError(f"{where}: this call to {c.name[:60]!r} is already the conversation's newest message "
                                 "(added before the search), so its state would be the one after it: search with the "
                                 "call before adding the message that makes it")
        tracker = live.deciding(turn, tracker, given)  # before a preamble it joins
        cwd = live.calls_cwd(turn, tracker.cwd, calls)
        point = self._decision_point(episode, tracker)
        return tracker.call_state(calls, cwd), "" if point is None else point[1], None if point is None else point[0]

    def _decision_point(self, episode: str, tracker: TranscriptState | None = None) -> tuple[int, str] | None:
        """(the store's step of ``episode``'s newest recorded event before a call's decision, its words), None when
        it has none: before a Responses preamble the call joins (live.deciding; ``tracker``: that conversation)."""
        if tracker is None and (tracker := self._trackers.get(episode)) is not None:
            tracker = live.deciding(self._open.get(episode), tracker)
        if tracker is None or not tracker.events:
            return None
        return self._base[episode] + tracker.events[-1]["step"], tracker.events[-1]["text"]

    @locked
    def decision_point(self, user_id: str | None = None, agent_id: str | None = None,
                       run_id: str | None = None) -> tuple[int, str] | None:
        """Where a search for a tool call about to be made is made: (the step, the words) of the newest event of
        the scopes' recorded conversation (its decision point, as evaluate.py reads one: the memories at or after
        that step are no candidates), None when the scopes have none (the search is made now). What
        :meth:`search` with ``call`` uses, and the LangChain adapter for a call rebuilt from the graph's messages:
        one rule for both."""
        self._scopes(user_id, agent_id, run_id, need=False, held=self._held)
        return self._decision_point(self.episode_of(user_id, agent_id, run_id))


__all__ = ["ScopedSearch"]
