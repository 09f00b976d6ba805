"""Claude Code session transcripts: ``~/.claude/projects/<project>/<session id>.jsonl``, one entry a line.

Claude Code appends every entry of a session to its file as it happens (its subagents' to
``<session id>/subagents/agent-<id>.jsonl``, in older versions ``agent-<id>.jsonl`` beside the session or its own
file). An entry is ``{"type", "uuid", "parentUuid", "sessionId", "isSidechain", "timestamp", "cwd", ...}``; a
``user`` or ``assistant`` entry holds an Anthropic API message, ``{"role", "content": str | [blocks]}`` (an
assistant's with its API ``id`` and ``model``). Checked against public readers and samples of these files:
claude-code-log (daaain/claude-code-log: ``claude_code_log/models.py``'s entry models, ``dev-docs/dag.md`` on the
``parentUuid`` graph, compaction, rewinds and subagent files, ``test/test_data/sidechain_integrated.jsonl``, lines of
Claude Code 2.0.46), ccstats' token accounting notes (majiayu000/ccstats: several lines per ``message.id``), the
"Messages as Commits" write-up of the file layout (piebald.ai), and parsers' tests of ``<synthetic>`` entries and
``isCompactSummary``. Read as the model saw the session, through the anthropic reader's blocks:

- **One API message, several lines.** Claude Code writes each content block of a streamed response as an entry of
  its own (thinking, text, each ``tool_use``), all with the message's ``message.id``: the entries of one id are one
  assistant turn, its words joined and its calls in order (parallel calls), though a call's result may be written
  between them (a tool run while the response still streamed). ``thinking``, images and server tools are counted.
- **Results come in ``user`` entries**: a ``tool_result`` block answers its ``tool_use_id``, its ``content`` the
  words the model was given (``toolUseResult``, Claude Code's own structured copy, is not read);
  ``is_error: true`` flags the call as failed, as the anthropic reader hands the flag to the rule (README, "Failed
  tool calls"). A ``user`` entry's text is the user's turn: what was typed, and what Claude Code sent the model as
  the user's (``isMeta`` entries such as a skill's instructions or the local-command caveat, a slash command's
  ``<command-name>`` and ``<local-command-stdout>``, ``[Request interrupted by user]``). So is what the user typed
  while Claude Code worked, which no ``user`` entry holds: an ``attachment`` of type ``queued_command``, its
  ``prompt`` sent to the model mid-turn as the user's message (claude-code-log, session monitors' notes and parsers
  of these files read it so).
- **Compaction**: the ``system`` entry of subtype ``compact_boundary`` is counted, and so is the
  ``isCompactSummary`` user entry after it, the summary the model continued from: the whole session is read, the
  turns before the summary too (a session file is only appended to), so a later call traces to the turn that said
  its value; read, the summary, a paraphrase of those turns, would be a second memory of the same values and under
  ``--label latest`` or ``all`` be credited with values it only repeats (as the OpenHands and Codex readers count a
  condensation's or compaction's summary). A summary that opens its conversation (the turns it restates are in
  another file) is the only statement of them here: a user turn.
- **Subagents** (``Task``/``Agent`` calls): their entries (``isSidechain: true``) are a conversation of their own,
  episode ``<session>-agent-<agentId>`` (by their chain of ``parentUuid`` where an older version wrote no
  ``agentId``: ``<session>-sidechain-N``), split group the session's, whether they sit in the session's file or in
  their own; the parent's call and its result stay in the parent's.
- **Counted, not read**: ``summary`` entries (a title, possibly of another session), ``system`` entries (compact
  boundaries, hook summaries, local commands, API errors), ``file-history-snapshot``, ``queue-operation``,
  ``progress``, other ``attachment`` entries and other bookkeeping; assistant entries of model ``<synthetic>`` (Claude Code's own
  words: API errors, rate limits, "No response requested."); and an entry repeated with the same time, parent and
  message (a compaction's replay of earlier entries under new uuids).
- **The episode** is the session: its ``sessionId`` (the file's name where it is one of the ids its entries hold, as
  a branched or forked session's file also holds the entries it copied, else the last id written). Its split group
  is the first session of its line (:class:`Lineage`): a resumed or forked session's file, which Claude Code writes
  apart, copies the earlier session's entries or continues from its last one, so they are one task.
- **Branches**: the file is a tree (each entry's ``parentUuid`` the entry before it) and keeps every branch: a
  rewind (Esc Esc, ``/rewind``) or an edited prompt writes the new prompt under an earlier entry, a retried or
  regenerated response hangs off the entry the first try did, and the turns they replace stay in the file, left
  with ``isSidechain: false`` (anthropics/claude-code#24471's analysis of such a file; claude-code-log's
  ``dev-docs/dag.md``: a rewind is new prompts at different times under one parent). The main chain (every entry
  not of a subagent) is read as Claude Code resumes it: the chain from the last turn back through ``parentUuid``,
  with the turns one chain misses put back: the other lines of a response it passes (by ``message.id``: each
  parallel call is a line, each result a child of its call's line) and the results of their calls (Claude Code's
  ``buildConversationChain`` and its ``recoverOrphanedParallelToolResults`` pass, as anthropics/claude-code#31330
  and Ruya-AI/cozempic#57 describe them). Claude Code takes the leaf of the newest timestamp; the reader takes the
  last written, the same entry in a file only appended to, and one that needs no clock (a resume's replay copies
  earlier times). The chain crosses a compaction by the boundary's ``logicalParentUuid`` (its ``parentUuid`` is
  null: dag.md), and an entry whose parent the file lacks or that has none (a resumed session continuing another
  file, a parent Claude Code never wrote, anthropics/claude-code#58554) through the entry written before it, so no
  turn is lost for a missing link. The turns of the branches left are counted, named in the import report by the
  first one's ``FILE:LINE`` (:func:`abandoned`); a file that never branched reads as in file order.
- **No policy**: Claude Code stores no system prompt in the transcript, so none is read.
- **The working directory**, each entry's ``cwd``, is told on the next chat message after it changes
  (:data:`~sam_model.data.formats.base.CWD`): toolstate traces an absolute path under it (a Read's ``file_path``) by
  its relative part; one that is no string is refused, naming the entry.

A line that cannot be read (invalid JSON, not an entry, a bad field of a ``user`` or ``assistant`` entry) refuses
its file whole, named ``FILE:LINE`` with the field: a session read without one of its lines could lose a call's
result unsaid. The last line the file ends inside (no newline after it: a session still being written, as a copy
of ``~/.claude/projects`` taken while Claude Code runs is) is the exception: the lines before it are read, as none
after it could need it, and it is reported. A file holding no ``user`` or ``assistant`` entry (Claude Code writes some of summary titles alone)
has no conversation: given alone it is refused in one line saying so, in a folder it is no run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from sam_model.data.formats.anthropic import BLOCKS
from sam_model.data.formats.base import (
    Chat,
    Conversation,
    CutLine,
    TranscriptFormatError,
    read_blocks,
    text_of,
)
from sam_model.data.formats.numbered import mark
from sam_model.io import json_type

TURNS = ("user", "assistant")
QUEUED = "queued_command"  # an attachment: words the user typed while Claude Code worked, sent the model mid-turn
SYNTHETIC = "<synthetic>"  # the model Claude Code names on an assistant entry it wrote itself
Chain = tuple[bool, str | None]  # (a subagent's, its agentId): the conversation of a file an entry belongs to
ABANDONED = "entries of abandoned branches (a rewind, an edited prompt, a retried response: Claude Code keeps them)"


def is_entry(doc: Any) -> bool:
    """A line of a Claude Code transcript: an object with a string ``type`` and the session's bookkeeping keys
    (``sessionId``, ``parentUuid``; a summary's ``leafUuid``; a file-history snapshot's ``snapshot``)."""
    return isinstance(doc, Mapping) and isinstance(doc.get("type"), str) and (
        any(k in doc for k in ("sessionId", "parentUuid", "leafUuid"))
        or (doc["type"] == "file-history-snapshot" and "snapshot" in doc))


def sniff(messages: list[Any]) -> bool:
    """Entries of type user or assistant holding an API ``message`` (no other format's messages are typed so), or
    entries all of Claude Code's bookkeeping (:func:`is_entry`: a ``queued_command`` attachment, a compact boundary,
    a file-history snapshot). A session's lines given to ScopedMemory.add (MCP's ``remember``) as Claude Code writes
    them, a line at a time, hold such a line alone: told from no user or assistant entry, it was read as an OpenAI
    message and refused ("message without 'role'"), and a prompt the user typed while Claude Code worked was lost."""
    return bool(messages) and (
        any(isinstance(m, Mapping) and m.get("type") in TURNS and isinstance(m.get("message"), Mapping)
            and "role" not in m for m in messages) or all(is_entry(m) and "role" not in m for m in messages))


def holds_tools(m: Any) -> bool:
    """A user or assistant entry whose API message holds a ``tool_use`` or ``tool_result`` block (a tool mark)."""
    content = m.get("message", {}).get("content") if sniff([m]) else None
    return isinstance(content, list) and any(isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result")
                                             for b in content)


def to_chat(entries: list[Any], where: str) -> Chat:
    """One conversation's entries as chat messages: those of the chain of its first user or assistant entry (the
    main chain, or one subagent's); another chain's are counted, not read."""
    chat = Chat()
    turns: dict[str, dict[str, Any]] = {}  # message.id -> its assistant turn (the lines of one streamed response)
    seen: set[tuple[Any, ...]] = set()  # entries read, by time, parent and message: a replay's copies are counted
    chain: Chain | None = None
    at = [f"{where}, entry {i}" + (f" (uuid {e['uuid']})" if isinstance(e, Mapping) and isinstance(e.get("uuid"), str)
                                   else "") for i, e in enumerate(entries)]
    for e, w in zip(entries, at):  # before the branches are found: a link of another type there was a TypeError
        if isinstance(e, Mapping):
            _ids(e, w)
    left = set(abandoned(entries))
    for i, (e, w) in enumerate(zip(entries, at)):
        if i in left:  # a branch the conversation left: checked as any entry, not read
            check(e, w)
            chat.ignored[ABANDONED] += 1
            continue
        key = _chain(e, w)
        if e["type"] in TURNS or _queued(e):
            chain = key if chain is None else chain
            if key != chain:
                chat.ignored["entries of another chain (a subagent's: its own conversation)"] += 1
                continue
            replay = _replay(e)
            if replay is not None and replay in seen:
                chat.ignored["repeated entries (a replay: same time, parent and message)"] += 1
                continue
            seen.add(replay)
        _entry(chat, turns, e, w, f"entry {i}")
    return mark(chat)


def check(entry: Any, where: str) -> None:
    """Refuse, naming ``where`` and the field, a line of a session file the reader could not read (what
    :func:`to_chat` would refuse of it later, named by its position in a conversation rather than by its line). Any
    object with a string ``type`` is an entry: one of a type not read is counted, whatever it holds."""
    _chain(entry, where)
    _ids(entry, where)
    _entry(Chat(), {}, entry, where, "")


def _ids(entry: Mapping[str, Any], where: str) -> None:
    """Refuse an entry whose session bookkeeping (its ids, its parent, its time) is no string."""
    for key in ("sessionId", "agentId", "uuid", "parentUuid", "timestamp"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            raise TranscriptFormatError(where, f"'{key}' is {json_type(entry[key])}, expected a string")


def abandoned(entries: list[Any]) -> list[int]:
    """The positions in ``entries`` of the main chain's turns (user and assistant entries, queued prompts) that lie
    on a branch the conversation left, in file order; [] where it never branched.

    A session file is a tree: each entry names the one before it (``parentUuid``), and Claude Code keeps every
    branch. A rewind (Esc Esc, ``/rewind``) or an edited prompt writes the new prompt under an earlier entry, and a
    response retried or regenerated hangs off the entry the first try did; the turns after the branch point stay in
    the file, written before the ones that replaced them. The conversation is what Claude Code itself resumes: the
    chain from its last-written turn (a user or assistant entry or a prompt typed while Claude Code worked, not a
    replay) back through ``parentUuid`` (that entry is a leaf: an entry's children are written after it), with the turns the single chain misses put back: the other lines of a response one of its
    lines is on (their ``message.id``: parallel calls, each its own line) and the tool results that answer any of
    them (a result names the line of its call as its parent), so no call loses its result. The chain crosses a
    compaction through the boundary's ``logicalParentUuid``, and an entry whose parent this file does not hold (a
    resumed session continuing another file, a parent Claude Code never wrote, a subagent's entry) or that has
    none, through the entry written just before it, so nothing is lost for a link the file lacks. An entry
    repeating one on the chain (same time, parent and message: a compaction's replay) is on it. Entries of no
    ``uuid`` and those of a subagent are not placed and stay; other entries than turns are counted as before."""
    main = [i for i, e in enumerate(entries) if isinstance(e, Mapping) and isinstance(e.get("type"), str)
            and isinstance(e.get("uuid"), str) and e.get("isSidechain") is not True]
    turns = [i for i in main if entries[i]["type"] in TURNS or _queued(entries[i])]
    at: dict[str, int] = {}
    for i in main:
        at.setdefault(entries[i]["uuid"], i)
    alike: dict[tuple[Any, ...], list[int]] = {}  # turns of one type, time and parent: the only possible replays
    for i in turns:
        if isinstance(entries[i].get("timestamp"), str):
            alike.setdefault((entries[i]["type"], entries[i]["timestamp"], _str(entries[i], "parentUuid")), []).append(i)
    copies: dict[Any, list[int]] = {}  # replay key -> its entries, the first the original
    for group in alike.values():
        for i in group if len(group) > 1 else ():
            copies.setdefault(_replay(entries[i]), []).append(i)
    first = {i: group[0] for group in copies.values() for i in group}
    leaf = next((i for i in reversed(turns) if first.get(i, i) == i), None)
    if leaf is None:
        return []
    before = dict(zip(main[1:], main))  # an entry -> the one written before it
    live: set[int] = set()
    i: int | None = leaf
    while i is not None and i not in live:
        live.add(i)
        parent = next((p for p in (_str(entries[i], "parentUuid"), _str(entries[i], "logicalParentUuid"))
                       if p in at), None)
        i = at[parent] if parent is not None else before.get(i)
    ids = {_message_id(entries[i]) for i in live} - {None}
    calls = {entries[i]["uuid"] for i in main if entries[i]["type"] == "assistant"
             and (i in live or _message_id(entries[i]) in ids)}
    for i in turns:
        if entries[i]["uuid"] in calls or (entries[i]["type"] == "user" and _str(entries[i], "parentUuid") in calls
                                           and holds_results(entries[i])):
            live.add(i)
    for group in copies.values():
        if live.intersection(group):
            live.update(group)
    return [i for i in turns if i not in live]


def placed(e: Any) -> bool:
    """Whether :func:`abandoned` places ``e`` on the main chain's tree (an entry of a uuid, no subagent's)."""
    return isinstance(e, Mapping) and isinstance(e.get("type"), str) and isinstance(e.get("uuid"), str) \
        and e.get("isSidechain") is not True


def link(e: Any) -> dict[str, Any] | None:
    """What :func:`abandoned` reads of a main-chain entry, as a small entry of its own (None: an entry it does not
    place): its type, ids, parents and time, its ``message.id``, whether it holds results (or is a queued prompt),
    and a digest of its message for a replay's. :func:`abandoned` reads such entries as it reads the whole ones, so a
    live add (sam_model.memory.live) can keep them for the lines earlier adds stored and tell a branch it left."""
    if not placed(e):
        return None
    out = {k: e[k] for k in ("type", "uuid", "parentUuid", "logicalParentUuid", "timestamp") if isinstance(e.get(k), str)}
    said = hashlib.sha1(_dump(e.get("message" if e["type"] in TURNS else "attachment")).encode(
        "utf-8", "surrogatepass")).hexdigest()
    inner = {"said": said, **({"id": _message_id(e)} if _message_id(e) is not None else {}),
             **({"content": [{"type": "tool_result"}]} if e["type"] == "user" and holds_results(e) else {})}
    if _queued(e):
        return {**out, "attachment": {**inner, "type": QUEUED}}
    return {**out, "message": inner} if e["type"] in TURNS else out


class Lineage:
    """Which sessions are one task's: a session file that holds entries of another session (a branch's copies,
    which keep their sessionId; a resume's replay of the earlier entries under the new one: the same uuids) or whose
    entries continue from one (a ``parentUuid`` or compaction's ``logicalParentUuid`` naming an entry of another
    file) is the same task as that session, as are every session id a file holds. Claude Code writes a resumed or
    forked session to a file of its own, so without this each was its own split group and one task's turns, the
    copied ones word for word, fell on both sides of ``--split``. A group is named by its session whose first entry
    is the earliest, then whose last is (a resume's replay copies the earlier entries' times), then by name."""

    def __init__(self) -> None:
        self._up: dict[str, str] = {}  # session -> a session of its group (union-find)
        self._span: dict[str, tuple[str, str]] = {}  # session -> the times of its earliest and latest entries
        self._owner: dict[str, str] = {}  # uuid -> the session of the file that first held it
        self._refs: list[tuple[str, str]] = []  # (session, a uuid its file's entries hold or continue from)
        self._names: dict[str, str] | None = None  # a group's root -> its name, once asked

    def add(self, session: str, entries: Iterable[Any]) -> None:
        """The entries of one file, whose conversations are named by ``session`` (:func:`session_of`)."""
        self._names = None
        self._find(session)
        for e in entries:
            if not isinstance(e, Mapping):
                continue
            sid, at = e.get("sessionId"), e.get("timestamp")
            if isinstance(sid, str) and sid:
                self._union(session, sid)
                if isinstance(at, str):
                    first, last = self._span.get(sid, (at, at))
                    self._span[sid] = (min(first, at), max(last, at))
            uuid = e.get("uuid")
            if isinstance(uuid, str):
                self._refs.append((session, uuid))
                self._owner.setdefault(uuid, session)
            for key in ("parentUuid", "logicalParentUuid"):
                if isinstance(e.get(key), str):
                    self._refs.append((session, e[key]))

    def group(self, session: str) -> str:
        """The name of ``session``'s group (itself where nothing links it to another)."""
        if self._names is None:
            for sid, uuid in self._refs:  # links to files added after the one holding them, too
                if uuid in self._owner:
                    self._union(sid, self._owner[uuid])
            self._names = {}
            for s in sorted(self._up, key=lambda s: (*self._span.get(s, ("\uffff", "\uffff")), s)):
                self._names.setdefault(self._find(s), s)
        return self._names.get(self._find(session), session)

    def _find(self, s: str) -> str:
        self._up.setdefault(s, s)
        while self._up[s] != s:
            self._up[s] = self._up[self._up[s]]
            s = self._up[s]
        return s

    def _union(self, a: str, b: str) -> None:
        self._up[self._find(a)] = self._find(b)


def session_of(path: Path, sessions: list[str]) -> str:
    """The session a file's conversations are named by, from the ``sessionId`` of its entries in file order: its
    file's name where that is one of them (a branched or forked session's file also holds the entries it copied),
    else the last written; the file's name where none is."""
    stem = path.name.removesuffix(".gz").removesuffix(".jsonl")
    return stem if stem in sessions else sessions[-1] if sessions else stem


def lineage(paths: Iterable[Path], read: Callable[[Path], Iterable[tuple[Any, str]]]) -> Lineage:
    """The :class:`Lineage` of the session files ``paths`` (their lines, as files.documents gives them; a line that
    cannot be read is its file's reading to report)."""
    found = Lineage()
    for q in paths:
        entries = [doc for doc, _ in read(q) if isinstance(doc, Mapping)]
        found.add(session_of(q, [e["sessionId"] for e in entries if isinstance(e.get("sessionId"), str)]), entries)
    return found


def conversations(docs: Iterable[tuple[Any, str]], path: Path, id_of: Callable[[Any], str],
                  alone: bool = True, lineage: Lineage | None = None) -> Iterator[Conversation | TranscriptFormatError]:
    """The conversations of one session file, from its ``(document or its error, where)`` pairs (files.documents):
    the main chain, then each subagent's. A line that cannot be read is the file's one error (the file is refused
    whole), but for a last line the file ends inside (:class:`CutLine`: a session still being written, as a copy of
    ~/.claude/projects taken while Claude Code runs), left out and named on each conversation (``cut``); ``alone``:
    the file was given itself, so one with no user or assistant entry is refused (in a folder it is no run);
    ``lineage``: the sessions read with it, for the split group (:class:`Lineage`; None: this file's own)."""
    chains: dict[str, list[Any]] = {}  # "" (the main chain), agent-<agentId> or sidechain-N -> its entries
    lines: list[str] = []  # where the main chain's entries are (FILE:LINE)
    sidechain_of: dict[str, str] = {}  # uuid -> the agentless subagent chain it is on
    sessions: list[str] = []
    cut = ""
    for doc, where in docs:
        if isinstance(doc, CutLine):  # the last line (none follows): what came before it is whole
            cut = where
            continue
        try:
            if isinstance(doc, TranscriptFormatError):
                raise doc
            check(doc, where)
        except TranscriptFormatError as err:
            yield TranscriptFormatError(err.where, *err.parts, "; the session file is refused whole rather than read "
                                                                  "without this line")
            return
        if isinstance(doc.get("sessionId"), str):
            sessions.append(doc["sessionId"])
        side, agent = _chain(doc, where)
        key = "" if not side else f"agent-{agent}" if agent else None
        if key is None:  # an older version's subagent, no agentId: its chain of parentUuid tells which
            parent = doc.get("parentUuid")
            key = sidechain_of.get(parent) if isinstance(parent, str) else None
            key = key or f"sidechain-{sum(k.startswith('sidechain-') for k in chains) + 1}"
            if isinstance(doc.get("uuid"), str):
                sidechain_of[doc["uuid"]] = key
        chains.setdefault(key, []).append(doc)
        if not key:
            lines.append(where)
    stem = path.name.removesuffix(".gz").removesuffix(".jsonl")
    session = session_of(path, sessions)
    if lineage is None:
        lineage = Lineage()
        lineage.add(session, (e for entries in chains.values() for e in entries))
    group = lineage.group(session)
    if "" not in chains and stem.startswith("agent-"):  # a subagent's own file: its agentless chains named by it
        agentless = [k for k in chains if k.startswith("sidechain-")]
        chains = {(stem if len(agentless) == 1 else f"{stem}-{k}") if k in agentless else k: v
                  for k, v in chains.items()}
    read = [(key, entries) for key, entries in chains.items() if any(e["type"] in TURNS for e in entries)]
    left = tuple(lines[i] for i in abandoned(chains.get("", [])))  # read by to_chat as the conversation's messages
    for key, entries in read:
        yield Conversation(id_of(f"{session}-{key}" if key else session), entries, f"{path}: {key}" if key else str(path),
                           group, "claude-code", cut=cut, abandoned=() if key else left)
    if not read and alone:
        kinds = ", ".join(sorted({str(e["type"]) for entries in chains.values() for e in entries})) or "no entries"
        yield TranscriptFormatError(str(path), f"a Claude Code session file without user or assistant entries ({kinds}"
                                               "): no conversation to read")


def _chain(e: Any, w: str) -> Chain:
    """(whether ``e`` is a subagent's, its agentId): the conversation it belongs to."""
    if not isinstance(e, Mapping) or not isinstance(e.get("type"), str):
        raise TranscriptFormatError(w, "not a Claude Code transcript entry: expected an object with a string 'type' "
                                       f"(user, assistant, system, summary, ...), got {_what(e)}")
    side = e.get("isSidechain")
    if side not in (None, True, False):
        raise TranscriptFormatError(w, f"'isSidechain' is {json.dumps(side)[:40]}, expected true or false")
    agent = e.get("agentId") if side else None
    return bool(side), agent if isinstance(agent, str) and agent else None


def _entry(chat: Chat, turns: dict[str, dict[str, Any]], e: Mapping[str, Any], w: str, source: str) -> None:
    """One entry into ``chat``: a user entry's results and words, an assistant entry's blocks into its message's
    turn; any other entry counted."""
    kind = e["type"]
    result = lambda b, at: text_of(b.get("content"), at, ignored=chat.ignored)  # noqa: E731
    cwd = e.get("cwd")  # the session's working directory: a path under it is traced by its relative part (toolstate)
    if cwd is not None and not isinstance(cwd, str):
        raise TranscriptFormatError(w, f"'cwd' is {json_type(cwd)}, expected a string (the session's working directory)")
    chat.cwd = cwd or chat.cwd
    if _queued(e):  # the user's words, though no user entry holds them
        prompt = e["attachment"].get("prompt")
        if not isinstance(prompt, (str, list)):
            raise TranscriptFormatError(w, f"'attachment.prompt' is {json_type(prompt)}, expected the words the user "
                                           "typed (a string or a list of content blocks)")
        read_blocks(chat, "user", [{"type": "text", "text": prompt}] if isinstance(prompt, str) else prompt, w,
                    source, BLOCKS, result)
        return
    if kind not in TURNS:
        subtype = e.get("subtype") if kind == "system" else None
        chat.ignored[f"{kind} {subtype} entries" if isinstance(subtype, str) else f"{kind} entries"] += 1
        return
    message = e.get("message")
    if not isinstance(message, Mapping):
        raise TranscriptFormatError(w, f"'message' is {json_type(message)}, expected the API message of a {kind} "
                                       "entry {\"role\", \"content\"}")
    if "parts" in message and "content" not in message:  # Gemini content: Qwen Code's records are shaped like these
        raise TranscriptFormatError(w, "'message' holds Gemini 'parts' ({\"role\", \"parts\"}), not the Anthropic API "
                                       "message of a Claude Code entry: a chat record of another agent shaped like "
                                       "Claude Code's (Qwen Code's ~/.qwen/projects/<project>/chats/<session>.jsonl?), "
                                       "which no reader here reads; give its messages as Gemini contents "
                                       "({\"id\", \"contents\": [...]}, the gemini reader)")
    if message.get("role") not in (kind, None):
        raise TranscriptFormatError(w, f"'message.role' is {json.dumps(message.get('role'))[:40]}, expected "
                                       f"\"{kind}\" (the entry's type)")
    content = message.get("content")
    if not isinstance(content, (str, list)):
        raise TranscriptFormatError(w, f"'message.content' is {json_type(content)}, expected a string or a list of "
                                       "content blocks")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    if kind == "user":
        if e.get("isCompactSummary") is True and chat.messages:  # restates turns read above
            chat.ignored["compact summaries (restating the turns read before them)"] += 1
            return
        read_blocks(chat, "user", blocks, w, source, BLOCKS, result)
        return
    message_id = message.get("id")
    if message_id is not None and not isinstance(message_id, str):
        raise TranscriptFormatError(w, f"'message.id' is {json_type(message_id)}, expected a string (the API "
                                       "message's id, which its streamed lines share)")
    if message.get("model") == SYNTHETIC:
        chat.ignored["synthetic assistant entries (Claude Code's own words: API errors, interruptions)"] += 1
        return
    part = Chat(ignored=chat.ignored)
    read_blocks(part, "assistant", blocks, w, source, BLOCKS, result)
    for m, at in zip(part.messages, part.sources):
        turn = turns.get(message_id) if message_id and m["role"] == "assistant" else None
        if turn is None:
            chat.add(m, at)
            if message_id and m["role"] == "assistant":
                turns[message_id] = m
            continue
        if m.get("content"):  # another block of the same response: its words after the turn's, its calls after
            turn["content"] = f"{turn['content']}\n{m['content']}" if turn.get("content") else m["content"]
        if m.get("tool_calls"):
            turn["tool_calls"] = [*turn.get("tool_calls", []), *m["tool_calls"]]


def replay(e: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """:func:`_replay` of a main-chain turn or its :func:`link` (links compared with links: a live add's check)."""
    return _replay(e) if e["type"] in TURNS or _queued(e) else None


def _replay(e: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What a compaction's replay of a turn repeats under a new uuid (type, time, parent and message); None for an
    entry without a time, never taken for a replay."""
    if not isinstance(e.get("timestamp"), str):
        return None
    said = _dump(e.get("message" if e["type"] in TURNS else "attachment"))
    # half a character (a lone surrogate) in an add's line is hashed too: no file holds it, a live add's line may
    return (e["type"], e["timestamp"], e.get("parentUuid"), hashlib.sha1(said.encode("utf-8", "surrogatepass")).digest())


def _str(e: Mapping[str, Any], key: str) -> str | None:
    return e[key] if isinstance(e.get(key), str) else None


def _message_id(e: Mapping[str, Any]) -> str | None:
    """An assistant entry's ``message.id`` (the lines of one streamed response share it)."""
    return _str(e["message"], "id") if e["type"] == "assistant" and isinstance(e.get("message"), Mapping) else None


def given_calls(call: Any, where: str = "call") -> Any:
    """The call about to be made as :func:`sam_model.data.callshapes.as_calls` reads it: ``call`` itself, or where it is
    a Claude Code assistant entry (the session's line holding the call, as a sidecar reads it before adding it), its
    ``tool_use`` block (a list of them for several). An entry holding none is refused in one line naming ``where``."""
    if not (isinstance(call, Mapping) and call.get("type") == "assistant" and isinstance(call.get("message"), Mapping)
            and is_entry(call)):
        return call
    content = call["message"].get("content")
    blocks = [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"] \
        if isinstance(content, list) else []
    if not blocks:
        raise TranscriptFormatError(f"{where}.message.content", "a Claude Code assistant entry that holds no tool_use "
                                    "block: give the entry of the call about to be made, or the call itself")
    return blocks[0] if len(blocks) == 1 else blocks


def response_start(entries: list[Any], call: Any) -> int | None:
    """Where in ``entries`` the response of ``call``, a Claude Code assistant entry (:func:`given_calls`), began: the
    position of its first line (the first entry of its chain and ``message.id``), or None where ``entries`` hold
    none of it, the call is given in another shape (no id) or of another chain than the one :func:`to_chat` reads.
    :func:`to_chat` joins every line of a response into its message, before the results, a subagent's lines or
    a queued prompt written between them, and the importer decides the response's calls before it: so a call
    made by such a line is decided before the messages of the entries from here on (:func:`entry_at` tells
    a message's entry). Until 2026-12-06 only the words the entries ended in were joined, where the newest
    assistant entry was of the response."""
    mid = _message_id(call) if given_calls(call) is not call else None
    if mid is None:
        return None
    try:
        chain = _chain(call, "call")
    except TranscriptFormatError:  # no chain of the conversation's: not its line
        return None
    read = next((_chain(e, "") for e in entries if isinstance(e, Mapping) and isinstance(e.get("type"), str)
                 and (e["type"] in TURNS or _queued(e))), None)
    if read != chain:
        return None
    return next((i for i, e in enumerate(entries) if isinstance(e, Mapping) and e.get("type") == "assistant"
                 and _chain(e, "") == chain and _message_id(e) == mid), None)


def entry_at(source: str) -> int:
    """The position of the entry a message of :func:`to_chat` was read from (its source, ``entry N``); -1 for
    another source."""
    head, _, n = source.partition(" ")
    return int(n) if head == "entry" and n.isdigit() else -1


def holds_results(e: Mapping[str, Any]) -> bool:
    """A user entry holding a ``tool_result`` block (a result, not a prompt)."""
    content = e.get("message", {}).get("content") if isinstance(e.get("message"), Mapping) else None
    return isinstance(content, list) and any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content)


def _queued(e: Mapping[str, Any]) -> bool:
    """An attachment of what the user typed while Claude Code worked (``queued_command``)."""
    return e["type"] == "attachment" and isinstance(e.get("attachment"), Mapping) and e["attachment"].get("type") == QUEUED


def _dump(message: Any) -> str:
    return json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)


def _what(e: Any) -> str:
    if isinstance(e, Mapping):
        return f"'type' {json.dumps(e.get('type'))[:40]}" if "type" in e else "an object without 'type'"
    return json_type(e)
