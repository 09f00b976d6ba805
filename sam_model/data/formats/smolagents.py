"""Hugging Face smolagents memories: an agent's ``memory.steps`` as it dumps them, or the messages it writes of them.

smolagents keeps no transcript file of its own: a run leaves ``agent.memory``, whose steps a program dumps
(``agent.memory.get_full_steps()``, or ``get_succinct_steps()`` without each step's model input), each step a
dataclass's ``dict()`` that names no type, so a step is told by its keys: a ``TaskStep`` ``{"task",
"task_images"}`` (the user's words: ``run(task)``, each later ``run(..., reset=False)`` a task of its own), a
``SystemPromptStep`` ``{"system_prompt"}`` (``agent.memory.system_prompt.dict()``: the policy), a ``PlanningStep``
``{"plan", "model_output_message", ...}`` (the agent's plan, its words), a ``FinalAnswerStep`` ``{"output"}`` and an
``ActionStep`` ``{"step_number", "model_output", "tool_calls", "observations", "error", "code_action",
"action_output", "is_final_answer", ...}``. smolagents 1.8 to 1.18 wrote an action's number as ``step``, without
``code_action`` and ``is_final_answer`` (a CodeAgent's code is its python_interpreter call's arguments, and the run's
last step whose code called ``final_answer`` gave its ``action_output``), and before 1.12 a plan's message as
``model_output_message_plan``; those are read too. ``agent.logs`` before 1.8 had no dump (``llm_output``): refused,
saying what to do. A ``ToolCallingAgent``'s action is its ``tool_calls``
(``{"id", "type", "function": {"name", "arguments"}}``), the model's text beside them its words, and its
``observations`` the tools' outputs, one text for the step (parallel calls' outputs joined, so they answer the step's
last call); a call that raised leaves ``tool_calls`` empty and an ``error`` (``{"type", "message"}``): the call is
read from the ``model_output_message`` and its result is the error, flagged failed. Its ``final_answer`` call is
the answer, words said to the user (not where the step failed: smolagents never gave it). A ``CodeAgent``'s action is Python (``code_action``), whose tool calls are read
from the code (:mod:`sam_model.data.formats.smolagents_code`); its ``model_output`` beside the code is its words,
and a final step's ``action_output`` the answer. The system prompt is also the first of an action's
``model_input_messages`` (full steps), read as the policy when no ``SystemPromptStep`` came first. SAM's own recall
(SAMRecallTool's output, opening ``[N memories recalled by SAM]``) in a step that called ``recall_memory`` is read
as the marker its step callback stores (:mod:`sam_model.data.formats.recalls`): its memories are the store's.

What ``agent.write_memory_to_messages()`` returns is read too (``[m.dict() for m in ...]``): ChatMessages of roles
``system``, ``user`` (a task as ``New task:\\n...``), ``assistant``, ``tool-call`` (``Calling tools:\\n`` and the calls
as Python writes a list of dicts) and ``tool-response`` (``Observation:\\n...``, or ``Error:\\n...`` for a failed step),
content a list of ``{"type": "text", "text"}`` parts, read as the steps of the same run are: a CodeAgent's
``final_answer(reply)`` in a step that ended the run is its Observation's last output (the steps' ``action_output``;
a dict or list printed read back as the value, said as JSON as theirs), and only a CodeAgent's code is cut from the
words before its call. Those messages lose what the steps keep (a
ToolCallingAgent's failed call is missing, its error alone; in 1.15 to 1.19 its words, which those versions wrote
over with "Called Tool: ..." lines in ``model_output``, the messages' text, and kept in the steps'
``model_output_message.content``), so the steps are the better log.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from sam_model.data.formats.base import ANSWERS, FAILED, Chat, TranscriptFormatError, chat_call, each, text_of
from sam_model.data.formats.recalls import TOOL, unrecalled
from sam_model.data.formats.smolagents_code import FINAL, INTERPRETER, Calls, answered
from sam_model.io import json_type

ACTION_KEYS = frozenset({"step_number", "model_output", "observations", "tool_calls"})
# an ActionStep's dict() from smolagents 1.8 to 1.18: its number under "step", and no code_action, is_final_answer
# nor observations_images (1.19 renamed it step_number and added those)
OLD_ACTION_KEYS = frozenset({"step", "model_output", "observations", "tool_calls"})
# a step of agent.logs before 1.8, as dataclasses.asdict() or vars() writes it (smolagents gave no dump of its own):
# the model's text under "llm_output"
LOGS_KEYS = frozenset({"llm_output", "observations"})
LOGS = ("a smolagents step from before 1.8 (agent.logs, its model text under 'llm_output'), of which smolagents gave "
        "no dump: no reader takes it; run the agent with smolagents 1.8 or later and dump "
        "agent.memory.get_full_steps(), or rewrite each step's keys as 1.19's step.dict() writes them ('step_number', "
        "'model_output' for 'llm_output', 'tool_calls' as [{\"id\", \"type\": \"function\", \"function\": {\"name\", "
        "\"arguments\"}}], 'observations', 'error', 'action_output')")
ROLES = ("system", "user", "assistant", "tool-call", "tool-response")
TASK, CALLING, OBSERVED, ERROR = "New task:\n", "Calling tools:\n", "Observation:\n", "Error:\n"
CALL_ID = "Call id: "  # how a step that kept its calls opens its error's tool-response
RETRY = "\nNow let's retry: take care not to repeat previous errors!"  # smolagents' words after an error
PROCEED = "Now proceed and carry out this plan."  # smolagents' user turn after a plan: not the user's
LAST = "Last output from code snippet:\n"  # what a CodeAgent's Observation ends with: a final step's, the answer
OUTPUT = object()  # an answer the code gave final_answer as no literal: its step's last output, if the step ended the run
# a CodeAgent's code in its model output: <code>...</code> (1.20 on), or a fence (before: "Code:\n```py ...```<end_code>",
# the label and the end mark the prompt asked for with it)
_CODE = re.compile(r"<code>.*?(?:</code>|\Z)|(?:^Code:[ \t]*\n)?```(?:py|python)?\n.*?(?:```(?:[ \t]*<end_code>)?|\Z)",
                   re.DOTALL | re.MULTILINE)
# what smolagents 1.15 to 1.19 wrote as a ToolCallingAgent's model_output in place of the model's text, a line a
# call: its own words, no agent's (which said each argument value before the call made with it)
_CALLED = re.compile(r"^Called Tool: '[^'\n]*' with arguments: .*$\n?", re.MULTILINE)


def step_kind(m: Any) -> str | None:
    """A memory step's kind as its ``dict()`` writes it (none names its type), or None."""
    if not isinstance(m, Mapping) or "role" in m:
        return None
    keys = set(m)
    if ACTION_KEYS <= keys or OLD_ACTION_KEYS <= keys:
        return "action"
    if LOGS_KEYS <= keys:  # refused by to_chat, saying what to do
        return "logs"
    if "task" in keys and keys <= {"task", "task_images"}:
        return "task"
    if keys == {"system_prompt"}:
        return "system"
    if "plan" in keys and keys & {"model_output_message", "model_output_message_plan"}:  # the latter before 1.12
        return "planning"
    if keys == {"output"}:
        return "final"
    return None


def is_message(m: Any) -> bool:
    """A step, or a ChatMessage of smolagents' own roles (``tool-call``, ``tool-response``)."""
    return step_kind(m) is not None or (isinstance(m, Mapping) and m.get("role") in ("tool-call", "tool-response"))


def is_steps(doc: Any) -> bool:
    """A dumped memory, one conversation: a list of steps (``get_full_steps()``, ``get_succinct_steps()``, the system
    prompt's step first or not) holding a task or an action, or of the ChatMessages ``write_memory_to_messages()``
    gives (``[m.dict() for m in ...]``) holding a tool-call or tool-response (each was taken for a conversation)."""
    if not isinstance(doc, list) or not doc:
        return False
    if all(step_kind(s) is not None for s in doc):
        return any(step_kind(s) in ("task", "action", "logs") for s in doc)
    return all(isinstance(m, Mapping) and m.get("role") in ROLES for m in doc) and sniff(doc)


def sniff(messages: list[Any]) -> bool:
    """Steps (any kind: a step callback adds the system prompt's or a final answer's alone), or ChatMessages with a
    tool-call or tool-response."""
    return any(step_kind(m) is not None or (isinstance(m, Mapping) and m.get("role") in ROLES[3:]) for m in messages)


def to_chat(messages: list[Any], where: str, *, recalls: bool = True) -> Chat:
    """``recalls``: SAM's recalls in the steps read as the marker (_recalls); False where the caller left out those
    it knows to be copies already (SAMStepCallback: by the recall's scopes, which a dump does not say)."""
    chat, code = Chat(), Calls()
    steps = any(step_kind(m) is not None for m in messages if isinstance(m, Mapping))
    policy = False
    pending: list[dict[str, Any]] | None = None  # the calls a tool-response answers (write_memory_to_messages)
    answer: Any = None  # the answer a tool-call gave, said after its step's tool-response unless that is an error
    joined: set[int] = set()  # the Error tool-responses read with the Observation before them (one failed step)
    for i, m, w in each(messages, where, "step" if steps else "message"):
        source = f"{'step' if steps else 'message'} {i}"
        kind = step_kind(m) if steps else None
        if steps and kind is None:
            raise TranscriptFormatError(w, f"a step with keys {', '.join(map(repr, list(m)[:6]))}, expected a smolagents "
                                           "memory step as step.dict() writes it (TaskStep {task}, ActionStep "
                                           "{step_number, model_output, tool_calls, observations, ...}, PlanningStep "
                                           "{plan, ...}, FinalAnswerStep {output}, SystemPromptStep {system_prompt})")
        if kind == "logs":
            raise TranscriptFormatError(w, LOGS)
        if kind == "system" or (kind == "action" and not policy):
            prompt = m["system_prompt"] if kind == "system" else _input_prompt(m, w)
            if prompt is not None:
                chat.add({"role": "system", "content": _string(prompt, w, "system_prompt")}, source)
                code.learn_prompt(prompt)
                policy = True
        if kind == "task":
            chat.add({"role": "user", "content": _string(m["task"], w, "task")}, source)
            if m.get("task_images"):
                chat.ignored["image"] += len(m["task_images"]) if isinstance(m["task_images"], list) else 1
        elif kind == "planning":
            chat.add({"role": "assistant", "content": _string(m["plan"], w, "plan")}, source)
        elif kind == "final":
            chat.ignored["FinalAnswerStep"] += 1  # the answer its last action step gave
        elif kind == "action":
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            _action(chat, code, m, w, source, i, nxt is None or step_kind(nxt) in ("task", "final"), recalls)
        elif not steps and i in joined:  # the error of the step whose printed logs the last message was
            continue
        elif not steps:  # a plan's message is followed by smolagents' own user turn (PlanningStep.to_messages)
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            whole = _proceeds(nxt) or (m.get("role") == "assistant" and not _calls_code(nxt))
            error = _error_after(m, nxt)
            if answer is OUTPUT and m.get("role") == "tool-response":
                answer = _last_output(m, nxt) if error is None else None
            if error is not None:
                joined.add(i + 1)
                m = {**m, "content": f"{_response(m)}\n{error}"}
            if answer is not None and answer is not OUTPUT and m.get("role") != "tool-response" and not _images(m, w):
                chat.add({"role": "assistant", "content": _said(answer)}, source)  # no response came: it was said
            pending, answer = _message(chat, code, m, w, source, pending, answer, whole, error is not None)
    if answer is not None and answer is not OUTPUT:
        chat.add({"role": "assistant", "content": _said(answer)}, f"message {len(messages) - 1}")
    chat.ignored.update(code.ignored)
    return chat


def _input_prompt(step: Mapping[str, Any], where: str) -> str | None:
    """The system prompt a full step's model input opens with (``get_full_steps()``), or None."""
    inputs = step.get("model_input_messages")
    first = inputs[0] if isinstance(inputs, list) and inputs else None
    if isinstance(first, Mapping) and first.get("role") == "system":
        return text_of(first.get("content"), f"{where}, model_input_messages 0") or None
    return None


def _action(chat: Chat, code: Calls, m: Mapping[str, Any], where: str, source: str, index: int,
            ended: bool = False, recalls: bool = True) -> None:
    """An ActionStep; ``index`` its place in the memory, which names the calls read from its code (its step_number
    starts again at 1 with each run); ``ended``: the run's last step (the user's next task or the end follows)."""
    calls = m.get("tool_calls") or []
    if not isinstance(calls, list):
        raise TranscriptFormatError(where, f"'tool_calls' is {json_type(calls)}, expected a list of "
                                           "{\"id\", \"type\", \"function\": {\"name\", \"arguments\"}}")
    error = m.get("error")
    if error is not None and not (isinstance(error, Mapping) and isinstance(error.get("message"), str)):
        raise TranscriptFormatError(where, f"'error' is {json_type(error)}, expected null or {{\"type\", \"message\"}}")
    if not calls and error is not None:  # a ToolCallingAgent's call that raised: only the model's message has it
        output = m.get("model_output_message")
        calls = (output.get("tool_calls") or []) if isinstance(output, Mapping) else []
        if not isinstance(calls, list):
            raise TranscriptFormatError(where, f"'model_output_message.tool_calls' is {json_type(calls)}, expected "
                                               "the list of calls the model made")
    if isinstance(m.get("observations_images"), list):  # a screenshot a tool returned (dumped as bytes): no words
        chat.ignored["image"] += len(m["observations_images"])
    observed = m.get("observations")
    if observed is not None and not isinstance(observed, str):
        raise TranscriptFormatError(where, f"'observations' is {json_type(observed)}, expected a string or null")
    program = m.get("code_action")
    code_call = next((c for c in calls if _is_code(c)), None)
    if program is None and code_call is not None:
        program = _arguments(code_call, where)
    if recalls and observed and _recalls(calls, program):  # SAM's recall: its memories are the store's already
        observed = unrecalled(observed, printed=program is not None)
    if program is not None or code_call is not None:
        words = _CODE.sub("", _text(m.get("model_output"), where)).strip()
        base = code_call.get("id") if code_call is not None else None  # smolagents': call_N, N the memory's length
        made, answer = _code_calls(code, program, base if isinstance(base, str) and base else f"call_{index}", where)
        if m.get("is_final_answer") is True and "action_output" in m:
            answer = m["action_output"]
        elif m.get("is_final_answer") is False:  # its final_answer(...), under an if, did not run: no answer
            answer = None
        elif "is_final_answer" not in m and "step" in m and answer is None and code.final_called and ended \
                and error is None:  # 1.8 to 1.18 kept no is_final_answer: the run's last step gave its output
            answer = m.get("action_output")
        _turn(chat, words, made, observed, error, answer, source)
        return
    made, answer = [], None
    for j, c in enumerate(calls):
        name, args = _name(c, f"{where}, call {j}"), _arguments(c, f"{where}, call {j}")
        if name == FINAL:
            answer = args.get("answer", args) if isinstance(args, Mapping) else args
        else:
            made.append(chat_call(c.get("id"), name, args, f"{where}, call {j}"))
    _turn(chat, _words(m, where), made, None if answer is not None and not made else observed, error, answer, source)


def _recalls(calls: list[Any], program: Any) -> bool:
    """Whether a step called SAM's recall tool (SAMRecallTool, recall_memory): a ToolCallingAgent's call of it, or
    a CodeAgent's code calling it. Its output (what the tool returned, what the code printed of it) is read with each
    recall, a head ``[N memories recalled by SAM]`` and its numbered memories, as the marker the step callback
    stores: the memories are the store's, and read again they were stored under a new step each recall."""
    names = {c["function"].get("name") for c in calls if isinstance(c, Mapping) and isinstance(c.get("function"),
                                                                                             Mapping)}
    return TOOL in names or (isinstance(program, str) and re.search(rf"(?<![\w.]){TOOL}\s*\(", program) is not None)


def _words(m: Mapping[str, Any], where: str) -> str:
    """A ToolCallingAgent step's words: its ``model_output``, but where smolagents 1.15 to 1.19 wrote its own "Called
    Tool: ..." lines there (:data:`_CALLED`), the model's text, which those versions kept only in
    ``model_output_message.content`` (read as no words until conversion 173: the steps of 1.17 and 1.26 of one run
    differed by them)."""
    said = _text(m.get("model_output"), where)
    words = _CALLED.sub("", said).strip()
    output = m.get("model_output_message")
    if words or not _CALLED.search(said) or not isinstance(output, Mapping) or output.get("content") is None:
        return words
    content = output["content"]
    return (content if isinstance(content, str) else text_of(content, f"{where}, model_output_message")).strip()


def _turn(chat: Chat, words: str, calls: list[dict[str, Any]], observed: str | None, error: Mapping | None,
          answer: Any, source: str) -> None:
    """One action: the words and calls, their result (the step's observations; its error, failed), the answer."""
    if calls or words:
        chat.add({"role": "assistant", "content": words or None, **({"tool_calls": calls} if calls else {})}, source)
    if calls and (observed is not None or error is not None):
        text = "\n".join(t for t in (observed, error and error["message"]) if t)
        chat.add({**_result(calls), "content": text, **({FAILED: True} if error is not None else {})}, source)
    elif error is not None:  # no call read: smolagents' words to the model of what went wrong
        chat.ignored["error without a call"] += 1
    if answer is not None and error is not None:  # smolagents refused it (a call beside it, a failed check) or the
        chat.ignored["final answer of a failed step"] += 1  # code raised before it: the user never got it
    elif answer is not None:
        chat.add({"role": "assistant", "content": _said(answer)}, source)


def _result(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The tool message of a step's one output: smolagents keeps its calls' outputs as one text (parallel calls'
    joined, a code block's printed together), which answers every call, named by them all."""
    names = list(dict.fromkeys(c["function"]["name"] for c in calls))
    return {"role": "tool", "tool_call_id": calls[-1]["id"], "name": ", ".join(names),
            **({ANSWERS: [c["id"] for c in calls[:-1]]} if len(calls) > 1 else {})}


def _code_calls(code: Calls, program: Any, base: str, where: str) -> tuple[list[dict[str, Any]], Any]:
    """The tool calls of a step's code, named ``BASE.K`` after the step's python_interpreter call, and its answer."""
    if not isinstance(program, str):
        raise TranscriptFormatError(where, f"'code_action' is {json_type(program)}, expected the code the agent ran")
    read = code.read(program)
    if read is None:  # no Python: smolagents could not run it either (its error follows)
        return [chat_call(base, INTERPRETER, {"code": program}, where)], None
    calls, answer = read
    made = [chat_call(f"{base}.{k}", name, args, where) for k, (name, args) in enumerate(calls)]
    if not made and not answered(answer):  # code of its own (a sum, a print): smolagents' one call
        made = [chat_call(base, INTERPRETER, {"code": program}, where)]
    return made, answer if answered(answer) else None


def _response(m: Any) -> str | None:
    """A tool-response's text as smolagents writes it (one text part), or None."""
    if not isinstance(m, Mapping) or m.get("role") != "tool-response":
        return None
    content = m.get("content")
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], Mapping):
        content = content[0].get("text")
    return content if isinstance(content, str) else None


def _error_after(m: Any, nxt: Any) -> str | None:
    """The error of the step whose ``Observation:`` ``m`` is, where ``nxt`` is its ``Error:`` tool-response
    (ActionStep.to_messages writes a step that printed and then raised as both), without smolagents' retry advice;
    None: ``nxt`` is no such error. A step's error opens with ``Call id:`` where the step kept its calls (a
    CodeAgent's), whose tool-call came before its Observation; one without (a ToolCallingAgent's call that raised,
    its step keeping none) is the next step's, however close it follows."""
    seen, then = _response(m), _response(nxt)
    if seen is None or then is None or not seen.startswith(OBSERVED) or not then.startswith(CALL_ID) or (
            ERROR not in then):
        return None
    return then.split(ERROR, 1)[-1].split(RETRY, 1)[0]


def _last_output(m: Any, nxt: Any) -> str | None:
    """The answer a CodeAgent's ``final_answer(variable)`` gave, where ``m`` is its step's ``Observation:`` and the step
    ended the run (``nxt`` none or the user's next task; a step that did not, its final_answer under an ``if`` not
    taken, is followed by the next step): the Observation's last output, what the steps keep as ``action_output``
    (str() of it, as smolagents prints it); None otherwise."""
    seen = _response(m)
    ended = nxt is None or (isinstance(nxt, Mapping) and nxt.get("role") == "user")
    if seen is None or not ended or not seen.startswith(OBSERVED) or LAST not in seen:
        return None
    return _printed(seen.rsplit(LAST, 1)[1])


def _printed(text: str) -> Any:
    """The value whose str() smolagents printed as a step's last output: a dict, list, tuple or bool as Python
    writes it (``{'id': 'QX7Z9A'}``, ``True``) is that value, so that it is said as JSON as the steps'
    ``action_output`` is (the messages said the Python text); anything else is the text itself: words, a value cut
    short, an object, and a number or None, whose text is already what the steps say (a number's JSON) or say
    nothing of (None: no answer there, "None" here, as before). A string that itself reads as such a value is read
    as the value: its str() is the same text."""
    if not (text.startswith(("{", "[", "(")) or text in ("True", "False")):
        return text
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return text
    if isinstance(value, tuple):  # str() of a tuple; JSON writes it as the list it dumps it to
        value = list(value)
    try:
        json.dumps(value)
    except (TypeError, ValueError):  # a set, bytes, a tuple key: no JSON of it
        return text
    return value if isinstance(value, (dict, list, bool)) else text


def _images(m: Mapping[str, Any], where: str) -> bool:
    """Whether ``m`` is the user message of the images a step observed, between its tool-call and tool-response."""
    return m.get("role") == "user" and not text_of(m.get("content"), where).strip()


def _calls_code(m: Any) -> bool:
    """Whether ``m`` is a tool-call message holding a CodeAgent's code (so the words before it hold that code in a
    fence, not the model's words); a ToolCallingAgent's fences are its words, kept as its steps keep them."""
    text = _response({**m, "role": "tool-response"}) if isinstance(m, Mapping) and m.get("role") == "tool-call" else None
    try:
        calls = ast.literal_eval(text.removeprefix(CALLING)) if text is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return isinstance(calls, list) and any(_is_code(c) for c in calls)


def _proceeds(m: Any) -> bool:
    """Whether ``m`` is the user turn smolagents writes after a plan (``Now proceed and carry out this plan.``)."""
    return isinstance(m, Mapping) and m.get("role") == "user" and m.get("content") in (
        PROCEED, [{"type": "text", "text": PROCEED}])


def _message(chat: Chat, code: Calls, m: Mapping[str, Any], where: str, source: str,
             pending: list[dict[str, Any]] | None, answer: Any = None, whole: bool = False,
             failed: bool = False) -> tuple[list[dict[str, Any]] | None, Any]:
    """One of ``write_memory_to_messages()``, ``pending`` the calls its last tool-call made (an empty list: a final
    answer alone, whose tool-response repeats it) and ``answer`` the final answer it gave, said after the step's
    result unless that result is an error (smolagents never gave it); returns the calls and answer a tool-response
    would follow next. ``whole``: an assistant message whose fences are its words: a plan's (smolagents writes the
    plan in a ``` fence) or a ToolCallingAgent's (no code follows it), not a CodeAgent's code."""
    role = m.get("role")
    if role not in ROLES:
        raise TranscriptFormatError(where, (f"'role' is {json.dumps(role, default=str)[:40]}" if "role" in m else
                                            "no 'role'") + f", expected one of {', '.join(ROLES)} (a smolagents "
                                                           "ChatMessage as .dict() writes it)")
    text = text_of(m.get("content"), where, ignored=chat.ignored)
    if role == "system":
        code.learn_prompt(text)
        chat.add({"role": "system", "content": text}, source)
    elif role == "user" and text == PROCEED:
        chat.ignored["plan prompt"] += 1
    elif _images(m, where):  # the images a step's tool returned (counted), between its tool-call
        return pending, answer  # and its tool-response: no turn of the user's
    elif role == "user":
        chat.add({"role": "user", "content": text.removeprefix(TASK)}, source)
    elif role == "assistant":
        words = _CALLED.sub("", text).strip() if whole else _CODE.sub("", text).strip()
        if words:
            chat.add({"role": "assistant", "content": words}, source)
    elif role == "tool-call":
        return _message_calls(chat, code, text, where, source)
    elif pending:  # a tool-response: the step's one output answers its last call
        failed = not text.startswith(OBSERVED) or failed  # (an Observation joined to its step's error: failed)
        body = text.removeprefix(OBSERVED) if text.startswith(OBSERVED) else text.split(ERROR, 1)[-1].split(RETRY, 1)[0]
        chat.add({**_result(pending), "content": body, **({FAILED: True} if failed else {})}, source)
    elif pending is None:  # an error of a call these messages do not hold (a ToolCallingAgent's that raised)
        chat.ignored["result without a call"] += 1
    if role == "tool-response" and answer is not None and (failed or not text.startswith(OBSERVED)):
        chat.ignored["final answer of a failed step"] += 1
    elif role == "tool-response" and answer is not None:
        chat.add({"role": "assistant", "content": _said(answer)}, source)
    return None, None


def _message_calls(chat: Chat, code: Calls, text: str, where: str, source: str
                   ) -> tuple[list[dict[str, Any]], Any]:
    """A tool-call message's calls, joined to the words just before them (one step); returns them ([] for a final
    answer alone) and the final answer they gave (None: none), said after the step's result."""
    try:
        calls = ast.literal_eval(text.removeprefix(CALLING))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise TranscriptFormatError(where, "a tool-call message whose text is not 'Calling tools:' and a Python "
                                           "list of calls, as smolagents writes it") from None
    if not isinstance(calls, list):
        raise TranscriptFormatError(where, f"a tool-call message holding {json_type(calls)}, expected a list of calls")
    made: list[dict[str, Any]] = []
    answer = None
    for j, c in enumerate(calls):
        name, args = _name(c, f"{where}, call {j}"), _arguments(c, f"{where}, call {j}")
        if name == INTERPRETER and _is_code(c):
            found, said = _code_calls(code, args, str(c.get("id") or f"call_{j}"), where)
            made += found
            answer = said if said is not None else OUTPUT if code.final_called else answer
        elif name == FINAL:
            answer = args.get("answer", args) if isinstance(args, Mapping) else args
        else:
            made.append(chat_call(c.get("id"), name, args, f"{where}, call {j}"))
    last = chat.messages[-1] if chat.messages else None
    if made and last is not None and last["role"] == "assistant" and not last.get("tool_calls"):
        last["tool_calls"] = made  # the words the step's model output said beside its calls
    elif made:
        chat.add({"role": "assistant", "content": None, "tool_calls": made}, source)
    return made, answer


def _said(answer: Any) -> str:
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


def _name(call: Any, where: str) -> str:
    fn = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"]:
        raise TranscriptFormatError(where, "a tool call without 'function.name', expected {\"id\", \"type\", "
                                           "\"function\": {\"name\", \"arguments\"}}")
    return fn["name"]


def _is_code(call: Any) -> bool:
    """Whether ``call`` is the python_interpreter call a CodeAgent records, its code the arguments (a string); a
    ToolCallingAgent's call of smolagents' PythonInterpreterTool (``add_base_tools=True`` gives it one) has the
    object ``{"code": ...}``, a tool call like any other: its code runs apart from the agent's tools."""
    fn = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(fn, Mapping) or fn.get("name") != INTERPRETER or not isinstance(fn.get("arguments"), str):
        return False
    try:
        return not isinstance(json.loads(fn["arguments"]), Mapping)
    except ValueError:
        return True


def _arguments(call: Mapping[str, Any], where: str) -> Any:
    args = call["function"].get("arguments")
    if isinstance(args, str) and not _is_code(call):
        try:
            return json.loads(args)
        except ValueError:
            return args
    return args


def _text(value: Any, where: str) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    return text_of(value, f"{where}, model_output")


def _string(value: Any, where: str, field: str) -> str:
    if not isinstance(value, str):
        raise TranscriptFormatError(where, f"'{field}' is {json_type(value)}, expected a string")
    return value
