"""Conversations out of a log file of any format: the file's documents, then its container.

A ``.jsonl[.gz]`` file is one JSON document per line, a ``.json[.gz]`` or SWE-agent ``.traj[.gz]`` file one
document. A folder is read whole, every run in it by its layout's reader (:func:`layouts`): SWE-agent's ``.traj``
files under it, mini-swe-agent's ``.traj.json`` files under it, session stores under it (:mod:`sessions`: Strands Agents' ``message_<N>.json`` files, OpenHands
0.x's ``events/<N>.json``), OpenHands V1 conversations under it (the ``events/event-NNNNN-ID.json`` of each), Codex
CLI rollouts under it (``rollout-*.jsonl``, one session each: ``~/.codex/sessions`` read whole), Claude Code session
files under it (``.jsonl`` whose first line is a Claude Code entry), Gemini CLI session files under it (``.jsonl``
whose first line is a session's metadata, and the ``session-*.json`` of earlier versions), and the trajectories OpenHands 0.x saves to a
folder (the ``.json[.gz]`` files in it). The file names tell the first four apart (0.x's event files are numbers,
V1's ``event-`` and an index; a Claude Code session's first line tells it), so a folder holding several is read
whole, their episode ids unique together, rather than refused or read by its first: a ``.json`` beside them is a
run only when it holds a list of events, since an object there is another's record (``preds.json``,
``base_state.json``, ``metadata.json``). Every line is decoded
and parsed on its own, so a bad one is named ``FILE:LINE`` with the reason (not UTF-8 and where, invalid JSON, a
bare ``NaN``/``Infinity``, nested deeper than :data:`MAX_DEPTH`) and, with ``--skip-bad``, skipped alone. The
container is told from the first document that parses: OTLP spans, a Codex rollout (its lines one session), a
Claude Code session (the whole file one session: one entry a line), a tau2 results file, an OpenHands or SWE-agent
trajectory, a tau-bench v1 list of trajectories, or conversation objects (``{"id", "messages"}``, Anthropic's and
Bedrock's with ``system``, a Converse request and its response's ``output``, Responses' ``input``/``output``,
Gemini's ``contents``), or a Pydantic AI history (a ``.json`` holding one conversation's messages as
``all_messages_json()`` writes them; a folder of such files, one conversation each, named by the file).
Items that fail are yielded as their :class:`TranscriptFormatError`; the caller stops or skips and counts.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import itertools
import json
import logging
import re
import zlib
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from sam_model.data.advice import Advice
from sam_model.data.formats import (
    FORMATS,
    adk,
    adk_db,
    agent_framework,
    agents_db,
    anthropic,
    autogen,
    bedrock,
    claude_code,
    claude_stream,
    codex,
    codex_exec,
    detect,
    gemini,
    gemini_cli,
    langfuse,
    llamaindex,
    mini_swe_agent,
    openhands,
    openhands_tree,
    otel,
    pydantic_ai,
    response_chains,
    responses,
    sessions,
    smolagents,
    sqlitestores,
    swe_agent,
    tau2,
    zstdexport,
)
from sam_model.data.formats.base import Conversation, CutLine, NotJSON, TranscriptFormatError, strict_loads
from sam_model.io import ZSTD_MAGIC, SAMFileError, check_compression, json_type, not_found
from sam_model.limits import too_deep

log = logging.getLogger(__name__)

MAX_DEPTH = 100  # deepest nesting of objects and lists a document may have (a conversation needs about 10)
_EPISODE_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
# an OpenHands V1 conversation's event file, event-{index:05d}-{event id}.json (software-agent-sdk, persistence_const)
V1_EVENT_FILE = re.compile(r"event-(\d{5,})-[^/]+\.json")
Item = Conversation | TranscriptFormatError
# the record an OpenHands conversation or session folder holds beside its event files (the folder, its events)
EVENTLESS = {"base_state.json": ("an OpenHands V1 conversation folder", "events/event-NNNNN-ID.json"),
             "metadata.json": ("an OpenHands 0.x session folder", "events/<N>.json")}
CONVERSATION_KEYS = ("messages", "input", "output", "items", "contents", "steps")  # what a conversation object holds


def episode_id_of(raw: Any) -> str:
    """Every run of characters outside ``[A-Za-z0-9._-]`` becomes ``_``."""
    return _EPISODE_CHARS.sub("_", str(raw))


def _stem(p: Path) -> str:
    """``p``'s name without ``.gz`` or ``.zst`` (zstdexport decompresses the latter: a ``.json.zst`` of a JSON
    document is that document, whole, as its ``.json`` is, not read as JSON Lines)."""
    return p.name[:-3] if p.name.endswith(".gz") else p.name[:-4] if p.name.endswith(".zst") else p.name


def _whole(p: Path) -> bool:
    """A file of one document (``.json``, SWE-agent's ``.traj``), not of one per line."""
    return _stem(p).endswith((".json", ".traj"))


def layouts(folder: Path, claimed: Collection[Path] = ()) -> dict[str, list[Path]]:
    """The runs of a folder by layout, each sorted, every layout found (none left out, as when the first found was
    read alone and the runs of the others skipped without a word): ``swe-agent``, the ``.traj[.gz]`` files under it
    (a retry agent's copy of an attempt, ``ID/attempt_N/ID.traj``, left out where ``ID/ID.traj`` lists the attempts
    itself); ``mini-swe-agent``, the ``.traj.json[.gz]`` files under it (``ID/ID.traj.json``; one holding a list is
    no run of it, as any ``.json`` of events is OpenHands'); ``sessions``, the message and event files of the session stores under it (:func:`sessions.files`:
    Strands Agents', OpenHands 0.x's ``events/<N>.json``); ``openhands-v1``, the event files of the OpenHands V1
    conversations under it (:func:`v1_event_files`: ``event-NNNNN-ID.json``, which no session store names so);
    ``codex``, the Codex rollouts under it (``rollout-*.jsonl[.gz]``, as ``~/.codex/sessions/YYYY/MM/DD`` and
    ``archived_sessions`` hold them); ``claude-code``, the Claude Code session files under it
    (:func:`claude_code_files`: ``.jsonl``, a rollout's name aside); ``gemini-cli``, the Gemini CLI session files
    under it (:func:`gemini_cli_files`); ``pydantic-ai``, the Pydantic AI histories under it (a ``.json`` holding
    one conversation's messages, told by its content); ``openhands``, the other ``.json[.gz]`` files in
    it (OpenHands' ``save_trajectory_path`` folder: one ``{session}.json`` a run; not under it, where an evaluation
    keeps its ``llm_completions``). Their names tell the first four apart, a Claude Code session's first line the
    fifth; a ``.json`` is anyone's, so beside them only one that holds a list (the events of a run, as
    save_trajectory_path writes them) is a run, and an object is the record of another's (SWE-agent's
    ``preds.json``, a V1 conversation's ``base_state.json``, a 0.x session's ``metadata.json``; beside agent stdout
    files, :func:`headless_files`, a Harbor job's ``config.json`` and ``result.json``). A Strands session's
    ``session.json``, ``agent.json`` and ``multi_agent.json`` are never runs (:func:`sessions.is_state`).
    An object ``base_state.json`` or ``metadata.json`` in the folder given is a conversation's or session's record
    even alone (it was read as a trajectory and refused as "not an OpenHands trajectory"): :func:`eventless`.
    ``claimed``: files another reader reads (an SGD split's, which sources.source_kind looks for runs beside), taken
    as named by a layout and not returned."""
    found = sorted(q for q in folder.rglob("*") if q.name.endswith((".traj", ".traj.gz")) and q.is_file())
    kinds = {"swe-agent": [q for q in found if not (re.fullmatch(r"attempt_\d+", q.parent.name)
                                                    and (q.parent.parent / q.name).is_file())],
             "mini-swe-agent": sorted(q for q in folder.rglob("*") if q.name.endswith(
                 (mini_swe_agent.SUFFIX, mini_swe_agent.SUFFIX + ".gz")) and q.is_file() and not _holds_list(q)),
             "sessions": sessions.files(folder), openhands.V1: v1_event_files(folder),
             "codex": sorted(q for q in folder.rglob("rollout-*") if codex.ROLLOUT_FILE.fullmatch(q.name)
                             and q.is_file())}
    kinds["gemini-cli"] = gemini_cli_files(folder, {*claimed, *kinds["codex"]})
    kinds["claude-code"] = claude_code_files(folder, {*claimed, *kinds["codex"], *kinds["gemini-cli"]})
    kinds["otel"] = otel_files(folder, {*claimed, *kinds["codex"], *kinds["gemini-cli"], *kinds["claude-code"]})
    # an Agent Framework FileHistoryProvider's folder: <session_id>.jsonl each, one message a line (a folder of them
    # was "a folder without ...")
    taken = {*claimed, *kinds["codex"], *kinds["gemini-cli"], *kinds["claude-code"], *kinds["otel"]}
    # and their MessagePack (serialization_format="msgpack"): a FileHistoryProvider's records, a FileSessionStore's
    # snapshot (one that does not decode too: read, it is refused naming the file, not passed over)
    # (another program's MessagePack passed over: agent_framework.unpacked, said by _trajectory_folder)
    packed = sorted(q for q in folder.rglob("*" + agent_framework.PACKED) if q not in claimed and q.is_file()
                    and agent_framework.unpacked(q) is None)
    packed_history = [q for q in packed if _first_is(q, agent_framework.is_message)]
    kinds[MAF_HISTORY] = sorted([*(q for q in folder.rglob("*.jsonl") if q not in taken and q.is_file()
                                   and _first_is(q, agent_framework.is_message)), *packed_history])
    # Langfuse's documents one a line (traces, pages of observations), told by their first line at any depth
    lines = sorted(q for q in folder.rglob("*.jsonl*") if q.name.endswith((".jsonl", ".jsonl.gz")) and q.is_file()
                   and q not in taken and q not in kinds[MAF_HISTORY] and _first_is(q, langfuse.is_export))
    named = {q for files in kinds.values() for q in files} | set(claimed) | set(lines)

    def unnamed(q: Path) -> bool:
        return (q.name.endswith((".json", ".json.gz")) and q not in named and not sessions.is_state(q)
                and not gemini_cli.is_state(q) and q.is_file() and not (q.name in EVENTLESS and not _holds_list(q)))
    # a history is told by its content, so it is read at any depth (a folder a day: runs/2026-12-06/ID.json); read
    # in the folder itself alone, a folder holding one skipped every history of its subfolders without a word. The
    # folder is walked once for them all (it was walked, and each file stat-ed, once a kind)
    candidates = sorted(q for q in folder.rglob("*.json*") if unnamed(q))
    histories = [q for q in candidates if _holds_list(q, HISTORY_HEAD) and _first_is(q, pydantic_ai.is_history)]
    # a smolagents memory (json.dump(agent.memory.get_full_steps(), f)) likewise, told by its content at any depth
    told = set(histories)  # a list looked through for each file of the folder was quadratic in a folder of histories
    memories = [q for q in candidates if q not in told and _holds_list(q, STEPS_HEAD) and _first_is(q, smolagents.is_steps)]
    # a LlamaIndex chat history ([m.model_dump() for m in memory.get_all()]) likewise (a folder of them was read as
    # OpenHands trajectories, each refused as no event)
    told.update(memories)
    chats = [q for q in candidates if q not in told and _holds_list(q, CHAT_HEAD) and _first_is(q, llamaindex.is_history)]
    # a workflow Context (ctx.to_dict()) holds no messages: beside histories no run, alone refused as holding none
    # (it was read as an OpenHands trajectory, "not an OpenHands trajectory")
    # which of the keys telling a Context or an ADK session each object holds, looked for in one read of it (a read
    # a key read each other record of many MB twice)
    objects = {q: _mentions(q, (CONTEXT_KEY, ADK_KEY, MAF_KEY, LANGFUSE_KEY)) for q in candidates if not _holds_list(q)}
    contexts = [q for q, keys in objects.items() if CONTEXT_KEY in keys and _first_is(q, llamaindex.is_context)]
    chats = chats or contexts
    told.update(chats)
    # an ADK session's dump (session.model_dump_json(), one a file) likewise: an object, told by its content
    adk_sessions = [q for q, keys in objects.items() if q not in told and ADK_KEY in keys
                    and _first_is(q, adk.is_session)]
    told.update(adk_sessions)
    # an Agent Framework session (session.to_dict(); a FileSessionStore's folder, one a file) likewise
    maf_sessions = sorted([*(q for q, keys in objects.items() if q not in told and MAF_KEY in keys
                             and _first_is(q, agent_framework.is_session)),
                           *(q for q in packed if q not in packed_history
                             and _first_is(q, agent_framework.is_session, bad=True))])
    # a Langfuse trace, page or UI download (an object, one a file) likewise; read with the .jsonl ones, together
    # (told each file by a set: a list of a store's thousands of snapshots looked through for each was quadratic)
    told.update(maf_sessions)
    traces = [q for q, keys in objects.items() if q not in told and LANGFUSE_KEY in keys
              and _first_is(q, langfuse.is_export)]
    kinds["langfuse"] = sorted([*lines, *traces])
    held = {*told, *memories, *chats, *contexts, *adk_sessions, *maf_sessions, *traces}
    # an ADK session database (adk web and adk run keep their sessions in each agent's .adk/session.db), and an
    # OpenAI Agents SDK app's SQLiteSession databases likewise (any .db, .sqlite or .sqlite3 holding its messages table: agents_db.tables):
    # a folder of agents was "a folder without ..." where its conversations were. One walk for both, each file
    # opened by each test once (a walk each: the Agents SDK's test opened the ADK stores too, the ADK test its twice)
    databases = [q for q in _named_databases(folder, claimed) if sqlitestores.unopened(q) is None]
    adk_stores = {q for q in databases if adk_db.is_store(q)}
    kinds["adk-db"] = [q for q in databases if q in adk_stores]
    kinds["agents-db"] = [q for q in databases if q not in adk_stores and agents_db.is_store(q)]
    loose = sorted(q for q in folder.iterdir() if unnamed(q) and q not in held)
    kinds["pydantic-ai"], kinds["smolagents"], kinds["llamaindex"], kinds["adk"] = histories, memories, chats, adk_sessions
    kinds["agent-framework"] = maf_sessions
    saved = [q for q in loose if not _holds_list(q) and _first_is(q, autogen.is_state)]  # save_state(), one a file
    configs = [q for q in loose if saved and not _holds_list(q) and _first_is(q, autogen.is_config)]  # their policy
    loose = [q for q in loose if q not in saved and q not in configs]
    kinds["autogen"] = [*saved, *configs]
    kinds["openhands"] = [q for q in loose if _holds_list(q)] if named or held or saved or kinds["adk-db"] or kinds["agents-db"] or (
        loose and headless_files(folder)) else loose
    if kinds["agents-db"]:
        _no_log_beside(folder, kinds["agents-db"], {q for files in kinds.values() for q in files} | set(claimed))
    return {kind: files for kind, files in kinds.items() if files}


def _named_databases(folder: Path, claimed: Collection[Path] = ()) -> list[Path]:
    """The files under ``folder`` named as SQLite databases (:data:`sqlitestores.SUFFIXES`), sorted."""
    return sorted(q for q in folder.rglob("*") if q.suffix in sqlitestores.SUFFIXES and q not in claimed
                  and q.is_file())


def passed_over(folder: Path) -> list[tuple[Path, str, str]]:
    """(file, why, what it is not) for each file under ``folder`` named as a database that is no SQLite file
    (:func:`sqlitestores.unopened`: empty, another program's, a thumbnail cache that cannot be opened), and each
    ``.msgpack`` that is no Agent Framework store's (:func:`agent_framework.unpacked`: another program's cache), which
    :func:`layouts` passes over: a Windows Thumbs.db, an empty sessions.db or a cache.msgpack refused the whole
    folder, or went without a word."""
    databases = [(q, why, "no session database") for q in _named_databases(folder)
                 if (why := sqlitestores.unopened(q)) is not None]
    packs = [(q, why, "no Agent Framework session") for q in sorted(folder.rglob("*" + agent_framework.PACKED))
             if q.is_file() and (why := agent_framework.unpacked(q)) is not None]
    return databases + packs


def _no_log_beside(folder: Path, databases: list[Path], named: Collection[Path]) -> None:
    """Refuse a folder of Agents SDK session databases that also holds a log of conversations (``{"id",
    "messages"}`` lines, as the README says to write a run's items), which no layout reads: a walkthrough's app folder
    converted its sessions.db alone, the chats.jsonl beside it left out without a word. Given as its own source, it
    is read (the same sessions in both are refused there as logged again, not counted twice)."""
    logs = [q for q in sorted(folder.rglob("*.jsonl*")) if q.name.endswith((".jsonl", ".jsonl.gz")) and q not in named
            and q.is_file() and _first_is(q, lambda d: isinstance(d, dict) and bool({"messages", "input", "items"} & d.keys()))]
    if logs:
        raise SAMFileError(f"{folder} holds {len(databases)} OpenAI Agents SDK session database(s) ({databases[0]}) and "
                           f"{logs[0]}, a log of conversations not read by the folder{f' (and {len(logs) - 1} more)' if len(logs) > 1 else ''}: "
                           f"give it as its own source (sam-data transcripts {logs[0]} OUT.jsonl; --data.train "
                           f"'[{databases[0]}, {logs[0]}]'), or move it out of the folder")


def eventless(folder: Path) -> str | None:
    """Why ``folder``, with no run in it, has nothing to read: it is an OpenHands V1 conversation folder or 0.x
    session folder (its record, :data:`EVENTLESS`) without event files, as one is before its agent ran (None: it is
    neither)."""
    for name, (what, events) in EVENTLESS.items():
        if (folder / name).is_file():
            return (f"{folder} is {what} ({name}) without {events} files: nothing to read; give the folder once its "
                    "agent has run and saved its events")
    return None


HEADLESS_NAMES = ("claude-code.txt", "codex.txt")  # the names Harbor keeps an agent's headless stdout under


def headless_files(folder: Path) -> list[Path]:
    """The agent stdout files under ``folder`` (:func:`headless_only`), sorted."""
    def headless(q: Path) -> bool:
        return q.name in HEADLESS_NAMES or _stem(q).endswith(".jsonl") and _first_is(
            q, lambda d: claude_stream.is_message(d) or codex_exec.is_event(d))
    return sorted(q for q in folder.rglob("*") if q.is_file() and headless(q))


def headless_only(folder: Path) -> str | None:
    """Why ``folder``, with no run a layout reads, has nothing to read although it holds an agent's headless stdout
    files (Harbor's ``<trial>/agent/claude-code.txt`` and ``agent/codex.txt``, or ``.jsonl`` files of them), and what
    to give instead (None: it holds none). Such a file is read a file at a time, not as a folder's layout: beside it
    a harness keeps the run's session file or rollout (Harbor: ``agent/sessions``), the better record (it holds the
    prompt), which a folder is read by, and reading both would give each run twice. (A folder of them was refused
    naming every other layout and not these files.)"""
    found = headless_files(folder)
    if not found:
        return None
    return (f"{folder} holds no run a folder is read by, but {len(found)} agent stdout file"
            f"{'' if len(found) == 1 else 's'} (claude -p --output-format stream-json, codex exec --json: such as "
            f"{found[0].relative_to(folder)}), which are read a file at a time: give each file (sam-data transcripts "
            "FILE OUT), or keep the runs' session files or rollouts beside them (Harbor: agent/sessions, from "
            "CLAUDE_CONFIG_DIR or CODEX_HOME), which the folder is then read by")


def trajectory_files(folder: Path) -> list[Path]:
    """Every file a folder's runs are read from (:func:`layouts`), a layout's together: what its conversion reads,
    so what its cached conversion is keyed by."""
    return [q for files in layouts(folder).values() for q in files]


def claude_code_files(folder: Path, claimed: Collection[Path] = ()) -> list[Path]:
    """The Claude Code session files under ``folder`` (a project folder ``~/.claude/projects/<project>``, the folder
    of projects, a session's ``subagents`` folder): the ``.jsonl[.gz]`` files whose first line that parses is a
    Claude Code entry (claude_code.is_entry), sorted; no other format writes such lines."""
    found = sorted(q for q in folder.rglob("*") if q.name.endswith((".jsonl", ".jsonl.gz")) and q not in claimed
                   and q.is_file())
    return [q for q in found if _first_is(q, claude_code.is_entry)]


def gemini_cli_files(folder: Path, claimed: Collection[Path] = ()) -> list[Path]:
    """The Gemini CLI session files under ``folder`` (a project's ``chats`` folder, ``~/.gemini/tmp``, a subagents'
    folder ``chats/<session id>``): the ``.jsonl[.gz]`` files whose first line that parses is a session's metadata,
    and the ``session-*.json[.gz]`` records of earlier versions (one that does not parse too: a copy cut mid-write,
    its reading names it); a ``.json`` whose session goes on in the ``.jsonl`` beside it (a resumed session, copied
    whole there) is left out, so it is read once. Sorted."""
    found = sorted(q for q in folder.rglob("*") if q.name.endswith((".jsonl", ".jsonl.gz", ".json", ".json.gz"))
                   and q not in claimed and (not _whole(q) or gemini_cli.SESSION_FILE.fullmatch(_stem(q))) and q.is_file())
    files = [q for q in found if _first_is(q, gemini_cli.is_header) or (_whole(q) and not _holds_list(q) and _first_is(
        q, lambda doc: False, bad=True))]
    return [q for q in files if not (_whole(q) and q.with_name(_stem(q) + "l") in files)]


def otel_files(folder: Path, claimed: Collection[Path] = ()) -> list[Path]:
    """The OTLP JSON files under ``folder`` (an OpenTelemetry collector's file exporter's folder, its rotated files
    beside the current one): the ``.json[l][.gz]`` files under it, and those in it without an extension (the
    exporter's ``path: ./file``, rotated as ``file-2022-09-14T05-02-14.173``), whose first document that parses is ``{"resourceSpans":
    ...}``, sorted. They are read together (:func:`_otel_folder`): a conversation's spans are exported as each
    ends, so its turns spread over the files. (Such a folder was read as OpenHands trajectories and refused: "not
    an OpenHands trajectory: ... got an object with the keys resourceSpans".)"""
    found = sorted(q for q in folder.rglob("*") if (q.name.endswith((".json", ".jsonl", ".json.gz", ".jsonl.gz"))
                                                    or (q.parent == folder and _EXPORTER_NAME.fullmatch(q.name)))
                   and q not in claimed and q.is_file())
    return [q for q in found if _zstd(q) or (_names_spans(q) and _first_is(q, otel.is_otlp))]


# a file exporter's path without an extension (its README's ./file) and its rotated copies (file-2022-09-14T05-02-14.173)
_EXPORTER_NAME = re.compile(r"[^.]+(\.[0-9]+)?")


def _zstd(q: Path) -> bool:
    """Whether ``q`` is the exporter's ``compression: zstd`` output (a zstd frame, after a 4-byte length or not):
    taken, so that reading it decompresses it, or refuses it as such where no zstd library is installed
    (:mod:`zstdexport`); a folder of them was "a folder without ... OTLP JSON files", naming no compression."""
    try:
        with open(q, "rb") as fh:
            head = fh.read(8)
    except OSError:
        return False
    return ZSTD_MAGIC in (head[:4], head[4:8])


def _names_spans(q: Path) -> bool:
    """Whether the start of ``q`` names ``resourceSpans`` (a cheap look before a file is parsed to be sure)."""
    try:
        with (gzip.open if q.name.endswith(".gz") else open)(q, "rb") as fh:
            return b'"resourceSpans"' in fh.read(4096)
    except (OSError, EOFError):
        return False


def _first_is(q: Path, test: Callable[[Any], bool], bad: bool = False) -> bool:
    """Whether the first document of a JSON Lines file that parses passes ``test`` (one that cannot be read: no;
    ``bad``: yes, when no document of it parses)."""
    try:
        with closing(documents(q)) as docs:
            head = _to_first_good(docs)
    except SAMFileError:
        return bad
    if head and isinstance(head[-1][0], TranscriptFormatError):
        return bad
    return bool(head) and test(head[-1][0])


# how a Pydantic AI history's file opens (all_messages_json(): its first message's first key "parts", or a
# hand-written "kind" of a request or response), told from the file's head, so no OpenHands trajectory is parsed whole
HISTORY_HEAD = re.compile(rb'\[\s*\{\s*"(parts|kind"\s*:\s*"(request|response))"')
# how a smolagents memory's dump opens (step.dict()'s first key: a SystemPromptStep, a TaskStep or an ActionStep)
STEPS_HEAD = re.compile(rb'\[\s*\{\s*"(system_prompt|task|step_number|role)"\s*:')  # or its ChatMessages' role
# how a LlamaIndex history opens (ChatMessage.model_dump()'s first key, role; a hand-made dict's any of its three)
CHAT_HEAD = re.compile(rb'\[\s*\{\s*"(role|additional_kwargs|blocks|content)"\s*:')


def _json_string(text: str) -> re.Pattern[bytes]:
    """The JSON string ``text`` (ASCII) as a file may write it: each character plain or as a ``\\u`` escape, its hex
    digits of either case."""
    def char(c: str) -> bytes:
        hexes = b"".join(b"[%s%s]" % (h.encode(), h.upper().encode()) if h.isalpha() else h.encode()
                         for h in f"{ord(c):04x}")
        return b"(?:" + re.escape(c.encode()) + rb"|\\u" + hexes + b")"
    return re.compile(b'"' + b"".join(map(char, text)) + b'"')


# what every workflow Context holds (llamaindex.is_context): a file without it is none, told without parsing it
CONTEXT_KEY = _json_string("is_running")
# what every ADK session's dump holds (adk.is_session: its app's name, snake_case or camelCase), likewise
ADK_KEY = re.compile(_json_string("app_name").pattern + b"|" + _json_string("appName").pattern)
MAF_HISTORY = "agent-framework-history"  # a folder's layout of FileHistoryProvider files (:func:`layouts`)
# what every Agent Framework session holds (agent_framework.is_session), likewise
MAF_KEY = _json_string("session_id")
# what every Langfuse observation holds (langfuse.is_export: a trace's, a page's), likewise
LANGFUSE_KEY = _json_string("startTime")
SCAN_BLOCK = 1 << 20  # bytes of a file :func:`_mentions` looks through at a time


def _mentions(q: Path, strings: Collection[re.Pattern[bytes]]) -> set[re.Pattern[bytes]]:
    """Which of ``strings`` (:func:`_json_string`) a ``.json[.gz]`` file's bytes hold, looked through a block at a
    time, once for them all, not parsed: what a document needs to hold to pass a test of a key, so that a folder's
    other JSON objects (a run's records, a harness's results, of many MB) are not each parsed whole to be told apart.
    A file it cannot tell (unreadable; zstd or protobuf, which :func:`documents` decodes or names) is taken as holding
    them all: the test that parses it decides, as it did alone."""
    found: set[re.Pattern[bytes]] = set()
    try:
        with open(q, "rb") as fh:
            head = fh.read(8)
        if zstdexport.framing(head) is not None or zstdexport.is_proto(head):
            return set(strings)
        with (gzip.open if q.name.endswith(".gz") else open)(q, "rb") as fh:
            tail = b""
            while len(found) < len(strings) and (block := fh.read(SCAN_BLOCK)):
                seen = tail + block
                found.update(s for s in strings if s not in found and s.search(seen))
                tail = seen[-64:]  # longer than any match a block boundary splits (10 characters escaped: 62 bytes)
    except (OSError, EOFError, zlib.error):
        return set(strings)
    return found


def _holds_list(q: Path, opening: re.Pattern[bytes] | None = None) -> bool:
    """Whether a ``.json[.gz]`` file holds a JSON list (its first character past a BOM and blanks is ``[``); one that
    cannot be read is taken for one, so that reading it names the fault. ``opening``: and its head matches it there."""
    try:
        with (gzip.open if q.name.endswith(".gz") else open)(q, "rb") as fh:
            head = fh.read(4096)
    except (OSError, EOFError):
        return True
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return head[:1] == b"[" and (opening is None or opening.match(head) is not None)


def v1_event_files(folder: Path) -> list[Path]:
    """The event files of the OpenHands V1 conversations of ``folder`` (the software-agent-sdk saves a conversation
    as ``base_state.json`` and ``events/event-{index:05d}-{id}.json``): of its ``events`` folders at any depth (a
    conversation's, a folder of them, a folder above that, as a session store's are found), or of the ``events``
    folder given; by conversation, each in index order (not the names' order: the index has five digits or more)."""
    found = [q for q in folder.rglob("event-*.json") if V1_EVENT_FILE.fullmatch(q.name)
             and (q.parent.name == "events" or q.parent == folder) and q.is_file()]
    return sorted(found, key=lambda q: (q.parent, int(V1_EVENT_FILE.fullmatch(q.name)[1])))


def parse(raw: bytes, where: str, lines: bool = False) -> Any:
    """One document: UTF-8 JSON with no bare NaN/Infinity, nested at most MAX_DEPTH deep (``lines``: a whole
    file, so a bad byte is named by its line). A line that is no JSON and opens no object is :class:`NotJSON`
    (another program's text mixed in), one the file ends inside :class:`CutLine`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not lines and exc.reason == "unexpected end of data" and not raw.endswith(b"\n"):  # a character cut
            raise CutLine(where, "the file ends inside a character of this line (not UTF-8 there): it was cut short "
                                 "(a logger stopped mid-write?)") from None
        newline = b"\n"
        line_start = raw.rfind(newline, 0, exc.start) + 1
        at = f"line {raw.count(newline, 0, exc.start) + 1}, " if lines else ""
        kind = NotJSON if not lines and not _opens_object(raw) else TranscriptFormatError
        raise kind(where, f"not UTF-8 ({at}byte {exc.start - line_start + 1} of the line is 0x{raw[exc.start]:02x}); "
                          "re-save the file as UTF-8") from None
    try:
        doc = strict_loads(text.lstrip("\ufeff"), unique=False)  # a key twice: the last, as the agent's client read it
    except RecursionError:
        raise TranscriptFormatError(where, f"nested too deeply (more than {MAX_DEPTH} levels of objects and lists)"
                                    ) from None
    except ValueError as exc:
        hint = _container_hint(exc, text, lines)
        kind = CutLine if hint == _CUT else NotJSON if not lines and not _opens_object(raw) else TranscriptFormatError
        raise kind(where, f"invalid JSON ({exc}){hint}") from None
    if too_deep(doc, MAX_DEPTH):
        raise TranscriptFormatError(where, f"nested too deeply (more than {MAX_DEPTH} levels of objects and lists)")
    return doc


def _opens_object(raw: bytes) -> bool:
    """Whether a line's first character past blanks (and a byte order mark) is ``{``: a record, broken or not."""
    return raw.lstrip().removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"{"


def _container_hint(exc: ValueError, text: str, whole_file: bool) -> str:
    """What to do when the file's name says the other container: JSON Lines named ``.json`` failed as "Extra data:
    line 2" and a pretty-printed document in a ``.jsonl`` as "Expecting value" on its line 1 (``[`` alone),
    neither saying that the name was the fault; and why a last line without its newline is invalid (a logger
    killed mid-write: "Unterminated string" said nothing of it)."""
    if whole_file and isinstance(exc, json.JSONDecodeError) and exc.msg == "Extra data":
        return ("; the file holds more than one JSON document: if it has one per line (JSON Lines), name it .jsonl, "
                "else give one document (a list of conversations)")
    if not whole_file and text.strip().lstrip("\ufeff") in ("[", "{"):
        return ("; this line opens a JSON document written over several lines (pretty-printed), not JSON Lines (one "
                "conversation per line): name the file .json, or write each conversation on one line")
    if not whole_file and isinstance(exc, json.JSONDecodeError) and not text.endswith("\n"):
        return _CUT
    return ""


_CUT = "; the file ends inside this line: it was cut short (a logger stopped mid-write?)"


def _otlp_lines(raw: bytes) -> bool:
    """Whether a ``.json`` that is no one document holds OTLP JSON a line (its first line alone is
    ``{"resourceSpans": ...}``): what the OpenTelemetry collector's file exporter writes, one export request a line,
    to the path it is given, ``traces.json`` in its own documentation. (It was refused as "more than one JSON
    document: ... name it .jsonl", and a folder of such files was read as nothing.)"""
    first = raw.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0]
    try:
        return otel.is_otlp(strict_loads(first.decode("utf-8"), unique=False))
    except (ValueError, RecursionError):
        return False


def documents(p: Path) -> Iterator[tuple[Any, str]]:
    """(document or its error, where) for each line of a .jsonl[.gz] file, or the one document of a .json[.gz]."""
    opener: Callable[..., Any] = gzip.open if p.name.endswith(".gz") else open
    check_compression(p, zstd=True)
    try:
        with open(p, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise SAMFileError(f"cannot read {p}: {exc}") from None
    if p.name.endswith(agent_framework.PACKED):  # MessagePack of an Agent Framework store: a session or its messages
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise SAMFileError(f"cannot read {p}: {exc}") from None
        yield from agent_framework.packed(raw, str(p))
        return
    if sqlitestores.is_database(head):  # an ADK session database: it was "not UTF-8 ... re-save the file as UTF-8"
        # (an OpenAI Agents SDK SQLiteSession's database: it was "no Google ADK session database"). ADK's test
        # first, as layouts does: it says a locked file may be either's (the Agents SDK's named every one its own)
        yield from adk_db.sessions(p) if adk_db.is_store(p) or not agents_db.is_store(p) else agents_db.sessions(p)
        return
    if zstdexport.is_proto(head):  # format: proto, uncompressed: it was "not UTF-8 ... re-save the file as UTF-8"
        raise SAMFileError(f"{p} {zstdexport.PROTO}")
    if (unpacked := zstdexport.decoded(p, head)) is not None:  # compression: zstd, a zstd library installed
        opener = lambda _p, _mode: io.BytesIO(unpacked)  # noqa: E731
    try:
        with opener(p, "rb") as fh:
            if _whole(p):
                where = str(p)
                raw = fh.read()
                if not raw.removeprefix(b"\xef\xbb\xbf").strip():  # no document: no conversation, as an empty .jsonl
                    return  # (it was "invalid JSON", and --allow-empty could not write its empty log)
                try:
                    doc: Any = parse(raw, where, lines=True)
                except TranscriptFormatError as err:
                    doc = err
                if not (isinstance(doc, TranscriptFormatError) and _otlp_lines(raw)):
                    yield doc, where
                    return
                fh = io.BytesIO(raw)  # the collector's file exporter writes JSON Lines, whatever the file's name
            n = 0
            try:
                for n, line in enumerate(fh, start=1):
                    if not line.strip() or (n == 1 and not line.lstrip(b"\xef\xbb\xbf").strip()):
                        continue
                    where = f"{p}:{n}"
                    try:
                        yield parse(line.removeprefix(b"\xef\xbb\xbf") if n == 1 else line, where), where
                    except TranscriptFormatError as err:
                        yield err, where
            except (OSError, EOFError) as exc:  # a cut .gz: the lines before are read, the rest is one bad item
                where = f"{p}:{n + 1}"
                read = f"lines 1-{n} were read" if n else "no line could be read"
                yield TranscriptFormatError(where, f"the file cannot be read on from here ({exc}); {read}: re-copy or "
                                                   "re-compress it, or ", Advice("skip"), " to keep what was read"), where
    except (OSError, EOFError) as exc:
        raise SAMFileError(f"cannot read {p}: {exc} (is it a complete .json/.jsonl, or .gz of one?)") from None


def conversations(path: str | Path, format: str | None = None, on_file: Callable[[Path], None] | None = None,
                  on_passed: Callable[[str], None] | None = None) -> Iterator[Item]:
    """Every conversation of ``path`` in file order (``format``: force one of FORMATS; None: tell from content; a
    folder's files tell their reader, and another is refused). ``on_file``: called with each file of a trajectory
    folder once its runs were yielded (for progress); ``on_passed``: with each file the folder passes over
    (:func:`passed_over`, each said in a warning too), for the import's report."""
    p = Path(path)
    if format is not None and format not in FORMATS:
        raise SAMFileError(f"unknown format {format!r}; formats: {', '.join(FORMATS)} (sam-data formats)")
    check_compression(p, zstd=True)  # a pipe or device: refused in one line (it blocked the reader)
    seen: dict[str, str] = {}  # episode id -> where it was first read
    if p.is_dir():  # a folder of runs or sessions: its files tell their reader, which --format must not contradict
        yield from _trajectory_folder(p, seen, on_file, format, on_passed)
        return
    if not p.is_file():
        raise SAMFileError(f"transcript file {'is a folder' if p.is_dir() else not_found(p)}: {p} (give a .jsonl[.gz] "
                           "of conversations, a .json[.gz] tau-bench, tau2, OTLP or OpenHands file, SWE-agent .traj "
                           "files or their folder, a session or OpenHands V1 conversation folder, or a Claude Code "
                           "project folder; sam-data formats lists them)")
    docs = documents(p)
    head = _to_first_good(docs)
    if not head:
        return
    first = head[-1]
    if format in (None, "llamaindex") and llamaindex.is_context(first[0]):  # was "expected a tau-bench trajectory"
        yield TranscriptFormatError(first[1], llamaindex.CONTEXT)
        return
    if format in (None, "gemini-cli") and _whole(p) and (hint := gemini_cli.not_a_session(p, first[0])):
        yield TranscriptFormatError(first[1], hint)
        return
    if format == "gemini-cli" or (format is None and (gemini_cli.is_header(first[0]) or gemini_cli.is_stream_json(
            first[0]) or (_whole(p) and gemini_cli.SESSION_FILE.fullmatch(_stem(p)) and isinstance(
            first[0], TranscriptFormatError)))):  # a session: its .json record, or its .jsonl's lines
        if not (gemini_cli.is_header(first[0]) or isinstance(first[0], TranscriptFormatError)):
            yield TranscriptFormatError(first[1], "not a Gemini CLI session: expected its metadata {\"sessionId\", "
                                        "\"projectHash\", ...} first" if not gemini_cli.is_stream_json(first[0]) else
                                        gemini_cli.STREAM_JSON, *_read_as(first[0], "gemini-cli"))
            return
        yield from _unique(iter([gemini_cli.conversation([*head, *docs], p, episode_id_of)]), seen)
        return
    if format == "codex" or (format is None and codex.is_rollout(first[0])):  # a session: its lines, one conversation
        yield from _unique(iter([_rollout(p, [*head, *docs])]), seen)
        return
    if format == "otel" or (format is None and otel.is_otlp(first[0])):
        good = []
        for doc, where in [*head, *docs]:
            if isinstance(doc, TranscriptFormatError):
                yield doc
            elif not otel.is_otlp(doc):
                yield TranscriptFormatError(where, "expected OTLP JSON {\"resourceSpans\": [...]}", *_read_as(doc, "otel"))
            else:
                good.append((doc, where))
        yield from _unique(otel.conversations(good, str(p), episode_id_of), seen)
        return
    if format == "langfuse" or (format is None and langfuse.is_export(first[0])):  # traces, pages, observations
        yield from _unique(_langfuse(iter([*head, *docs]), str(p)), seen)
        return
    if format == "codex-exec" or (format is None and (codex_exec.is_event(first[0]) or codex_exec.is_legacy(first[0]))):
        if not codex_exec.is_event(first[0]):  # codex exec --json's output: runs of thread events, one a thread
            legacy = codex_exec.is_legacy(first[0])
            yield TranscriptFormatError(first[1], codex_exec.LEGACY if legacy else "not a codex exec --json event "
                                        "{\"type\": \"thread.started\" | \"item.completed\" | ..., ...}",
                                        *(() if legacy else _read_as(first[0], "codex-exec")))
            return
        yield from _unique(codex_exec.conversations([*head, *docs], p, episode_id_of), seen)
        return
    if format in ("claude-code", None) and claude_stream.is_message(first[0]):  # claude -p's stream-json output:
        yield from _unique(claude_stream.conversations([*head, *docs], p, episode_id_of), seen)  # one run a session
        return
    if format == "claude-code" or (format is None and claude_code.is_entry(first[0])):  # a session: one entry a line
        if not claude_code.is_entry(first[0]):  # the first line that parses tells, as for every container
            yield TranscriptFormatError(first[1], "not a Claude Code transcript entry {\"type\", \"sessionId\", ...}",
                                        *_read_as(first[0], "claude-code"))
            return
        yield from _unique(claude_code.conversations([*head, *docs], p, episode_id_of), seen)
        return
    if not _whole(p) and format in (None, "agent-framework") and agent_framework.is_message(first[0]):
        yield from _unique(iter([_message_lines(p, [*head, *docs])]), seen)  # a FileHistoryProvider's session file
        return
    if _whole(p) and format in (None, "pydantic-ai") and pydantic_ai.is_history(first[0]):  # all_messages_json()
        yield from _unique(iter([_history(p, [*head, *docs], _stem(p).removesuffix(".json"))]), seen)
        return
    if _whole(p) and format in (None, "smolagents") and smolagents.is_steps(first[0]):  # get_full_steps()
        yield from _unique(iter([_history(p, [*head, *docs], _stem(p).removesuffix(".json"), "smolagents")]), seen)
        return
    if _whole(p) and format in (None, "llamaindex") and llamaindex.is_history(first[0]):  # memory.get_all()'s dumps
        yield from _unique(iter([_history(p, [*head, *docs], _stem(p).removesuffix(".json"), "llamaindex")]), seen)
        return
    if _whole(p) and format in (None, "autogen") and autogen.is_state(first[0]):  # await agent.save_state()
        yield from _unique(_saved(p, [*head, *docs], _stem(p).removesuffix(".json")), seen)
        return
    if format == "mini-swe-agent" or (format is None and (mini_swe_agent.is_trajectory(first[0]) or (
            _stem(p).endswith(mini_swe_agent.SUFFIX) and document_format(first[0]) is None))):  # named so, read by none
        yield from _mini_runs(p, [*head, *docs], _mini_name(p.name), seen)
        return
    if format in ("openhands", openhands.V1) or (format is None and not _stem(p).endswith(".traj")
                                                 and openhands.is_trajectory(first[0])):
        stem = _stem(p).rsplit(".", 1)[0]
        for doc, where in [*head, *docs]:  # an evaluation's output.jsonl: one run a line
            name = stem if _whole(p) else f"{stem}-line{where.rsplit(':', 1)[-1]}"
            if isinstance(doc, TranscriptFormatError):
                yield doc
            else:
                runs = openhands.conversations(doc, where, name, name, episode_id_of, format)
                yield from _unique(_hinted(runs, doc, format or openhands.format_of(doc) or "openhands"), seen)
        return
    if format == "swe-agent" or (format is None and (_stem(p).endswith(".traj") or swe_agent.is_trajectory(first[0]))):
        stem = _stem(p).rsplit(".", 1)[0]
        for doc, where in [*head, *docs]:  # JSON Lines of trajectories: one episode per line
            name = stem if _whole(p) else f"{stem}-line{where.rsplit(':', 1)[-1]}"
            if isinstance(doc, TranscriptFormatError):
                yield doc
            else:
                yield from _hinted(from_traj(doc, where, name, name, seen), doc, "swe-agent")
        return
    model = domain = ""
    if _stem(p).endswith(".json"):
        stem = _stem(p)[: -len(".json")]
        model, _, domain = stem.rpartition("-")
        model, domain = (model, domain) if model else (stem, "unknown")
    lines = [*head, *docs]
    lacks = response_chains.lacking(lines) if format in (None, "responses") else {}
    loops = response_chains.looping(lines) if format in (None, "responses") else {}
    for doc, where, left in _chained(lines, format):  # Responses requests chained: one conversation
        if isinstance(doc, TranscriptFormatError):
            yield doc
        elif tau2.is_results(doc) and format in (None, "tau2"):
            yield from _unique(tau2.conversations(doc, where, episode_id_of), seen)
        elif pydantic_ai.is_history(doc) and not _whole(p):  # its messages were each refused as no conversation
            yield TranscriptFormatError(where, pydantic_ai.UNNAMED)
        elif autogen.is_state(doc) and not _whole(p):  # a state a line: read as a conversation without an id
            yield TranscriptFormatError(where, autogen.UNNAMED)
        elif isinstance(doc, list):
            listed = [(item, f"{where}: conversation {n}") for n, item in enumerate(doc)]
            lacked = response_chains.lacking(listed) if format in (None, "responses") else {}
            looped = response_chains.looping(listed) if format in (None, "responses") else {}
            # a smolagents memory (a LlamaIndex history) is the document, each item a step (a message) of it: a
            # forced wrong --format on a history named no reader, as a message alone is no format's document
            whole = smolagents.is_steps(doc) or llamaindex.is_history(doc)
            for item, at, gone in _chained(listed, format):
                yield _left(_forced(_item(item, at, seen, format, model, domain), doc if whole else item, format),
                            gone, lacked, looped)
        else:
            yield _left(_forced(_item(doc, where, seen, format, model, domain, alone=True), doc, format), left, lacks,
                        loops)


def _history(p: Path, docs: list[tuple[Any, str]], name: str, fmt: str = "pydantic-ai") -> Item:
    """One conversation's Pydantic AI history, the one document of a ``.json`` file (``all_messages_json()``; or
    ``fmt``'s: a LlamaIndex memory's messages, a smolagents memory's steps), named by the file (a name of its path in the folder read): a
    ``.json`` list was read as conversations, each message refused as one ("expected ... a conversation {"id": ...,
    "messages": [...]}")."""
    doc, where = docs[0]
    if isinstance(doc, TranscriptFormatError):
        return doc
    if fmt == "llamaindex" and llamaindex.is_context(doc):
        return TranscriptFormatError(where, llamaindex.CONTEXT)
    return Conversation(episode_id_of(name), doc, where, episode_id_of(name), fmt)


def _message_lines(p: Path, docs: list[tuple[Any, str]]) -> Item:
    """An Agent Framework ``FileHistoryProvider``'s file, ``<session_id>.jsonl``, one ``Message.to_dict()`` a line:
    one conversation, named by the file (the session's id). It was "conversation without 'id'" at its first line,
    each message taken for a conversation of its own."""
    for doc, where in docs:
        if isinstance(doc, TranscriptFormatError):
            return doc
        if not agent_framework.is_message(doc):
            return TranscriptFormatError(where, "not an Agent Framework message {\"type\": \"message\", \"role\", "
                                                "\"contents\"}: a FileHistoryProvider's file holds one a line")
    name = agent_framework.session_of_file(_maf_stem(p))
    return Conversation(episode_id_of(name), [doc for doc, _ in docs], str(p), episode_id_of(name), "agent-framework")


def _maf_folder(histories: list[Path], snapshots: list[Path], seen: dict[str, str], format: str | None,
                on_file: Callable[[Path], None] | None) -> Iterator[Item]:
    """A folder's Agent Framework sessions: FileHistoryProvider files (:func:`_message_lines`), then session
    snapshots (a FileSessionStore's, session.to_dict() dumps). A session kept in both, an app's in-memory history
    saved by its store beside an audit trail's file, is read once: the longer record where one's messages begin the
    other's (:func:`agent_framework.diverges`; the snapshot's instructions kept), else refused naming both files and
    the first message where they differ (it was "duplicate conversation id", read from whichever came first under
    --skip-bad). A snapshot without messages whose history file the folder holds is read from that file
    (:func:`agent_framework.kept_in`). Snapshots are read twice where history files are beside them: first for the
    sessions both keep (where each is, read again with its history file: the snapshots of a folder of thousands of
    sessions were all held, read, until the last history file), then in order."""
    stems = {_maf_stem(q) for q in histories}
    # a history file's stem: the snapshot of its session, its file and where (the session read where a file holds
    # several, a file read again for each of its sessions being quadratic)
    held: dict[str, tuple[Path, str] | Conversation] = {}
    for q in snapshots if stems else ():
        docs = list(documents(q))
        for doc, where in docs:
            if (agent_framework.is_session(doc) and isinstance(sid := doc["session_id"], str)
                    and not agent_framework.kept_in(doc, stems)):
                stem = next(iter(sorted(agent_framework.stems_of(sid) & stems)), None)
                if stem is not None and stem not in held:
                    held[stem] = (q, where) if len(docs) == 1 else _item(doc, where, {}, format, "", "", alone=True)
    merged: set[str] = set()  # the snapshots read with their history file
    for q in histories:
        item = _message_lines(q, list(documents(q)))
        if isinstance(item, Conversation) and (at := held.get(_maf_stem(q))) is not None:
            snapshot = at if isinstance(at, Conversation) else next((
                _item(doc, where, {}, format, "", "", alone=True) for doc, where in documents(at[0]) if where == at[1]),
                None)
            if isinstance(snapshot, Conversation):  # a snapshot refused is read, and refused, with the others
                merged.add(snapshot.where)
                item = _one_session(item, snapshot)
        yield from _unique(iter([item]), seen)
        if on_file is not None:
            on_file(q)
    for q in snapshots:
        for doc, where in documents(q):
            if isinstance(doc, TranscriptFormatError):  # a packed snapshot that does not decode
                yield doc
            elif where not in merged and not agent_framework.kept_in(doc, stems):
                yield _item(doc, where, seen, format, "", "", alone=True)
        if on_file is not None:
            on_file(q)


def _one_session(history: Conversation, snapshot: Conversation) -> Item:
    """A session's FileHistoryProvider file and its snapshot read as one conversation: the longer record (the
    history's where they are as long), with the snapshot's instructions; differing records refused, naming both."""
    apart = agent_framework.diverges(history.messages, snapshot.messages)
    if apart is None:
        longer = snapshot if len(snapshot.messages) > len(history.messages) else history
        return dataclasses.replace(longer, policy=snapshot.policy or longer.policy)
    return TranscriptFormatError(snapshot.where, (
        f"session {history.episode_id!r} is kept twice, differently: its message {apart[1]} here differs from its "
        f"message {apart[0]} in its FileHistoryProvider's file {history.where} (a file of the same session id holding another "
        "history: the app restarted without its session store, or the provider added or set apart later?); neither "
        "is read: give the folder without the record the agent does not load its history from (a provider of "
        "load_messages=False keeps an audit trail)"))


def _maf_stem(p: Path) -> str:
    """An Agent Framework store's file name without its extension (.jsonl, .msgpack): the session's id, encoded."""
    return _stem(p).removesuffix(".jsonl").removesuffix(agent_framework.PACKED)


def _saved(p: Path, docs: list[tuple[Any, str]], name: str,
           configs: Mapping[Path, Mapping[str, Any]] | None = None) -> Iterator[Item]:
    """The conversations of an AutoGen ``save_state()`` written to a ``.json`` file, named by the file (a team's
    assistants each by the file and its name in ``agent_states``): such a file was refused as "expected ... a
    conversation {"id": ..., "messages": [...]}", and a folder of them as "not an OpenHands trajectory".
    ``configs``: the declarative configs saved beside it (:func:`_autogen_configs`), of which the one named as the
    state is its own (``STATE.json`` and ``STATE.config.json``, :func:`_pairs`) where it is of the state's team."""
    doc, where = docs[0]
    if isinstance(doc, TranscriptFormatError):
        yield doc
        return
    configs = configs or {}
    paired = next((c for q, c in configs.items() if _pairs(q, p)), None)
    try:
        found = autogen.contexts(doc, where, list(configs.values()), paired)
    except TranscriptFormatError as e:
        yield e
        return
    for agent, messages, at, policy, lacking in found:
        episode = episode_id_of(f"{name}/{agent}" if agent else name)
        yield Conversation(episode, messages, at, episode_id_of(name), "autogen", policy=policy,
                           lacking=(lacking,) if lacking else ())


# the words a state's or config's file name may end in, beside the name they share (team_a_state.json and
# team_a.config.json)
_PAIR_WORD = re.compile(r"[._-](?:state|saved_state|config|component|dump_component)$", re.IGNORECASE)


def _pairs(config: Path, state: Path) -> bool:
    """Whether the config file ``config`` is named as the state file ``state`` (beside a word saying which is
    which: ``team_a.json`` and ``team_a.config.json``, ``team_a_state.json`` and ``team_a_config.json``)."""
    def stem(q: Path) -> str:
        return _PAIR_WORD.sub("", q.name.removesuffix(".gz").removesuffix(".json"))
    return config != state and stem(config) == stem(state)


def _autogen_configs(configs: list[Path]) -> dict[Path, Mapping[str, Any]]:
    """The AutoGen declarative configs of a folder (``dump_component()`` saved beside its states,
    autogen.is_config), by file: each state takes the system messages of its own team's (autogen.contexts), which
    by agent name alone took another team's whose assistant was named alike."""
    found = {}
    for q in configs:
        doc = next((d for d, _ in documents(q) if autogen.is_config(d)), None)
        if doc is not None:
            found[q] = doc
    return found


def _chained(docs: list[tuple[Any, str]], format: str | None) -> list[tuple[Any, str, tuple[str, ...]]]:
    """Responses requests chained by previous_response_id joined into their conversations (response_chains), with
    where the branches a chain left were; under another forced format, the documents as they are."""
    return response_chains.join(docs) if format in (None, "responses") else [(d, w, ()) for d, w in docs]


def _left(conv: Item, left: tuple[str, ...], lacks: Mapping[str, str], loops: Mapping[str, str]) -> Item:
    """``conv`` with the places of the branches its chain of requests left, the response it continues that the
    file lacks (response_chains.lacking) and the loop of ids its request leads round (response_chains.looping), for
    the import report."""
    if not isinstance(conv, Conversation) or not (left or conv.where in lacks or conv.where in loops):
        return conv
    return dataclasses.replace(conv, abandoned=left or conv.abandoned, continues=lacks.get(conv.where, ""),
                               loops=loops.get(conv.where, ""))


def _rollout_parents(paths: list[Path]) -> dict[str, str]:
    """Of the rollouts ``paths``, each session's id -> the id of the session it came from (a fork's, a subagent's:
    :func:`codex.session`), from their first lines only; one that cannot be read is its reading's to report."""
    parents: dict[str, str] = {}
    for q in paths:
        try:
            with closing(documents(q)) as docs:
                head = _to_first_good(docs)
            sid, parent = codex.session([head[-1][0]], str(q)) if head else (None, None)
        except (SAMFileError, TranscriptFormatError):
            continue
        if sid is not None and parent is not None:
            parents[sid] = parent
    return parents


def _rollout(p: Path, docs: list[tuple[Any, str]], parents: dict[str, str] | None = None) -> Item:
    """A Codex rollout file's session (:func:`codex.conversation`), or the error of its first bad line: a line that
    cannot be read spoils the session, as a bad event file does a V1 conversation's; but a last line the file ends
    inside (:class:`CutLine`: Codex still writing the session when it was copied) is left out, the lines before it
    read (none after it could need them) and the session names it (``cut``), as the claude-code reader does.
    ``parents``: the other rollouts' lines of sessions (:func:`_rollout_parents`), for the split group."""
    cut = docs[-1][1] if len(docs) > 1 and isinstance(docs[-1][0], CutLine) else ""
    docs = docs[:-1] if cut else docs
    bad = next((doc for doc, _ in docs if isinstance(doc, TranscriptFormatError)), None)
    if bad is not None:
        return bad
    if not docs:  # in a folder (a file given alone with no line is an empty file)
        return TranscriptFormatError(str(p), "a Codex rollout without a line: no session to read (Codex writes the "
                                             "file once its session has its first item)")
    lines = [doc for doc, _ in docs]
    if not codex.is_rollout(lines[0]):  # --format codex on another format's file
        return TranscriptFormatError(docs[0][1], "not a Codex rollout (its first line is {\"timestamp\", \"type\": "
                                                 "\"session_meta\", \"payload\"}, or the session's {\"id\", "
                                                 "\"timestamp\"} in rollouts before that layout)",
                                     *_read_as(lines[0], "codex"))
    try:
        return dataclasses.replace(codex.conversation(lines, str(p), _stem(p), episode_id_of, parents), cut=cut)
    except TranscriptFormatError as err:
        return err


def _hinted(items: Iterator[Item], doc: Any, reader: str) -> Iterator[Item]:
    """``items``, a refusal of ``doc`` by ``reader`` (forced on a file of another format) naming the reader that
    reads it."""
    for item in items:
        yield _forced(item, doc, reader)


def _forced(item: Item, doc: Any, reader: str | None) -> Item:
    if reader is not None and isinstance(item, TranscriptFormatError) and not item.advice and (
            hint := _read_as(doc, reader)):
        return TranscriptFormatError(item.where, *item.parts, *hint)
    return item


def _read_as(doc: Any, reader: str) -> tuple[str | Advice, ...]:
    """For a document ``reader`` refused: the format it is, as read without --format, when that is another's
    (--format otel on Gemini lines said only 'expected OTLP JSON')."""
    fmt = document_format(doc)
    if fmt is None or FORMATS[fmt].to_chat is FORMATS[reader].to_chat:
        return ()
    return f"; it is {FORMATS[fmt].title}, which the {fmt} reader reads: ", Advice("format", fmt)


def document_format(doc: Any) -> str | None:
    """The format a document is read as when none is forced (None: none reads it)."""
    for fmt, test in (("otel", otel.is_otlp), ("tau2", tau2.is_results), ("openhands", openhands.is_trajectory),
                      ("swe-agent", swe_agent.is_trajectory), ("mini-swe-agent", mini_swe_agent.is_trajectory),
                      ("codex", codex.is_rollout),
                      ("claude-code", claude_code.is_entry), ("claude-code", claude_stream.is_message),
                      ("gemini-cli", gemini_cli.is_header),
                      ("codex-exec", codex_exec.is_event), ("pydantic-ai", pydantic_ai.is_history),
                      ("autogen", autogen.is_state), ("smolagents", smolagents.is_steps),
                      ("llamaindex", llamaindex.is_history), ("adk", adk.is_session),
                      ("agent-framework", agent_framework.is_session), ("langfuse", langfuse.is_export)):
        if test(doc):
            return openhands.format_of(doc) if fmt == "openhands" else fmt
    conv = _item(doc[0] if isinstance(doc, list) and doc else doc, "", {}, None, "", "")
    if isinstance(conv, Conversation) and isinstance(conv.messages, list) and conv.messages:
        return conv.format or detect(conv.messages)
    return None


def _to_first_good(docs: Iterator[tuple[Any, str]]) -> list[tuple[Any, str]]:
    """The documents up to the first that parsed (all of them when none did): that one tells the container. Why:
    told from the first line, a JSON Lines file whose first line was bad (cut, not UTF-8) read its SWE-agent runs or
    OTLP exports as conversation objects, every line refused, so ``--skip-bad`` kept nothing of it."""
    head = []
    for item in docs:
        head.append(item)
        if not isinstance(item[0], TranscriptFormatError):
            break
    return head


def _trajectory_folder(folder: Path, seen: dict[str, str], on_file: Callable[[Path], None] | None = None,
                       format: str | None = None, on_passed: Callable[[str], None] | None = None) -> Iterator[Item]:
    """Every run of a folder (:func:`layouts`), each layout's by its reader, their episode ids unique together.
    SWE-agent's output folder or OpenHands' trajectory folder: episode ids are the files' paths in the folder (one
    instance is run by several configurations), groups the instance ids (a SWE-agent run's replay_config, else the
    file's name, which SWE-agent names by it), so an instance's runs share a split. ``format``: the --format given,
    refused unless it is the reader of every layout the folder holds (:func:`_check_forced`)."""
    found = layouts(folder)
    for q, why, what in passed_over(folder):  # said where the folder is read, once (layouts is asked several times)
        log.warning("%s %s: passed over, as %s", q, why, what)
        if on_passed is not None:
            on_passed(str(q))
    if not found:
        raise SAMFileError(sessions.multi_agent_only(folder) or eventless(folder) or headless_only(folder) or (
            f"{folder} is a folder without SWE-agent .traj files, mini-swe-agent .traj.json files, session stores "
            "(Strands Agents, OpenHands), OpenHands V1 conversations (events/event-NNNNN-ID.json), Codex rollouts "
            "(rollout-*.jsonl), Claude Code or Gemini CLI session files (.jsonl), OTLP JSON files (an OpenTelemetry "
            "collector's file exporter), OpenHands .json trajectories, AutoGen saved states, smolagents memories, "
            "LlamaIndex chat histories, ADK or Agent Framework sessions or Pydantic AI histories (.json, one a "
            "conversation), Langfuse traces (.json, .jsonl), ADK session "
            "databases (.adk/session.db), OpenAI Agents SDK session databases (SQLiteSession); give "
            "a transcript file, the folder SWE-agent or OpenHands wrote its trajectories to, a session or conversation "
            "folder, or a Claude Code project folder (sam-data formats)"))
    _check_forced(folder, found, format)
    maf_read = False
    for kind, paths in found.items():
        if kind == "sessions":  # a session store: a conversation's messages or events, one file each
            yield from _unique(sessions.conversations(paths, documents, episode_id_of, on_file), seen)
        elif kind == openhands.V1:
            yield from _v1_conversations(folder, paths, seen, on_file)
        elif kind == "codex":  # a rollout file each: one session, named by its id, grouped by its line's first
            parents = _rollout_parents(paths)
            for q in paths:
                yield next(_unique(iter([_rollout(q, list(documents(q)), parents)]), seen))
                if on_file is not None:
                    on_file(q)
        elif kind == "mini-swe-agent":  # a run a file, named by its path in the folder
            for q in paths:
                yield from _mini_runs(q, list(documents(q)), _mini_name(q.relative_to(folder).as_posix()), seen)
                if on_file is not None:
                    on_file(q)
        elif kind == "claude-code":  # a session file each: its main chain and its subagents' (no run where none),
            lineage = claude_code.lineage(paths, documents)  # grouped with the sessions it continues or copies
            for q in paths:
                yield from _unique(claude_code.conversations(documents(q), q, episode_id_of, alone=False,
                                                             lineage=lineage), seen)
                if on_file is not None:
                    on_file(q)
        elif kind == "otel":  # every file's spans together: a conversation's spans spread over rotated files
            yield from _unique(_otel_folder(folder, paths, on_file), seen)
        elif kind == "langfuse":  # every file's observations together: a session's traces downloaded a file each
            yield from _unique(_langfuse(itertools.chain.from_iterable(documents(q) for q in paths), str(folder)), seen)
            for q in paths if on_file is not None else ():
                on_file(q)
        elif kind in ("pydantic-ai", "llamaindex", "smolagents"):  # a conversation's history (a smolagents
            for q in paths:  # memory's steps) a file, named by its path in the folder
                name = q.relative_to(folder).as_posix().removesuffix(".gz").removesuffix(".json")
                yield from _unique(iter([_history(q, list(documents(q)), name, kind)]), seen)
                if on_file is not None:
                    on_file(q)
        elif kind == "autogen":  # a save_state() a file, named by its path in the folder; the agents' configs
            configs = [q for q in paths if _first_is(q, autogen.is_config)]  # (dump_component()) their policy
            docs = _autogen_configs(configs)
            for q in paths:
                if q in configs:
                    continue
                name = q.relative_to(folder).as_posix().removesuffix(".gz").removesuffix(".json")
                yield from _unique(_saved(q, list(documents(q)), name, docs), seen)
                if on_file is not None:
                    on_file(q)
        elif kind in ("adk", "adk-db", "agents-db"):  # a session's dump a file (its sessions a line each, or a
            for q in paths:  # database of them), named by its user, app and id
                for doc, where in documents(q):
                    if isinstance(doc, TranscriptFormatError):
                        yield doc
                    else:
                        yield _item(doc, where, seen, format, "", "", alone=True)
                if on_file is not None:
                    on_file(q)
        elif kind in ("agent-framework", MAF_HISTORY):  # the snapshots and history files together, once
            if not maf_read:
                yield from _maf_folder(found.get(MAF_HISTORY, []), found.get("agent-framework", []), seen, format,
                                       on_file)
            maf_read = True
        elif kind == "gemini-cli":  # a session file each
            for q in paths:
                yield from _unique(gemini_cli.conversations([q], documents, episode_id_of), seen)
                if on_file is not None:
                    on_file(q)
        else:
            yield from _run_files(folder, paths, seen, on_file, format)


# a folder's runs, by layout as said ({s}: the plural's ending) and the formats whose readers read them (an
# OpenHands .json is 0.x's or V1's by its events, and a forced one of the two reads it as a file's)
_HELD = {"otel": ("OTLP JSON file{s} (OpenTelemetry spans)", ("otel",)),
         "swe-agent": ("SWE-agent trajectory file{s} (.traj)", ("swe-agent",)),
         "mini-swe-agent": ("mini-swe-agent trajectory file{s} (.traj.json)", ("mini-swe-agent",)),
         "strands": ("Strands Agents session conversation{s}", ("bedrock",)),
         "openhands-session": ("OpenHands 0.x session{s}", ("openhands",)),
         openhands.V1: ("OpenHands V1 conversation{s}", (openhands.V1,)),
         "codex": ("Codex rollout{s} (rollout-*.jsonl)", ("codex",)),
         "claude-code": ("Claude Code session file{s} (.jsonl)", ("claude-code",)),
         "gemini-cli": ("Gemini CLI session file{s} (session-*.jsonl)", ("gemini-cli",)),
         "openhands": ("OpenHands trajectory file{s} (.json)", ("openhands", openhands.V1)),
         "pydantic-ai": ("Pydantic AI message history file{s} (.json)", ("pydantic-ai",)),
         "autogen": ("AutoGen saved state file{s} (.json)", ("autogen",)),
         "smolagents": ("smolagents memory file{s} (.json)", ("smolagents",)),
         "llamaindex": ("LlamaIndex chat history file{s} (.json)", ("llamaindex",)),
         "adk": ("ADK session file{s} (.json)", ("adk",)),
         "agent-framework": ("Agent Framework session file{s} (.json, .msgpack)", ("agent-framework",)),
         MAF_HISTORY: ("Agent Framework FileHistoryProvider file{s} (.jsonl, .msgpack)", ("agent-framework",)),
         "adk-db": ("ADK session database{s} (.adk/session.db)", ("adk",)),
         "agents-db": ("OpenAI Agents SDK session database{s} (SQLiteSession)", ("responses",)),
         "langfuse": ("Langfuse trace file{s} (.json, .jsonl)", ("langfuse",))}


def _held(found: dict[str, list[Path]]) -> dict[str, set[Path]]:
    """The runs of a folder's layouts (:func:`layouts`) by :data:`_HELD`'s keys: a file each, a session's or V1
    conversation's folder each (its messages or events), as they are read."""
    runs: dict[str, set[Path]] = {}
    for kind, paths in found.items():
        for q in paths:
            if kind == "sessions":
                runs.setdefault("strands" if sessions.kind_of(q) == "strands" else "openhands-session", set()).add(
                    q.parent)
            else:
                runs.setdefault(kind, set()).add(q.parent if kind == openhands.V1 else q)
    return runs


def held_runs(found: dict[str, list[Path]]) -> str:
    """What a folder's layouts (:func:`layouts`) hold, said for a user: each kind of run counted and the reader that
    reads it (``2 SWE-agent trajectory files (.traj) (read by the swe-agent reader)``), where a refused --format and
    sam-data validate name a folder's contents (validate had its own list, which named a layout by its key alone:
    "swe-agent runs", "otel runs")."""
    return ", ".join(f"{len(r)} {_HELD[kind][0].format(s='' if len(r) == 1 else 's')} (read by the "
                     f"{' or '.join(_HELD[kind][1])} reader)" for kind, r in _held(found).items())


def _check_forced(folder: Path, found: dict[str, list[Path]], format: str | None) -> None:
    """Refuse a --format that is not the reader of every layout of ``folder`` (it was passed over: ``--format
    openhands`` read SWE-agent's runs as SWE-agent's and a Strands store by the bedrock reader, and ``--format
    gemini`` said a session folder was no folder to give), naming what the folder holds and which reader reads it."""
    if format is None:
        return
    runs = _held(found)
    reads = [format in _HELD[kind][1] for kind in runs]
    if all(reads):
        return
    held = held_runs(found)
    part, alone = (("every run of ", f"give its {format} runs alone") if any(reads)
                   else ("", f"give one file of the {format} format"))
    raise SAMFileError(f"--format {format} does not read {part}{folder}: it holds {held}; drop --format (a folder's "
                       f"files tell their reader, each run its own), or {alone}")


def _otel_folder(folder: Path, paths: list[Path], on_file: Callable[[Path], None] | None) -> Iterator[Item]:
    """The conversations of a folder's OTLP files, their spans read together (a line that is no OTLP document is
    an error naming it, as in one file)."""
    good = []
    for q in paths:
        for doc, where in documents(q):
            if isinstance(doc, TranscriptFormatError):
                yield doc
            elif not otel.is_otlp(doc):
                yield TranscriptFormatError(where, "expected OTLP JSON {\"resourceSpans\": [...]}",
                                            *_read_as(doc, "otel"))
            else:
                good.append((doc, where))
        if on_file is not None:
            on_file(q)
    yield from otel.conversations(good, str(folder), episode_id_of)


def _langfuse(docs: Iterator[tuple[Any, str]], path: str) -> Iterator[Item]:
    """The conversations of Langfuse documents, of one file or a folder's files read together (a session's traces
    downloaded a file each are one conversation); a document that is none is an error naming it."""
    good = []
    for doc, where in docs:
        if isinstance(doc, TranscriptFormatError):
            yield doc
        elif not langfuse.is_export(doc):
            yield TranscriptFormatError(where, "expected a Langfuse trace {\"id\", \"timestamp\", \"observations\"}, a "
                                        "page {\"data\", \"meta\"} of traces or observations, or an observation",
                                        *_read_as(doc, "langfuse"))
        else:
            good.append((doc, where))
    yield from langfuse.conversations(good, path, episode_id_of)


def _run_files(folder: Path, paths: list[Path], seen: dict[str, str],
               on_file: Callable[[Path], None] | None, format: str | None = None) -> Iterator[Item]:
    """The runs of SWE-agent ``.traj`` files or OpenHands ``.json`` trajectories, one file each (``format``: the
    OpenHands reader forced, 0.x's or V1's, else told by each file's events)."""
    for q in paths:
        suffix = "." + _stem(q).rsplit(".", 1)[-1]
        name = q.relative_to(folder).as_posix().removesuffix(".gz").removesuffix(suffix)
        for doc, where in documents(q):
            if isinstance(doc, TranscriptFormatError):
                yield doc
            elif suffix == ".json":
                runs = openhands.conversations(doc, where, name, _stem(q)[:-len(suffix)], episode_id_of,
                                               format if format in ("openhands", openhands.V1) else None)
                yield from _unique(runs, seen)
            else:
                yield from from_traj(doc, where, name, _stem(q)[:-len(suffix)], seen)
        if on_file is not None:
            on_file(q)


def _v1_conversations(folder: Path, paths: list[Path], seen: dict[str, str],
                      on_file: Callable[[Path], None] | None) -> Iterator[Item]:
    """The OpenHands V1 conversations of ``folder``, one a folder of event files: episode and group its conversation
    folder's name (its path in ``folder`` where it is below it); a bad event file is the conversation's error."""
    for events_dir, group in itertools.groupby(paths, key=lambda q: q.parent):
        files = list(group)
        conv = _v1_conversation_folder(events_dir)
        name = conv.relative_to(folder).as_posix() if conv != folder and conv.is_relative_to(folder) else conv.name
        indexes = [int(V1_EVENT_FILE.fullmatch(q.name)[1]) for q in files]
        docs = [doc for q in files for doc, _ in documents(q)]
        bad = next((doc for doc in docs if isinstance(doc, TranscriptFormatError)), None)
        if bad is None and indexes != list(range(len(files))):  # the SDK reads up to the first gap
            n = next(i for i, at in enumerate(indexes) if at != i)
            bad = TranscriptFormatError(str(events_dir), f"no event file numbered {n} (event-{n:05d}-ID.json) before "
                                                         f"{files[n].name}: the conversation's events are incomplete")
        off: tuple[str, ...] = ()
        leaf = _leaf(conv) or ""
        try:
            off = tuple(str(files[i]) for i in openhands_tree.left(docs, leaf or None)) if bad is None else ()
        except openhands_tree.LaterParent as err:
            bad = TranscriptFormatError(str(files[err.at]), str(err))
        yield bad if bad is not None else next(_unique(iter([Conversation(
            episode_id_of(name), docs, str(events_dir), conv.name, openhands.V1, abandoned=off, head=leaf)]), seen))
        for q in files if on_file is not None else ():
            on_file(q)


def _v1_conversation_folder(events_dir: Path) -> Path:
    """The conversation folder of a V1 conversation's folder of event files (its ``events`` folder's parent)."""
    return events_dir.parent if events_dir.name == "events" else events_dir


def v1_states(folder: Path) -> list[Path]:
    """The ``base_state.json`` files whose ``leaf_event_id`` the V1 conversations of ``folder`` are read to
    (:func:`_leaf`), sorted: what their cached conversion is keyed by beside their events, a head moved back with no
    new event changing no event file. One may lie outside ``folder``: the ``events`` folder given, its state beside
    it."""
    return sorted({state for q in v1_event_files(folder)
                   if (state := _v1_conversation_folder(q.parent) / "base_state.json").is_file()})


def _leaf(conv: Path) -> str | None:
    """The head a V1 conversation folder's ``base_state.json`` names (its ``leaf_event_id``; None: no state, no head
    named, or a state that cannot be read, whose events are then read from the last one written, as before the state
    was read: the events are the conversation's record, the state a snapshot beside them)."""
    state = conv / "base_state.json"
    if not state.is_file():
        return None
    try:
        docs = list(itertools.islice(documents(state), 1))
    except SAMFileError:
        return None
    doc = docs[0][0] if docs else None
    leaf = doc.get("leaf_event_id") if isinstance(doc, Mapping) else None
    return leaf if isinstance(leaf, str) else None


def _mini_name(path: str) -> str:
    """A mini-swe-agent file's path without ``.traj.json`` (or another file's without its extension) and ``.gz``."""
    path = path.removesuffix(".gz")
    return path.removesuffix(mini_swe_agent.SUFFIX) if path.endswith(mini_swe_agent.SUFFIX) else path.rsplit(".", 1)[0]


def _mini_runs(p: Path, docs: list[tuple[Any, str]], name: str, seen: dict[str, str]) -> Iterator[Item]:
    """The runs of a mini-swe-agent file: its one trajectory (episode ``name``, grouped by its instance, else the
    file's name), or one a line in a ``.jsonl`` of them."""
    group = _mini_name(p.name)
    for doc, where in docs:
        if isinstance(doc, TranscriptFormatError):
            yield doc
        else:
            line = "" if _whole(p) else f"-line{where.rsplit(':', 1)[-1]}"
            yield from _hinted(_unique(mini_swe_agent.conversations(doc, where, f"{name}{line}", f"{group}{line}",
                                                                    episode_id_of), seen), doc, "mini-swe-agent")


def from_traj(doc: Any, where: str, name: str, group: str, seen: dict[str, str]) -> Iterator[Item]:
    """The episodes of one SWE-agent ``.traj`` document (one, or one per attempt of a retry agent's)."""
    yield from _unique(swe_agent.conversations(doc, where, name, group, episode_id_of), seen)


def _unique(items: Iterator[Item], seen: dict[str, str]) -> Iterator[Item]:
    """Each conversation whose episode id was not read before; a repeated id is an error naming the first, and
    saying so where the repeat is the same conversation logged again (:func:`_logged_again`)."""
    for item in items:
        if isinstance(item, Conversation):
            if item.episode_id in seen:
                again = _logged_again(item, seen.get(_PRINT + item.episode_id, ""))
                item = TranscriptFormatError(item.where, f"duplicate conversation id {item.episode_id!r}, first at "
                                                         f"{seen[item.episode_id]} " + (again or (
                                                             "(episode ids must be unique; ids differing only in "
                                                             "characters outside [A-Za-z0-9._-] are one, as the spec "
                                                             "writes them)")))
            else:
                seen[item.episode_id] = item.where
                seen[_PRINT + item.episode_id] = _fingerprint(item.messages)
        yield item


_PRINT = "\0"  # seen's key of an episode's fingerprint: no episode id holds it (episode_id_of writes [A-Za-z0-9._-])


def _fingerprint(messages: Any) -> str:
    """How many messages a conversation has and a digest of them, to tell it again from a longer copy."""
    if not isinstance(messages, list):
        return ""
    return f"{len(messages)}:{_digest(messages)}"


def _digest(messages: list[Any]) -> str:
    return hashlib.sha1(json.dumps(messages, sort_keys=True, default=str).encode()).hexdigest()


def _logged_again(item: Conversation, first: str) -> str:
    """Why a repeated id is no mistake of naming: the conversation logged again, as long or longer, its first
    messages the earlier line's (a log written at every turn: a LangGraph thread's state, a chat's messages so far).
    Found by a walkthrough: the error said only that ids must be unique, and --skip-bad kept the shortest line."""
    n, _, digest = first.partition(":")
    if not digest or not isinstance(item.messages, list) or len(item.messages) < int(n) \
            or _digest(item.messages[:int(n)]) != digest:
        return ""
    more = len(item.messages) - int(n)
    return (f"(the same conversation logged again{f', {more} messages longer' if more else ''}: a log written at "
            "every turn, each line the conversation so far? keep each id's last line; --skip-bad would keep the "
            "first, the shortest)")


def _id(obj: Mapping[str, Any], key: str, where: str) -> str:
    raw = obj.get(key)
    if raw in (None, ""):
        # OpenAI's fine-tuning and evals files ({"messages", "tools"} a line) have none: say how to give them one
        # (counting the values read: input_line_number counts newlines, and a last line without one repeated an id)
        add = ("; a file of {\"messages\"} lines without ids (OpenAI's fine-tuning format) gets them by jq -c -n "
               "'foreach inputs as $c (0; .+1; {id: tostring} + $c)' FILE > WITH_IDS.jsonl (an id kept when lines "
               "are added, for a fixed split, is better: the conversation's own id)"
               if key == "id" and "messages" in obj else "")
        raise TranscriptFormatError(where, f"conversation without '{key}' (each needs a unique id: the episode id{add})")
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise TranscriptFormatError(where, f"'{key}' is {json_type(raw)}; expected a string or an integer")
    return str(raw)


def _openai_tools(messages: list[Any]) -> bool:
    """Whether messages hold OpenAI chat's tool use (``tool_calls``, a ``tool`` or ``function`` message): then a
    top-level ``system`` is a logger's place for the system prompt, not a mark of Anthropic Messages (whose reader
    refused the ``tool`` role, and the conversation with it)."""
    return any(isinstance(m, Mapping) and (m.get("role") in ("tool", "function") or "tool_calls" in m
                                           or "function_call" in m) for m in messages)


def _item(obj: Any, where: str, seen: dict[str, str], format: str | None, model: str, domain: str,
          alone: bool = False) -> Item:
    """One container item: a conversation object, or a tau-bench trajectory ``{task_id, trial, traj}`` (episode
    ``tau1-{domain}-{model}-task{task_id}-trial{trial}``, the file named ``{model}-{domain}.json``); ``alone``: a
    document of its own (a line), not an item of a list."""
    try:
        if isinstance(obj, Mapping) and "traj" in obj and domain and format in (None, "tau1"):
            task = _id(obj, "task_id", where)
            eid = episode_id_of(f"tau1-{domain}-{model}-task{task}-trial{obj.get('trial', 0)}")
            conv = Conversation(eid, obj["traj"], where, f"{domain}-task{task}", "tau1")
        elif format == "tau1":  # it was read as something else, silently
            raise TranscriptFormatError(where, "--format tau1 reads a tau-bench v1 file named {model}-{domain}.json[.gz]"
                                               ", a list of {task_id, trial, traj}; this is not one: drop --format "
                                               "(the content tells) or give the format it is (sam-data formats)")
        elif adk.is_session(obj) and format in (None, "adk"):  # session.model_dump_json(): its events
            # named by user, app and id, ADK's key of a session (an app may give ids: two users' "default" were one
            # id), in ScopedMemory.episode_of's order, the episode SAMMemoryService stores the session in
            raw_id = "/".join(_id(obj, k if k in obj else gemini.camel(k), where) for k in ("user_id", "app_name", "id"))
            conv = Conversation(episode_id_of(raw_id), obj["events"], where, episode_id_of(raw_id), "adk",
                                adk.policy(obj, where), owner=adk.owner(obj))
        elif agent_framework.is_session(obj) and format in (None, "agent-framework"):  # session.to_dict(): its
            # history provider's messages, named by the session's id
            raw_id = _id(obj, "session_id", where)
            conv = Conversation(episode_id_of(raw_id), agent_framework.messages_of(obj, where), where,
                                episode_id_of(raw_id), "agent-framework", agent_framework.policy(obj, where))
        elif bedrock.is_invocation_log(obj):  # its "input" / "output" are no conversation's
            raise TranscriptFormatError(where, bedrock.INVOCATION_LOG)
        elif isinstance(obj, Mapping) and any(k in obj for k in CONVERSATION_KEYS):
            raw_id = _id(obj, "id", where)
            key = next((k for k in ("messages", "contents", "steps") if k in obj), None)
            messages = (bedrock.with_output(obj, where) if key == "messages" else obj[key] if key
                        else responses.items_of(obj, where))
            if key == "steps" and not isinstance(messages, list):  # smolagents: agent.memory.get_full_steps()
                raise TranscriptFormatError(where, f"'steps' is {json_type(messages)}, expected the list "
                                                   "agent.memory.get_full_steps() returns (smolagents)")
            if key == "contents" and not isinstance(messages, list):  # it was "'messages' is ...", a key not there
                raise TranscriptFormatError(where, f"'contents' is {json_type(messages)}, expected a list of Gemini "
                                                   "contents {\"role\", \"parts\": [...]}")
            fmt = format if format not in (None, "tau1") else {"contents": "gemini", "steps": "smolagents",
                                                                None: "responses"}.get(key)
            if fmt is None and isinstance(messages, list):  # a top-level "system" is Anthropic's, as is its shape
                fmt = detect(messages)
                if fmt == "openai" and "system" in obj and not _openai_tools(messages):
                    fmt = "anthropic"
            policy = ""
            if obj.get("system") is not None:  # Converse's system blocks have no "type": Anthropic's reader read none
                policy = (bedrock.policy if fmt == "bedrock" else anthropic.policy)(obj["system"], where)
            if isinstance(obj.get("instructions"), str):
                policy = obj["instructions"]
            policy = gemini.policy(obj, where) or policy  # system_instruction
            if key == "steps" and obj.get("system_prompt") is not None:  # agent.memory.system_prompt.system_prompt
                if not isinstance(obj["system_prompt"], str):
                    raise TranscriptFormatError(where, f"'system_prompt' is {json_type(obj['system_prompt'])}, "
                                                       "expected the agent's system prompt (a string)")
                messages = [{"system_prompt": obj["system_prompt"]}, *messages]  # its step, as the memory holds it:
                # a CodeAgent's prompt names its tools' parameters, which positional arguments take
            # a null or empty group names no task (an exporter's "task_id": null): the next key, as if absent; read
            # as the group "None", every such line was one task, wholly in train or in test
            group = next((obj[k] for k in ("group", "task_id") if obj.get(k) not in (None, "")), raw_id)
            if isinstance(group, (dict, list)):
                raise TranscriptFormatError(where, f"'group' is {json_type(group)}; expected a string")
            conv = Conversation(episode_id_of(raw_id), messages, where, str(group), fmt, policy)
        elif (openhands.is_event(obj) or openhands.is_v1_event(obj)) and alone:  # a line of its own: no reader
            # takes it ("try --format openhands" did not read it either)
            raise TranscriptFormatError(where, openhands.ALONE_V1 if openhands.is_v1_event(obj) else openhands.ALONE)
        elif openhands.is_event(obj) or openhands.is_v1_event(obj):  # an OpenHands trajectory, another --format
            reader = openhands.V1 if openhands.is_v1_event(obj) else "openhands"
            raise TranscriptFormatError(where, "an OpenHands event, not a conversation: the file is an OpenHands "
                                               f"trajectory, which the {reader} reader reads: ", Advice("format", reader))
        elif adk.is_event(obj) or isinstance(obj, Mapping) and isinstance(obj.get("events"), list) and adk.sniff(
                obj["events"]):  # a session's events saved alone, or a session without its app and user
            raise TranscriptFormatError(where, adk.NOT_SESSION)
        elif isinstance(obj, Mapping) and {"episode_id", "step", "kind"} <= obj.keys():  # the converter's own output
            raise TranscriptFormatError(where, "an agent-log event (episode_id, step, kind), not a conversation: the "
                                               "file is an agent log already and needs no conversion (sam-data "
                                               "validate checks it; sam-train fit --data.train takes it as it is)")
        elif format is None and isinstance(obj, Mapping) and (
                "role" in obj or obj.get("type") in (*responses.CALLS, *responses.OUTPUTS)):
            # a bare list of one conversation's messages (an Agents SDK result.to_input_list() dumped as it is); not
            # under a --format, where the file may be another reader's (a smolagents memory's messages), which
            # _forced names: "written as {id, messages}" told to wrap a file that reader reads as it is
            raise TranscriptFormatError(where, "a message, not a conversation: a file of one conversation's messages "
                                               "or Responses items (result.to_input_list()) is written as "
                                               "{\"id\": NAME, \"messages\": [...]}, a .jsonl of one a line")
        else:
            what = "a tau-bench trajectory {task_id, trial, traj}, " if domain else ""
            got = json_type(obj)  # an object's keys: a misnamed field ("msgs", "conversation") is then seen at once
            if isinstance(obj, Mapping) and obj:
                keys = [str(k)[:40] for k in list(obj)[:8]]
                got += " with keys " + ", ".join(map(repr, keys)) + (", ..." if len(obj) > 8 else "")
            raise TranscriptFormatError(where, f"expected {what}a conversation {{\"id\": ..., \"messages\": [...]}}, "
                                               "Responses items {\"id\", \"input\", \"output\"} or Gemini "
                                               "{\"id\", \"contents\"} "
                                               f"(got {got}; sam-data formats lists what is read)")
    except TranscriptFormatError as err:
        return err
    return next(_unique(iter([conv]), seen))


def is_transcript_file(path: str | Path) -> bool:
    """A ``.json[.gz]``, ``.traj[.gz]`` or ``.msgpack`` file, or a ``.jsonl[.gz]`` file whose first good line is a conversation,
    OTLP spans, a SWE-agent trajectory, a Claude Code entry or stream-json message, a codex exec event (as
    :func:`conversations` reads it), a list of conversations (not an agent-log event) or a Pydantic AI history (which
    :func:`conversations` refuses, saying what line to write); or a ``.txt`` file of an
    agent's headless output (Harbor keeps it as ``agent/claude-code.txt``, ``agent/codex.txt``); or a file without
    an extension that holds OTLP JSON or the exporter's zstd frames, as :func:`otel_files` takes one in a folder (the
    collector's file exporter writes to ``path: ./file``: given alone to sam-train or sam-eval, it was read as an
    agent log and refused, "missing required field 'episode_id'")."""
    p = Path(path)
    name = _stem(p)
    if not p.is_file():
        return False
    if name.endswith((".json", ".traj", agent_framework.PACKED)):  # .msgpack: an Agent Framework store's
        return True
    if sqlitestores.is_sqlite(p):  # an ADK session database (sessions.db): its sessions are conversations
        return True
    if _EXPORTER_NAME.fullmatch(p.name):
        return _zstd(p) or (_names_spans(p) and _first_is(p, otel.is_otlp))
    if not name.endswith((".jsonl", ".txt")):
        return False
    try:
        for doc, _ in documents(p):
            if isinstance(doc, TranscriptFormatError):  # a bad line: the first good one tells, as conversations reads
                continue
            first = doc[0] if isinstance(doc, list) and doc else doc  # a line that lists conversations is read too
            headless = claude_stream.is_message(doc) or codex_exec.is_event(doc) or codex_exec.is_legacy(doc)
            return headless if name.endswith(".txt") else isinstance(first, dict) and "episode_id" not in first and (
                any(k in first for k in (*CONVERSATION_KEYS, "resourceSpans")) or swe_agent.is_trajectory(first)
                or mini_swe_agent.is_trajectory(first)
                or openhands.is_trajectory(doc) or codex.is_rollout(doc) or claude_code.is_entry(doc)
                or gemini_cli.is_header(doc) or headless or pydantic_ai.is_history(doc)
                or autogen.is_state(doc) or smolagents.is_steps(doc) or llamaindex.is_history(doc)
                or adk.is_session(doc) or agent_framework.is_session(doc) or agent_framework.is_message(doc)
                or langfuse.is_export(doc))
    except SAMFileError:
        return False
    return False
