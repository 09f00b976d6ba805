"""Templated conversations of an HR leave-booking assistant built on Hugging Face smolagents, as its memory dumps.

Each conversation is what ``[agent.memory.system_prompt.dict(), *agent.memory.get_succinct_steps()]`` writes after
two or three ``agent.run(task, reset=False)`` (smolagents 1.2x): a ``SystemPromptStep`` ``{"system_prompt"}``, then
per run a ``TaskStep`` ``{"task", "task_images"}`` and its ``ActionStep`` dicts (``step_number`` from 1 each run,
``tool_calls`` ``[{"id", "type": "function", "function": {"name", "arguments"}}]``, ``observations``, ``error``,
``model_output_message``, ``code_action``, ``action_output``, ``is_final_answer``, ...). Two agents in three are a
``ToolCallingAgent`` (JSON tool calls, parallel ones whose outputs smolagents joins into one ``observations``, an
answer a ``final_answer`` call), the third a ``CodeAgent`` (Python that calls the tools, recorded as one
``python_interpreter`` call; an argument sometimes a variable holding an earlier output, ``request["request_id"]``,
which no log shows the value of). A leave of more than five working days is refused once by ``create_leave_request``
(no cover named: a ToolCallingAgent's step keeps no ``tool_calls`` then, only the model's message and the ``error``)
and made again with the colleague ``find_cover`` gave.

Written by a template with varied values (names, dates, ids): figures measured on these logs are easy and must be
reported as templated. ``python tests/smolagents_leave.py OUT N SEED`` writes one ``CONVERSATION_ID.json`` a
conversation into the folder OUT; ``--jsonl`` a ``.jsonl`` of ``{"id", "system_prompt", "steps"}`` lines instead.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any

NAMES = ["Priya Sharma", "Tomás Ruiz", "Aiko Tanaka", "Jonas Weber", "Fatima Khan", "Liam O'Brien", "Chen Wei",
         "Sofia Rossi", "Kwame Mensah", "Elena Petrova", "Noah Johnson", "Maya Cohen", "Ravi Iyer", "Ana Costa"]
MANAGERS = ["m.chen", "r.okafor", "s.lindqvist", "d.alvarez", "k.nakamura"]
TEAMS = ["payroll", "platform", "field-sales", "legal-ops", "brand"]
COUNTRIES = ["DE", "FR", "GB", "NL", "ES"]
KINDS = ["annual", "parental", "unpaid"]
NOTES = ["I'll hand over the Q1 report before I go", "my calendar is blocked already", "the on-call rota is covered",
         "I'll be reachable by phone for emergencies"]
TOOLS = {"get_leave_balance": (["employee_id"], "object", "An employee's leave balance and manager."),
         "list_holidays": (["country", "year"], "array", "Public holidays of a country in a year."),
         "find_cover": (["team", "start_date", "end_date"], "object", "A colleague free to cover the dates."),
         "create_leave_request": (["employee_id", "start_date", "end_date", "leave_type", "cover_employee_id"],
                                  "object", "Books leave; more than five working days needs a cover."),
         "notify_manager": (["request_id", "manager", "message"], "string", "Tells the approver about a request."),
         "get_request_status": (["request_id"], "object", "The status of a leave request."),
         "cancel_leave_request": (["request_id", "reason"], "object", "Cancels a pending request.")}
RULES = ("You are the HR leave assistant of Acme. Leave types: annual, parental, unpaid. Book leave only for the "
         "employee you talk to, and give them the request id.")
TIMING = {"start_time": 1796601600.0, "end_time": 1796601601.5, "duration": 1.5}


def system_prompt(code: bool) -> str:
    """The tool listing each agent's prompt holds (smolagents' own rules and examples shortened to a line)."""
    if code:
        tools = "".join(f"def {n}({', '.join(f'{a}: string' for a in args)}) -> {out}:\n    \"\"\"{doc}\"\"\"\n\n"
                        for n, (args, out, doc) in TOOLS.items())
        return ("You are an expert assistant who can solve any task using code blobs. ... you only have access to "
                f"these tools, behaving like regular python functions:\n<code>\n{tools}</code>\n{RULES}")
    tools = "".join(f"- {n}: {doc}\n    Takes inputs: {{{', '.join(repr(a) + ': ...' for a in args)}}}\n"
                    f"    Returns an output of type: {out}\n" for n, (args, out, doc) in TOOLS.items())
    return ("You are an expert assistant who can solve any task using tool calls. ... You only have access to these "
            f"tools:\n{tools}{RULES}")


class Memory:
    """One agent's memory as its steps dump, built as the agent runs."""

    def __init__(self, code: bool) -> None:
        self.code, self.steps = code, [{"system_prompt": system_prompt(code)}]
        self.number, self.calls = 0, 0

    def task(self, text: str) -> None:
        self.steps.append({"task": text, "task_images": None})
        self.number = 0

    def _step(self, **fields: Any) -> None:
        self.number += 1
        self.steps.append({"step_number": self.number, "timing": TIMING, "tool_calls": [], "error": None,
                           "model_output_message": None, "model_output": None, "code_action": None,
                           "observations": None, "observations_images": None, "action_output": None,
                           "token_usage": {"input_tokens": 1800 + 150 * self.number, "output_tokens": 60},
                           "is_final_answer": False, **fields})

    def act(self, calls: list[tuple[str, dict[str, Any]]], outputs: list[Any], error: str | None = None,
            thought: str | None = None) -> None:
        """A ToolCallingAgent's step: its calls, their outputs joined into one text (sorted by call id, as
        smolagents joins parallel outputs), or the error of a call that raised."""
        made = []
        for name, args in calls:
            self.calls += 1
            made.append({"id": f"call_{self.calls:02d}", "type": "function",
                         "function": {"name": name, "arguments": args}})
        message = {"role": "assistant", "content": thought, "raw": None, "token_usage": None, "tool_calls": [
            {"function": {**c["function"], "description": None}, "id": c["id"], "type": "function"} for c in made]}
        observed = "\n".join(o if isinstance(o, str) else str(o) for o in outputs) if not error else None
        self._step(tool_calls=[] if error else made, model_output_message=message, model_output=thought,
                   observations=observed, is_final_answer=calls[0][0] == "final_answer",
                   error={"type": "AgentToolExecutionError", "message": error} if error else None)

    def run_code(self, thought: str, code: str, printed: str, output: Any = None, final: bool = False) -> None:
        """A CodeAgent's step: its code, recorded as one python_interpreter call, and what it printed."""
        self.calls += 1
        text = f"Thought: {thought}\n<code>\n{code}\n</code>"
        self._step(tool_calls=[{"id": f"call_{len(self.steps)}", "type": "function",
                                "function": {"name": "python_interpreter", "arguments": code}}],
                   model_output_message={"role": "assistant", "content": text, "tool_calls": None, "raw": None,
                                         "token_usage": None},
                   model_output=text, code_action=code, action_output=output, is_final_answer=final,
                   observations=f"Execution logs:\n{printed}Last output from code snippet:\n{output}")

    def answer(self, text: str) -> None:
        if self.code:
            self.run_code("I can answer now.", f"final_answer({json.dumps(text)})", "", text, final=True)
        else:
            self.act([("final_answer", {"answer": text})], [text])


def conversation(rng: random.Random, n: int) -> tuple[str, list[dict[str, Any]]]:
    name = rng.choice(NAMES)
    emp, mgr, team, country = f"EMP-{rng.randint(10000, 99999)}", rng.choice(MANAGERS), rng.choice(TEAMS), rng.choice(
        COUNTRIES)
    start = date(2026, 1, 5) + timedelta(weeks=rng.randint(0, 40))
    days = rng.choice([2, 3, 4, 5, 8, 9, 10])
    end = start + timedelta(days=days - 1 + 2 * ((days - 1) // 5))
    kind, code = rng.choice(KINDS), n % 3 == 2
    request = f"LR-2026-{rng.randint(1000, 9999)}"
    cover = f"EMP-{rng.randint(10000, 99999)}"
    balance = {"employee_id": emp, "annual_days": rng.choice([4.5, 11, 14.5, 21]), "manager": mgr, "team": team}
    holidays = [str(date(2026, 5, 1)), str(date(2026, 12, 25))]
    booked = {"request_id": request, "status": "pending", "approver": mgr}
    m = Memory(code)
    m.task(f"Hi, I'm {name}, employee id {emp}. I'd like {kind} leave from {start} to {end}.")
    args = {"employee_id": emp, "start_date": str(start), "end_date": str(end), "leave_type": kind}
    if not code:
        if rng.random() < 0.5:  # parallel calls: one observations text for both
            m.act([("get_leave_balance", {"employee_id": emp}), ("list_holidays", {"country": country, "year": 2026})],
                  [json.dumps(balance), json.dumps(holidays)])
        else:
            m.act([("get_leave_balance", {"employee_id": emp})], [json.dumps(balance)], thought="Checking balance.")
        if days > 5:
            m.act([("create_leave_request", args)], [], error=(
                f"Error executing tool 'create_leave_request' with arguments {args}: ValueError: {days} working "
                "days need a cover_employee_id\nPlease try again or use another tool"))
            m.act([("find_cover", {"team": team, "start_date": str(start), "end_date": str(end)})],
                  [json.dumps({"cover_employee_id": cover, "name": rng.choice(NAMES)})])
            args = {**args, "cover_employee_id": cover}
        m.act([("create_leave_request", args)], [json.dumps(booked)])
    else:
        m.run_code("Look up the balance first.", f'balance = get_leave_balance(employee_id="{emp}")\nprint(balance)',
                   f"{balance}\n")
        if days > 5:
            m.run_code("More than five days: find a cover.", f'cover = find_cover("{team}", "{start}", "{end}")\n'
                       "print(cover)", f"{ {'cover_employee_id': cover} }\n")
            args = {**args, "cover_employee_id": cover}
        call = ", ".join(f'{k}="{v}"' for k, v in args.items())
        m.run_code("Book it.", f"request = create_leave_request({call})\nprint(request)", f"{booked}\n")
    m.answer(f"Your {kind} leave {start} to {end} is booked as {request}, pending approval by {mgr}.")
    note = rng.choice(NOTES)
    m.task(f"Please let my manager know, and tell them {note}.")
    if not code:
        m.act([("notify_manager", {"request_id": request, "manager": mgr, "message": note})], ["sent"])
    elif rng.random() < 0.5:  # an argument the code computes: its value is in no log line
        m.run_code("Notify the approver.", f'notify_manager(request_id=request["request_id"], manager="{mgr}", '
                   f"message={json.dumps(note)})", "", "sent")
    else:
        m.run_code("Notify the approver.", f'rid = "{request}"\nnotify_manager(request_id=rid, manager="{mgr}", '
                   f"message={json.dumps(note)})", "", "sent")
    m.answer(f"Done: {mgr} has been told.")
    if rng.random() < 0.6:
        if rng.random() < 0.5:
            m.task(f"Has {request} been approved yet?")
            status = {"request_id": request, "status": rng.choice(["approved", "pending"])}
            if code:
                m.run_code("Check it.", f'print(get_request_status("{request}"))', f"{status}\n")
            else:
                m.act([("get_request_status", {"request_id": request})], [json.dumps(status)])
            m.answer(f"{request} is {status['status']}.")
        else:
            reason = rng.choice(["plans changed", "project deadline moved"])
            m.task(f"Sorry, {reason}: please cancel {request}.")
            if code:
                m.run_code("Cancel it.", f'print(cancel_leave_request(request_id="{request}", reason="{reason}"))',
                           "{'status': 'cancelled'}\n")
            else:
                m.act([("cancel_leave_request", {"request_id": request, "reason": reason})], ['{"status": "cancelled"}'])
            m.answer(f"{request} is cancelled.")
    return f"leave-{rng.getrandbits(32):08x}", m.steps


def conversations(count: int, seed: int) -> list[tuple[str, list[dict[str, Any]]]]:
    rng = random.Random(seed)
    return [conversation(rng, n) for n in range(count)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write templated smolagents memories of an HR leave assistant.")
    parser.add_argument("out", type=Path, help="a folder of CONVERSATION_ID.json memories (a .jsonl with --jsonl)")
    parser.add_argument("count", type=int, help="conversations")
    parser.add_argument("seed", type=int, help="the generator's seed (another seed, other conversations and ids)")
    parser.add_argument("--jsonl", action="store_true", help='{"id", "system_prompt", "steps"} lines')
    args = parser.parse_args(argv)
    if args.jsonl:
        args.out.write_text("".join(json.dumps({"id": cid, "system_prompt": steps[0]["system_prompt"],
                                                "steps": steps[1:]}) + "\n"
                                    for cid, steps in conversations(args.count, args.seed)))
    else:
        args.out.mkdir(parents=True, exist_ok=True)
        for cid, steps in conversations(args.count, args.seed):
            (args.out / f"{cid}.json").write_text(json.dumps(steps, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
