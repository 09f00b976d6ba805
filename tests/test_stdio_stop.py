"""``sam-serve --stdio`` stopped by a signal rather than the end of its input: SIGINT left the process waiting in
stdin's read (a thread of the SDK's, which the interpreter's exit waits on) until the client wrote a line or closed
the pipe, and SIGTERM ended it without the checkpoint of a clean shutdown. Now either stops the server at once, the
tenants are saved, and the process exits 0 with the client's pipe still open. Run as a real subprocess."""

from __future__ import annotations

import re
import signal
import time

import pytest

pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from serving import tiny_export  # noqa: E402
from test_stdio_lines import Served, initialized, recalled, remember  # noqa: E402


@pytest.fixture
def served(tmp_path, tiny_bert_dir):
    server = Served(tmp_path, tiny_export(tiny_bert_dir, tmp_path / "export"))
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait(60)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_server_promptly_with_stdin_open_and_its_memories_saved(served, tmp_path, sig):
    fine = initialized(served).ask(remember(2, '{"text": "window seat", "user_id": "alice"}'))
    assert not fine["result"].get("isError"), fine
    started = time.monotonic()
    served.proc.send_signal(sig)
    try:
        code = served.proc.wait(30)  # stdin stays open: the client has not gone
    except Exception:
        pytest.fail(f"sam-serve still runs 30 s after {sig.name}, stdin open: {served.stderr()}")
    assert code == 0 and time.monotonic() - started < 30, served.stderr()
    assert f"{sig.name} received, stopping" in served.stderr()
    again = Served(tmp_path, tmp_path / "export")
    try:
        assert recalled(initialized(again), 3, "alice") == ["window seat"]
        saved = r"tenant acme: 1 memories \(checkpoint seq \d+, 0 writes replayed"  # saved at the stop, not replayed
        assert re.search(saved, again.stderr()), again.stderr()
    finally:
        again.close()
