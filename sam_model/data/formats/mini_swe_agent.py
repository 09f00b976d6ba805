"""mini-swe-agent trajectories: the ``{instance_id}/{instance_id}.traj.json`` file mini-swe-agent writes per run
(SWE-agent/mini-swe-agent; the SWE-bench "bash only" leaderboard runs it), ``{"info", "messages",
"trajectory_format", "instance_id"?}``, or a folder of them (``mini-extra swebench``'s output folder, its
``preds.json`` beside them another's record).

Checked against the producer's source: ``run/utils/save.py`` ``save_traj`` (v1: ``trajectory_format``
``"mini-swe-agent-1"``, ``info`` with ``exit_status``, ``submission``, ``mini_version`` and the run's ``config``,
``messages`` the agent's, and ``instance_id`` from ``run/extra/swebench.py``), ``agents/default.py`` (v1:
``add_message(role, content)``, the action parsed from the assistant's content by the agent's ``action_regex``,
``` ```bash\\s*\\n(.*?)\\n``` ``` by default, exactly one match or a ``FormatError``; the observation a ``user``
message rendered from ``action_observation_template``, ``<returncode>N</returncode>`` then ``<output>`` in
``config/extra/swebench.yaml`` and ``config/default.yaml``; a ``Submitted`` when the output's first line is
``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` or ``MINI_SWE_AGENT_FINAL_OUTPUT``, its message the rest of the output; every
exception's text added as a ``user`` message) and, for v2 (``trajectory_format`` ``"mini-swe-agent-1.1"``,
``docs/advanced/v2_migration.md``), ``models/litellm_model.py``, ``models/utils/actions_text.py``,
``actions_toolcall.py``, ``actions_toolcall_response.py``, ``environments/local.py``, ``exceptions.py``: a message is
the model's native message with an ``extra`` added, the assistant's ``extra.actions`` (``[{"command",
"tool_call_id"?}]``) the commands the harness parsed and ran; a text-based model's observation a ``user`` message and
a tool-calling model's a ``tool`` message answering ``tool_call_id`` (the tool ``bash`` ``{"command"}``), each with
``extra.returncode``; a Responses API model's turn the response object itself (``{"object": "response", "output":
[...]}``) and its observation a ``function_call_output`` item; a format error a ``user`` message with
``extra.interrupt_type: "FormatError"`` (the model's words in ``extra.model_response``; its assistant message is not
kept); the end a ``{"role": "exit", "content", "extra": {"exit_status", "submission"}}`` message.

How it reads:

- ``system`` is the policy and the first ``user`` message the task, as every reader reads them;
- an assistant turn's commands are calls of the shell tool ``bash`` ``{"command": the command line}`` (mini-swe-agent's
  own tool, so the shell rule of :mod:`sam_model.data.toolstate` traces its words): ``extra.actions`` where the
  harness recorded them (v2), else the model's ``tool_calls``, else (v1) the one block its ``action_regex`` finds in
  the content (the run's own regex, ``info.config.agent.action_regex``, when the file records one); the words are the
  content without that block (the THOUGHT), kept as the agent's message;
- the observation after a command is its result, flagged as failed when its return code (``extra.returncode``, else
  the ``<returncode>`` the observation shows) is not 0, or when v1's timeout message (``timeout_template``: "The last
  command <command>...</command> timed out") says the harness killed it; a submission's exit message (v2) or ``Submitted`` message
  (v1), the rest of the submitting command's output, is that command's result;
- a format error (v2's marked message; in v1 the ``user`` message right after an assistant turn that ran nothing: no
  block, or several) is no result and no user's words: it is the harness's template, which the instructions already
  hold, read as a user turn it would be a memory repeating it at every slip (and the submission's words traced to the
  latest slip rather than to the task). So it is counted (``format errors``) and left out; the assistant's words
  beside it stay, with no call, since nothing ran;
- an exit that is no submission (``LimitsExceeded``, an uncaught error's, even one raised while a command ran) is
  counted; reasoning items are counted;
- the working directory is the run's ``info.config.environment.cwd`` (save_traj's ``_asdict(agent.env.config)``,
  v2's ``serialize``: the Docker environment's ``cwd``, ``/testbed`` in its SWE-bench config; every command runs
  in it, a ``cd`` lasting one command), told from the run's first message on
  (:attr:`~sam_model.data.formats.base.Conversation.cwd`), so toolstate traces ``/testbed/src/x.py`` by
  ``src/x.py``; a local environment's ``""`` (the harness's own directory, not recorded) tells none.

The split group is the run's ``instance_id`` (the SWE-bench instance, which also names the file), else the file's
name without ``.traj.json``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from sam_model.data.formats.base import (
    FAILED,
    Chat,
    Conversation,
    TranscriptFormatError,
    chat_call,
    each,
    result_text,
    text_of,
)
from sam_model.data.formats.numbered import mark
from sam_model.io import json_shape, json_type

PREFIX = "mini-swe-agent"  # trajectory_format: "mini-swe-agent-1" (v1), "mini-swe-agent-1.1" (v2)
SUFFIX = ".traj.json"  # {instance_id}/{instance_id}.traj.json, as run/extra/swebench.py names it
TOOL = "bash"  # mini-swe-agent's tool (actions_toolcall.BASH_TOOL), {"command": ...}
ACTION = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)  # v1's default action_regex (agents/default.py)
FENCE = re.compile(r"```[^\n`]*\s*\n(.*?)\n```", re.DOTALL)  # any fenced block, to take the command out of the words
RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")  # action_observation_template's
# v1's ExecutionTimeoutError message, as every shipped config's timeout_template opens it: the command was killed
TIMEOUT = re.compile(r"\AThe last command <command>.*?</command> timed out", re.DOTALL)
SUBMIT = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
MARKS = ("actions", "interrupt_type", "raw_output")  # keys only mini-swe-agent's extra carries
ROLES = ("system", "user", "assistant", "tool", "exit")
TEXT_PARTS = ("text", "input_text", "output_text")


def is_trajectory(doc: Any) -> bool:
    """A mini-swe-agent trajectory document: an object whose ``trajectory_format`` says mini-swe-agent, or whose
    ``info`` names the ``mini_version`` that wrote it."""
    if not isinstance(doc, Mapping):
        return False
    fmt, info = doc.get("trajectory_format"), doc.get("info")
    return isinstance(fmt, str) and fmt.startswith(PREFIX) or isinstance(info, Mapping) and "mini_version" in info


def is_message(m: Any) -> bool:
    """A message of a v2 Responses API model's run, which has no role: the response object or an observation."""
    return isinstance(m, Mapping) and isinstance(m.get("extra"), Mapping) and (
        m.get("object") == "response" or m.get("type") == "function_call_output")


def sniff(messages: list[Any]) -> bool:
    """Messages holding mini-swe-agent's own marks: an ``exit`` message, or an ``extra`` with the harness's parsed
    ``actions``, a format error's ``interrupt_type`` or an observation's ``raw_output`` (v1's plain messages have
    none: a file's ``trajectory_format`` tells them)."""
    return any(isinstance(m, Mapping) and (m.get("role") == "exit" or isinstance(m.get("extra"), Mapping)
                                           and any(k in m["extra"] for k in MARKS)) for m in messages)


def to_chat(messages: list[Any], where: str) -> Chat:
    """A run's messages as chat messages, by the rule of the module's docstring."""
    chat = Chat()
    awaiting: list[dict[str, Any]] = []  # the calls of the latest assistant turn whose results come next
    ran_nothing = False  # the latest message was an assistant turn without a command (v1: a format error follows)
    for i, m, w in each(messages, where):
        source = f"message {i}"
        extra = _extra(m, w)
        role = m.get("role")
        if m.get("object") == "response":  # a Responses API model's turn (v2)
            role = "assistant"
        elif m.get("type") == "function_call_output":  # its observation
            _result(chat, _answered(awaiting, m.get("call_id"), w), m.get("output"), extra, source, w)
            continue
        elif role not in ROLES:
            raise TranscriptFormatError(w, f"role {str(role)[:40]!r} is not a mini-swe-agent message role (expected "
                                           f"{', '.join(ROLES)}, or a Responses API response or function_call_output)")
        was_ran_nothing, ran_nothing = ran_nothing, False
        if role == "assistant":
            words, calls = _turn(m, extra, i, w, chat)
            chat.add({"role": "assistant", "content": words or None, **({"tool_calls": calls} if calls else {})},
                     source)
            awaiting, ran_nothing = list(calls), not calls
        elif role == "tool":
            _result(chat, _answered(awaiting, m.get("tool_call_id"), w), m.get("content"), extra, source, w)
        elif role == "exit":
            call = next((c for c in awaiting if any(s in _command(c) for s in SUBMIT)),
                        awaiting[-1] if awaiting else None)
            if call is not None and extra.get("exit_status") in (None, "Submitted"):  # a submission (v2): the rest
                # of the submitting command's output, its result (an error's exit is no command's output)
                chat.add({"role": "tool", "tool_call_id": call["id"], "content": text_of(m.get("content"), w)}, source)
            else:
                chat.ignored[f"exit messages ({str(extra.get('exit_status') or m.get('content'))[:40]})"] += 1
            awaiting = []
        elif role == "user" and (extra.get("interrupt_type") == "FormatError" or was_ran_nothing and not awaiting):
            said = extra.get("model_response")
            if isinstance(said, str) and said.strip():  # v2 keeps no assistant message for it: its words are here
                chat.add({"role": "assistant", "content": said}, source)
            chat.ignored["format errors"] += 1
            awaiting = []
        elif role == "user" and awaiting:  # a text-based command's observation (or v1's Submitted message)
            _result(chat, awaiting.pop(0)["id"], m.get("content"), extra, source, w)
        elif text := text_of(m.get("content"), w, TEXT_PARTS, ignored=chat.ignored):
            chat.add({"role": role, "content": text}, source)
    return mark(chat)


def _extra(m: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    extra = m.get("extra")
    if extra is None:
        return {}
    if not isinstance(extra, Mapping):
        raise TranscriptFormatError(where, f"'extra' is {json_type(extra)}, expected an object (mini-swe-agent's "
                                           "metadata of the message) or null")
    return extra


def _turn(m: Mapping[str, Any], extra: Mapping[str, Any], i: int, where: str,
          chat: Chat) -> tuple[str, list[dict[str, Any]]]:
    """An assistant turn's words and calls: the harness's ``extra.actions``, else the model's ``tool_calls`` (or a
    response's ``function_call`` items), else the one block ``ACTION`` finds in the words (v1)."""
    response = m.get("object") == "response"
    if response:
        output = m.get("output")
        if not isinstance(output, list):
            raise TranscriptFormatError(where, f"a response's 'output' is {json_type(output)}, expected a list of "
                                               "output items")
        words = "\n".join(text_of(item.get("content"), f"{where}, output item {j}", TEXT_PARTS, ignored=chat.ignored)
                          for j, item in enumerate(output) if isinstance(item, Mapping) and item.get("type") == "message")
        chat.ignored.update(f"{item.get('type')} items" for item in output
                            if isinstance(item, Mapping) and item.get("type") not in ("message", "function_call"))
    else:
        words = text_of(m.get("content"), where, TEXT_PARTS, ignored=chat.ignored)
    actions = extra.get("actions")
    if actions is not None:
        if not isinstance(actions, list):
            raise TranscriptFormatError(where, f"'extra.actions' is {json_type(actions)}, expected the list of "
                                               "commands the harness ran ({\"command\", \"tool_call_id\"?})")
        calls = [_action(a, f"action-{i}" if len(actions) == 1 else f"action-{i}-{j}", f"{where}, action {j}")
                 for j, a in enumerate(actions)]
    elif response:
        calls = [chat_call(item.get("call_id") or item.get("id"), item.get("name"), item.get("arguments"),
                           f"{where}, output item {j}") for j, item in enumerate(m["output"])
                 if isinstance(item, Mapping) and item.get("type") == "function_call"]
    elif m.get("tool_calls") is not None:
        calls = _tool_calls(m["tool_calls"], where)
    else:
        found = ACTION.findall(words)
        calls = [chat_call(f"action-{i}", TOOL, {"command": found[0].strip()}, where)] if len(found) == 1 else []
    if calls and not response and m.get("tool_calls") is None:  # the command was written in the words: take it out
        for c in calls:
            words = _without_block(words, _command(c))
    return words.strip(), calls


def _action(a: Any, default_id: str, where: str) -> dict[str, Any]:
    if not isinstance(a, Mapping) or not isinstance(a.get("command"), str):
        what = f"{json_type(a)} without a string 'command'" if isinstance(a, Mapping) else json_type(a)
        raise TranscriptFormatError(where, f"an action is {what}, expected {{\"command\": the command line, "
                                           "\"tool_call_id\"?}")
    call_id = a.get("tool_call_id")
    return chat_call(default_id if call_id in (None, "") else call_id, TOOL, {"command": a["command"]}, where)


def _tool_calls(raw: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise TranscriptFormatError(where, f"'tool_calls' is {json_type(raw)}, expected a list of calls or null")
    calls = []
    for j, c in enumerate(raw):
        fn = c.get("function") if isinstance(c, Mapping) else None
        if not isinstance(fn, Mapping):
            raise TranscriptFormatError(where, f"tool call {j} is {json_type(c)} without a 'function', expected "
                                               "{\"id\", \"function\": {\"name\", \"arguments\"}}")
        calls.append(chat_call(c.get("id"), fn.get("name"), fn.get("arguments"), f"{where}, tool call {j}"))
    return calls


def _command(call: Mapping[str, Any]) -> str:
    args = call["function"]["arguments"]
    return args.get("command", "") if isinstance(args, Mapping) and isinstance(args.get("command"), str) else ""


def _without_block(words: str, command: str) -> str:
    """The words without the block that held ``command``: a fenced block, else a tag around it (``<bash_code>``, as
    swebench_xml.yaml's regex reads), else the command itself; left in, its words would be the decision's own event
    and trace to nothing."""
    command = command.strip()
    if not command:
        return words
    block = next((b for b in FENCE.finditer(words) if b.group(1).strip() == command), None) or re.search(
        r"<(\w+)>\s*" + re.escape(command) + r"\s*</\1>", words)
    if block is not None:
        return words[:block.start()] + words[block.end():]
    at = words.find(command)
    return words if at < 0 else words[:at] + words[at + len(command):]


def _answered(awaiting: list[dict[str, Any]], call_id: Any, where: str) -> str | None:
    """The id of the call a tool message answers (taken off ``awaiting``); a missing id answers the first awaiting."""
    if call_id in (None, ""):
        return awaiting.pop(0)["id"] if awaiting else None
    if isinstance(call_id, bool) or not isinstance(call_id, (str, int)):
        raise TranscriptFormatError(where, f"the id of the call answered is {json_type(call_id)}, expected a string")
    awaiting[:] = [c for c in awaiting if c["id"] != str(call_id)]
    return str(call_id)


def _result(chat: Chat, call_id: str | None, content: Any, extra: Mapping[str, Any], source: str, where: str) -> None:
    """A command's observation as its tool message, flagged when its return code is not 0 (or, in v1, which shows
    no code for it, when the harness killed it at its timeout)."""
    text = result_text(content) if not isinstance(content, list) else text_of(content, where, TEXT_PARTS,
                                                                              ignored=chat.ignored)
    code = extra.get("returncode")
    if code is None and (shown := RETURNCODE.search(text)):
        code = int(shown.group(1))
    elif code is None and TIMEOUT.match(text):
        code = -1
    if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
        raise TranscriptFormatError(where, f"'extra.returncode' is {json_type(code)}, expected the command's exit "
                                           "code (an integer) or null")
    chat.add({"role": "tool", "tool_call_id": call_id, "content": text, **({FAILED: True} if code else {})}, source)


def action_regex(doc: Mapping[str, Any], where: str) -> re.Pattern[str]:
    """The regex a v1 run parsed its actions with: its config's ``action_regex`` (the agent's, or a model's), else
    the default ``ACTION``."""
    config = doc.get("info", {}).get("config") if isinstance(doc.get("info"), Mapping) else None
    for part in ("agent", "model"):
        raw = config.get(part, {}).get("action_regex") if isinstance(config, Mapping) and isinstance(
            config.get(part), Mapping) else None
        if raw is None:
            continue
        field = f"'info.config.{part}.action_regex'"
        if not isinstance(raw, str) or not raw:
            raise TranscriptFormatError(where, f"{field} is {json_type(raw)}, expected the regex the run parsed its "
                                               "commands with (a string); fix it, or remove it to read ```bash blocks")
        try:
            pattern = re.compile(raw, re.DOTALL)
        except re.error as exc:
            raise TranscriptFormatError(where, f"{field} is no regex ({exc}); fix it, or remove it to read ```bash "
                                               "blocks") from None
        if pattern.groups > 1:
            raise TranscriptFormatError(where, f"{field} has {pattern.groups} groups, expected one (the command) or "
                                               "none; fix it, or remove it to read ```bash blocks")
        return pattern
    return ACTION


def _parsed(messages: list[Any], pattern: re.Pattern[str]) -> list[Any]:
    """v1 messages with each assistant turn's command found by the run's own ``pattern`` as v2 records it
    (``extra.actions``: the one match, or none where the harness refused the turn as a format error)."""
    out = []
    for m in messages:
        if (isinstance(m, Mapping) and m.get("role") == "assistant" and isinstance(m.get("content"), str)
                and m.get("tool_calls") is None and isinstance(m.get("extra", {}), Mapping)
                and "actions" not in m.get("extra", {})):
            found = pattern.findall(m["content"])
            actions = [{"command": found[0].strip()}] if len(found) == 1 and isinstance(found[0], str) else []
            m = {**m, "extra": {**m.get("extra", {}), "actions": actions}}
        out.append(m)
    return out


def conversations(doc: Any, where: str, name: str, group: str, id_of) -> Iterator[Conversation | TranscriptFormatError]:
    """The episode of one trajectory document (``name``: its episode id, the file's path without ``.traj.json``);
    a bad one is yielded as its error."""
    if not is_trajectory(doc):
        what = json_shape(doc)
        yield TranscriptFormatError(where, "not a mini-swe-agent trajectory: expected an object with 'messages' and "
                                           "'trajectory_format' (\"mini-swe-agent-1\", ...), as mini-swe-agent writes "
                                           f"{{instance_id}}{SUFFIX}; got {what} (sam-data formats lists what is read)")
        return
    messages = doc.get("messages")
    if not isinstance(messages, list):
        yield TranscriptFormatError(where, f"'messages' is {json_type(messages)}, expected the list of the run's "
                                           "messages")
        return
    if not messages:
        info = doc.get("info") if isinstance(doc.get("info"), Mapping) else {}
        status = f" (exit status {str(info['exit_status'])[:60]})" if info.get("exit_status") else ""
        yield TranscriptFormatError(where, f"the trajectory holds no message{status}: the run ended before its agent "
                                           "started (its environment or model failed to start?)")
        return
    instance = doc.get("instance_id")
    try:
        messages, cwd = _parsed(messages, action_regex(doc, where)), working_dir(doc, where)
    except TranscriptFormatError as err:
        yield err
        return
    yield Conversation(id_of(name), messages, where, str(instance) if isinstance(instance, (str, int)) and not
                       isinstance(instance, bool) and instance != "" else group, "mini-swe-agent", cwd=cwd)


def working_dir(doc: Mapping[str, Any], where: str) -> str:
    """The directory the run's commands ran in, its environment config's ``cwd`` ("" where none is recorded)."""
    info = doc.get("info")
    config = info.get("config") if isinstance(info, Mapping) else None
    env = config.get("environment") if isinstance(config, Mapping) else None
    cwd = env.get("cwd") if isinstance(env, Mapping) else None
    if cwd is not None and not isinstance(cwd, str):
        raise TranscriptFormatError(where, f"'info.config.environment.cwd' is {json_type(cwd)}, expected the "
                                           "directory the run's commands ran in (a string) or null; fix it, or "
                                           "remove it (its absolute paths are then traced whole)")
    return cwd or ""
