"""The built-in demo log: deterministic, valid, and labelled the way the task promises."""

from __future__ import annotations

import gzip
import json

import pytest

from sam_model.data.reader import read_episodes
from sam_model.data.synthetic import (
    MAX_EVENTS,
    MIN_EVENTS,
    generate_episodes,
    iter_synthetic_events,
    main,
    write_synthetic,
)

N = 40  # episodes; enough for every phase, family and correction pattern to occur


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    path = tmp_path_factory.mktemp("syn") / "demo.jsonl"
    write_synthetic(path, N, seed=7)
    return path


@pytest.fixture(scope="module")
def episodes(log):
    return read_episodes(log)  # default on_error="raise": any bad line fails here


def _setters(events):
    """For each step, {slot: step that last set it}, computed from the states alone.

    A slot is set where its value differs from the last non-decision state (decision
    points mask needed slots, so they are skipped when comparing).
    """
    known: dict = {}
    source: dict = {}
    out = []
    for e in events:
        out.append(dict(source))
        if e.is_decision_point:
            continue
        for k, v in e.state.constraints.items():
            if known.get(k, object()) != v:
                known[k], source[k] = v, e.step
    return out


def test_same_seed_same_bytes_different_seed_different(tmp_path):
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    write_synthetic(a, 8, seed=3)
    write_synthetic(b, 8, seed=3)
    write_synthetic(c, 8, seed=4)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_gzip_output_is_reproducible_and_readable(tmp_path):
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "sub" / "b.jsonl.gz"
    write_synthetic(a, 3, seed=1)
    write_synthetic(b, 3, seed=1)
    assert a.read_bytes() == b.read_bytes()  # no file name or mtime in the gzip header
    plain = tmp_path / "p.jsonl"
    write_synthetic(plain, 3, seed=1)
    assert gzip.decompress(a.read_bytes()) == plain.read_bytes()
    assert len(read_episodes(a)) == 3


def test_python_api_matches_file_and_prefixes_are_stable(log):
    eps = generate_episodes(N, seed=7)
    lines = [json.dumps(e, ensure_ascii=False) for ep in eps for e in ep]
    assert lines == log.read_text(encoding="utf-8").splitlines()
    assert list(iter_synthetic_events(5, seed=7)) == [e for ep in eps[:5] for e in ep]


def test_every_line_parses_and_lengths_in_range(log, episodes):
    assert len(episodes) == N
    assert len({ep.episode_id for ep in episodes}) == N
    for ep in episodes:
        assert MIN_EVENTS <= len(ep) <= MAX_EVENTS, ep.episode_id
        assert [e.step for e in ep.events] == list(range(len(ep)))


def test_labels_point_to_earlier_steps_of_same_episode(episodes):
    for ep in episodes:
        steps = {e.step for e in ep.events}
        for dp in ep.decision_points:
            assert 1 <= len(dp.useful_memory_steps) <= 3
            assert all(s < dp.step and s in steps for s in dp.useful_memory_steps)


def test_decision_points_mask_needed_slots_and_label_their_latest_setter(episodes):
    n_dp = 0
    for ep in episodes:
        setters = _setters(ep.events)
        for dp in ep.decision_points:
            n_dp += 1
            needs = dp.state.uncertainty_flags
            assert needs, "a decision point must say what it needs"
            assert not set(needs) & set(dp.state.constraints), "needed values must be masked"
            assert set(dp.useful_memory_steps) == {setters[dp.step][s] for s in needs}
    assert n_dp / len(episodes) >= 4


def test_decision_points_have_short_follow_up_observations(episodes):
    dps = [dp for ep in episodes for dp in ep.decision_points]
    short = [dp for dp in dps if len(dp.text.split()) <= 5]
    assert len(short) / len(dps) > 0.9
    assert any(dp.kind == "user" for dp in short)


def test_state_constraints_change_exactly_where_values_are_given(episodes):
    for ep in episodes:
        prev = {}
        for e in ep.events:
            if e.is_decision_point:
                continue
            changed = {k for k, v in e.state.constraints.items() if prev.get(k, object()) != v}
            if changed:
                assert e.kind in ("user", "result"), (ep.episode_id, e.step, e.kind, changed)
            prev = e.state.constraints


def test_corrections_label_the_corrected_step_not_the_old_one(episodes):
    found = 0
    for ep in episodes:
        history: dict[str, list[int]] = {}  # slot -> steps that set it, in order
        prev: dict = {}
        for e in ep.events:
            if e.is_decision_point:
                needs = e.state.uncertainty_flags
                for slot in needs:
                    steps = history[slot]
                    if len(steps) > 1:
                        assert steps[-1] in e.useful_memory_steps
                        # an old setter is labelled only when it is the latest setter of another needed slot
                        others = {history[s][-1] for s in needs if s != slot}
                        assert set(steps[:-1]) & set(e.useful_memory_steps) <= others
                        found += 1
                continue
            for k, v in e.state.constraints.items():
                if prev.get(k, object()) != v:
                    history.setdefault(k, []).append(e.step)
            prev = e.state.constraints
    assert found >= 5


def test_both_families_and_varied_phase_orders(episodes):
    families = {ep.events[0].meta["family"] for ep in episodes}
    orders = {tuple(ep.events[0].meta["phases"]) for ep in episodes}
    assert families == {"trip", "event"}
    assert len(orders) >= 10


def test_cli_writes_file_and_rejects_bad_family(tmp_path, capsys):
    out = tmp_path / "cli.jsonl"
    assert main([str(out), "--episodes", "2", "--seed", "5", "--families", "event"]) == 0
    eps = read_episodes(out)
    assert len(eps) == 2 and all(ep.events[0].meta["family"] == "event" for ep in eps)
    with pytest.raises(SystemExit):
        main([str(tmp_path / "x.jsonl"), "--families", "cruise"])
    assert "cruise" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()
