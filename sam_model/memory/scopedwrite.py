"""How an add to a ScopedMemory becomes memories: chat messages fed through the scopes' conversation's running state
(sam_model.data.toolstate.TranscriptState, as the transcript importer writes them: a tool call fixes the state of
the event before it), an agent's session lines read with the scope's open turn (sam_model.memory.live), agent-log
events placed as evaluate.py's life of them (sam_model.memory.scopedsteps) or numbered on after the conversation's,
a conversation saved behind its memories caught up, all or nothing: a refused batch leaves the conversation and the
store as they were.

Apart from ScopedMemory because the write path is its own idea, read top to bottom here: ScopedWrites is a mixin of
sam_model.memory.scoped.ScopedMemory (its only user), writing to the memory's store, conversations, open turns and
history (``_log``, ``_scopes`` and ``episode_of`` stay with the memory, which every call shares).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sam_model.data.chatmessages import policy_of
from sam_model.data.examples import MemoryRecord, MemoryRecorder
from sam_model.data.formats import autogen, codex_exec, detect, gemini_cli, pydantic_ai
from sam_model.data.schema import MAX_STEP, Event, LogFormatError, State, parse_event
from sam_model.data.text import norm
from sam_model.data.toolstate import TranscriptState
from sam_model.io import SAMFileError, json_type
from sam_model.limits import check_metadata, check_text
from sam_model.locking import locked
from sam_model.memory import live, live_responses, resent
from sam_model.memory.scopedinput import (
    EMPTY,
    FIT_CHARS,
    NoTextError,
    _check_call_size,
    _check_depth,
    _is_messages,
    _media_only,
    blank_words,
    fit,
    fitted,
    read_add,
    unblanked,
)
from sam_model.memory.scopedresult import _said
from sam_model.memory.scopedsteps import place
from sam_model.storechecks import check_memory

MAX_CATCH_UP = 1_000  # steps a conversation saved behind its memories takes in (ScopedMemory._catch_up)


def _unshared(mark: Mapping[str, Any]) -> dict[str, Any]:
    """A tracker's mark to roll back to, its lists and dicts copied: the tracker goes on changing them in place, and
    the mark is kept (the open turn's, its read's)."""
    return {**mark, "stack": list(mark["stack"]), "cons": dict(mark["cons"]), "calls": dict(mark["calls"])}


def _checked(fmt: str | None) -> str | None:
    """The format an add's check reads its items in (read_add): Responses' where the scope reads them so (a bare
    message joining the open turn), else told from their shape (a session's lines are read for their check alone)."""
    return fmt if fmt == live_responses.FORMAT else None


def _owner(user_id: str | None, agent_id: str | None) -> tuple[str, str] | None:
    """Whose ADK recall an add's load_memory results are (read_add's ``owner``): its user and agent, as
    SAMMemoryService scopes a session's user and app. Events added without them, SAM's entries were words stored
    again (each recalled memory a duplicate under the new session); of no user or no agent, none is told SAM's."""
    return (user_id, agent_id) if user_id is not None and agent_id is not None else None


def _plain_step(m: Any) -> Any:
    """An event (dict or Event) whose step is a NumPy integer (a pandas DataFrame's column) with that step as an int:
    the store's check takes one (storechecks.check_memory), but a dict's failed in parse_event ("Object of type int64
    is not JSON serializable"), an Event's in the add's step check, and one stored made the scope's save fail."""
    if isinstance(m, Mapping) and isinstance(m.get("step"), np.integer):
        return {**m, "step": int(m["step"])}
    if isinstance(m, Event) and isinstance(m.step, np.integer):
        return dataclasses.replace(m, step=int(m.step))
    return m


def _with_policy(policy: str, messages: list[Mapping]) -> str:
    """The policy ``policy`` (normed) with each system message's text of ``messages`` that it does not hold already,
    as whole words: an instruction added alone, then again with the conversation (a Gemini system_instruction, a
    Responses agent's instructions sent with each request), or read again with its open turn, was joined once more
    each time, the policy growing with every add. What a policy says (the tracer's only use of it) is unchanged."""
    for i, m in enumerate(messages):
        said = norm(policy_of([m], f"add(...) message {i}")) if m.get("role") == "system" else ""
        if said and f" {said} " not in f" {policy} ":
            policy = f"{policy} {said}" if policy else said
    return policy


# what a Pydantic AI agent gives instead of its messages: its message objects, or their JSON (bytes, or its text)
PYDANTIC_AI = ("give json.loads(result.new_messages_json()) (or ModelMessagesTypeAdapter.dump_python(messages, "
               "mode='json')), the messages as dicts, which the pydantic-ai reader reads")


def pydantic_ai_dump(data: str | bytes | bytearray) -> bool:
    """Whether ``data`` is the JSON text of Pydantic AI messages (``result.new_messages_json()``, bytes, or its
    decoded text): a string was stored whole as one memory, its JSON the memory's words, and bytes were read as a
    list of numbers ("item 0 ... got a number")."""
    head = data[:200].lstrip()
    if not head.startswith(b"[" if isinstance(data, (bytes, bytearray)) else "["):
        return False
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return False
    return pydantic_ai.is_history(doc)


# what an AutoGen agent gives instead of its messages: what save_state() returns, or its JSON text
AUTOGEN = ("give the model context's messages, state[\"llm_context\"][\"messages\"] of state = await "
           "agent.save_state() (or those added since the last add), which the autogen reader reads")


def autogen_state(data: Any) -> bool:
    """Whether ``data`` is an AutoGen ``save_state()`` (an AssistantAgentState or TeamState) or its JSON text: the
    text was stored whole as one memory, and the state dict refused as 'item 0 ... got an object without kind'."""
    if isinstance(data, str):
        if not data[:200].lstrip().startswith("{"):
            return False
        try:
            data = json.loads(data)
        except (ValueError, RecursionError):
            return False
    return autogen.is_state(data)


def check_not_dump(data: Any, name: str) -> None:
    """Refuse, naming ``name``, a string that is the JSON text of Pydantic AI messages (:func:`pydantic_ai_dump`):
    ScopedMemory.add's rule, which sam-serve's check (ScopedMemory.check_add) applies too, so that HTTP's and MCP's
    refusal names their field before the add is logged (it named ``data``, add's argument, after)."""
    if isinstance(data, str) and pydantic_ai_dump(data):  # it was stored whole as one memory, its JSON the words
        raise ValueError(f"{name} is the JSON text of Pydantic AI messages, not messages: {PYDANTIC_AI}")
    if autogen_state(data):
        raise ValueError(f"{name} is an AutoGen save_state(){' as JSON text' if isinstance(data, str) else ''}, not "
                         f"messages: {AUTOGEN}")
    if isinstance(data, Mapping) and set(data) == {"messages"} and isinstance(data["messages"], list) \
            and autogen.sniff(data["messages"]):  # state["llm_context"]: refused as 'item 0 ... without kind'
        raise ValueError(f"{name} is an AutoGen model context (state[\"llm_context\"]), not messages: give its "
                         "[\"messages\"] (or those added since the last add)")


def _objects_hint(m: Any) -> str:
    """What to give instead of a framework's message object (a LangChain message, a Pydantic AI ModelRequest)."""
    module = type(m).__module__
    if module.startswith("langchain"):
        return (": give a LangGraph state's messages as messages_to_dict(messages) (langchain_core.messages), which "
                "the langchain reader reads")
    if module.startswith("pydantic_ai"):
        return f": {PYDANTIC_AI}"
    if module.startswith("llama_index"):  # a ChatMessage of memory.get_all(): said nothing of what to give
        return (": give a LlamaIndex memory's messages as [m.model_dump() for m in messages] (ChatMessage dicts), "
                "which the llamaindex reader reads")
    return ""


class ScopedWrites:
    """A ScopedMemory's adds (mixin of sam_model.memory.scoped.ScopedMemory; see the module doc)."""

    @locked
    def add(self, data: str | Mapping | Event | Sequence, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, metadata: Mapping[str, Any] | None = None, *,
            read: tuple[list[Any], list[dict[str, Any]]] | None = None) -> dict[str, list]:
        """Write chat messages (a string is one user message; dicts with ``role`` as OpenAI messages, or as the
        format of sam_model.data.formats they are written in: :func:`as_chat`) or agent-log events (Events, or dicts with ``kind`` and ``text``) into the scopes' episode, in order.
        Returns ``{"results": [{"id", "memory", "event": "ADD" | "UPDATE", "step"}, ...]}`` (``step``: the memory's
        step, the number after its id's last '#', which a search of the message being answered takes as its
        ``step``: an agent need not parse ids or count messages itself; an UPDATE: a memory's text
        changed; one whose state alone a later message revised is not listed, Mem0's NONE), and ``"skipped"``: what of the
        messages was not stored (a message or a part of images alone: :func:`unstored`) when something was not, and
        ``"notes"`` (``[{"reason"}]``) when an agent's session lines closed the scope's open turn at its cap
        (sam_model.memory.live.over: stored, but apart from the turn they continue) or a memory's text was stored cut
        to MAX_TEXT_CHARS (:func:`fit`: a session line's tool result, a call's arguments; a chat message's own
        content past it is refused, as its caller can split it, a sidecar forwarding an agent's lines cannot), or
        the add's first messages were the scope's last add of agent histories' messages (resent.FORMATS) sent again
        (sam_model.memory.resent: read once, not stored again; the rest read alone, named ``data[k:]``). A
        message that should hold text and holds none (no content, a blank one) is refused with its batch (ValueError
        naming it), and so is an empty list (as sam-serve's HTTP add refuses it). ``read``: what :meth:`check_add`
        read of ``data`` when the caller checked it already (sam-serve, before logging the add, in the same hold of
        the lock): written as read, not read again."""
        scopes = self._scopes(user_id, agent_id, run_id, need="write")
        episode = self.episode_of(user_id, agent_id, run_id)
        check_metadata(metadata)
        if isinstance(data, (bytes, bytearray)):  # a bytes is a Sequence: it was "item 0 ... got a number"
            raise TypeError(f"data is bytes ({len(data)} of them), not messages: " + (
                PYDANTIC_AI if pydantic_ai_dump(data) else "give the text (decoded) or the messages it holds"))
        check_not_dump(data, "data")
        if isinstance(data, str):
            check_text(data, "data")
        elif not isinstance(data, (Mapping, Event, Sequence)):
            raise TypeError(f"data must be a message text, a message or event dict, an Event or a list of them, got "
                            f"{type(data).__name__}" + _objects_hint(data))
        text = isinstance(data, str)
        items = [{"role": "user", "content": data}] if text else (
            [data] if isinstance(data, (Mapping, Event)) else list(data))
        if not items:
            raise NoTextError(EMPTY.format("data"))
        fmt, told = self._live_format(items, episode)
        if fmt is not None:  # an agent's session lines: read with the scope's open turn
            notes, whole = [], self._whole_list(items, fmt, told, episode)
            opens = not getattr(self._trackers.get(episode), "events", None)
            again, rest, name, last, _ = self._resent(items, episode, "data") if whole else (0, items, "data", None, 0)
            if again:  # Responses items or Gemini contents sent again whole: the rest alone (resent.LIVE)
                # the format's last add, or the scope's (an OpenAI chat add a list opened with: resent.repeated)
                latest = last in [*resent.mine(self._sent[episode], fmt)[-1:], self._sent[episode][-1]]
                notes.append({"reason": resent.note(items, again, None if last is None else latest)})
            # a session's lines are not held to the length limit (the agent wrote them), Responses items are
            skipped = (read if read is not None else read_add(
                rest, name, session=fmt in live.LIVE, fmt=_checked(fmt),
                worded=live.worded(self._open.get(episode))) if rest else ([], []))[1]
            out = {"results": self._add_messages([], episode, scopes, metadata, notes, lines=(fmt, rest))
                   if rest else []}
            if whole and (sent := resent.key(items, resent.whole(last) if again else opens or resent.new_mark(
                    items, self._sent.get(episode)))) is not None:
                self._keep(episode, items, rest, sent, (last or True) if again else None)
            else:
                self._apart(episode)
                if fmt in resent.LIVE and rest:  # still given: a whole list sent again opens with it (resent.given)
                    self._chain(episode, rest, fmt)
            return {**out, **({"skipped": skipped} if skipped else {}), **({"notes": notes} if notes else {})}
        if _is_messages(items):
            notes = []
            opens = not getattr(self._trackers.get(episode), "events", None)  # the add opens the conversation
            again, rest, name, last, at = self._resent(items, episode, "data")  # a history sent again (resent.FORMATS)
            if again:  # a caller's ``read`` (check_add, in this hold of the lock) is of the rest already
                data = rest
                notes.append({"reason": resent.note(items, again, None if last is None else
                                                    last == resent.mine(self._sent[episode], items)[-1], at,
                                                    last is not None and again < last[1])})
            # checked before the conversation's state takes any of them
            messages, skipped = read if read is not None else read_add(data, name, owner=_owner(
                user_id, agent_id)) if data else ([], [])
            out: dict[str, list] = {"results": self._add_messages(
                messages, episode, scopes, metadata, notes,
                skip={n["message"] for n in skipped if "message" in n and "part" not in n}) if data else []}
            whole = resent.whole(last) if again else opens or resent.new_mark(items, self._sent.get(episode))
            # a text is a fact remembered (MCP remember's text), not a history sent: apart, as before OpenAI's rule
            if not text and (sent := resent.key(items, whole)) is not None:
                self._keep(episode, items, rest, sent, (last or True) if again else None)
            else:
                self._apart(episode)
            return {**out, **({"skipped": skipped} if skipped else {}), **({"notes": notes} if notes else {})}
        if _is_messages(items[:1]):  # a chat message first, then something else: name that, not item 0
            j = next(j for j, m in enumerate(items) if not _is_messages([m]))
            raise TypeError(f"data[{j}]: give chat messages (dicts with 'role'), Events or event dicts "
                            f"(with 'kind' and 'text'), not a mix: the first is a chat message, this one "
                            + (f"{json_type(items[j])} without 'role'" if isinstance(items[j], Mapping)
                               else json_type(items[j])))
        events, own = [], []
        for i, m in enumerate(items):
            # named by its place in the add, as the served add's field renames it (data[1]: messages[1]); an event
            # given alone is the argument itself (it was 'add(...) item 1', then 'data[0]' of a list never given)
            at = "data" if isinstance(data, (Mapping, Event)) else f"data[{i}]"
            own.append(not isinstance(m, Mapping) or "step" in m)  # a dict without a step has none of its own
            m = _plain_step(m)
            if isinstance(m, Mapping) and "kind" in m:
                try:
                    m = parse_event({"episode_id": episode, "step": 0, **m}, "data", i + 1)
                except LogFormatError as err:
                    raise ValueError(f"{at}: {err.reason}") from None
            if not isinstance(m, Event):
                raise TypeError(f"{at}: give chat messages (dicts with 'role'), Events or event dicts "
                                f"(with 'kind' and 'text'), not a mix; got {json_type(m)}"
                                + (" without 'kind'" if isinstance(m, Mapping) else "") + _objects_hint(m))
            if isinstance(m.step, bool) or not isinstance(m.step, int) or not 0 <= m.step <= MAX_STEP:
                # an event dict's step is held to this by parse_event; an Event's was not: "3" failed in sorting,
                # and -1 or True was stored, its numbering saved as one ScopedMemory.load refused
                raise ValueError(f"{at}: an Event's step must be an integer from 0 to {MAX_STEP}, got "
                                 f"{m.step!r}; give the event's step in the episode")
            events.append(m)
        out = {"results": self._add_events(events, episode, scopes, metadata, all(own))}
        self._apart(episode)
        return out

    @locked
    def check_add(self, data: Any, name: str, max_calls: int | None = None, user_id: str | None = None,
                  agent_id: str | None = None, run_id: str | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
        """:func:`read_add` of an add of ``data`` to these scopes, naming the caller's field (``name``), read as
        :meth:`add` reads it: items the scopes' open turn takes as an agent's session lines (a Codex rollout's bare
        items after the meta line of the layout before the wrapper, which tell no format alone) are not held to the
        length limit, their add stores a longer text cut. Checked without the turn (sam-serve's check before it
        logged the add), such a line past the limit was refused over HTTP and MCP, and taken in-process. Converse or
        Pydantic AI messages opening with the scope's last add (sam_model.memory.resent) are read from after it,
        as the add reads them: what was skipped named ``messages[4:]``, not the add's own ``data[4:]``, and only
        their calls counted against ``max_calls`` (a whole history posted after each run was refused for the calls
        of the runs it did not store again). Hold ``memory.lock`` from this check through the add
        (sam_model.serve.tenants.Tenant.write), so that the turn and the last add it reads are the add's."""
        check_not_dump(data, name)
        items = [data] if isinstance(data, Mapping) else [] if isinstance(data, str) else (
            list(data) if isinstance(data, Sequence) else [])
        episode = self.episode_of(user_id, agent_id, run_id)
        fmt, told = self._live_format(items, episode)
        if fmt is None and _is_messages(items) or fmt is not None and self._whole_list(items, fmt, told, episode):
            again, rest, rest_name, *_ = self._resent(items, episode, name)
            if again:  # read as the add reads it: the rest, its calls counted, named messages[4:]
                live_turn = {} if fmt is None else {"fmt": _checked(fmt), "worded": live.worded(self._open.get(episode))}
                return read_add(rest, rest_name, max_calls, **live_turn, owner=_owner(user_id, agent_id)) \
                    if rest else ([], [])
        return read_add(data, name, max_calls, session=fmt in live.LIVE, fmt=_checked(fmt),
                        worded=live.worded(self._open.get(episode)), owner=_owner(user_id, agent_id))

    def _resent(self, items: list[Any], episode: str,
                name: str) -> tuple[int, list[Any], str, list[Any] | None, int]:
        """(how many of ``items``' messages are one of the scope's last adds sent again, sam_model.memory.resent, or
        all the messages the scope was given, where more, resent.opens_with_given: 0 for none; the rest, which the
        add reads alone; its name, ``name[4:]``, which its errors and skips give, not the place in it, message 1
        for the caller's message 5; that add's key, None for none or all given; where those messages start: 0, the
        add's start, or after a compaction's summary, resent.compacted, the rest then the summary and what follows
        them, named ``name[:1]+name[9:]``): one rule for :meth:`add` and :meth:`check_add`."""
        kept = self._sent.get(episode)
        last = resent.repeated(items, kept)
        if given := resent.opens_with_given(items, self._given.get(episode), last[1] if last else 0):
            return given, items[given:], f"{name}[{given}:]", None, 0  # all the scope was given: resent.given
        if last is None and (cut := resent.compacted(items, kept)) is not None:  # a compaction's kept turns
            at, again = cut
            cut_name = f"{name}[:{at}]+{name}[{at + again}:]" if at else f"{name}[{again}:]"  # at 0: trimmed
            # its format's last add (resent.mine), not the scope's: another format's add after it (an MCP client's
            # remember) gave its count and mark to the note and the new key
            return again, items[:at] + items[at + again:], cut_name, resent.mine(kept, items)[-1], at
        again = last[1] if last is not None else 0
        return again, items[again:], f"{name}[{again}:]" if again else name, last, 0

    def _keep(self, episode: str, items: list[Any], rest: list[Any], sent: list[Any],
              again: list[Any] | bool | None) -> None:
        """Keep an add of agent histories' messages (its key ``sent``; ``again``: its start was a kept add sent
        again, that add's key where one, True for all the scope was given; ``rest`` what followed) among the scope's
        kept adds and all it was given (sam_model.memory.resent)."""
        self._sent[episode] = resent.kept(self._sent.get(episode), sent, bool(again))
        self._chain(episode, rest if again else items, resent.format_of(sent), [sent, *(
            [again] if isinstance(again, list) else [])])

    def _chain(self, episode: str, items: list[Any], fmt: str | None, keep: list[list[Any]] = ()) -> None:
        """Chain ``items`` (of format ``fmt``) into all the scope was given (resent.given); a message added alone
        before them no longer stands for the whole conversation (resent.went_on), but the kept adds in ``keep``
        (the add that gave them, and the kept add it went on from)."""
        self._given[episode] = resent.given(self._given.get(episode), items, fmt)
        if self._given[episode] is None:
            del self._given[episode]
        if items and self._sent.get(episode):
            self._sent[episode] = resent.went_on(self._sent[episode], fmt, keep)

    def _whole_list(self, items: list[Any], fmt: str, told: str | None, episode: str) -> bool:
        """Whether an add read with the scope's open turn (of format ``fmt``) may be a whole list sent again: Responses
        items or Gemini contents whose format they tell alone (resent.LIVE, ``told``: what detect tells of them; a
        bare user message alone tells none). One holding no id, the first of its format in the scope, is one too
        (resent.alone_kept)."""
        return fmt in resent.LIVE and told == fmt and resent.alone_kept(items, self._sent.get(episode))

    def _apart(self, episode: str) -> None:
        """After an add of other items than the kept adds' (sam_model.memory.resent.apart): they stay, told by
        what they hold written once, the last alone still the scope's whole conversation."""
        if kept := self._sent.get(episode):
            self._sent[episode] = resent.apart(kept)

    def _live_format(self, items: list[Any], episode: str) -> tuple[str | None, str | None]:
        """(the live format an add's items are written in, told with the episode's open turn (live.format_of), or
        None: not an agent's session lines; the format detect tells of them alone, None where it tells none). One
        detect for both: the whole-list check (:meth:`_whole_list`) told it again, ~7 ms of a 2,000-item add."""
        if not items or not all(isinstance(m, Mapping) for m in items):
            return None, None
        told = detect(items)
        return live.format_of(items, self._open.get(episode), told), told

    def _add_events(self, events: list[Event], episode: str, scopes: dict, metadata, own: bool = True) -> list[dict]:
        """Events with steps of their own (``own``) in a scope with no conversation are placed as evaluate.py's life
        of them places them (sam_model.memory.scopedsteps: an episode whose steps restart is numbered on after the
        scope's last step, its labels shifted with it, a task of its own); else they are numbered on, and the labels
        of their decision points are not known (ScopedMemory._unknown: a search's Hit.used says None).

        In a scope written by chat messages too, the events join its conversation (TranscriptState.note), numbered
        on: later tool calls are traced to them, and the next message's memory takes the step after them. (They
        took the steps the conversation's next messages would take, whose adds were then refused as duplicates,
        and a replay of the log dropped an acknowledged message.)"""
        tracker = self._trackers.get(episode)
        if tracker is not None:
            tracker = self._catch_up(episode, tracker)
        nxt = (self.store.next_step(episode) or 0) if tracker is None else self._base[episode] + len(tracker.events)
        if tracker is None and own:
            out, labels, numbering = place(events, episode, nxt, self._numbering.get(episode))
        else:  # their steps (none, or another numbering than the conversation's): numbered on, the labels unknown
            out = [dataclasses.replace(e, episode_id=episode, step=nxt + j) for j, e in enumerate(events)]
            labels, numbering = {}, None
        for j, e in enumerate(out):  # the store's check, naming the add's item: it is given them in step order
            check_memory(e, f"data[{j}]")
        before = None if tracker is None else tracker.mark()
        try:
            for e in out if tracker is not None else ():
                tracker.note(e.kind, e.text, e.state.to_json())
            # stored in step order (the recorder reads a task's start event by event), listed in the order given
            self.store.add(sorted(out, key=lambda e: e.step), **scopes, metadata=metadata)
        except BaseException:
            if before is not None:
                tracker.rollback(before)
            raise
        if labels:  # what the decisions' calls took values from, and the slots they needed (sam_model.memory.scopeduses)
            self._labels.setdefault(episode, {}).update(labels)
            self._needs.setdefault(episode, {}).update(
                (e.step, tuple(e.state.uncertainty_flags)) for e in out if e.step in labels)
        if unknown := {e.step for e in out if e.is_decision_point and e.step not in labels}:
            self._unknown.setdefault(episode, set()).update(unknown)
        if numbering is None:
            self._numbering.pop(episode, None)
        else:
            self._numbering[episode] = numbering
        self._close(episode)  # the events joined the conversation after the open turn's lines
        return self._added(out)

    def _added(self, events: list[Event]) -> list[dict]:
        """The ADD results (and history) of stored events: one per memory, by its id (a chunked memory's chunks
        are its parts, not results of their own)."""
        out = []
        for e in events:
            i = MemoryRecord.make_id(e.episode_id, e.step)
            self._log(i, "ADD", None, e.text)
            out.append({"id": i, "memory": e.text, "event": "ADD", "step": e.step})
        return out

    def _add_messages(self, messages: list[Mapping], episode: str, scopes: dict, metadata, notes: list,
                      skip: set[int] = frozenset(), lines: tuple[str, list[Any]] | None = None) -> list[dict]:
        """The messages through the conversation's running state first, all of them, then into the store: a batch
        with a bad message (a content that is not text, a tool answer to no call) is refused whole, with the
        conversation and the store as they were (a ValueError naming the message), never half stored. ``skip``:
        the messages that hold no text (:func:`unstored`), not fed (blank text parts would reach the store,
        which refuses a blank memory).

        ``lines``: (format, an agent's session lines) instead of messages: read with the scope's open
        turn, closed where it is first when it would grow past its cap (a note in ``notes`` says so: live.over),
        (sam_model.memory.live) from where it began, the conversation fed again from there (from the first message
        that differs from the turn's last read, where that read kept the tracker's mark before it: live.Read); each
        memory whose event changed is updated (a response's words now joined by its calls, a state a later line of the response
        revised), the events past the stored ones added. The fed conversation is a copy swapped in once stored.

        A memory updated whose words and kind stay (its state or labels revised, a response's later call moving it
        to a step whose event reads alike) is Mem0's NONE: no UPDATE in the results, no history entry. Each entry
        holds the old and new text, and a response whose results sit between its calls moves every later memory of
        the turn at each call: an open turn's memory holds one UPDATE, revised at each later change (:meth:`_log`)."""
        tracker = self._trackers.get(episode)
        if tracker is not None:
            tracker = self._catch_up(episode, tracker)
        # any other add closes it (its lines are then read as they are), once stored: a refused add leaves it
        turn = self._open.get(episode)
        opened = None
        if lines is not None:
            turn = turn if turn is not None and turn.format == lines[0] and tracker is not None else None
            messages, skip, opened, turn = self._read_live(episode, lines[0], lines[1], turn, tracker, notes)
        else:
            turn = None
        try:
            work = TranscriptState(episode, policy_of(messages, "add(...)")) if tracker is None else live.fork(tracker)
            if turn is not None:
                lo, old = max(turn.start - 1, 0), [dict(e) for e in work.events[max(turn.start - 1, 0):]]
                start, policy = turn.start, turn.mark["policy_norm"]
            else:
                lo, old = max(len(work.events) - 1, 0), [dict(e) for e in work.events[-1:]]
                start, policy = len(work.events), work.policy_norm
            if tracker is not None and any(m.get("role") == "system" for m in messages):
                policy = _with_policy(policy, messages)
            # the messages the turn's last read fed alike, up to a mark it kept, are not fed again (live.Read)
            read = turn.read if turn is not None and opened is not None else None
            fed = read.reused(messages, skip, policy) if read is not None else 0
            if fed and not (read.marks[fed]["n"] - 1 <= lo or read.marks[fed]["n"] - 2 in read.rows) or (
                    fed and 0 < opened[0] < fed and opened[0] not in read.marks):
                fed = 0  # not kept: fed whole
            marks = {i: m for i, m in read.marks.items() if i <= fed} if fed else {}
            if fed:
                work.rollback(_unshared(marks[fed]))
            elif turn is not None:
                work.rollback(_unshared(turn.mark))
            work.policy_norm = policy
            at = (None, start)
            if opened is not None and opened[0] < fed:  # where the turn begins, passed over
                at = (read.marks[opened[0]], read.marks[opened[0]]["n"]) if opened[0] else (
                    {**turn.mark, "policy_norm": policy}, start)
            for i in range(fed, len(messages)):
                if i >= len(messages) - live.KEEP_MARKS or (opened is not None and i == opened[0]):
                    marks[i] = work.mark()
                if opened is not None and i == opened[0]:
                    at = (marks[i], len(work.events))
                if i in skip:
                    continue
                _check_call_size(message := messages[i], f"add(...) message {i}")
                work.feed(unblanked(message), f"add(...) message {i}")  # blank words beside calls: no memory
            marks[len(messages)] = work.mark()
            if opened is not None and opened[0] >= len(messages):
                at = (marks[len(messages)], len(work.events))
        except (SAMFileError, ValueError) as err:
            raise ValueError(str(err)) from None
        n_old, n_new = lo + len(old), len(work.events)
        if n_new < n_old:
            raise ValueError(f"data: these lines leave the conversation {n_old - n_new} turn(s) shorter than an earlier "
                             "add stored it (a rewind of a message an earlier add stored?): an add cannot take memories "
                             "back; delete the run's memories (delete_all) and add its session's lines again in one "
                             "add, or convert its session file (sam-data transcripts)")
        base = self._base[episode] if episode in self._trackers else self.store.next_step(episode) or 0
        marked = self.store.recorder.mark([episode])
        # the records of the open turn again, each compared with the state before it: from the first event the
        # messages fed may have changed (the one before their first, whose state a call revises), the recorder's row
        # before it the last read's
        first = max(marks[fed]["n"] - 1, lo) if fed else lo
        if first > lo:
            self.store.recorder.rollback({episode: read.rows[first - 1]})
        elif turn is not None:
            self.store.recorder.rollback({episode: live.unrow(turn.recorder)})
        row = self.store.recorder.mark([episode])[episode]
        rows = {j: r for j, r in read.rows.items() if j < first} if first > lo else {}
        kept: list = []
        updated: list[tuple] = []
        try:
            for j in range(first, n_old):
                e = self._event(work.events[j], base)
                rec = (self.store.recorder.revise(e) if j == start - 1 and row is not None and first == lo
                       else self.store.recorder.record(e))
                rows[j] = self.store.recorder.mark([episode])[episode]
                changed = work.events[j] != old[j - lo] or (j > lo and work.events[j - 1]["state"] !=
                                                            old[j - 1 - lo]["state"])
                if changed and rec.id in self.store:  # unless that memory was deleted (or is chunked)
                    hit, version = self.store.get(rec.id), self.store.version(rec.id)
                    self.store.update(rec)
                    kept.append(version)
                    if (_said(hit), hit.kind) != (e.text, e.kind):  # else Mem0's NONE: its state alone moved
                        updated.append((rec.id, _said(hit), e.text, e.step))
            new = [self._event(d, base) for d in work.events[n_old:]]
            if new:
                rows.update(self._rows(episode, new, n_old) if opened is not None else {})
                self.store.add(new, **scopes, metadata=metadata)
        except BaseException:  # the batch is stored whole or not at all, and the conversation is as it was
            try:
                self.store.recorder.rollback(marked)
            finally:
                for version in reversed(kept):  # as it was stored, needing no encoder (the encoder may be what failed)
                    self.store.restore(version)
            raise
        self._trackers[episode] = work
        self._dropped.pop(episode, None)  # a deleted scope added to again: its keys are its conversation's
        self._base.setdefault(episode, base)
        logged = set(turn.logged) if turn is not None else set()
        out = []
        for i, said, text, step in updated:
            if entry := self._log(i, "UPDATE", said, text, again=logged):
                logged.add(entry)
            out.append({"id": i, "memory": text, "event": "UPDATE", "step": step})
        if opened is not None:
            if opened[4] == live_responses.FORMAT:  # the ids of a dropped conversation's deleted items: its own now
                self._gone.pop(episode, None)
            self._open[episode] = self._opened(episode, work, opened, at, lo, start, row, base, logged,
                                               live.Read(messages, skip, work.policy_norm, marks, rows))
        else:
            self._close(episode)
        out += self._added(new)
        listed = {r["id"] for r in out}
        for j in range(lo, n_new):
            d, i = work.events[j], MemoryRecord.make_id(episode, base + j)
            if (n := len(d["text"])) > FIT_CHARS and i in listed:
                notes.append({"reason": f"memory {i!r} (a {d['kind']}): its text has {n:,} characters, more than a "
                              f"memory holds with its heading ({FIT_CHARS:,}): stored as its first {fitted(n):,} and "
                              f"' ...[+{n - fitted(n)} chars]' (sam-data transcripts keeps it whole)"})
        return out

    def _read_live(self, episode: str, fmt: str, items: list[Any], turn: live.OpenTurn | None,
                   tracker: TranscriptState | None, notes: list) -> tuple[list[Mapping], set[int], tuple, Any]:
        """(the messages of the open turn and the add's lines, those holding no text, (how many of them the closed
        lines give, the lines, where the open turn's lines begin, the facts), the open turn they were read with)
        for :meth:`_add_messages`: ``turn``, or where it would grow past its cap (live.over, a note in ``notes``)
        the turn closed where it is."""
        if fmt == "codex-exec" and turn is None and items[0].get("type") not in codex_exec.STARTS:
            raise ValueError("data[0]: codex exec --json events are added from a run's thread.started: an item's call is "
                             "read at its item.started and with its result at item.completed, and this scope has no "
                             "open run whose lines these continue (its memories were changed since, or none were "
                             "added); add the run's lines from its thread.started, or the lines of the rollout it "
                             "writes as they come (~/.codex/sessions)")
        _check_depth(items, "data")  # a line no check read (a Codex rollout's is no message)
        old, facts = (turn.lines, turn.facts) if turn is not None else (
            [], {"gone": list(self._gone[episode])} if fmt == live_responses.FORMAT and episode in self._gone else {})
        added = live.digest(items) if fmt in ("codex", "codex-exec") else None
        sent = len(items)
        if added is not None:  # Codex lines sent again: read once (Claude Code's: live.opens)
            items = live.retried(fmt, old, facts, items, added)
        elif fmt == live_responses.FORMAT:  # Responses items a closed turn read, equal: read once
            items = live_responses.retried(old, facts, items)
        as_sent, items = items, live.replays(fmt, facts, old, items)  # a Claude Code turn an earlier add stored, again
        facts, cut = live.read_cut(fmt, old, items, facts)
        if turn is not None and tracker is not None and (why := live.over(turn, items, cut)):
            turn = self._ended(episode, turn, tracker)  # kept only once the add is stored
            notes.append({"reason": why})
            facts, cut = live.read_cut(fmt, [], items, turn.facts)
        if why := live.rewritten(fmt, items, facts):
            raise ValueError(why)
        old = turn.lines if turn is not None else []
        items = given = copy.deepcopy(items)  # the scope's own copy: a caller may reuse its line dicts
        if fmt == live_responses.FORMAT:  # an item of the open turn given again: its last version in its place
            old, items = live_responses.revised(old, items)
            facts, cut = live.read_cut(fmt, old, items, facts)
        lines = [*old, *items]
        if why := live.after_rewind(fmt, facts) or (fmt == "gemini-cli" and gemini_cli.rewind_elsewhere(
                lines, "data") and (gemini_cli.rewind_elsewhere(items, "data") or gemini_cli.rewind_elsewhere(
                lines, "data"))) or live.off_refused(fmt, facts, as_sent) or live.left_behind(fmt, facts, old, as_sent):
            if (held := self._open.get(episode)) is not None and held.format == fmt:  # its next lines refused alike
                live.refuse(fmt, held.facts, as_sent, held.lines)
            raise ValueError(why)  # a rewind of what an earlier add stored, or the branch it began (data[i] as sent)
        messages = live.chat(fmt, lines, facts).messages
        before = live.chat(fmt, lines[:cut], facts) if cut else None
        closed = before.messages if before is not None else []
        if messages[:len(closed)] != closed:  # the reader joined lines across the cut: the whole is the open turn
            cut, closed = 0, []
        elif before is not None and before.cwd:  # the directory the next open turn's lines are read in
            facts["cwd"] = before.cwd
        if added is not None:
            facts["added"], facts["added_lines"] = added, sent
            live.remember(fmt, facts, items)  # the lines read (a late or partial resend of them: live.retried)
        elif fmt == live_responses.FORMAT:
            live_responses.remember(facts, given)  # the versions too: one in its place is no new line
        skip = {i for i, m in enumerate(messages) if _media_only(m.get("content")) or blank_words(m)}
        return messages, skip, (len(closed), lines, cut, facts, fmt), turn

    def _opened(self, episode: str, work: TranscriptState, opened: tuple, at: tuple, lo: int, start: int,
                row: list | None, base: int, logged: set[str], read: live.Read) -> live.OpenTurn:
        """The scope's open turn after an add: its lines, the tracker's mark and the recorder's row where they
        begin (the add's row after the event before them, or replayed on a scratch recorder from the row the add's
        records began at), of the history entries adds of the turn ``logged``, those of memories the next add reads
        again (from the event before the turn's), and the add's ``read`` of them (live.Read), from where they begin."""
        closed, lines, cut, facts, fmt = opened
        live.close(fmt, facts, lines[:cut])
        mark, first = at
        if first - 1 in read.rows:
            begun = read.rows[first - 1]
        else:
            scratch = MemoryRecorder()
            scratch.rollback({episode: row})
            for j in range(lo, first):
                e = self._event(work.events[j], base)
                scratch.revise(e) if j == start - 1 and row is not None else scratch.record(e)
            begun = scratch.mark([episode])[episode]
        again = {MemoryRecord.make_id(episode, base + j) for j in range(max(first - 1, 0), len(work.events))}
        kept = None if mark is None else live.Read(
            read.messages[closed:], {i - closed for i in read.skip if i >= closed}, read.policy,
            {i - closed: m for i, m in read.marks.items() if i >= closed and i >= len(read.messages) - live.KEEP_MARKS},
            {j: r for j, r in read.rows.items() if j >= first - 1})
        return live.OpenTurn(fmt, live.latest(fmt, lines[cut:]), first, mark, live.row(begun),
                             facts, sorted(e for e in logged if e.rpartition("@")[0] in again), kept
                             ).carry(self._open.get(episode))

    def _rows(self, episode: str, new: list[Event], at: int) -> dict[int, list | None]:
        """The recorder's row after each of the ``new`` events (the first at event ``at``), for the open turn's
        next add (live.Read): replayed on a scratch recorder from the store's row before them."""
        scratch = MemoryRecorder()
        scratch.rollback(self.store.recorder.mark([episode]))
        out = {}
        for j, e in enumerate(new, at):
            scratch.record(e)
            out[j] = scratch.mark([episode])[episode]
        return out

    def _close(self, episode: str) -> None:
        """Close the scope's open turn where its conversation now ends (another add, an update or a delete of one of
        its memories), keeping what the session's earlier lines said (live.OpenTurn's ``facts``: Codex's version,
        Gemini CLI's closed message ids, now with the turn's own, and the conversation's directory, which the turn's
        lines may have moved: the one before it, kept, read a Codex turn_context's new cwd back to the old for the
        next lines, and their paths under it untraced): its next lines are read as they come, as after a
        turn that closed (dropped whole, a Codex rollout's later parallel calls were read in file order, a Gemini
        CLI message written again was stored twice and its user or ``$set`` record alone refused). A codex exec
        run's lines continuing it are refused in one line (:meth:`_read_live`), so its turn goes whole."""
        turn, tracker = self._open.pop(episode, None), self._trackers.get(episode)
        if turn is None or tracker is None or turn.format == "codex-exec":
            return
        facts = {**turn.facts, **({"cwd": tracker.cwd} if tracker.cwd else {})}  # the directory the turn left
        live.close(turn.format, facts, turn.lines)
        self._open[episode] = live.OpenTurn(turn.format, [], len(tracker.events), tracker.mark(),
                                            live.row(self.store.recorder.mark([episode])[episode]), facts)

    def _ended(self, episode: str, turn: live.OpenTurn, tracker: TranscriptState) -> live.OpenTurn:
        """An open turn closed where the conversation ends, at its cap (live.over): none of its lines, the facts the
        session's lines said kept and the directory they told last (the conversation's), and, unlike
        :meth:`_close`, a codex exec run's or a Gemini CLI message's next lines read, not refused: a sidecar goes on
        past the cap, and a line refused would be lost to it. A Claude Code turn's links are kept (live.keep_links):
        a later rewind to before its stored turns is told."""
        facts = {**turn.facts, **({"cwd": tracker.cwd} if tracker.cwd else {})}
        if "links" in facts:  # the open turn's own list: it stays the scope's if this add is refused
            facts["links"] = list(facts["links"])
        live.keep_links(turn.format, facts, turn.lines)
        return live.OpenTurn(turn.format, [], len(tracker.events), tracker.mark(),
                             live.row(self.store.recorder.mark([episode])[episode]), facts)

    def _catch_up(self, episode: str, tracker: TranscriptState) -> TranscriptState:
        """A conversation saved behind its memories (until 2026-12-05 an agent-log event added between chat
        messages took the steps the conversation's next messages would take, and was not in it) takes in the
        memories it missed, so that its next message gets the next free step, not a stored one's. Past MAX_CATCH_UP
        missing steps (an event kept a far step of its own) the conversation starts afresh after them instead (its
        earlier words are no longer traced); a missing step's place would cost a tracker event each."""
        start, end = self._base[episode] + len(tracker.events), self.store.next_step(episode) or 0
        if end <= start:
            return tracker
        self._open.pop(episode, None)
        if end - start > MAX_CATCH_UP:  # an event saved with a far step of its own: the conversation starts afresh
            fresh = TranscriptState(episode, result_limit=tracker.result_limit)
            fresh.policy_norm, self._trackers[episode], self._base[episode] = tracker.policy_norm, fresh, end
            fresh.cwd = tracker.cwd  # the working directory its paths are traced under (toolstate), as the policy
            return fresh
        stored = {h.step: self.store.memory(h.memory_id) for h in self.store.get_all(episode_id=episode)
                  if h.step is not None and h.step >= start}  # a chunked memory whole
        for step in range(start, end):
            h = stored.get(step)  # none: deleted since, a blank place (as a deleted memory's)
            tracker.note(h.kind if h else "system", _said(h) if h else "",
                         State(phase=h.phase).to_json() if h else tracker.snapshot())
        return tracker

    @staticmethod
    def _event(d: Mapping[str, Any], base: int) -> Event:
        """A tracker's event dict as a memory event (its labels are training data, not memory)."""
        return parse_event({**{k: v for k, v in d.items() if k != "useful_memory_steps"}, "step": d["step"] + base,
                            "text": fit(d["text"])}, "add(...)")


__all__ = ["MAX_CATCH_UP", "ScopedWrites"]
