"""Google ADK against the real package (google-adk; skipped where it is not installed): examples/logs/adk.json is
the shape a real Runner dumps, its conversation replayed with a scripted model (no network), and the dumps a program
saves (model_dump_json() with its nulls, exclude_none as the SQL session services store events, by_alias) read alike.

Run here in a side environment: PYTHONPATH=$PWD:$PWD/tests:<the main venv's site-packages> /tmp/venv-adk/bin/python
-m pytest tests/test_adk_memory.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from test_formats import ARGS1, ARGS2, DONE, ERROR, HI, POLICY, SEE, USER, YES, adk_session

from sam_model.data.formats import to_chat

adk = pytest.importorskip("google.adk", reason="google-adk is not installed (pip install google-adk; run "
                                               "with its environment, as this module's doc says)")

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.genai import types  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "logs" / "adk.json"


class Scripted(BaseLlm):
    """A model that answers from a script, one response a call: a list of parts (a text or a call {"name", "args"};
    a call to another agent is transfer_to_agent's), so no network is needed."""

    model: str = "scripted"
    script: list[list[Any]] = []

    async def generate_content_async(self, llm_request: Any, stream: bool = False):
        parts = [types.Part(text=p) if isinstance(p, str) else types.Part(function_call=types.FunctionCall(**p))
                 for p in self.script.pop(0)]
        yield LlmResponse(content=types.Content(role="model", parts=parts))


def get_user(user_id: str) -> dict:
    """Look a user up."""
    return USER


def cancel(reservation_id: str, user_id: str, reason: str, refund: bool, cabin: str) -> dict:
    """Cancel a reservation."""
    return {"error": ERROR.removeprefix("Error: ")}


async def run(agent: LlmAgent, turns: list[str], app: str = "airline", user: str = "ann_lee_123",
              runner_kwargs: dict[str, Any] | None = None) -> Any:
    """The session after running ``turns`` through a Runner of ``agent`` (an in-memory session service)."""
    sessions = InMemorySessionService()
    runner = Runner(agent=agent, app_name=app, session_service=sessions, **(runner_kwargs or {}))
    session = await sessions.create_session(app_name=app, user_id=user)
    for text in turns:
        async for _ in runner.run_async(user_id=user, session_id=session.id,
                                        new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            pass
    return await sessions.get_session(app_name=app, user_id=user, session_id=session.id)


def airline_agent() -> LlmAgent:
    model = Scripted(script=[[{"name": "get_user", "args": ARGS1}], [SEE], [{"name": "cancel", "args": ARGS2}],
                             [DONE]])
    return LlmAgent(name="airline_agent", model=model, instruction=POLICY, tools=[get_user, cancel])


def shape(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What the reader reads of each event: its author and content, the parts without their call ids (ADK makes
    them, adk-<uuid>) or unset fields."""
    def part(p: dict[str, Any]) -> dict[str, Any]:
        return {k: ({f: x for f, x in v.items() if f in ("name", "args", "response")} if isinstance(v, dict) else v)
                for k, v in p.items() if v is not None}
    return [(e["author"], e["content"]["role"], [part(p) for p in e["content"]["parts"]]) for e in events]


def test_the_example_is_what_a_real_runner_dumps():
    session = asyncio.run(run(airline_agent(), [HI, YES]))
    dumped = json.loads(session.model_dump_json(exclude_none=True))
    example = json.loads(EXAMPLE.read_text())
    assert shape(dumped["events"]) == shape(example["events"]) == shape(adk_session()["events"])
    assert {k for k in example if k != "system"} <= set(json.loads(session.model_dump_json()))
    ids = {c["id"] for c in to_chat(dumped["events"]).messages[1].get("tool_calls", [])}
    assert all(i.startswith("adk-") for i in ids)  # ADK's own call ids, which the reader pairs results by
    strip = lambda chat: [{k: v for k, v in m.items() if k not in ("tool_call_id", "tool_calls")}  # noqa: E731
                          for m in chat.messages]
    want = strip(to_chat(example["events"]))
    for doc in (json.loads(session.model_dump_json()), session.model_dump(mode="json", by_alias=True), dumped):
        assert strip(to_chat(doc["events"])) == want


def test_a_sub_agent_s_session_reads_every_agent_s_events():
    """A coordinator transferring to a sub-agent (ADK's transfer_to_agent, actions.transfer_to_agent), the sub-agent
    calling its tool and answering: one conversation, the transfer a call like any other."""
    bookings = LlmAgent(name="bookings", model=Scripted(script=[[{"name": "cancel", "args": ARGS2}], [DONE]]),
                        instruction="Cancel bookings.", tools=[cancel])
    coordinator = LlmAgent(name="coordinator", instruction=POLICY, sub_agents=[bookings], model=Scripted(
        script=[[{"name": "transfer_to_agent", "args": {"agent_name": "bookings"}}]]))
    session = asyncio.run(run(coordinator, [HI]))
    events = json.loads(session.model_dump_json())["events"]
    assert {e["author"] for e in events} == {"user", "coordinator", "bookings"}
    assert any((e["actions"] or {}).get("transfer_to_agent") == "bookings" for e in events)
    chat = to_chat(events)
    assert [c["function"]["name"] for m in chat.messages for c in m.get("tool_calls", [])] == [
        "transfer_to_agent", "cancel"]
    assert [m["role"] for m in chat.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert chat.messages[-1]["content"] == DONE and chat.messages[-2].get("is_error") is True
