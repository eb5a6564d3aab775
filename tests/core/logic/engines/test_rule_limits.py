"""Rule limits: many-variable clauses are evaluated variable by variable with bounded memory
(same answers as the dense evaluation and the z3 engine) or refused with a RuleError at the clause's line; huge
reward numbers and oversized rule texts are located RuleErrors, and a syntax error near the top of a big file is
reported without tokenising the rest."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.base.errors import RuleError
from core.logic.engines import compiled_clauses, z3engine
from core.logic.engines.compiled import CompiledEngine, TaskChecker
from core.logic.engines.joins import plan_joins
from core.logic.engines.z3engine import Z3Engine
from core.logic.lang import parser
from core.logic.lang.parser import MAX_RULE_CHARS
from core.logic.lang.program import load_rules, parse_program, parse_rules
from tests.support.logic import ontology, random_tables

ONTO = ontology("full")
UNARY = ["IsCar", "IsPedestrian", "IsOld", "IsTiro", "IsAtInter"]
BINARY = ["IsClose", "HigherPri", "LeftOf", "NextTo"]


def chain_rule(n: int, line_offset: int = 0) -> str:
    """``Stop(X)`` over a chain of n variables X - V0 - V1 - ... - V(n-1) (join width 2)."""
    vs = [f"V{i}" for i in range(n)]
    body = ["IsClose(X, V0)"] + [f"IsClose({vs[i]}, {vs[i + 1]})" for i in range(n - 1)]
    body += [f"Not(IsCar({v}))" for v in vs[::3]]
    return "\n" * line_offset + "Slow(X) :- IsOld(X).\nStop(X) :- " + ", ".join(body) + ".\n"


def clique_rule(n: int) -> str:
    """``Stop(X)`` over n variables linked pairwise (join width n)."""
    vs = [f"V{i}" for i in range(n)]
    body = [f"IsClose({a}, {b})" for i, a in enumerate(vs) for b in vs[i + 1:]]
    return "Normal(X) :- IsCar(X).\n\nStop(X) :- " + ", ".join(body) + ".\n"


def decide_all(prog, interp):
    """(dense-or-default compiled, forced factorised compiled, z3) decisions."""
    a = CompiledEngine(prog).decide(interp)
    old = compiled_clauses.DENSE_LIMIT
    compiled_clauses.DENSE_LIMIT = 0
    try:
        b = CompiledEngine(prog).decide(interp)
    finally:
        compiled_clauses.DENSE_LIMIT = old
    return a, b, Z3Engine(prog).decide(interp)


def same(a, b) -> bool:
    return (np.array_equal(a.holds, b.holds) and np.array_equal(a.clause, b.clause)
            and np.array_equal(a.witness, b.witness) and np.array_equal(a.unsat, b.unsat)
            and np.array_equal(a.violated, b.violated) and np.array_equal(a.violated_witness, b.violated_witness))


# ---- item 6: many-variable clauses ---------------------------------------------------------------------------

def test_a_sixteen_variable_chain_runs_in_bounded_memory():
    """Densely this is 12^16 truth values per ego (numpy refuses the allocation); joined it is 12^2."""
    prog = parse_program(chain_rule(16), ONTO, "chain.rules")
    interp = random_tables(ONTO, np.random.default_rng(5), 200, 12, 0.6)
    d = CompiledEngine(prog).decide(interp)
    assert 0 < d.holds[:, 3].sum() < 200  # the clause holds for some egos and not for others
    # every reported witness really satisfies the body
    stop = d.holds[:, 3]
    for e in np.flatnonzero(stop)[:20]:
        ent = list(interp.ent[e])
        w = [ent.index(g) for g in d.witness[e, 3]]
        close = interp.binary_local("IsClose")[e]
        assert close[0, w[0]] and all(close[w[i], w[i + 1]] for i in range(15))


def test_chain_answers_match_z3_where_z3_can_run():
    prog = parse_program(chain_rule(10), ONTO, "chain.rules")
    for seed in range(3):
        interp = random_tables(ONTO, np.random.default_rng(seed), 30, 2, 0.7)
        a, b, c = decide_all(prog, interp)
        assert same(a, b) and same(b, c)


def _rule_text(draw_vars: int, lits: list[tuple]) -> str:
    vs = [f"V{i}" for i in range(draw_vars)]
    out = []
    for kind, p, a, b, neg in lits:
        args = (["X"] + vs)[a % (draw_vars + 1)] if kind == "u" else \
            f"{(['X'] + vs)[a % (draw_vars + 1)]}, {vs[b % draw_vars]}"
        atom = f"{p}({args})"
        out.append(f"Not({atom})" if neg else atom)
    out += [f"IsClose(X, {v})" for v in vs]  # every variable appears
    return f"Stop(X) :- {', '.join(out)}.\nFast(X) :- Not(Stop(X)), IsCar(X).\n:- IsTiro(X), Fast(X), IsOld(V0).\n"


literal = st.tuples(st.sampled_from(["u", "b"]), st.sampled_from(UNARY + BINARY), st.integers(0, 9),
                    st.integers(0, 9), st.booleans()).map(
    lambda t: (t[0], t[1] if (t[0] == "u") == (t[1] in UNARY) else (UNARY[0] if t[0] == "u" else BINARY[0]),
               t[2], t[3], t[4]))


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(nvars=st.integers(2, 5), lits=st.lists(literal, min_size=1, max_size=7), seed=st.integers(0, 2**31),
       kmax=st.integers(1, 4), density=st.floats(0.2, 0.8))
def test_factorised_dense_and_z3_agree(nvars, lits, seed, kmax, density):
    prog = parse_program(_rule_text(nvars, lits), ONTO)
    interp = random_tables(ONTO, np.random.default_rng(seed), 12, kmax, density)
    a, b, c = decide_all(prog, interp)
    assert same(a, b), "factorised = dense"
    assert same(b, c), "factorised = z3"


def test_task_checker_uses_the_same_limits():
    text = "#section task.\n#task \"t\" reward=-1.\n" + chain_rule(14).split("\n", 1)[1]
    section = parse_rules(text, ONTO, "t.rules").task()
    interp = random_tables(ONTO, np.random.default_rng(1), 40, 10, 0.6)
    reward, fail = TaskChecker(section).check_all(interp, np.zeros(40, dtype=np.int64))
    assert reward.min() == -1 and reward.max() == 0 and not fail.any()


def test_join_plan_width():
    assert plan_joins(16, [(i, i + 1) for i in range(15)]).width == 2
    assert plan_joins(5, [(0, j) for j in range(1, 5)]).width == 2  # star around the first variable
    assert plan_joins(6, [(i, j) for i in range(6) for j in range(i + 1, 6)]).width == 6


def test_a_wide_join_is_refused_when_the_engine_is_built():
    n = compiled_clauses.MAX_JOIN_WIDTH + 1
    prog = parse_program(clique_rule(n), ONTO, "wide.rules")
    with pytest.raises(RuleError) as err:
        CompiledEngine(prog)
    assert (err.value.file, err.value.line, err.value.col) == ("wide.rules", 3, 1)
    assert f"links {n} of its variables" in err.value.message and str(compiled_clauses.MAX_JOIN_WIDTH) in err.value.message


def test_too_many_variables_is_refused():
    n = 70  # more than numpy's 64 axes: refused as a located RuleError, not a numpy ValueError
    prog = parse_program(chain_rule(n, line_offset=4), ONTO, "many.rules")
    with pytest.raises(RuleError) as err:
        CompiledEngine(prog)
    assert err.value.line == 6 and f"has {n} variables" in err.value.message


def test_a_join_too_large_for_the_view_is_refused_at_the_step():
    """Width 8 with 12 entities in view: 12^8 = 430 million values per ego, refused before any is allocated."""
    prog = parse_program(clique_rule(8), ONTO, "wide.rules")
    eng = CompiledEngine(prog)  # width 8 is allowed in principle (small views)
    small = random_tables(ONTO, np.random.default_rng(2), 5, 3, 0.9)
    eng.decide(small)
    with pytest.raises(RuleError) as err:
        eng.decide(random_tables(ONTO, np.random.default_rng(2), 5, 12, 0.9))
    assert (err.value.file, err.value.line) == ("wide.rules", 3)
    assert "12^8 = 429981696 truth values" in err.value.message and str(compiled_clauses.JOIN_LIMIT) in err.value.message


def test_z3_refuses_an_expansion_beyond_its_limit():
    prog = parse_program(chain_rule(12, line_offset=2), ONTO, "z.rules")
    with pytest.raises(RuleError) as err:
        Z3Engine(prog).decide(random_tables(ONTO, np.random.default_rng(0), 3, 6, 0.5))
    assert (err.value.file, err.value.line) == ("z.rules", 4)
    assert re.search(r"[3-6]\^12 = \d+ bindings", err.value.message) and str(z3engine.MAX_BINDINGS) in err.value.message


# ---- item 7: overflowing reward numbers ----------------------------------------------------------------------

@pytest.mark.parametrize("number, words", [
    ("9" * 400, "number too long"),        # was OverflowError in float()
    ("9" * 5000, "number too long"),       # was ValueError (integer string conversion limit)
    ("1e400", "reward must lie within"),   # reads as inf
    ("-1e10", "reward must lie within"),
])
def test_overflowing_rewards(number, words):
    text = f"#section task.\n\n#task \"t\" reward={number} dead=true.\nStop(X) :- IsCar(X).\n"
    with pytest.raises(RuleError) as err:
        parse_rules(text, ONTO, "t.rules")
    assert (err.value.file, err.value.line, err.value.col) == ("t.rules", 3, 18)
    assert words in err.value.message


# ---- item 8: big rule texts ----------------------------------------------------------------------------------

def test_an_oversized_rule_file_is_refused_before_reading(tmp_path):
    p = tmp_path / "big.rules"
    p.write_text("Stop(X) :- ,\n" + "% padding\n" * (MAX_RULE_CHARS // 2))
    with pytest.raises(RuleError) as err:
        load_rules(p, ONTO)
    assert "too large" in err.value.message and str(MAX_RULE_CHARS) in err.value.message
    with pytest.raises(RuleError, match="rule text too long"):
        parse_rules(p.read_text(), ONTO, str(p))


def test_an_early_syntax_error_is_reported_without_reading_on(monkeypatch):
    """The first error is found by a lazy tokeniser: the rest of a big file is never tokenised (tokenising a file
    of the largest accepted size up front would cost far more time and memory than the one error needs)."""
    made = []

    def counting(text, file=None):
        for tok in real(text, file):
            made.append(tok)
            yield tok

    real = parser.iter_tokens
    monkeypatch.setattr(parser, "iter_tokens", counting)
    good = "Stop(X) :- IsClose(X, Y), IsCar(Y), Not(IsOld(Y)).\n"
    text = good + "Stop(X) :- ,\n" + good * ((MAX_RULE_CHARS - 100) // len(good))
    with pytest.raises(RuleError) as err:
        parse_rules(text, ONTO, "big.rules")
    assert (err.value.line, err.value.col) == (2, 12)
    assert len(made) <= parser._TokenStream.BATCH  # one batch around the first two lines, not the file's ~90 000


def test_undecodable_rule_file_is_located(tmp_path):
    p = tmp_path / "bad.rules"
    p.write_bytes(b"Stop(X) :- IsCar(X).\nSlow(X) :- Is\xffOld(X).\n")
    with pytest.raises(RuleError) as err:
        load_rules(p, ONTO)
    assert (err.value.line, err.value.col) == (2, 14) and "0xff" in err.value.message
