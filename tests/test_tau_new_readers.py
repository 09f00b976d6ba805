"""The 40 real tau-bench trajectories of tests/test_formats.py, rewritten as Langfuse traces and as OpenInference
spans, give the spec's events: the two readers added last meet the real conversations every other reader meets
(parallel calls of one tool, a call a tool answers with an error, the system policy) and not only the hand-written
one. Each conversation a trace of GENERATION observations (Langfuse's OpenAI integration: the messages so far as
input, the model's message as output) or of LLM spans with TOOL spans stamped with their call's id (OpenInference)."""

from __future__ import annotations

import gzip
import json
from typing import Any

from test_format_openinference import openinference_spans
from test_formats import TAU, needs_tau

from sam_model.data.transcripts import ImportReport, iter_transcript_events


def to_langfuse(traj: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """One trace, a generation per assistant message, as GET /api/public/traces/{traceId} returns it."""
    observations = []
    for i, m in enumerate(traj):
        if m["role"] == "assistant":
            s = f"2026-01-05T10:{len(observations) // 60:02d}:{len(observations) % 60:02d}Z"
            observations.append({"id": f"g-{n}-{i}", "traceId": f"t-{n}", "type": "GENERATION",
                                 "name": "OpenAI-generation", "startTime": s, "endTime": s, "model": "gpt-4o",
                                 "input": traj[:i], "output": m, "level": "DEFAULT", "statusMessage": None,
                                 "parentObservationId": None})
    return {"id": f"t-{n}", "timestamp": "2026-01-05T10:00:00Z", "name": "airline-turn", "sessionId": f"c{n}",
            "htmlPath": f"/project/p/traces/t-{n}", "observations": observations}


def by_episode(path) -> tuple[ImportReport, list[list[dict]]]:
    report, got = ImportReport(), {}
    for e in iter_transcript_events(path, report=report):
        got.setdefault(e["episode_id"], []).append({k: v for k, v in e.items() if k not in ("episode_id", "meta")})
    return report, list(got.values())


@needs_tau
def test_tau_bench_as_langfuse_traces_and_openinference_spans_gives_the_spec_events(tmp_path):
    data = json.loads(gzip.open(TAU, "rt").read())[:40]
    _, want = by_episode(TAU)
    want = want[:40]
    trajs = [[{k: v for k, v in m.items() if v is not None or k == "content"} for m in d["traj"]] for d in data]
    langfuse, spans = tmp_path / "traces.jsonl", tmp_path / "spans.jsonl"
    langfuse.write_text("".join(json.dumps(to_langfuse(t, n)) + "\n" for n, t in enumerate(trajs)))
    spans.write_text("".join(json.dumps(openinference_spans(t, session=f"c{n}")) + "\n" for n, t in enumerate(trajs)))
    for path, name in ((langfuse, "langfuse"), (spans, "otel")):
        report, got = by_episode(path)
        assert report.formats == {name: 40} and len(got) == 40, name
        for n, (mine, theirs) in enumerate(zip(got, want)):
            # a trace records no message after the agent's last model call (as the GenAI spans' test says)
            assert mine == theirs[:len(mine)] and len(mine) >= len(theirs) - 1, (name, n)
