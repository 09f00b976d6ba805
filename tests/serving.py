"""Helpers of the served-memory tests and the serving benchmark: a tiny export, a keys file, a real sam-serve."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

KEYS = {"acme": "acme-key-0123456789abcdef", "globex": "globex-key-0123456789abcdef"}


def tiny_export(bert_dir: Path, folder: Path) -> Path:
    """A random tiny SAM network exported (loads in a second; ranks arbitrarily, which these tests don't judge)."""
    from sam_model.export import save_exported
    from sam_model.models.sam import SAMConfig, SAMNet

    return save_exported(SAMNet(SAMConfig(bert_path=str(bert_dir), dim=8, hidden=16, proj_hidden=16,
                                          max_length=32)), folder)


def keys_file(folder: Path, keys: dict[str, str] = KEYS) -> Path:
    path = folder / "keys.json"
    path.write_text(json.dumps(keys))
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model: Path, keys: Path, data: Path, port: int, *extra: str, log: Path | None = None,
                 timeout: float = 120.0) -> subprocess.Popen:
    """``python -m sam_model.serve`` in a subprocess, returned once /health answers."""
    out = open(log or os.devnull, "ab")
    proc = subprocess.Popen([sys.executable, "-m", "sam_model.serve", "--model", str(model), "--keys", str(keys),
                             "--data", str(data), "--port", str(port), "--log-level", "warning", *extra],
                            stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sam-serve exited with {proc.returncode} (log: {log})")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"sam-serve did not answer /health within {timeout} s (log: {log})")
