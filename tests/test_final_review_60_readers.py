"""Final review of stop 60's reader changes (conversions 116-123): what a next maintainer found wrong."""

import shutil
from pathlib import Path

from sam_model.data.validate import main as validate_main

LOGS = Path(__file__).resolve().parent.parent / "examples" / "logs"


def test_validate_says_what_a_folder_of_runs_holds_as_a_refused_format_does(tmp_path, capsys):
    """validate's hint on a folder of runs kept its own list of what layouts hold (a duplicate of files._HELD) and
    named every layout but a session store by its key: "it holds swe-agent runs", "it holds otel runs", which tell a
    user neither the files nor the reader. It now says what a refused --format says (files.held_runs)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(LOGS / "swe-agent.traj", runs / "a.traj")
    shutil.copy(LOGS / "swe-agent.traj", runs / "b.traj")
    assert validate_main([str(runs)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "it holds 2 SWE-agent trajectory files (.traj) (read by the swe-agent reader))" in err, err
    spans = tmp_path / "spans"
    spans.mkdir()
    shutil.copy(LOGS / "otel-traces.json", spans / "traces.json")
    assert validate_main([str(spans)]) == 2
    err = capsys.readouterr().err
    assert "it holds 1 OTLP JSON file (OpenTelemetry spans) (read by the otel reader))" in err, err
