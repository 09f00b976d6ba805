"""The README's served-memory blocks run as written, from a folder outside the checkout: the keys line, `sam-serve
--keys keys.json` (the packaged default model), every curl call and the MCP client. Changed, and only these: the
port (a free one where the README says 8420, so that runs side by side do not meet), the console scripts and
``python`` taken from this interpreter's environment, and each curl answer's HTTP status printed after it (curl -s
exits 0 on a 404)."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import docset
import pytest
from test_readme_commands import BLOCK

from sam_model.data.toolstate import live_state

pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

REPO = Path(__file__).resolve().parents[1]
STATUS = "curl() { command curl -w '\\n%{http_code}\\n' \"$@\"; }\n"  # each answer's status on a line after it


def served_blocks() -> tuple[str, str, str]:
    """(starting the server, the curl calls, the MCP client): the README's bash blocks that hold them."""
    blocks = [code for _, code in docset.blocks(BLOCK, 2)]
    start = next(b for b in blocks if "secrets.token_urlsafe" in b and "sam-serve --keys keys.json" in b)
    calls = next(b for b in blocks if b.startswith("KEY=$(") and "curl" in b)
    client = next(b for b in blocks if "from mcp import Client" in b)
    return start, calls, client


def mcp_sent(client: str) -> tuple[list[dict], dict]:
    """(the messages the MCP block's remember sends, the call its recall sends), read from its Python as literals."""
    code = ast.parse(client.split("<<'PY'\n", 1)[1].rsplit("PY", 1)[0])
    messages = next(ast.literal_eval(v) for node in ast.walk(code) if isinstance(node, ast.Dict)
                    for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant) and k.value == "messages")
    call = next(ast.literal_eval(node.value) for node in ast.walk(code) if isinstance(node, ast.Assign)
                and [getattr(t, "id", None) for t in node.targets] == ["call"])
    return messages, call


def wait_for(url: str, proc: subprocess.Popen, log: Path, timeout: float = 300.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"sam-serve exited with {proc.returncode}:\n{log.read_text()[-3000:]}"
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"sam-serve did not answer {url} within {timeout} s:\n{log.read_text()[-3000:]}")


@pytest.mark.slow
def test_the_served_memory_blocks_run_as_written(tmp_path):
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from sam_model.bench.serve import free_port

    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "sam-serve").exists() or shutil.which("curl") is None:
        pytest.skip("sam-serve is not installed beside this interpreter, or curl is absent")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    start, calls, client = served_blocks()
    port = str(free_port())

    keys_line, serve_line = start.splitlines()[:2]
    subprocess.run(["bash", "-c", keys_line], cwd=tmp_path, env=env, check=True, timeout=60)
    assert len(json.loads((tmp_path / "keys.json").read_text())["acme"]) >= 16
    assert (tmp_path / "keys.json").stat().st_mode & 0o077 == 0  # each key reaches its tenant: the owner's alone
    serve = shlex.split(serve_line, comments=True)
    assert serve == ["sam-serve", "--keys", "keys.json"]
    log = tmp_path / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*serve, "--port", port], cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(f"http://127.0.0.1:{port}/health", proc, log)
        assert "8420" in calls and "8420" in client
        ran = subprocess.run(["bash", "-c", STATUS + calls.replace("8420", port)], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, ran.stderr
        answers = re.findall(r"(.*)\n(\d{3})\n", ran.stdout)
        # add, search, add of a conversation, search by its next call, get_all, update, delete
        assert [int(code) for _, code in answers] == [200] * 7, ran.stdout
        added, found, told, for_call, listed, updated, deleted = (json.loads(body) for body, _ in answers)
        assert [m["id"] for m in added["results"]] == ["mia#0"]  # the id the PUT and DELETE lines name
        assert found["results"][0]["memory"] == "I live in Paris, my budget is $300"
        sent = [json.loads(body) for body in re.findall(r"-d '(\{.*\})'", calls)]  # the bodies the block sends
        conversation, search = sent[2]["messages"], sent[3]
        assert [m["memory"] for m in told["results"]] == [m["content"] for m in conversation]
        assert for_call["state"] == live_state(conversation, search["call"])  # the importer's state, computed served
        assert for_call["state"]["uncertainty_flags"] == ["city", "max_price"]  # as the README says
        # the memories before the newest message, which is the decision point's observation (as evaluate.py reads it)
        assert [m["memory"] for m in for_call["results"]] == [m["content"] for m in conversation[:-1]]
        assert [m["memory"] for m in listed["results"]] == ["I live in Paris, my budget is $300"]
        assert "mia#0" in updated["message"] and "mia#0" in deleted["message"]
        mcp = subprocess.run(["bash", "-c", client.replace("8420", port)], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
        assert mcp.returncode == 0, mcp.stderr[-3000:]
        text, printed = mcp.stdout.strip(), []
        while text:  # the two answers the block prints
            answer, end = json.JSONDecoder().raw_decode(text)
            printed.append(answer)
            text = text[end:].strip()
        by_state, by_call = printed
        assert [h["memory"] for h in by_state["results"]] == ["my budget is $300"]
        told, call = mcp_sent(client)  # remember's messages (a tool call and its result) and the call recalled by
        assert by_call["state"] == live_state([{"role": "user", "content": "my budget is $300"}, *told], call)
        assert by_call["state"]["phase"] == "book_hotel"
        assert by_call["state"]["uncertainty_flags"] == ["hotel_id", "max_price"]  # as the README says
        assert any(h["memory"].startswith("search_hotels: ") and "H-4471" in h["memory"] for h in by_call["results"])
    finally:
        proc.terminate()
        proc.wait(60)
