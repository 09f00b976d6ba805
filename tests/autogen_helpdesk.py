"""Templated conversations of an IT helpdesk assistant built on Microsoft AutoGen (autogen-agentchat 0.4+), as it
saves them: ``await agent.save_state()`` of an ``AssistantAgent``, an ``AssistantAgentState`` whose ``llm_context``
is the model context's ``{"messages": [...]}``, each message an ``LLMMessage`` dumped by pydantic with its ``type``:
``UserMessage`` (``content``, ``source``), ``AssistantMessage`` (``content`` words or a list of ``FunctionCall``s
``{"id", "arguments", "name"}``, the arguments JSON text; ``thought``; ``source``) and
``FunctionExecutionResultMessage`` (``content`` a list of ``{"content", "name", "call_id", "is_error"}``). The agent's
system message is not in the state (AssistantAgent keeps it apart from its model context). Several ``agent.run(task=
...)`` a conversation, parallel calls, a tool that fails once (``is_error``) and is called again, and an agent made
with ``reflect_on_tool_use=False`` (no words after its calls: the next user message follows the results).

Written by a template with varied values (names, devices, ids): figures measured on these logs are easy and must be
reported as templated. ``python tests/autogen_helpdesk.py OUT N SEED`` writes one ``CONVERSATION_ID.json`` a
conversation into the folder OUT (``json.dump(await agent.save_state(), f)``); ``--team`` writes a
``RoundRobinGroupChat``'s ``await team.save_state()`` instead; ``--jsonl`` a ``.jsonl`` of ``{"id", "messages":
state["llm_context"]["messages"]}`` lines; ``--task-results`` a ``.jsonl`` of ``{"id", "messages"}`` lines holding
each run's ``TaskResult.messages`` (autogen_agentchat.messages, ``m.model_dump(mode="json")``: TextMessage,
ThoughtEvent, ToolCallRequestEvent, ToolCallExecutionEvent, ToolCallSummaryMessage), the runs one after another.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

AGENT = "helpdesk"
NAMES = ["Priya Sharma", "Tomás Ruiz", "Aiko Tanaka", "Jonas Weber", "Fatima Khan", "Liam O'Brien", "Chen Wei",
         "Sofia Rossi", "Kwame Mensah", "Elena Petrova", "Noah Johnson", "Maya Cohen", "Ravi Iyer", "Ana Costa"]
DEPARTMENTS = ["Finance", "Sales", "Engineering", "Legal", "Marketing", "Operations"]
MANAGERS = ["m.chen", "r.okafor", "s.lindqvist", "d.alvarez", "k.nakamura"]
DEVICES = [("Dell Latitude 7440", "Windows 11"), ("MacBook Pro 14", "macOS 15"), ("Lenovo ThinkPad T14", "Windows 11"),
           ("HP EliteBook 840", "Windows 10"), ("MacBook Air 13", "macOS 14")]
SYSTEMS = [("Salesforce", "sales-crm"), ("NetSuite", "erp-finance"), ("GitHub Enterprise", "eng-github"),
           ("Workday", "hr-workday"), ("Tableau", "bi-tableau")]
PROBLEMS = [("VPN keeps disconnecting", "network", "VPN drops every few minutes (GlobalProtect)"),
            ("laptop will not boot past the logo", "hardware", "boot hangs at the manufacturer logo"),
            ("Outlook does not sync my calendar", "email", "Outlook calendar sync stalled"),
            ("the docking station shows no external monitor", "hardware", "no display through the dock"),
            ("printer on floor 3 says offline", "printing", "floor 3 printer offline")]
GROUPS = {"network": "net-ops", "hardware": "desktop-support", "email": "messaging", "printing": "desktop-support"}


class Context:
    """One AssistantAgent's model context, as AutoGen appends to it during ``agent.run``."""

    def __init__(self, rng: random.Random, reflect: bool, n: int) -> None:
        self.rng, self.reflect, self.messages = rng, reflect, []  # type: ignore[var-annotated]
        self.events: list[dict[str, Any]] = []  # the runs' TaskResult.messages, as agent.run returns them
        self.stamps = random.Random(n)  # the events' ids and times, drawn apart: the context is the same either way
        self.t = datetime(2026, 11, 2, 9, tzinfo=timezone.utc) + timedelta(minutes=self.stamps.randint(0, 28800))

    def _event(self, kind: str, content: Any, source: str = AGENT) -> None:
        """An autogen_agentchat message as ``model_dump(mode="json")`` writes it (0.7: an id and a creation time)."""
        self.t += timedelta(seconds=self.stamps.randint(1, 20))
        usage = {"prompt_tokens": self.stamps.randint(300, 2000), "completion_tokens": self.stamps.randint(9, 90)}
        self.events.append({"id": f"{self.stamps.getrandbits(128):032x}", "source": source, "models_usage": None
                            if source == "user" or kind == "ToolCallExecutionEvent" else usage,
                            "metadata": {}, "created_at": self.t.isoformat(), "content": content, "type": kind})

    def user(self, words: str) -> None:
        self.messages.append({"content": words, "source": "user", "type": "UserMessage"})
        self._event("TextMessage", words, "user")

    def call(self, *calls: tuple[str, dict[str, Any]], thought: str | None = None) -> list[str]:
        ids = [f"call_{self.rng.getrandbits(80):020x}" for _ in calls]
        self.messages.append({"content": [{"id": i, "arguments": json.dumps(a), "name": n}
                                          for i, (n, a) in zip(ids, calls, strict=True)],
                              "thought": thought, "source": AGENT, "type": "AssistantMessage"})
        if thought:
            self._event("ThoughtEvent", thought)
        self._event("ToolCallRequestEvent", self.messages[-1]["content"])
        return ids

    def results(self, *results: tuple[str, str, Any, bool]) -> None:
        """(name, call id, what the tool returned, is_error): AutoGen's workbench gives the tool's return as text."""
        self.messages.append({"content": [{"content": r if isinstance(r, str) else json.dumps(r), "name": n,
                                           "call_id": i, "is_error": e} for n, i, r, e in results],
                              "type": "FunctionExecutionResultMessage"})
        self._event("ToolCallExecutionEvent", self.messages[-1]["content"])

    def say(self, words: str, after_tools: bool = True) -> None:
        """The agent's words: after tool calls only where it reflects on them (reflect_on_tool_use=True)."""
        if self.reflect or not after_tools:
            self.messages.append({"content": words, "thought": None, "source": AGENT, "type": "AssistantMessage"})
            self._event("TextMessage", words)
        else:  # the run's response: its last results, as tool_call_summary_format "{result}" writes them
            self._event("ToolCallSummaryMessage", "\n".join(r["content"] for r in self.messages[-1]["content"]))


def conversation(rng: random.Random, n: int) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    name = rng.choice(NAMES)
    first, last = name.split(" ", 1)
    email = f"{first.lower()}.{last.lower().replace(' ', '').replace(chr(39), '')}@contoso.com"
    employee = f"E{rng.randint(10000, 99999)}"
    dept, manager = rng.choice(DEPARTMENTS), rng.choice(MANAGERS)
    asset = f"CT-{rng.randint(100000, 999999)}"
    model, os = rng.choice(DEVICES)
    c = Context(rng, rng.random() < 0.7, n)
    kind = n % 3
    if kind == 0:
        words, category, summary = rng.choice(PROBLEMS)
        c.user(f"Hi, this is {name} ({email}). My {words}.")
    elif kind == 1:
        c.user(f"Hello, {email} here. I'm locked out of my account after too many attempts.")
    else:
        system, role = rng.choice(SYSTEMS)
        c.user(f"Hi, I'm {name}, {email}. I need access to {system} for a new project.")
    (i,) = c.call(("lookup_user", {"email": email}))
    c.results(("lookup_user", i, {"employee_id": employee, "name": name, "department": dept, "manager": manager,
                                  "devices": [asset]}, False))
    if kind == 0:
        ids = c.call(("get_device", {"asset_tag": asset}), ("search_kb", {"query": summary}),
                     thought="Checking the device and the knowledge base together.")
        article = f"KB{rng.randint(1000, 9999)}"
        c.results(("get_device", ids[0], {"asset_tag": asset, "model": model, "os": os,
                                          "warranty_until": f"2027-0{rng.randint(1, 9)}-15"}, False),
                  ("search_kb", ids[1], [{"article_id": article, "title": f"Troubleshooting: {summary}"}], False))
        c.say(f"I found {article} for your {model}. Did restarting as it describes help?")
        c.user("No, still the same. Please open a ticket.")
        priority = rng.choice(["P2", "P3"])
        if rng.random() < 0.4:  # the first try names a priority the tool does not take
            (bad,) = c.call(("create_ticket", {"employee_id": employee, "asset_tag": asset, "category": category,
                                               "priority": "high", "summary": summary}))
            c.results(("create_ticket", bad, "Error: priority must be one of P1, P2, P3, P4", True))
        (t,) = c.call(("create_ticket", {"employee_id": employee, "asset_tag": asset, "category": category,
                                         "priority": priority, "summary": summary}))
        ticket = f"INC-2026-{rng.randint(10000, 99999)}"
        c.results(("create_ticket", t, {"ticket_id": ticket, "status": "new"}, False))
        (g,) = c.call(("assign_ticket", {"ticket_id": ticket, "group": GROUPS[category]}))
        c.results(("assign_ticket", g, {"ticket_id": ticket, "group": GROUPS[category], "status": "assigned"}, False))
        c.say(f"Ticket {ticket} ({priority}) is with {GROUPS[category]}.")
        c.user("Thanks. Can you tell me when someone picks it up?")
        (s,) = c.call(("get_ticket_status", {"ticket_id": ticket}))
        c.results(("get_ticket_status", s, {"ticket_id": ticket, "status": "assigned", "eta_hours": rng.randint(2, 8)},
                   False))
        c.say(f"{ticket} is assigned; expect contact within the day.")
    elif kind == 1:
        method = rng.choice(["sms", "authenticator"])
        c.say(f"I can reset it for you, {first}. Should the code go by SMS or the authenticator app?",
              after_tools=False)
        c.user(f"{method.upper() if method == 'sms' else 'The authenticator app'}, please.")
        (r,) = c.call(("unlock_account", {"employee_id": employee}))
        c.results(("unlock_account", r, {"employee_id": employee, "locked": False}, False))
        (p,) = c.call(("reset_password", {"employee_id": employee, "method": method}))
        c.results(("reset_password", p, {"employee_id": employee, "sent": True, "expires_minutes": 15}, False))
        c.say(f"Your account is unlocked and a reset code went by {method}.")
        c.user("Got it, I'm back in. Could you log this for my manager?")
        (t,) = c.call(("create_ticket", {"employee_id": employee, "asset_tag": asset, "category": "account",
                                         "priority": "P4", "summary": "account lockout, password reset"}))
        ticket = f"INC-2026-{rng.randint(10000, 99999)}"
        c.results(("create_ticket", t, {"ticket_id": ticket, "status": "resolved"}, False))
        (m,) = c.call(("notify", {"recipient": manager, "ticket_id": ticket}))
        c.results(("notify", m, {"sent": True}, False))
        c.say(f"Logged as {ticket} and {manager} was told.")
    else:
        c.say(f"Access to {system} needs your manager's approval. Who should approve it?", after_tools=False)
        c.user(f"My manager, {manager}.")
        (a,) = c.call(("request_access", {"employee_id": employee, "system": role, "approver": manager}))
        request = f"REQ-{rng.randint(100000, 999999)}"
        c.results(("request_access", a, {"request_id": request, "status": "pending_approval"}, False))
        c.say(f"Request {request} is waiting for {manager}.")
        c.user("They approved it just now.")
        (s,) = c.call(("get_request_status", {"request_id": request}))
        c.results(("get_request_status", s, {"request_id": request, "status": "approved"}, False))
        (g,) = c.call(("grant_access", {"employee_id": employee, "system": role, "request_id": request}))
        c.results(("grant_access", g, {"employee_id": employee, "system": role, "granted": True}, False))
        c.say(f"Done: {system} is yours; sign in with {email}.")
    return f"helpdesk-{n:03d}", c.messages, c.events


def conversations(count: int, seed: int, task_results: bool = False) -> list[tuple[str, list[dict[str, Any]]]]:
    """``count`` conversations of seed ``seed`` (ids ``sSEED-helpdesk-NNN``: another seed, other ids): the model
    context's messages, or (``task_results``) the runs' TaskResult messages."""
    rng = random.Random(seed)
    return [(f"s{seed}-{cid}", events if task_results else msgs)
            for cid, msgs, events in (conversation(rng, n) for n in range(count))]


def agent_state(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``await agent.save_state()`` returns: ``AssistantAgentState(llm_context=...).model_dump()``."""
    return {"type": "AssistantAgentState", "version": "1.0.0", "llm_context": {"messages": messages}}


def team_state(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``await team.save_state()`` returns for a RoundRobinGroupChat of the one agent: each participant's state
    in a ChatAgentContainerState, and the manager's thread of the chat messages the team passed."""
    thread = [{"source": m["source"], "models_usage": None, "metadata": {}, "content": m["content"],
               "type": "TextMessage"} for m in messages if m["type"] != "FunctionExecutionResultMessage"
              and isinstance(m["content"], str)]
    return {"type": "TeamState", "version": "1.0.0", "agent_states": {
        AGENT: {"type": "ChatAgentContainerState", "version": "1.0.0", "agent_state": agent_state(messages),
                "message_buffer": []},
        "RoundRobinGroupChatManager": {"type": "RoundRobinManagerState", "version": "1.0.0", "message_thread": thread,
                                       "current_turn": len(thread), "next_speaker_index": 0}}}


def write_folder(folder: Path, count: int, seed: int, team: bool = False) -> Path:
    """One ``CONVERSATION_ID.json`` a conversation, holding what ``save_state()`` returns."""
    folder.mkdir(parents=True, exist_ok=True)
    for cid, msgs in conversations(count, seed):
        (folder / f"{cid}.json").write_text(json.dumps((team_state if team else agent_state)(msgs), indent=2))
    return folder


def write_jsonl(path: Path, count: int, seed: int, task_results: bool = False) -> Path:
    """A ``.jsonl`` of ``{"id", "messages": state["llm_context"]["messages"]}`` lines, one a conversation (or of its
    runs' TaskResult messages)."""
    path.write_text("".join(json.dumps({"id": cid, "messages": msgs}) + "\n"
                            for cid, msgs in conversations(count, seed, task_results)))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write templated AutoGen logs of an IT helpdesk agent.")
    parser.add_argument("out", type=Path, help="a folder of CONVERSATION_ID.json saved states (a .jsonl with --jsonl "
                                               "or --task-results)")
    parser.add_argument("count", type=int, help="conversations")
    parser.add_argument("seed", type=int, help="the generator's seed (another seed, other conversations and ids)")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--team", action="store_true", help="a RoundRobinGroupChat's team.save_state() a file")
    shape.add_argument("--jsonl", action="store_true", help='{"id", "messages": the model context\'s} lines')
    shape.add_argument("--task-results", action="store_true", help='{"id", "messages": the runs\' TaskResult '
                                                                   'messages} lines')
    args = parser.parse_args(argv)
    if args.jsonl or args.task_results:
        write_jsonl(args.out, args.count, args.seed, task_results=args.task_results)
    else:
        write_folder(args.out, args.count, args.seed, team=args.team)
    return 0


if __name__ == "__main__":
    sys.exit(main())
