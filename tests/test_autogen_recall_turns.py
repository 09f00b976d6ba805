"""SAMAutoGenMemory's recall as the model client of a real AssistantAgent receives it (autogen-agentchat): in the
user's message, a text part before the user's words, not a UserMessage of its own (two user turns in a row, which
the chat templates that want user and assistant to alternate refuse), and only the newest run's (earlier runs'
frames stacked up in the context). Skipped where autogen-agentchat is not installed (its side venv runs it)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

autogen_agentchat = pytest.importorskip("autogen_agentchat")

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_core.memory import MemoryContent  # noqa: E402
from autogen_core.model_context import BufferedChatCompletionContext, UnboundedChatCompletionContext  # noqa: E402
from autogen_core.models import (  # noqa: E402
    ChatCompletionClient,
    CreateResult,
    ModelInfo,
    RequestUsage,
    SystemMessage,
    UserMessage,
)

from sam_model.data.formats import autogen as reader  # noqa: E402
from sam_model.data.formats.recalls import is_frame  # noqa: E402
from sam_model.integrations.autogen import SAMAutoGenMemory  # noqa: E402
from sam_model.memory import HashingEncoder, ScopedMemory  # noqa: E402


class Recording(ChatCompletionClient):
    """A model client that records the messages of each call and answers "Noted." (no network)."""

    def __init__(self, vision: bool) -> None:
        self.calls: list[list[Any]] = []
        self.vision = vision

    async def create(self, messages, *, tools=(), tool_choice="auto", json_output=None, extra_create_args=None,
                     cancellation_token=None) -> CreateResult:
        self.calls.append(list(messages))
        return CreateResult(finish_reason="stop", content="Noted.", usage=RequestUsage(prompt_tokens=1,
                                                                                       completion_tokens=1),
                            cached=False)

    def create_stream(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def close(self) -> None:
        return None

    def actual_usage(self) -> RequestUsage:
        return RequestUsage(prompt_tokens=0, completion_tokens=0)

    def total_usage(self) -> RequestUsage:
        return RequestUsage(prompt_tokens=0, completion_tokens=0)

    def count_tokens(self, messages, *, tools=()) -> int:
        return 0

    def remaining_tokens(self, messages, *, tools=()) -> int:
        return 10**6

    @property
    def capabilities(self) -> Any:
        return self.model_info

    @property
    def model_info(self) -> ModelInfo:
        return ModelInfo(vision=self.vision, function_calling=True, json_output=False, family="unknown",
                         structured_output=False)


def _roles(messages: list[Any]) -> list[str]:
    """The turns a chat template renders: system, user, assistant (a tool's result as a tool turn)."""
    kinds = {"SystemMessage": "system", "UserMessage": "user", "AssistantMessage": "assistant"}
    return [kinds.get(m.type, "tool") for m in messages]


def _agent(context: Any, memories: list[Any], vision: bool = True) -> tuple[AssistantAgent, Recording]:
    client = Recording(vision)
    return AssistantAgent("helpdesk", model_client=client, memory=memories, model_context=context,
                          system_message="You are the helpdesk."), client


@pytest.mark.parametrize("vision", [True, False])
@pytest.mark.parametrize("make", [UnboundedChatCompletionContext, lambda: BufferedChatCompletionContext(buffer_size=8)])
def test_the_model_receives_the_recall_in_the_users_message_never_two_user_turns_in_a_row(make, vision):
    """Each run's model call: the turns alternate (system, user, assistant, user, ...); the newest user message's
    first parts are the two memories' frames (the user's, the agent's), its last the user's words (a model without
    vision gets the parts joined by AssistantAgent into one text, in that order)."""
    store = ScopedMemory(HashingEncoder(64))
    mia, desk = SAMAutoGenMemory(store, user_id="mia"), SAMAutoGenMemory(store, agent_id="desk")

    async def run() -> Recording:
        await mia.add(MemoryContent(content="Mia's laptop is CT-487926", mime_type="text/plain"))
        await desk.add(MemoryContent(content="Every laptop ships with a dock", mime_type="text/plain"))
        agent, client = _agent(make(), [mia, desk], vision)
        await agent.run(task="Which laptop do I have?")
        await agent.run(task="And which dock comes with my laptop?")
        return client

    client = asyncio.run(run())
    for messages in client.calls:
        roles = _roles(messages)
        assert all(a != b for a, b in zip(roles, roles[1:])), roles
        content = messages[-1].content
        if not vision:  # AssistantAgent's text of a multimodal message: its parts joined by lines
            assert isinstance(content, str) and content.count("<sam_memories ref=") == 2, content
            continue
        assert isinstance(content, list) and len(content) == 3 and all(map(is_frame, content[:2])), content
        assert "CT-487926" in content[0] and "ships with a dock" in content[1]
    last = [m.content for m in client.calls[-1] if m.type == "UserMessage"]
    asked = [c[-1] if isinstance(c, list) else c.rsplit("\n", 1)[-1] for c in last]
    assert asked == ["Which laptop do I have?", "And which dock comes with my laptop?"], last
    assert isinstance(last[0], str) and not is_frame(last[0])  # the first run's frames taken out


def test_only_the_newest_runs_recall_stays_in_the_context_and_its_saved_state():
    """Three runs: the context (and its save_state) holds the newest run's frame only, earlier questions given back
    as the user sent them; a user's message that pastes a frame is the user's and kept; the state loaded into a new
    agent goes on the same; the reader reads the user's words and counts the frame."""
    store = ScopedMemory(HashingEncoder(64))
    mia = SAMAutoGenMemory(store, user_id="mia")
    pasted: list[str] = []

    async def run() -> tuple[dict, Recording]:
        await mia.add(MemoryContent(content="Mia's laptop is CT-487926", mime_type="text/plain"))
        agent, _ = _agent(UnboundedChatCompletionContext(), [mia])
        await agent.run(task="Which laptop do I have?")
        frame = (await agent._model_context.get_messages())[0].content[0]
        pasted.append(frame)
        await agent.run(task=frame)  # a user pasting a frame from a log: the user's words
        saved = await agent.save_state()
        again, client = _agent(UnboundedChatCompletionContext(), [mia])
        await again.load_state(saved)
        await again.run(task="Is my laptop under warranty?")
        return await again.save_state(), client

    state, client = asyncio.run(run())
    messages = state["llm_context"]["messages"]
    users = [m["content"] for m in messages if m["type"] == "UserMessage"]
    assert users[0] == "Which laptop do I have?" and users[1] == pasted[0], users
    assert isinstance(users[2], list) and is_frame(users[2][0]) and users[2][1:] == ["Is my laptop under warranty?"]
    assert sum(is_frame(p) for u in users for p in (u if isinstance(u, list) else [])) == 1
    sent = [m for m in client.calls[-1] if isinstance(m, UserMessage)]
    assert [m.content for m in sent[:2]] == users[:2] and not any(isinstance(m, SystemMessage) and "CT-487926" in
                                                                   m.content for m in client.calls[-1])
    chat = reader.to_chat(messages, "saved state")
    assert [m["content"] for m in chat.messages if m["role"] == "user"] == [
        "Which laptop do I have?", pasted[0], "Is my laptop under warranty?"]
    assert chat.ignored["memory"] == 1


def test_a_users_own_parts_that_look_like_a_frame_are_never_taken_out_of_the_context():
    """A user's multimodal message whose first part is an exact frame (pasted from a log) is the user's: the run's
    recall goes before it, not after it as if it were an earlier memory's frame, and the next runs give the message
    back as the user sent it (its pasted part was taken out with the recall, the user's words lost). The parts of a
    message the adapter wrote that equal the user's are still told apart: only the adapter's frame is taken out."""
    from autogen_agentchat.messages import MultiModalMessage
    from autogen_core import Image

    store = ScopedMemory(HashingEncoder(64))
    mia = SAMAutoGenMemory(store, user_id="mia")
    image = Image.from_base64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

    async def run() -> tuple[list[Any], Recording, str]:
        await mia.add(MemoryContent(content="Mia's laptop is CT-487926", mime_type="text/plain"))
        agent, client = _agent(UnboundedChatCompletionContext(), [mia])
        await agent.run(task="Which laptop do I have?")
        pasted = (await agent._model_context.get_messages())[0].content[0]
        assert is_frame(pasted)
        for parts in ([pasted, "What does this recall of my laptop mean?"], [pasted, image]):
            await agent.run(task=MultiModalMessage(content=parts, source="user"))
        await agent.run(task="Thanks, and my laptop's warranty?")
        return (await agent.save_state())["llm_context"]["messages"], client, pasted

    messages, client, pasted = asyncio.run(run())
    users = [m["content"] for m in messages if m["type"] == "UserMessage"]
    assert users[1] == [pasted, "What does this recall of my laptop mean?"], users[1]
    assert users[2][0] == pasted and len(users[2]) == 2, users[2]
    for call in client.calls[1:3]:  # the recall first, then the user's parts
        content = call[-1].content
        assert is_frame(content[0]) and len(content) == 3 and content[1] == pasted, content
    assert client.calls[3][-1].content[-1] == "Thanks, and my laptop's warranty?"


def test_an_agent_given_two_users_memories_is_refused_before_the_model_gets_both():
    """memory=[Mia's, Bob's] on one agent: both recalls went into the one user message the model gets (two user
    messages before, as misread), each user's memories shown to the other. Refused in one line naming both users,
    the model never called; a memory of no user (the agent's shared one) beside a user's goes on as before."""
    store = ScopedMemory(HashingEncoder(64))
    mia, bob = SAMAutoGenMemory(store, user_id="mia"), SAMAutoGenMemory(store, user_id="bob")
    desk = SAMAutoGenMemory(store, agent_id="desk")

    async def run() -> tuple[Recording, Recording]:
        await mia.add(MemoryContent(content="Mia's card is 4111-1111", mime_type="text/plain"))
        await bob.add(MemoryContent(content="Bob's card is 5500-0000", mime_type="text/plain"))
        await desk.add(MemoryContent(content="Every card is checked by its last four digits", mime_type="text/plain"))
        agent, refused = _agent(UnboundedChatCompletionContext(), [mia, bob])
        with pytest.raises(ValueError, match=r"users 'mia' and 'bob'.*one user") as said:
            await agent.run(task="Which card do I have?")
        assert "\n" not in str(said.value)
        agent, shared = _agent(UnboundedChatCompletionContext(), [mia, desk])
        await agent.run(task="Which card do I have?")
        return refused, shared

    refused, shared = asyncio.run(run())
    assert refused.calls == []
    content = shared.calls[-1][-1].content
    assert "4111-1111" in content[0] and "last four digits" in content[1] and "5500" not in str(content), content


def test_a_state_saved_before_the_recall_moved_into_the_users_message_loses_its_old_frames_not_the_users_words():
    """A context saved while the recall was a UserMessage of its own (source sam_memory, exactly a frame), loaded and
    run: the old frame is taken out, the user's earlier question and the agent's answer kept as they were, and the
    turns the model gets alternate."""
    from autogen_core.models import AssistantMessage

    from sam_model.data.formats.recalls import HEADER
    from sam_model.integrations.scopes import framed

    store = ScopedMemory(HashingEncoder(64))
    mia = SAMAutoGenMemory(store, user_id="mia")

    async def run() -> tuple[list[dict], Recording]:
        await mia.add(MemoryContent(content="Mia's laptop is CT-487926", mime_type="text/plain"))
        agent, client = _agent(UnboundedChatCompletionContext(), [mia])
        state = await agent.save_state()
        state["llm_context"]["messages"] = [
            UserMessage(content=framed(f"{HEADER}\n1. Mia's laptop is CT-487926"), source="sam_memory").model_dump(),
            UserMessage(content="Which laptop do I have?", source="user").model_dump(),
            AssistantMessage(content="CT-487926", source="helpdesk").model_dump()]
        await agent.load_state(state)
        await agent.run(task="Is my laptop under warranty?")
        return (await agent.save_state())["llm_context"]["messages"], client

    messages, client = asyncio.run(run())
    assert [(m["type"], m["source"]) for m in messages] == [("UserMessage", "user"), ("AssistantMessage", "helpdesk"),
                                                            ("UserMessage", "user"), ("AssistantMessage", "helpdesk")]
    assert messages[0]["content"] == "Which laptop do I have?" and messages[1]["content"] == "CT-487926"
    assert is_frame(messages[2]["content"][0]) and messages[2]["content"][1:] == ["Is my laptop under warranty?"]
    roles = _roles(client.calls[-1])
    assert all(a != b for a, b in zip(roles, roles[1:])), roles


class Flaky(Recording):
    """A model client whose first ``fails`` calls fail (a rate limit, a dropped connection), then answer."""

    def __init__(self, vision: bool, fails: int) -> None:
        super().__init__(vision)
        self.fails = fails

    async def create(self, messages, **kwargs: Any) -> CreateResult:
        if self.fails:
            self.fails -= 1
            raise ConnectionError("rate limited")
        return await super().create(messages, **kwargs)


def test_a_run_retried_after_the_model_call_failed_sends_each_memorys_recall_once():
    """A run whose model call failed left the user's message with its frames in the context; the run again (no new
    task, as an app retries) put this run's frames beside the earlier run's, one more stale copy each retry. Each
    retry's model call gets one frame a memory, then the user's words, and the user's words are kept."""
    store = ScopedMemory(HashingEncoder(64))
    mia, desk = SAMAutoGenMemory(store, user_id="mia"), SAMAutoGenMemory(store, agent_id="desk")

    async def run() -> tuple[Flaky, list[dict]]:
        await mia.add(MemoryContent(content="Mia's card is 4111-1111", mime_type="text/plain"))
        await desk.add(MemoryContent(content="Every card is checked by its last four digits", mime_type="text/plain"))
        client = Flaky(True, fails=2)
        agent = AssistantAgent("helpdesk", model_client=client, memory=[mia, desk],
                               model_context=UnboundedChatCompletionContext())
        for task in ("Which card do I have?", None, None):
            try:
                await agent.run(task=task)
            except ConnectionError:
                pass
        return client, (await agent.save_state())["llm_context"]["messages"]

    client, messages = asyncio.run(run())
    content = client.calls[-1][-1].content
    assert [is_frame(p) for p in content] == [True, True, False], content
    assert "4111-1111" in content[0] and "last four digits" in content[1]
    assert content[-1] == "Which card do I have?"
    users = [m["content"] for m in messages if m["type"] == "UserMessage"]
    assert len(users) == 1 and sum(map(is_frame, users[0])) == 2 and users[0][-1] == "Which card do I have?", users


def test_two_users_memories_on_one_agent_are_refused_whatever_the_first_found():
    """memory=[Mia's, Bob's] where Mia has no memories yet (a new user): only Bob's recall went into the message, no
    frame of Mia's beside it to refuse, and Bob's card reached Mia's run. Refused before the model is called,
    whichever memory finds something; a run of one user's memories on a context of another user's runs is too."""
    store = ScopedMemory(HashingEncoder(64))
    mia, bob = SAMAutoGenMemory(store, user_id="mia"), SAMAutoGenMemory(store, user_id="bob")
    again = SAMAutoGenMemory(store, user_id="mia")

    async def run() -> list[Recording]:
        await bob.add(MemoryContent(content="Bob's card is 5500-0000", mime_type="text/plain"))
        clients = []
        for memories in ([mia, bob], [bob, mia]):
            agent, client = _agent(UnboundedChatCompletionContext(), memories)
            clients.append(client)
            with pytest.raises(ValueError, match=r"users '(mia|bob)' and '(mia|bob)'.*one user") as said:
                await agent.run(task="Which card do I have?")
            assert "\n" not in str(said.value)
        agent, client = _agent(UnboundedChatCompletionContext(), [mia, again])  # one user twice goes on
        await agent.run(task="Which card do I have?")
        context = agent._model_context
        later, refused = _agent(context, [bob])  # Mia's conversation given to Bob's memory
        clients.append(refused)
        with pytest.raises(ValueError, match=r"users 'mia' and 'bob'"):
            await later.run(task="Which card do I have?")
        assert "5500" not in str(await context.get_messages())
        return clients

    assert all(client.calls == [] for client in asyncio.run(run()))


def test_a_written_message_is_digested_once_and_found_by_that_digest(monkeypatch):
    """_write records a message under one digest, made once (a message with an image's base64 was dumped and hashed
    twice per recall), and _written finds the record by it."""
    from sam_model.integrations import autogen as adapter

    made = []
    digest = adapter._digest
    monkeypatch.setattr(adapter, "_digest", lambda m: made.append(1) or digest(m))
    message = UserMessage(content=["a frame", "What is my plan?"], source="user").model_dump()
    record = (1, False, ("mia",), (7,))
    adapter._write(message, record)
    assert len(made) == 1
    assert adapter._written(message) == record


def _forget() -> None:
    """Empty the record of the messages the adapter wrote, as a new process starts with (the module the agent's
    memory class is of: tests/test_autogen_memory.py may have loaded it again)."""
    SAMAutoGenMemory.update_context.__globals__["WRITTEN"].clear()


PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_the_reader_tells_a_users_pasted_frame_from_the_adapters_by_the_saved_state_alone():
    """A user's multimodal message whose first text part is an exact frame (pasted from a log), saved by an agent
    whose memory found nothing for it and by one whose memory put its recall before it: the reader, given the saved
    states alone (no record of this process), reads the pasted frame as the user's words and counts the adapter's
    recall only (each was read by its shape as a recall, the user's words lost from training)."""
    from autogen_agentchat.messages import MultiModalMessage
    from autogen_core import Image

    store = ScopedMemory(HashingEncoder(64))
    mia, bob = SAMAutoGenMemory(store, user_id="mia"), SAMAutoGenMemory(store, user_id="bob")

    async def run() -> tuple[str, list[dict], list[dict]]:
        await mia.add(MemoryContent(content="Mia's laptop is CT-487926", mime_type="text/plain"))
        agent, _ = _agent(UnboundedChatCompletionContext(), [mia])
        await agent.run(task="Which laptop do I have?")
        pasted = (await agent._model_context.get_messages())[0].content[0]
        message = MultiModalMessage(content=[pasted, Image.from_base64(PIXEL)], source="user")
        await agent.run(task=message)
        alone, _ = _agent(UnboundedChatCompletionContext(), [bob])  # Bob has no memories: no recall
        await alone.run(task=message)
        states = [(await a.save_state())["llm_context"]["messages"] for a in (agent, alone)]
        return pasted, *states

    pasted, recalled, alone = asyncio.run(run())
    _forget()  # the reader reads the saved log alone; so does the adapter in another process
    for messages, frames in ((recalled, 1), (alone, 0)):
        chat = reader.to_chat(messages, "saved state")
        users = [m["content"] for m in chat.messages if m["role"] == "user"]
        assert users[-1] == pasted and chat.ignored["memory"] == frames, (users, chat.ignored)
        assert chat.ignored["image"] == 1


def test_a_state_loaded_in_another_process_loses_the_earlier_runs_frames_not_the_users_words():
    """A context saved in one process and loaded into a new agent in another (here: the process's record of the
    messages the adapter wrote emptied, new agent and memory objects): the frames of the runs before were not
    recognised as the adapter's, so each process's runs stacked a stale recall more, and a run retried there after
    its model call failed kept the failed run's frames beside its own. Each saved state holds the newest run's
    frames only, the earlier questions given back as the user sent them."""
    from autogen_agentchat.messages import MultiModalMessage
    from autogen_core import Image

    store = ScopedMemory(HashingEncoder(64))
    image = Image.from_base64(PIXEL)

    async def process(saved: dict | None, task: Any, fails: int = 0) -> tuple[dict, Flaky]:
        _forget()
        mia = SAMAutoGenMemory(store, user_id="mia")
        client = Flaky(True, fails)
        agent = AssistantAgent("helpdesk", model_client=client, memory=[mia],
                               model_context=UnboundedChatCompletionContext())
        if saved is not None:
            await agent.load_state(saved)
        try:
            await agent.run(task=task)
        except ConnectionError:
            pass
        return await agent.save_state(), client

    async def run() -> tuple[list[dict], Flaky]:
        await SAMAutoGenMemory(store, user_id="mia").add(
            MemoryContent(content="Mia's laptop is CT-487926", mime_type="text/plain"))
        saved, _ = await process(None, "Which laptop do I have?")
        saved, _ = await process(saved, MultiModalMessage(content=["Is this my laptop?", image], source="user"))
        saved, _ = await process(saved, "Is my laptop under warranty?", fails=1)
        saved, client = await process(saved, None)  # the failed run retried in a process of its own
        return saved["llm_context"]["messages"], client

    messages, client = asyncio.run(run())
    users = [m["content"] for m in messages if m["type"] == "UserMessage"]
    assert users[0] == "Which laptop do I have?", users
    assert users[1][0] == "Is this my laptop?" and len(users[1]) == 2, users[1]
    assert [is_frame(p) for p in users[2]] == [True, False] and users[2][1] == "Is my laptop under warranty?"
    sent = client.calls[-1][-1].content
    assert [is_frame(p) for p in sent] == [True, False], sent
