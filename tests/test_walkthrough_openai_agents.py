"""What a walkthrough of the README as an OpenAI Agents SDK team found (a travel-insurance claims desk,
tests/oai_claims.py): the readers' fixes are tested in tests/test_format_openai_agents_db.py (a log beside a folder's
session database left out without a word; a database of its own table names refused as "no Google ADK session
database"); here, the two ways the README says to keep such conversations read alike, and the recipe end to end,
small, where openai-agents is installed (run with its environment, as tests/test_openai_agents_memory.py says)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys

import pytest

if importlib.util.find_spec("agents") is None:
    pytest.skip("openai-agents is not installed (pip install openai-agents; run with its environment)",
                allow_module_level=True)

from agents import set_tracing_disabled  # noqa: E402
from oai_claims import agents, plans, run, scripted, write  # noqa: E402

set_tracing_disabled(True)  # no trace export attempted (no network)

from sam_model.data.transcripts import ImportReport, iter_transcript_events  # noqa: E402


def _strip(events) -> list[tuple]:
    return [(e["episode_id"], e["step"], e["kind"], e["text"]) for e in events]


def test_the_session_database_and_the_logged_lines_convert_alike(tmp_path):
    """Kept by SQLiteSession (one database, many sessions) or logged as {"id", "instructions", "messages":
    result.to_input_list()} lines, a desk's conversations convert to the same events: the handoff to payouts a call,
    the mistyped policy number's raised tool a failed one, the IBAN the traveller said a needed value."""
    write(tmp_path, 8, 2)  # seed 2: two mistyped policy numbers, four handoffs
    report = ImportReport()
    db = list(iter_transcript_events(tmp_path / "sessions.db", report=report))
    assert report.formats == {"responses": 8}
    assert _strip(db) == _strip(iter_transcript_events(tmp_path / "chats.jsonl"))
    assert any("transfer_to_payouts" in e["text"] for e in db)
    assert any(e["state"]["last_action_result"].startswith("find_policy: error") for e in db)


def test_a_session_kept_by_samsession_recalls_its_own_traveller_s_claim(tmp_path):
    """SAMSession around the app's SQLiteSession, a handoff in the run: a new session's recall_memory gives the
    traveller their own claim, never the other's."""
    from agents import Runner, SQLiteSession

    from sam_model.integrations.openai_agents import SAMSession, sam_recall_tool
    from sam_model.memory import HashingEncoder, ScopedMemory

    memory = ScopedMemory(HashingEncoder(256))
    people = [p for p in plans(12, 7) if any(o == ("transfer_to_payouts", {}) for o in p[3])][:2]
    assert len(people) == 2
    for plan in people:
        session = SAMSession(SQLiteSession(plan[0], str(tmp_path / "s.db")), memory, user_id=plan[1]["email"],
                             agent_id="claims")
        asyncio.run(run(plan, session))
    for plan, other in zip(people, people[::-1]):
        user = plan[1]["email"]
        agent = agents(scripted([("recall_memory", {"query": "claim id"}), "It is on file."]),
                       (sam_recall_tool(memory, user_id=user, agent_id="claims"),))
        session = SAMSession(SQLiteSession(plan[0] + "-again", str(tmp_path / "s.db")), memory, user_id=user,
                             agent_id="claims")
        result = asyncio.run(Runner.run(agent, "What was my claim number again?", session=session))
        out = next(i["output"] for i in result.to_input_list() if i.get("type") == "function_call_output")
        assert plan[1]["claim"] in out and other[1]["claim"] not in out and other[1]["email"] not in out, out


@pytest.mark.slow
def test_the_recipe_end_to_end_on_a_desks_sessions(tmp_path, monkeypatch, capsys):
    """The README's recipe, small, as the walkthrough ran it: the app's session database given to sam-data
    transcripts and to sam-train fit --config adapt.yaml as it is (one epoch), the export evaluated on other
    conversations' logged lines beside sam-general and a baseline, then loaded into SAMSession and sam_recall_tool."""
    from agents import Runner, SQLiteSession

    from sam_model import SAMRetriever
    from sam_model.data.cli import main as sam_data
    from sam_model.evaluation.run import main as sam_eval
    from sam_model.integrations.openai_agents import SAMSession, sam_recall_tool
    from sam_model.memory import ScopedMemory
    from sam_model.training.cli import run as sam_train

    write(tmp_path / "train", 24, 0)
    write(tmp_path / "held", 8, 1)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["sam-train"])
    assert sam_data(["transcripts", "train/sessions.db", "check.jsonl"]) == 0
    assert sam_data(["validate", "check.jsonl"]) == 0
    assert "24 conversations" in capsys.readouterr().out
    assert sam_train(["fit", "--config", "adapt.yaml", "--data.train", "[train/sessions.db]", "--run", "desk",
                      "--trainer.max_epochs=1", f"--model.text_cache_dir={tmp_path / 'text'}",
                      f"--data.cache_dir={tmp_path / 'cache'}"]) == 0
    export = tmp_path / "checkpoints" / "desk" / "export"
    assert sam_eval(["--retriever", str(export), "--data", "held/chats.jsonl", "--compare", "general=sam-general",
                     "--baselines", "used-first", "--out", "eval"]) == 0
    mrr = {m: r["mrr"] for m, r in json.loads((tmp_path / "eval" / "report.json").read_text())["methods"].items()}
    assert mrr["sam"] > mrr["used-first"] and mrr["general"] > mrr["used-first"], mrr

    memory = ScopedMemory(SAMRetriever.load(export))
    plan = plans(1, 5)[0]
    user = plan[1]["email"]
    asyncio.run(run(plan, SAMSession(SQLiteSession(plan[0], "live.db"), memory, user_id=user, agent_id="claims")))
    agent = agents(scripted([("recall_memory", {"query": "policy number"}), "Found it."]),
                   (sam_recall_tool(memory, user_id=user, agent_id="claims"),))
    result = asyncio.run(Runner.run(agent, "Which policy was that on?", session=SAMSession(
        SQLiteSession("again", "live.db"), memory, user_id=user, agent_id="claims")))
    out = next(i["output"] for i in result.to_input_list() if i.get("type") == "function_call_output")
    assert plan[1]["policy"] in out, out
    assert sam_recall_tool(memory, user_id="someone.else@example.com", agent_id="claims") is not None
    assert memory.get_all(user_id="someone.else@example.com", agent_id="claims", limit=None)["results"] == []


def test_an_advanced_session_s_branches_are_each_a_conversation(tmp_path):
    """AdvancedSQLiteSession keeps its branches in one agent_messages table (a branch from a turn shares the items
    before it, listed in message_structure): the database read as one conversation of all its rows, the branch's
    rewritten question after the original's answer, as if the traveller had said both. Each branch reads as its
    get_items() lists it, the branches of a session in one group (one split)."""
    from agents import Runner
    from agents.extensions.memory.advanced_sqlite_session import AdvancedSQLiteSession

    from sam_model.data.formats import agents_db

    async def branched() -> dict[str, list]:
        session = AdvancedSQLiteSession(session_id="c1", db_path=str(tmp_path / "adv.db"), create_tables=True)
        agent = agents(scripted(["Hello.", "It is open.", "It is approved."]))
        for text in ("I lost my bag.", "Is claim CLM-1 open?"):
            await Runner.run(agent, text, session=session)
        branch = await session.create_branch_from_turn(2)
        await Runner.run(agent, "Is claim CLM-1 approved?", session=session)
        want = {f"c1_{branch}": await session.get_items()}
        await session.switch_to_branch("main")
        return {"c1": await session.get_items(), **want}

    want = asyncio.run(branched())
    assert {doc["id"]: doc["messages"] for doc, _ in agents_db.sessions(tmp_path / "adv.db")} == want
    events = list(iter_transcript_events(tmp_path / "adv.db", allow_empty=True))
    texts = [e["text"] for e in events]
    assert texts.count("I lost my bag.") == 2 and texts.count("Is claim CLM-1 open?") == 1
    # the branches share their first turns, so they share a split (one group: the session)
    assert {e.get("meta", {}).get("group", e["episode_id"]) for e in events} == {"c1"}
