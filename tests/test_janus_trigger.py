"""Memory momentum trigger and baseline gates: hand-computed cases and edge cases."""

import json
import math

import numpy as np
import pytest

from sam_model.janus import AlwaysGate, MemoryMomentumTrigger, NoGate, PeriodicGate, RandomGate, make_gate
from sam_model.janus.trigger import cosine


def test_first_update_fires_with_undefined_cos():
    trig = MemoryMomentumTrigger(beta=0.5, tau=0.0)
    assert trig.check(1, np.array([1.0, 0.0])) == (True, None)


def test_hand_computed_momentum_and_cos():
    trig = MemoryMomentumTrigger(beta=0.5, tau=0.0)
    z1, z2, z3 = np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.array([-1.0, 0.2])
    trig.commit(1, z1, accepted=True)  # m1 = 0.5*0 + 0.5*z1
    np.testing.assert_allclose(trig.m, [0.5, 0.0])
    fire, cos = trig.check(2, z2)  # cos((1,1), (0.5,0)) = 0.5 / (sqrt2 * 0.5)
    assert not fire and cos == pytest.approx(1 / math.sqrt(2))
    trig.commit(2, z2, accepted=True)  # m2 = 0.5*(0.5,0) + 0.5*(1,1)
    np.testing.assert_allclose(trig.m, [0.75, 0.5])
    fire, cos = trig.check(3, z3)  # (-0.75 + 0.1) / (|z3| |m2|)
    assert fire and cos == pytest.approx(-0.65 / (math.sqrt(1.04) * math.sqrt(0.8125)))


def test_threshold_is_strict():
    trig = MemoryMomentumTrigger(beta=0.5, tau=1.0)
    trig.commit(1, np.array([2.0, 0.0]), accepted=True)
    fire, cos = trig.check(2, np.array([3.0, 0.0]))
    assert cos == 1.0 and not fire  # cos == tau does not fire: only cos < tau does
    fire, _ = trig.check(2, np.array([3.0, 0.1]))
    assert fire


def test_zero_length_update_never_fires_and_keeps_momentum():
    trig = MemoryMomentumTrigger(beta=0.5, tau=0.5)
    zero = np.zeros(3)
    assert trig.check(1, zero) == (False, None)  # even before any momentum exists
    trig.commit(1, np.array([1.0, 0.0, 0.0]), accepted=True)
    before = trig.m.copy()
    assert trig.check(2, zero) == (False, None)
    trig.commit(2, zero, accepted=True)
    np.testing.assert_array_equal(trig.m, before)
    assert trig.deployed_steps == 1


def test_rejected_candidate_does_not_move_momentum():
    trig = MemoryMomentumTrigger(beta=0.5, tau=0.0)
    bad = np.array([-1.0, 0.0])
    trig.commit(1, bad, accepted=False)
    assert trig.m is None and trig.check(2, bad)[0]  # nothing deployed yet: still fires
    trig.commit(2, np.array([1.0, 0.0]), accepted=True)
    before = trig.m.copy()
    assert trig.check(3, bad)[0]
    trig.commit(3, bad, accepted=False)
    np.testing.assert_array_equal(trig.m, before)
    assert trig.check(4, bad)[0]  # the same bad direction is checked again


def test_warmup_forces_first_deployed_steps():
    trig = MemoryMomentumTrigger(beta=0.5, tau=-1.0, warmup=2)  # tau=-1: never fires after warm-up
    z = np.array([1.0, 1.0])
    fired = []
    for t in range(1, 5):
        fired.append(trig.check(t, z)[0])
        trig.commit(t, z, accepted=True)
    assert fired == [True, True, False, False]


def test_state_roundtrip_through_json_gives_same_decisions():
    rng = np.random.default_rng(0)
    zs = rng.normal(size=(20, 4))
    a = MemoryMomentumTrigger(beta=0.7, tau=0.1)
    for t, z in enumerate(zs[:10], 1):
        a.commit(t, z, accepted=t % 3 != 0)  # some rejected, so the state is not trivial
    b = MemoryMomentumTrigger()
    b.load_state_dict(json.loads(json.dumps(a.state_dict())))
    for t, z in enumerate(zs[10:], 11):
        assert a.check(t, z) == b.check(t, z)
        a.commit(t, z, True)
        b.commit(t, z, True)
    np.testing.assert_array_equal(a.m, b.m)


def test_bad_arguments_and_dimension_change():
    with pytest.raises(ValueError, match="beta"):
        MemoryMomentumTrigger(beta=1.0)
    with pytest.raises(ValueError, match="tau"):
        MemoryMomentumTrigger(tau=2.0)
    trig = MemoryMomentumTrigger()
    trig.commit(1, np.ones(3), True)
    with pytest.raises(ValueError, match="fixed size"):
        trig.check(2, np.ones(4))
    with pytest.raises(ValueError, match="needs z_t"):
        trig.check(2, None)


def test_cosine_undefined_for_zero_vectors():
    assert cosine(np.zeros(2), np.ones(2)) is None
    assert cosine(np.array([1.0, 0.0]), np.array([0.0, 2.0])) == 0.0


def test_baseline_gates():
    assert not any(NoGate().check(t, None)[0] for t in range(1, 10))
    assert all(AlwaysGate().check(t, None)[0] for t in range(1, 10))
    assert [t for t in range(1, 13) if PeriodicGate(4).check(t, None)[0]] == [4, 8, 12]
    g = RandomGate(0.3, seed=5)
    fires = [g.check(t, None)[0] for t in range(1, 2001)]
    assert 0.25 < np.mean(fires) < 0.35


def test_random_gate_resumes_its_stream():
    a = RandomGate(0.5, seed=1)
    [a.check(t, None) for t in range(7)]
    b = RandomGate(0.5, seed=1)
    b.load_state_dict(json.loads(json.dumps(a.state_dict())))
    assert [a.check(t, None) for t in range(20)] == [b.check(t, None) for t in range(20)]


def test_make_gate_spellings():
    assert make_gate("none").name == "none"
    assert make_gate("always").name == "always"
    assert make_gate("periodic(5)").n == 5
    for steps in (51, 50, 7):
        for k in range(1, steps + 1):  # a real period gives exactly k evenly spaced comparisons, the last at T
            gate = make_gate(f"periodic({steps / k:.12g})")
            fired = [t for t in range(1, steps + 1) if gate.check(t, None)[0]]
            assert len(fired) == k and fired[-1] == steps, (steps, k, fired)
            assert make_gate(gate.name).n == gate.n  # the manifest's spelling rebuilds the same gate
    g = make_gate("random(0.25, 3)")
    assert (g.p, g.seed) == (0.25, 3)
    m = make_gate("mmt(0.8,0.1,2)")
    assert (m.beta, m.tau, m.warmup) == (0.8, 0.1, 2)
    for bad in ("sometimes", "periodic(0)", "periodic", "random(2)", "mmt(0.9)"):
        with pytest.raises(ValueError):
            make_gate(bad)


def test_budget_mode_uses_the_quantile_of_recent_cosines():
    trig = MemoryMomentumTrigger(beta=0.5, tau=0.0, budget=0.25, min_history=8)
    trig.commit(1, np.array([1.0, 0.0]), accepted=True)  # m along e1; later steps are rejected: m stays

    def at(c):
        return np.array([c, math.sqrt(1 - c * c)])

    for t, c in enumerate([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2], 2):
        fire, cos = trig.check(t, at(c))
        assert cos == pytest.approx(c) and fire == (c < 0.0)  # fewer than min_history cosines: plain tau
        trig.commit(t, at(c), accepted=False)
    assert trig.threshold() == pytest.approx(0.375)  # 0.25-quantile of 0.2..0.9 (linear interpolation)
    assert trig.check(10, at(0.35))[0] and not trig.check(10, at(0.4))[0]
    state = json.loads(json.dumps(trig.state_dict()))
    again = MemoryMomentumTrigger()
    again.load_state_dict(state)
    assert again.threshold() == pytest.approx(0.375) and again.budget == 0.25
    assert make_gate("mmtq(0.8,0.3)").budget == 0.3 and make_gate("mmtq(0.8,0.3)").tau == 0.0
    g = make_gate("mmtq(0.8,0.3,-0.2)")
    assert (g.beta, g.budget, g.tau) == (0.8, 0.3, -0.2)
    with pytest.raises(ValueError, match="budget"):
        MemoryMomentumTrigger(budget=0.0)


def test_proposed_momentum_follows_rejected_steps_too():
    """follow="proposed" (mmtp): m_t = β·m_{t−1} + (1−β)·z_t for every non-zero proposal, the literal formula."""
    deployed, proposed = MemoryMomentumTrigger(0.5, 0.0), make_gate("mmtp(0.5,0.0)")
    assert proposed.follow == "proposed" and proposed.name == "mmtp"
    a, b = np.array([1.0, 0.0]), np.array([-1.0, 1.0])
    for gate in (deployed, proposed):
        gate.check(1, a)
        gate.commit(1, a, accepted=False)  # the first proposal is refused
    assert deployed.m is None  # nothing deployed: m still undefined, the next step is compared again
    assert np.allclose(proposed.m, 0.5 * a) and proposed.deployed_steps == 0
    fire, cos = proposed.check(2, b)
    assert fire and cos == pytest.approx(-2**-0.5)  # defined from the first proposal on
    proposed.commit(2, b, accepted=True)
    assert np.allclose(proposed.m, 0.25 * a + 0.5 * b) and proposed.deployed_steps == 1
    proposed.commit(3, np.zeros(2), accepted=False)  # a no-op moves nothing
    assert np.allclose(proposed.m, 0.25 * a + 0.5 * b)
    back = make_gate("mmtp(0.5,0.0)")
    back.load_state_dict(json.loads(json.dumps(proposed.state_dict())))
    assert back.follow == "proposed" and np.allclose(back.m, proposed.m)
    q = make_gate("mmtpq(0.9,0.3,0.1)")
    assert (q.follow, q.budget, q.tau) == ("proposed", 0.3, 0.1)
    with pytest.raises(ValueError, match="follow"):
        MemoryMomentumTrigger(follow="sometimes")


def test_random_subset_gate_compares_exactly_k():
    for k in (0, 1, 26, 51):
        gate = make_gate(f"randomk({k},51,3)")
        fired = [t for t in range(1, 52) if gate.check(t, None)[0]]
        assert len(fired) == k and all(1 <= t <= 51 for t in fired)
        assert fired == [t for t in range(1, 52) if make_gate(gate.name).check(t, None)[0]]  # seeded
    assert make_gate("randomk(10,51,3)").steps != make_gate("randomk(10,51,4)").steps
    with pytest.raises(ValueError, match="randomk"):
        make_gate("randomk(52,51)")


@pytest.mark.parametrize("kwargs, says", [({"window": 0}, "window must be"), ({"min_history": 0}, "min_history"),
                                          ({"zero_tol": float("nan")}, "zero_tol"), ({"zero_tol": -1.0}, "zero_tol")])
def test_trigger_settings_out_of_range_are_refused(kwargs, says):
    with pytest.raises(ValueError, match=says):
        MemoryMomentumTrigger(**kwargs)


def test_a_non_finite_step_is_refused_and_budget_mode_is_named_as_spelt():
    """Found by review: a NaN step did not fire (the update deployed unchecked) and put NaN into m, after which the
    trigger never fired again and its state did not load; budget mode was recorded as plain "mmt"."""
    trig = MemoryMomentumTrigger(beta=0.5, tau=0.0)
    trig.commit(1, np.array([1.0, 0.0]), accepted=True)
    for bad in (np.array([np.nan, 0.1]), np.array([np.inf, 0.0])):
        with pytest.raises(ValueError, match="not finite"):
            trig.check(2, bad)
        with pytest.raises(ValueError, match="not finite"):
            trig.commit(2, bad, accepted=True)
    assert np.all(np.isfinite(trig.m))
    assert make_gate("mmtq(0.9,0.3)").name == "mmtq" and make_gate("mmtpq(0.9,0.3)").name == "mmtpq"
    plain = make_gate("mmt(0.9,0.0)")
    plain.load_state_dict(json.loads(json.dumps(make_gate("mmtq(0.9,0.3)").state_dict())))  # the run's own gate
    assert plain.name == "mmtq" and plain.budget == 0.3
    with pytest.raises(ValueError, match="state is for gate 'mmtq', not 'mmtp'"):
        make_gate("mmtp(0.9,0.0)").load_state_dict(make_gate("mmtq(0.9,0.3)").state_dict())


def test_a_huge_finite_step_gets_a_cosine_and_a_nan_history_does_not_load():
    """Found by review: a step of 1e200 overflowed the norm (cos NaN: not fired, deployed unchecked, and in budget
    mode the NaN in the history stopped the gate)."""
    trig = MemoryMomentumTrigger(beta=0.5, tau=0.0, budget=0.5, min_history=1)
    trig.commit(1, np.array([1.0, 0.0]), accepted=True)
    fire, cos = trig.check(2, np.array([-1e200, 0.0]))
    assert fire and cos == pytest.approx(-1.0)
    state = trig.state_dict()
    state["history"] = [0.5, float("nan")]
    with pytest.raises(ValueError, match="history of cosines"):
        MemoryMomentumTrigger(budget=0.5).load_state_dict(state)


def test_directions_weigh_every_step_the_same_whatever_its_length():
    """The momentum of the steps themselves: one long step steers it for ~1/(1−β) steps, so a reversal after it
    passes unchecked (a review's case); averaged as directions (``unit``, spelt ``mmtu``) it is compared."""
    e1, e2 = np.eye(2)

    def reversal_checked(gate: MemoryMomentumTrigger) -> bool:
        for t in range(30):
            gate.check(t, 0.01 * e1)
            gate.commit(t, 0.01 * e1, True)
        gate.check(30, 10.0 * e2)
        gate.commit(30, 10.0 * e2, True)
        return gate.check(31, -0.01 * e1)[0]

    assert not reversal_checked(MemoryMomentumTrigger(0.9, -0.5))
    unit = make_gate("mmtu(0.9,-0.5)")
    assert unit.name == "mmtu" and reversal_checked(unit)
    hand = MemoryMomentumTrigger(0.5, 0.0, unit=True)  # m = 0.5·(e1) after one step of length 4 along e1
    hand.commit(0, 4.0 * e1, True)
    np.testing.assert_allclose(hand.m, 0.5 * e1)
    state = json.loads(json.dumps(unit.state_dict()))
    again = MemoryMomentumTrigger(0.9, -0.5, unit=True)
    again.load_state_dict(state)
    assert again.unit and again.name == "mmtu" and np.allclose(again.m, unit.m)
    with pytest.raises(ValueError, match="state is for gate 'mmtu', not 'mmt'"):
        MemoryMomentumTrigger(0.9, -0.5).load_state_dict(state)
    assert make_gate("mmtpuq(0.9,0.25)").name == "mmtpuq"
