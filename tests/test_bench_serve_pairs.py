"""sam_model.bench.serve_pairs: the paired difference of load runs and its t-interval."""

from __future__ import annotations

import json

import pytest

from sam_model.bench.serve_pairs import files, table
from sam_model.janus.stats import t975, t_interval


def test_the_t_interval_is_students():
    mean, lo, hi = t_interval([1.0, 2.0, 3.0, 4.0, 5.0])  # s = 1.581, s/sqrt(5) = 0.7071, t(4) = 2.776
    assert mean == 3.0 and hi - mean == pytest.approx(2.776 * 0.70711, abs=1e-4) and mean - lo == hi - mean
    assert t975(40) == pytest.approx(2.0211, abs=2e-3) and t975(1000) == pytest.approx(1.9623, abs=1e-3)
    with pytest.raises(ValueError, match="two values"):
        t_interval([1.0])


def run(path, qps: float, p99: float) -> str:
    path.write_text(json.dumps({"mode": "load", "breakdown": {"encode_16_in_one_forward_ms": 100.0},
                                "runs": [{"qps": qps, "search": {"p50_ms": 30, "p99_ms": p99, "mean_ms": 35},
                                          "add": {"p99_ms": 20}}]}))
    return str(path)


def test_pairs_are_taken_in_order_and_a_difference_is_marked(tmp_path):
    a = [run(tmp_path / f"a{i}.json", 15, p99) for i, p99 in enumerate([90, 100, 110])]
    b = [run(tmp_path / f"b{i}.json", 15, p99) for i, p99 in enumerate([70, 82, 88])]  # -20, -18, -22
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table(a, b, ("one", "two")).splitlines()}
    assert "-20.0 [-25.0, -15.0] *" in rows["search p99 ms"]  # t(2) 4.303 * 2 / sqrt(3) = 4.97
    assert rows["requests/s"].endswith("+0.0 [+0.0, +0.0] |")  # equal runs: no difference, no mark
    assert "90 / 100 / 110 | 100.0" in rows["search p99 ms"]


def test_bad_inputs_are_named(tmp_path):
    a = [run(tmp_path / f"a{i}.json", 15, 90) for i in range(2)]
    with pytest.raises(SystemExit, match="as many B runs as A runs"):
        table(a, a[:1])
    other = tmp_path / "fault.json"
    other.write_text(json.dumps({"mode": "fault", "kills": 20}))
    with pytest.raises(SystemExit, match="fault.json: no run.qps"):
        table(a, [a[0], str(other)])
    with pytest.raises(SystemExit, match="no file matches"):
        files(str(tmp_path / "c*.json"))
    assert files(str(tmp_path / "a*.json")) == sorted(files(",".join(reversed(a))))
    with pytest.raises(SystemExit, match=r"a0\.json is given twice"):  # one run would be paired twice
        files(",".join([a[0], a[1], a[0]]))
