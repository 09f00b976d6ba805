"""Two SAMContextProviders binding one Agent Framework session at once (two agents sharing a session, a provider made
each request, two worker threads or two asyncio tasks): the session's user lives in its state, sealed with an HMAC
under each provider's secret. Each provider held a lock of its own, so two of them both found the session unbound and
both wrote it, the user written last the session's while the other's bind had returned; and a provider of another
secret, whose seal check fails, took a bound session for an unbound one and bound it to its user, so the run in
progress went on (or stored its reply) under that user. Now a bound session is never bound to another user (one
line: make a new session), and binding it to its own user again is a no-op that keeps every provider's seal.

Run where agent-framework-core is installed (tests/test_agent_framework_memory.py says how; skipped without it)."""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
import threading
from typing import Any

import pytest

if importlib.util.find_spec("agent_framework") is None:
    pytest.skip("agent-framework-core is not installed (pip install agent-framework-core; run with its environment)",
                allow_module_level=True)

from agent_framework import Agent, AgentSession, tool  # noqa: E402
from maf_fake import ScriptedClient, call, say  # noqa: E402

from sam_model.integrations.agent_framework import SEALS, SAMContextProvider  # noqa: E402
from sam_model.memory import HashingEncoder, ScopedMemory  # noqa: E402

SECRETS = {"one secret": ("the app's key", "the app's key"), "two secrets": ("key one", "key two"),
           "own keys": (None, None)}


class Yielding(dict):
    """A session state whose look-ups wait for the other binder (a barrier, given up after a while): a thread switch
    at a look-up, which the interpreter may make at any time, made certain."""

    barrier: threading.Barrier | None = None

    def get(self, *args: Any) -> Any:
        found = super().get(*args)
        if self.barrier is not None:
            try:
                self.barrier.wait(timeout=0.3)
            except threading.BrokenBarrierError:  # the other binder waits on the lock: no switch to make
                pass
        return found


def _providers(memory: ScopedMemory, secrets: tuple[str | None, str | None]) -> list[SAMContextProvider]:
    return [SAMContextProvider(memory, agent_id="desk", secret=s) for s in secrets]


def _session(provider: SAMContextProvider) -> AgentSession:
    """A restored session of no user yet, its state yielding at look-ups."""
    agent = Agent(client=ScriptedClient([]), instructions="x", context_providers=[provider])
    session = AgentSession.from_dict(agent.create_session(session_id="s-1").to_dict())
    session.state = Yielding(session.state)
    return session


def _bind_at_once(pairs: list[tuple[SAMContextProvider, str]], session: AgentSession) -> list[str]:
    """Each provider binding the session to its user in a thread of its own, started together: "bound" or the
    refusal's words, in the pairs' order."""
    outcome = [""] * len(pairs)
    session.state.barrier = threading.Barrier(len(pairs))
    start = threading.Barrier(len(pairs))

    def bind(i: int) -> None:
        provider, user = pairs[i]
        start.wait()
        try:
            provider.bind(session, user)
            outcome[i] = "bound"
        except ValueError as exc:
            outcome[i] = str(exc)

    threads = [threading.Thread(target=bind, args=(i,)) for i in range(len(pairs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    session.state.barrier = None
    return outcome


def _user(provider: SAMContextProvider, session: AgentSession) -> str | None:
    """The user a run of the session under ``provider`` goes on as (None: refused, no user)."""
    try:
        return provider.scopes(session)["user_id"]
    except ValueError:
        return None


@pytest.mark.parametrize("secrets", SECRETS)
def test_two_providers_binding_one_session_to_two_users_one_is_refused(secrets):
    first, second = _providers(ScopedMemory(HashingEncoder(16)), SECRETS[secrets])
    session = _session(first)
    outcome = _bind_at_once([(first, "mia"), (second, "ben")], session)
    assert sorted(o == "bound" for o in outcome) == [False, True], outcome
    loser = outcome.index(next(o for o in outcome if o != "bound"))
    assert "make a new session" in outcome[loser] and "\n" not in outcome[loser]
    winner = ("mia", "ben")[1 - loser]
    assert session.state[first.source_id]["user_id"] == winner
    assert _user((first, second)[1 - loser], session) == winner  # the provider that bound it runs as its user
    assert _user((first, second)[loser], session) in (winner, None)  # the other: that user, or none (its seal)
    assert ("mia", "ben")[loser] not in (_user(first, session), _user(second, session))


@pytest.mark.parametrize("secrets", SECRETS)
def test_two_providers_binding_one_session_to_one_user_both_run_as_it(secrets):
    """Same user at once, or one after the other: both bound, neither's seal written over the other's."""
    first, second = _providers(ScopedMemory(HashingEncoder(16)), SECRETS[secrets])
    session = _session(first)
    assert _bind_at_once([(first, "mia"), (second, "mia")], session) == ["bound", "bound"]
    assert _user(first, session) == _user(second, session) == "mia"
    first.bind(session, "mia")
    second.bind(session, "mia")
    assert _user(first, session) == _user(second, session) == "mia"


@pytest.mark.parametrize("secrets", SECRETS)
def test_a_session_bound_under_another_secret_is_never_bound_to_another_user(secrets):
    """One after the other: a provider whose seal check fails (another secret, its own key) took the session for an
    unbound one and bound it to its user."""
    first, second = _providers(ScopedMemory(HashingEncoder(16)), SECRETS[secrets])
    session = _session(first)
    first.bind(session, "mia")
    with pytest.raises(ValueError, match="is user 'mia''s; a session's user is fixed"):
        second.bind(session, "ben")
    assert _user(first, session) == "mia" and _user(second, session) in ("mia", None)


GATES: dict[str, asyncio.Event] = {}  # the run's tool and the rival task's, made in the test's event loop


@tool
async def track_shipment(tracking_number: str) -> str:
    """Where a shipment is (the run waits here while another task binds the session)."""
    GATES["running"].set()
    await GATES["rival done"].wait()
    return f"{tracking_number}: held at customs in Rotterdam"


@pytest.mark.parametrize("secrets", SECRETS)
def test_a_run_in_progress_goes_on_as_its_user_while_another_task_binds_the_session(secrets):
    """Two asyncio tasks: mia's run awaiting a tool, and another provider binding the same session to ben meanwhile.
    The bind is refused; the run's messages are stored as mia's, none as ben's."""
    memory = ScopedMemory(HashingEncoder(16))
    first, second = _providers(memory, SECRETS[secrets])
    agent = Agent(client=ScriptedClient([call("c1", "track_shipment", {"tracking_number": "TRK1111111"}),
                                         say("Held at customs.")]),
                  instructions="x", tools=[track_shipment], context_providers=[first])
    session = first.create_session(agent, "mia")
    refused: list[str] = []

    async def rival() -> None:
        await GATES["running"].wait()
        try:
            second.bind(session, "ben")
        except ValueError as exc:
            refused.append(str(exc))
        GATES["rival done"].set()

    async def both() -> None:
        GATES.update({"running": asyncio.Event(), "rival done": asyncio.Event()})
        await asyncio.wait_for(asyncio.gather(agent.run("Where is TRK1111111?", session=session), rival()), 20)

    asyncio.run(both())
    assert len(refused) == 1 and "is user 'mia''s" in refused[0], refused
    said = [r["memory"] for r in memory.get_all(user_id="mia", agent_id="desk", limit=None)["results"]]
    assert said[0] == "Where is TRK1111111?" and said[-1] == "Held at customs.", said
    assert memory.get_all(user_id="ben", agent_id="desk", limit=None)["results"] == []
    assert _user(first, session) == "mia"


def test_a_provider_that_runs_a_session_keeps_its_seal_when_others_bind_it():
    """Providers of their own keys binding one session (a provider made each request beside the agent's own): the
    SEALS kept are the newest used, so the provider that made the session and runs it keeps its seal; kept by the
    order of the binds, the ninth provider's bind dropped it and its next run was refused as no user's."""
    memory = ScopedMemory(HashingEncoder(16))
    own = SAMContextProvider(memory, agent_id="desk")
    session = own.create_session(Agent(client=ScriptedClient([]), instructions="x", context_providers=[own]), "mia")
    for _ in range(3 * SEALS):
        SAMContextProvider(memory, agent_id="desk").bind(session, "mia")  # a request's provider
        assert own.scopes(session)["user_id"] == "mia"  # the agent's own run between them
    seals = session.state[own.source_id]["seal"]
    assert len(seals) == SEALS and len(set(seals)) == SEALS, seals
    idle = SAMContextProvider(memory, agent_id="desk")  # bound, then unused while eight others bind: bound again
    idle.bind(session, "mia")
    for _ in range(SEALS):
        SAMContextProvider(memory, agent_id="desk").bind(session, "mia")
    with pytest.raises(ValueError, match="has no user"):
        idle.scopes(session)
    idle.bind(session, "mia")
    assert idle.scopes(session)["user_id"] == "mia"


@pytest.mark.parametrize("own_keys", [False, True], ids=["secrets", "own keys"])
def test_a_provider_whose_seal_was_dropped_never_binds_the_session_to_another_user(own_keys):
    """More providers of other secrets bind one session than a binding keeps seals of: the first's seal is dropped.
    The user is kept apart from the seals, so that provider (or any other) still cannot bind the session to another
    user, alone or at once with a bind to its own user; its run is refused in one line saying how to bind it again,
    to its own user only, after which it runs as that user."""
    memory = ScopedMemory(HashingEncoder(16))
    made = [SAMContextProvider(memory, agent_id="desk", secret=None if own_keys else f"key {i}")
            for i in range(SEALS + 2)]
    first = made[0]
    session = _session(first)
    for provider in made:
        provider.bind(session, "mia")
    assert first.bound_user(session) is None  # its seal dropped: the newest SEALS kept
    with pytest.raises(ValueError, match="has no user") as refused:
        first.scopes(session)
    assert "provider.bind(session" in str(refused.value) and "\n" not in str(refused.value)
    stranger = SAMContextProvider(memory, agent_id="desk", secret=None if own_keys else "key 0")
    for provider in (first, stranger):
        with pytest.raises(ValueError, match="is user 'mia''s; a session's user is fixed: make a new session"):
            provider.bind(session, "ben")
    outcome = _bind_at_once([(first, "ben"), (made[-1], "mia")], session)
    assert outcome[1] == "bound" and "is user 'mia''s" in outcome[0], outcome
    assert {_user(p, session) for p in made[2:]} == {"mia"} and _user(first, session) is None  # 2 dropped
    first.bind(session, "mia")
    assert _user(first, session) == "mia" and session.state[first.source_id]["user_id"] == "mia"
    assert memory.get_all(user_id="ben", agent_id="desk", limit=None)["results"] == []


def test_a_provider_fixed_to_one_user_never_runs_a_session_bound_to_another():
    """A provider made with user_id (one agent a user) took any session as its user's: a session bound to Mia, run
    by another agent whose provider is fixed to Ben, recalled Ben's memories into Mia's conversation and stored her
    words as Ben's, and its bind to Ben returned as if the session were his. Both are refused in one line; a session
    of no user, or of its own user, it runs as before."""
    memory = ScopedMemory(HashingEncoder(16))
    per_session = SAMContextProvider(memory, agent_id="desk", secret="the app's key")
    bens = SAMContextProvider(memory, agent_id="desk", user_id="ben")
    session = _session(per_session)
    per_session.bind(session, "mia")
    for act in (lambda: bens.scopes(session), lambda: bens.bind(session, "ben")):
        with pytest.raises(ValueError, match="is user 'mia''s") as refused:
            act()
        assert "make a new session" in str(refused.value) and "\n" not in str(refused.value)
    assert _user(per_session, session) == "mia" and session.state[per_session.source_id]["user_id"] == "mia"
    own = _session(per_session)
    assert bens.scopes(own)["user_id"] == "ben"  # of no user: the provider's
    bens.bind(own, "ben")
    assert bens.scopes(own)["user_id"] == "ben"
    with pytest.raises(ValueError, match="user 'ben''s"):
        bens.bind(own, "mia")


@pytest.mark.parametrize("through", ["FileSessionStore", "to_dict"])
def test_two_processes_sharing_one_stored_session_lose_a_seal_never_its_user(tmp_path, through):
    """Two processes load one stored session bound to Mia, each binds it with a provider of its own secret and saves
    it: the store's last writer wins (FileSessionStore says so), so the first's seal is lost. That loses only a seal:
    the saved session is still Mia's, its first provider's run is refused until it binds it again, to Mia only, and
    every other provider runs it as Mia."""
    from agent_framework import FileSessionStore

    memory = ScopedMemory(HashingEncoder(16))
    maker, first, second = (SAMContextProvider(memory, agent_id="desk", secret=f"key {i}") for i in range(3))
    store = FileSessionStore(tmp_path)
    saved: dict[str, Any] = {}

    async def save(session: AgentSession) -> None:
        if through == "FileSessionStore":
            await store.set(session.session_id, session)
        else:
            saved["s-1"] = json.loads(json.dumps(session.to_dict()))

    async def load() -> AgentSession:
        if through == "FileSessionStore":
            return await store.get("s-1")
        return AgentSession.from_dict(copy.deepcopy(saved["s-1"]))

    async def both() -> AgentSession:
        made = maker.create_session(Agent(client=ScriptedClient([]), instructions="x", context_providers=[maker]),
                                    "mia", session_id="s-1")
        await save(made)
        one, two = await load(), await load()  # the two processes' copies
        first.bind(one, "mia")
        second.bind(two, "mia")
        await save(one)
        await save(two)  # the last writer: its copy holds no seal of first's
        return await load()

    session = asyncio.run(both())
    assert session.state[maker.source_id]["user_id"] == "mia"
    assert _user(maker, session) == _user(second, session) == "mia"
    with pytest.raises(ValueError, match="has no user"):
        first.scopes(session)
    with pytest.raises(ValueError, match="is user 'mia''s; a session's user is fixed"):
        first.bind(session, "ben")
    first.bind(session, "mia")
    assert _user(first, session) == _user(maker, session) == _user(second, session) == "mia"


@pytest.mark.parametrize("second_fixed", [False, True], ids=["bound", "fixed"])
def test_sam_providers_of_two_source_ids_never_bind_one_session_to_two_users(second_fixed):
    """Two agents sharing a session, each with a SAM provider of its own source_id (each keeps its binding under
    it): the second took the session for unbound and bound it (or, made with user_id, ran it) as Ben while the first
    had bound it to Mia. Refused in one line, in either order (a provider made with user_id binds a session of no
    user to its own as it runs it or binds it); the same user binds under both."""
    memory = ScopedMemory(HashingEncoder(16))
    mias = SAMContextProvider(memory, agent_id="desk", secret="the app's key")
    bens = SAMContextProvider(memory, agent_id="desk", source_id="sam_desk", secret="the app's key",
                              user_id="ben" if second_fixed else None)
    orders = [(mias, bens, "mia", "ben"), (bens, mias, "ben", "mia")]
    for first, second, user, other in orders:
        session = _session(mias)
        first.bind(session, user)
        with pytest.raises(ValueError, match=f"is user '{user}''s") as refused:
            if second.user_id is not None:
                second.scopes(session)
            else:
                second.bind(session, other)
        assert "make a new session" in str(refused.value) and "\n" not in str(refused.value)
        assert _user(first, session) == user and _user(second, session) in (user, None)
    if not second_fixed:
        session = _session(mias)
        mias.bind(session, "mia")
        bens.bind(session, "mia")
        assert _user(mias, session) == _user(bens, session) == "mia"


@pytest.mark.parametrize("source_id", ["sam_memory", "sam_desk"])
def test_a_session_a_provider_fixed_to_one_user_ran_is_never_another_users(source_id):
    """A provider made with user_id wrote no binding, so a session it ran as Ben's (his conversation in its history)
    was bound to Mia by a provider of no user_id after it, or run as hers by a provider fixed to her, on agents
    sharing the session: her memories recalled into his conversation, its words stored as hers. Its run binds a
    session of no user to its user, so both are refused in one line; a refused bind of it marks nothing, and the
    same user binds and runs it under any provider."""
    memory = ScopedMemory(HashingEncoder(16))
    bens = SAMContextProvider(memory, agent_id="desk", user_id="ben")
    mias_fixed = SAMContextProvider(memory, agent_id="desk", user_id="mia", source_id=source_id)
    per_session = SAMContextProvider(memory, agent_id="desk", source_id=source_id, secret="the app's key")
    session = _session(per_session)
    with pytest.raises(ValueError, match="user 'ben''s"):
        bens.bind(session, "mia")
    assert bens.named_user(session) is None  # the refused bind marked nothing
    assert bens.scopes(session)["user_id"] == "ben"
    for act in (lambda: per_session.bind(session, "mia"), lambda: mias_fixed.scopes(session)):
        with pytest.raises(ValueError, match="is user 'ben''s") as refused:
            act()
        assert "make a new session" in str(refused.value) and "\n" not in str(refused.value)
    assert per_session.bound_user(session) is None
    restored = AgentSession.from_dict(json.loads(json.dumps(session.to_dict())))
    with pytest.raises(ValueError, match="is user 'ben''s"):
        mias_fixed.scopes(restored)
    per_session.bind(restored, "ben")
    assert per_session.scopes(restored)["user_id"] == bens.scopes(restored)["user_id"] == "ben"


def test_a_session_two_source_ids_bound_to_two_users_before_is_run_by_neither():
    """A session saved before binds looked at other source_ids' bindings holds two, each sealed, of two users (each
    agent's SAM provider bound it to its own): each provider ran it as its own user, one user's conversation with
    the other's memories, since a run looked at its own binding only. Each run is refused in one line naming both
    users; a session whose bindings name one user runs as before."""
    memory = ScopedMemory(HashingEncoder(16))
    mias = SAMContextProvider(memory, agent_id="desk", secret="the app's key")
    bens = SAMContextProvider(memory, agent_id="desk", source_id="sam_desk", secret="the app's key")
    session, apart = _session(mias), _session(mias)
    mias.bind(session, "mia")
    bens.bind(apart, "ben")
    session.state["sam_desk"] = apart.state["sam_desk"]  # as the binds before 2026-12-07 left it
    saved = AgentSession.from_dict(json.loads(json.dumps(session.to_dict())))
    for provider in (mias, bens):
        with pytest.raises(ValueError, match="'mia'.*'ben'|'ben'.*'mia'") as refused:
            provider.scopes(saved)
        assert "make a new session" in str(refused.value) and "\n" not in str(refused.value)
    one = _session(mias)
    mias.bind(one, "mia")
    bens.bind(one, "mia")
    assert _user(mias, one) == _user(bens, one) == "mia"


@pytest.mark.parametrize("secrets", SECRETS)
def test_a_session_one_sam_provider_creates_is_bound_for_every_sam_provider_of_the_agent(secrets):
    """An agent of two SAM providers of two source_ids (a user's scope beside the desk's): create_session bound the
    new session for the provider it was called on only, and the other refused the session's first run as no user's.
    Now it is bound for each, to the one user: the run recalls and stores as that user under both, and neither
    provider binds it to another user afterwards."""
    memory = ScopedMemory(HashingEncoder(16))
    one, two = (SAMContextProvider(memory, agent_id="desk", source_id=s, secret=k)
                for s, k in zip(("sam_memory", "sam_desk"), SECRETS[secrets]))
    agent = Agent(client=ScriptedClient([say("Held at customs.")]), instructions="x", context_providers=[one, two])
    session = two.create_session(agent, "mia")
    assert _user(one, session) == _user(two, session) == "mia"
    asyncio.run(agent.run("Where is TRK1111111?", session=session))
    said = [r["memory"] for r in memory.get_all(user_id="mia", agent_id="desk", limit=None)["results"]]
    assert "Where is TRK1111111?" in said and "Held at customs." in said, said
    for provider in (one, two):
        with pytest.raises(ValueError, match="is user 'mia''s; a session's user is fixed"):
            provider.bind(session, "ben")
    assert memory.get_all(user_id="ben", agent_id="desk", limit=None)["results"] == []


def test_create_session_refuses_a_user_another_sam_provider_of_the_agent_is_fixed_to():
    """A provider of the agent made with user_id (Ben's) beside one bound per session: a session made for Mia would
    put two users' memories in one run. Refused in one line before any session is made; made for Ben, it is his
    under both."""
    memory = ScopedMemory(HashingEncoder(16))
    per_session = SAMContextProvider(memory, agent_id="desk")
    bens = SAMContextProvider(memory, agent_id="desk", source_id="sam_desk", user_id="ben")
    agent = Agent(client=ScriptedClient([]), instructions="x", context_providers=[per_session, bens])
    with pytest.raises(ValueError, match="'sam_desk' of the agent is user 'ben''s") as refused:
        per_session.create_session(agent, "mia")
    assert "\n" not in str(refused.value)
    session = per_session.create_session(agent, "ben")
    assert _user(per_session, session) == _user(bens, session) == "ben"


def test_a_refusal_of_a_long_session_id_or_source_id_is_one_short_line():
    """A session id is the client's (a request's) and a source_id the app's: each refusal shows them cut, as bind's
    refusal does (limits.shown), not a megabyte-long line in the logs and the client's answer."""
    memory = ScopedMemory(HashingEncoder(16))
    long_id, long_source = "s" * 100_000, "p" * 100_000
    provider = SAMContextProvider(memory, agent_id="desk")
    session = Agent(client=ScriptedClient([]), instructions="x",
                    context_providers=[provider]).create_session(session_id=long_id)
    with pytest.raises(ValueError, match="has no user") as refused:
        provider.scopes(session)
    wrong = SAMContextProvider(memory, agent_id="desk", source_id=long_source)
    session.state[long_source] = "not a dict"
    with pytest.raises(ValueError, match="not this provider's") as slot:
        wrong.bind(session, "mia")
    mia, ben = SAMContextProvider(memory, user_id="mia", source_id=long_source), SAMContextProvider(memory, user_id="ben")
    two = Agent(client=ScriptedClient([]), instructions="x", context_providers=[mia, ben])
    with pytest.raises(ValueError, match="would put two users' memories") as users:
        mia._one_user(two, None, "mia")
    for err in (refused, slot, users):
        text = str(err.value)
        assert len(text) < 1000 and "\n" not in text and "..." in text, text[:200]
