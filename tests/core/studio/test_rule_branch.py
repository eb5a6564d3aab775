"""Applying edited rules from the shown step as a branch of the same recording (core/studio/rule_branch.py,
core/sim/rule_segments.py): steps 0..k are kept with the old explanations, the edited rules decide from k on, the
simulation re-simulates through k with the recorded programs and continues exactly, the inspector explains each
step with the program that decided it, and the episode file round-trips (a damaged segment is refused)."""
from __future__ import annotations

import json
import zipfile
from dataclasses import replace

import numpy as np
import pytest

from core.base.codes import Action, Kind
from core.base.errors import EpisodeFileError
from core.logic.lang.program import parse_rules
from core.project.model import new_project
from core.sim.episode import load_episode
from core.sim.replay import config_texts
from core.sim.rule_segments import SEGMENTS_KEY, clauses_for, offset_at
from core.sim.simulation import Simulation
from core.studio.apply import BRANCH_KEY, new_simulation, start_config
from core.studio.rule_branch import branch_rules_in_place, rules_segments_text
from core.studio.session import Session
from core.view.inspect import Inspector
from tests.support.studio import assert_same_episode

K, T = 6, 12
# three variables besides the ego (the default rules bind at most two): the witness columns must grow
ALLSTOP = ("allstop: Stop(X) :- IsCar(X), IsAtInter(Z), HigherPri(Z, Y), IsClose(W, X).\n"
           "allstop2: Stop(X) :- IsCar(X).\n")


def edited(config):
    text = config_texts(config)["rules"].replace("#ontology full.\n", "#ontology full.\n" + ALLSTOP, 1)
    return replace(config, rules=parse_rules(text, config.ontology, "edited.rules"), files={})


def resimulate(config, meta, steps):
    sim = new_simulation(start_config(config, meta), seed=int(meta["seed"]))
    sim.run(steps)
    return sim


def _recorded_session(config) -> Session:
    """A session of a new project of ``config`` (seed 3) holding its first T recorded steps."""
    s = Session()
    s.open(new_project(config, seed=3))
    sim = Simulation(config, seed=3)
    sim.run(T)
    s.set_history(sim.buffer)
    return s


@pytest.fixture()
def branched(config):
    s = _recorded_session(config)
    before = {k: Inspector(config).report(s.history, k, 0, recompute=False) for k in (2, K)}
    n_old = len(s.history.meta["clauses"])
    new = edited(config)
    assert branch_rules_in_place(s, K, new) == K
    s.project.config = new
    return s, config, new, n_old, before


def test_branch_keeps_the_steps_before_and_records_which_program_decided(branched):
    s, old, new, n_old, _ = branched
    h = s.history
    assert h.num_steps == K
    segs = h.meta[SEGMENTS_KEY]
    assert [(e["step"], e["offset"], e["count"]) for e in segs] == [(0, 0, n_old), (K, n_old, len(new.program.clauses))]
    labels = [c["label"] for c in h.meta["clauses"]]
    assert labels[:n_old] == [c.label for c in old.program.clauses]
    assert labels[n_old:n_old + 2] == ["allstop", "allstop2"]
    assert [c["id"] for c in h.meta["clauses"]] == list(range(len(labels)))
    assert h.meta[BRANCH_KEY]["step"] == K and h.meta[BRANCH_KEY]["rules"]
    assert offset_at(h.meta, K - 1) == 0 and offset_at(h.meta, K) == n_old
    assert "from step 6" in rules_segments_text(h.meta)
    assert h.array("witness").shape[2] >= 3            # the edited program binds three (Y, Z, W)


def test_resimulation_matches_through_k_then_the_edited_rules_decide(branched):
    s, _, new, n_old, _ = branched
    h = s.history
    sim = resimulate(new, h.meta, T)
    assert_same_episode(sim.buffer, h, upto=K)           # states, decisions and explanations before step K
    assert np.array_equal(sim.buffer.array("positions")[K], h.array("positions")[K])
    fired = np.asarray(sim.buffer.array("fired"))
    cars = np.array([int(k) == int(Kind.CAR) for k in h.agents.kinds])
    assert fired[:K].max() < n_old                        # old ids before the branch
    assert np.all(np.isin(fired[K:, cars], [n_old, n_old + 1, -2]))   # every car: allstop/allstop2 from step K
    assert (np.asarray(sim.buffer.array("decided"))[K:, cars] == int(Action.STOP)).all()
    # the studio's worker: re-simulate through K (sync), then send each new step as a frame to the kept recording
    from core.sim.frames import FrameTap, apply_frame

    worker = new_simulation(start_config(new, h.meta), seed=int(h.meta["seed"]))
    worker.run(K)
    tap = FrameTap(worker.buffer)
    tap.rewind(K)
    for _ in range(T - K):
        worker.step()
        apply_frame(h, tap.frame(worker.agents))
    assert_same_episode(sim.buffer, h)


def test_inspector_explains_each_step_with_its_program(branched, config):
    s, old, new, n_old, before = branched
    h = s.history
    sim = resimulate(new, h.meta, T)
    ep = sim.buffer
    ep.meta.update({k: h.meta[k] for k in ("clauses", SEGMENTS_KEY)})
    car = next(i for i, k in enumerate(ep.agents.kinds) if int(k) == int(Kind.CAR))
    insp = Inspector(new)                                   # the project's config now runs the edited rules
    early = insp.report(ep, 2, 0, recompute=False)
    assert early.fired == before[2].fired and early.explanation == before[2].explanation
    late = insp.report(ep, K + 2, car, recompute=False)
    assert late.decided == "Stop" and "'allstop" in late.fired and "W=" in late.fired, late.fired
    assert len(clauses_for(ep.meta, new.program)) == len(ep.meta["clauses"])


def test_saved_branch_round_trips_and_reopens_continuable(branched, tmp_path):
    s, _, new, n_old, _ = branched
    sim = resimulate(new, s.history.meta, T)
    buf = sim.buffer
    buf.meta.update({k: s.history.meta[k] for k in ("clauses", SEGMENTS_KEY, BRANCH_KEY)})
    path = buf.save(tmp_path / "ep.npz")
    ep = load_episode(path)
    assert ep.meta[SEGMENTS_KEY] == s.history.meta[SEGMENTS_KEY]
    again = resimulate(new, ep.meta, T)                    # what reopening the project re-simulates
    assert_same_episode(again.buffer, ep)
    # opened on its own as a read-only replay: the embedded (newest) rules and the segments explain every step
    from core.studio.episode_file import load_episode_file

    project, replay = load_episode_file(path)
    car = next(i for i, k in enumerate(replay.agents.kinds) if int(k) == int(Kind.CAR))
    insp = Inspector(project.config)
    assert "'allstop" in insp.report(replay, K + 1, car, recompute=False).fired
    assert "allstop" not in (insp.report(replay, 1, car, recompute=False).explanation or "")
    # a damaged segment is refused when the file is opened, naming the field
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members["meta.json"])
    meta[SEGMENTS_KEY][1]["rules"] = "Stop(X) :- NoSuchPredicate(X)."
    members["meta.json"] = json.dumps(meta).encode()
    bad = tmp_path / "bad.npz"
    with zipfile.ZipFile(bad, "w", zipfile.ZIP_STORED) as zf:
        for n, b in members.items():
            zf.writestr(n, b)
    with pytest.raises(EpisodeFileError, match="rule_segments"):
        load_episode(bad)


def test_a_second_branch_before_the_first_replaces_it(branched):
    s, old, new, n_old, _ = branched
    branch_rules_in_place(s, 3, old)                       # back to the original rules from step 3
    segs = s.history.meta[SEGMENTS_KEY]
    assert [(e["step"], e["offset"]) for e in segs] == [(0, 0), (3, n_old)]
    assert len(s.history.meta["clauses"]) == 2 * n_old and s.history.num_steps == 3


def test_coverage_counts_the_steps_the_newest_rules_decided(branched):
    from core.analysis.coverage import episode_coverage

    s, _, new, n_old, _ = branched
    sim = resimulate(new, s.history.meta, T)
    ep = sim.buffer
    ep.meta.update({k: s.history.meta[k] for k in ("clauses", SEGMENTS_KEY)})
    cov = episode_coverage(ep, new.program)
    assert cov.first_step == K and cov.steps == T - K and "decided by the newest rules" in str(cov)
    assert [c.label for c in cov.clauses] == [c.label for c in new.program.clauses]
    counts = {c.label: c.count for c in cov.clauses}
    cars = sum(int(k) == int(Kind.CAR) for k in ep.agents.kinds)
    assert counts["allstop"] + counts["allstop2"] == cars * (T - K)
    assert cov.clauses[0].line == 7      # lines of the analysed (newest) text: right after "#ontology full." (6)


def test_refused_when_agents_were_added_and_combined_with_concept_edits(config):
    from core.studio import agent_sets as A
    from core.studio.apply import SCHEDULE_KEY
    from core.studio.rule_branch import branch_problem

    s = _recorded_session(config)
    assert branch_problem(s) is None
    s.execute(A.add(s, "agents", Kind.CAR))
    assert "agents were edited" in branch_problem(s)
    s.stack.undo()
    # a concept edit not applied yet: the rules and the concept both change at step K, in one branch
    car = next(i for i, a in enumerate(config.agents) if a.kind is Kind.CAR and "police" not in a.concepts)
    s.execute(A.edit(s, "agents", [car], add_concepts=["police"]))
    assert branch_problem(s) is None
    new = replace(edited(config), agents=s.project.config.agents)
    branch_rules_in_place(s, K, new)
    s.project.config = new
    meta = s.history.meta
    assert [e["step"] for e in meta[SCHEDULE_KEY]] == [0, K] and [e["step"] for e in meta[SEGMENTS_KEY]] == [0, K]
    assert meta[BRANCH_KEY]["rules"] and meta[BRANCH_KEY]["in_place"]
    again = resimulate(new, meta, T)
    assert_same_episode(again.buffer, s.history, upto=K)
    name = config.agents.agents[car].name
    i = list(again.buffer.agents.names).index(name)
    assert "police" not in again.buffer.agents_at(K - 1).concept_names(i)
    assert "police" in again.buffer.agents_at(K).concept_names(i)
