"""What a line-by-line add of an agent's session costs as its open turn grows (ScopedMemory, sam_model.memory.live).

    python -m sam_model.bench.live_adds [--reads 25,50,100] [--size 90000]

A Claude Code response of N Reads (one ``message.id``), each result of ``--size`` characters written after its call
and before the next call, then the response's words, fed to ``ScopedMemory.add`` a line an add (a sidecar
forwarding the session file), with the stand-in HashingEncoder (no model: what is timed is the memory's own work).
For each N it prints the total time (wall and this process's CPU), the slowest add, and per add the results listed
(count and characters), the messages fed to the conversation's tracker, the memory texts encoded and the texts
searched for a call's argument values (sayings.says), and how many adds the open turn's cap closed it at
(``notes``). Timings are this machine's; the counts are the work.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from sam_model.data import sayings
from sam_model.data.toolstate import TranscriptState
from sam_model.memory import HashingEncoder, ScopedMemory


def reads(n: int, size: int) -> list[dict[str, Any]]:
    """A Claude Code session: a prompt, then one response of ``n`` Reads whose results sit between its calls."""
    lines: list[dict[str, Any]] = []

    def entry(kind: str, message: dict, **extra) -> None:
        parent = lines[-1]["uuid"] if lines else None
        lines.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/work/app",
                      "sessionId": "bench", "version": "2.0.46", "type": kind, "message": message,
                      "uuid": f"u{len(lines):05d}", "timestamp": "2025-11-19T22:00:00.000Z", **extra})

    entry("user", {"role": "user", "content": "read the app's modules"})
    for i in range(n):
        entry("assistant", {"model": "claude-sonnet-4-5", "id": "msg_reads", "type": "message", "role": "assistant",
                            "content": [{"type": "tool_use", "id": f"c{i}", "name": "Read",
                                         "input": {"file_path": f"/work/app/m{i}.py"}}]}, requestId="req_reads")
        result = (f"VALUE_{i} = {i}\n" * size)[:size]
        entry("user", {"role": "user", "content": [{"tool_use_id": f"c{i}", "type": "tool_result", "content": result}]},
              toolUseResult=result)
    entry("assistant", {"model": "claude-sonnet-4-5", "id": "msg_words", "type": "message", "role": "assistant",
                        "content": [{"type": "text", "text": "Read them."}]}, requestId="req_words")
    return lines


class Counting(HashingEncoder):
    """HashingEncoder counting the memory texts it encodes."""

    encoded = 0

    def encode_memories(self, memories, batch_size: int = 64, progress: bool = False):
        self.encoded += len(memories)
        return super().encode_memories(memories, batch_size, progress)


def run(n: int, size: int) -> dict[str, Any]:
    fed, searched = [0], [0]
    feed, says = TranscriptState.feed, sayings.says

    def counted(self, message, where="message"):
        fed[0] += 1
        return feed(self, message, where)

    def search(text_norm: str, s: str) -> bool:
        searched[0] += 1
        return says(text_norm, s)

    TranscriptState.feed, sayings.says = counted, search
    try:
        encoder, lines = Counting(16), reads(n, size)
        memory = ScopedMemory(encoder)
        per_add, listed, chars, notes, feeds, encodes, searches = [], [], [], 0, [], [], []
        t0, c0 = time.perf_counter(), time.process_time()
        for x in lines:
            f, e, s, t = fed[0], encoder.encoded, searched[0], time.perf_counter()
            out = memory.add([x], user_id="me", run_id="s")
            per_add.append(time.perf_counter() - t)
            feeds.append(fed[0] - f)
            encodes.append(encoder.encoded - e)
            searches.append(searched[0] - s)
            listed.append(len(out["results"]))
            chars.append(sum(len(r["memory"]) for r in out["results"]))
            notes += any("open turn would hold" in r["reason"] for r in out.get("notes", []))
        total, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        TranscriptState.feed, sayings.says = feed, says
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    return {"reads": n, "adds": len(lines), "total_s": total, "cpu_s": cpu, "slowest_s": max(per_add), "capped": notes,
            "results_mean": mean(listed), "results_max": max(listed), "result_chars_mean": mean(chars),
            "fed_mean": mean(feeds), "fed_max": max(feeds), "encoded_mean": mean(encodes), "encoded_max": max(encodes),
            "searched_mean": mean(searches), "searched_max": max(searches)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sam_model.bench.live_adds", description=__doc__.split("\n")[0])
    p.add_argument("--reads", default="25,50,100", help="the response's reads, comma-separated (default 25,50,100)")
    p.add_argument("--size", type=int, default=90_000, help="characters of each result (default 90000)")
    args = p.parse_args(argv)
    cols = ("reads", "adds", "total_s", "cpu_s", "slowest_s", "capped", "results_mean", "results_max",
            "result_chars_mean", "fed_mean", "fed_max", "encoded_mean", "encoded_max", "searched_mean", "searched_max")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for n in (int(x) for x in args.reads.split(",")):
        row = run(n, args.size)
        print("| " + " | ".join(f"{row[c]:.2f}" if isinstance(row[c], float) else str(row[c]) for c in cols) + " |",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
