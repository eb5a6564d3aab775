"""Importer for the reference's rule and ontology YAML: every file converts, converted rules decide like our
bundled ones, and like a reference-style quantified z3 solve of the original formulas
(docs/reference.md#the-decision-procedure)."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from core.base.errors import ConfigError, LogiCityError, RuleError
from core.io.yamlio import load_yaml, loads_yaml
from core.logic.engines.compiled import CompiledEngine, TaskChecker
from core.logic.lang.ontology import Ontology
from core.logic.lang.program import Program, load_rules
from core.logic.lang.reference import (
    import_reference_ontology,
    import_reference_rules,
    parse_reference_formula,
    reference_rules_from_data,
)
from tests.support.logic import RULES, ReferenceOracle, ontology, random_tables


def rule_files(base: Path) -> list[Path]:
    return sorted(p for p in base.glob("*/config/rules/**/*.yaml") if "ontology" not in p.name)


def onto_for(path: Path) -> Ontology:
    s = path.as_posix()
    if "/Vis/" in s:
        return ontology("vap")
    if "/easy/" in s:
        return ontology("easy")
    if "/medium/" in s:
        return ontology("medium")
    return ontology("full")


def test_every_reference_rule_file_converts(reference_configs):
    files = rule_files(reference_configs)
    assert len(files) == 56  # all of master + vis config/rules/** except the 10 ontologies
    sections = set()
    for f in files:
        rf = import_reference_rules(f, onto_for(f))
        sections |= set(rf.sections)
        for s in rf.sections.values():
            assert s.clauses, f
        text = rf.to_text()  # converts to our format and back
        from core.logic.lang.program import parse_rules
        assert parse_rules(text, onto_for(f)).to_text() == text
    assert sections == {"main", "sim", "task", "expert"}


def test_reference_ontologies_import_and_match_bundled(reference_configs):
    pairs = {"master/config/rules/ontology_easy.yaml": "easy", "master/config/rules/ontology_medium.yaml": "medium",
             "master/config/rules/ontology_full.yaml": "full", "vis/config/rules/Nav/ontology_full.yaml": "vap",
             "vis/config/rules/Vis/very_easy/ontology.yaml": "vap", "vis/config/rules/Vis/hard/ontology.yaml": "vap"}
    for rel, ours in pairs.items():
        ref = import_reference_ontology(reference_configs / rel)
        mine = ontology(ours)
        assert ref.names == mine.names
        for a, b in zip(ref.predicates, mine.predicates):
            assert (a.arity, a.kind, a.grounding) == (b.arity, b.kind, b.grounding), a.name
            assert {k: (dict(v) if hasattr(v, "items") else v) for k, v in a.params.items()} == \
                {k: (dict(v) if hasattr(v, "items") else v) for k, v in b.params.items()}, a.name
        assert ref.observation_size() == mine.observation_size()
    for p in sorted(reference_configs.glob("*/config/rules/**/ontology*.yaml")):
        assert import_reference_ontology(p).actions


# -- converted == bundled ----------------------------------------------------------------------------------------
MAPPING = [  # reference file, bundled file, ontology, sections compared
    ("master/config/rules/sim/easy/easy_rule.yaml", "sim_easy", "easy", {"main": "main"}),
    ("vis/config/rules/sim/easy/easy_rule.yaml", "sim_easy", "easy", {"main": "main"}),
    ("master/config/rules/sim/expert/expert_rule.yaml", "sim_expert", "full", {"main": "main"}),
    ("vis/config/rules/sim/expert/expert_rule.yaml", "sim_expert", "full", {"main": "main"}),
    ("master/config/rules/Nav/easy/expert.yaml", "spf_easy", "easy", None),
    ("vis/config/rules/Nav/easy/expert.yaml", "spf_easy", "easy", None),
    ("master/config/rules/Nav/medium/expert.yaml", "spf_medium", "medium", None),
    ("vis/config/rules/Nav/medium/expert.yaml", "spf_medium", "medium", None),
    ("master/config/rules/Nav/hard/expert.yaml", "spf_hard", "full", None),
    ("vis/config/rules/Nav/hard/expert.yaml", "spf_hard", "full", {"task": "task", "expert": "expert"}),
    ("master/config/rules/Nav/expert/expert.yaml", "spf_expert", "full", None),
    ("vis/config/rules/Nav/expert/expert.yaml", "spf_expert", "full", None),
    ("vis/config/rules/Vis/very_easy/rule.yaml", "vap_easy", "vap", {"main": "main"}),
    ("vis/config/rules/Vis/hard/rule.yaml", "vap_hard", "vap", {"main": "main"}),
]


@pytest.mark.parametrize("ref,ours,onto,sections", MAPPING, ids=[m[0] for m in MAPPING])
def test_converted_reference_decides_like_bundled(reference_configs, ref, ours, onto, sections):
    o = ontology(onto)
    conv = import_reference_rules(reference_configs / ref, o)
    mine = load_rules(RULES / f"{ours}.rules", o)
    sections = sections or {s: s for s in ("sim", "task", "expert")}
    assert set(sections) <= set(conv.sections)
    rng = np.random.default_rng(abs(hash(ref)) % 2**32)
    for s_conv, s_mine in sections.items():
        cases = 0
        if s_conv == "task":
            a, b = TaskChecker(conv.task()), TaskChecker(mine.task())
            assert [r.name for r in conv.task().rules] == [r.name for r in mine.task().rules]
            assert [(r.reward, r.dead) for r in conv.task().rules] == [(r.reward, r.dead) for r in mine.task().rules]
        else:
            a, b = CompiledEngine(conv.program(s_conv)), CompiledEngine(mine.program(s_mine))
        fired = 0
        for it in range(10):
            interp = random_tables(o, rng, 250, 1 + it % 6, 0.25 + 0.06 * it)
            if s_conv == "task":
                for act in range(4):
                    acts = np.full(250, act)
                    ra, fa = a.check_all(interp, acts)
                    rb, fb = b.check_all(interp, acts)
                    assert np.array_equal(ra, rb) and np.array_equal(fa, fb)
                    fired += int(fa.sum())
            else:
                da, db = a.decide(interp), b.decide(interp)
                assert np.array_equal(da.holds, db.holds), (s_conv, it)
                assert np.array_equal(da.unsat, db.unsat)
                fired += int(da.holds.sum())
            cases += 250
        assert cases >= 2000 and fired > 0


# -- converted == reference-style quantified z3 on the original formulas -----------------------------------------------
def _sections(path: Path, onto: Ontology):
    data = load_yaml(path)["Rules"]
    secs = data if isinstance(data, dict) else {"main": data}
    for name, items in secs.items():
        forms = []
        for it in items:
            body = it if "formula" in it else next(iter(it.values()))
            forms.append(parse_reference_formula(body["formula"], onto, str(path)))
        yield str(name).lower(), forms, [body_text(it) for it in items]


def body_text(it) -> str:
    return (it if "formula" in it else next(iter(it.values())))["formula"]


def _unique_sections(base: Path):
    seen = set()
    for f in rule_files(base):
        o = onto_for(f)
        for name, forms, texts in _sections(f, o):
            key = (name == "task", o.name, hashlib.sha1(repr(texts).encode()).hexdigest())
            if key in seen:
                continue
            seen.add(key)
            yield f, name, forms, o


def test_converted_sections_match_reference_semantics(reference_configs):
    """Every distinct (non-task) section of every reference file: our conversion + compiled engine vs the
    reference-style solve (uninterpreted sort, quantified rules, closed-world axiom, atoms asserted)."""
    checked = unsat_seen = 0
    for path, name, forms, o in _unique_sections(reference_configs):
        if name == "task":
            continue
        prog: Program = import_reference_rules(path, o).program(name)
        oracle = ReferenceOracle(forms, o)
        interp = random_tables(o, np.random.default_rng(checked), 60, 4, 0.45)
        ours = CompiledEngine(prog).decide(interp)
        for row in range(60):
            holds, unsat = oracle.decide(interp, row)
            assert np.array_equal(holds, ours.holds[row]), (str(path), name, row)
            assert unsat == ours.unsat[row], (str(path), name, row)
            unsat_seen += unsat
        checked += 1
    assert checked >= 25
    assert unsat_seen > 0, "the *_Default variants make some problems unsat"


def test_converted_task_rules_match_reference_semantics(reference_configs):
    checked = 0
    for path, name, forms, o in _unique_sections(reference_configs):
        if name != "task":
            continue
        task = import_reference_rules(path, o).task()
        checker = TaskChecker(task)
        oracle = ReferenceOracle(forms, o)
        interp = random_tables(o, np.random.default_rng(100 + checked), 6, 3, 0.5)
        for row in range(6):
            for act in range(4):
                want = oracle.task_violations(interp, row, act)
                got = checker.check(interp, row, act)
                assert got.violated_rules == tuple(r.name for r, v in zip(task.rules, want) if v)
        checked += 1
    assert checked >= 8


# -- variants and errors ----------------------------------------------------------------------------------------
def test_default_variants_become_constraints(reference_configs):
    rf = import_reference_rules(reference_configs / "master/config/rules/Nav/expert/expert_fast.yaml",
                                ontology("full"))
    ex = rf.program("expert")
    assert ex.heads == ("Stop", "Slow", "Fast")
    assert len(ex.constraints) == 4  # Fast == Not(Or(Slow, Stop)) ⇒ 3 constraints; Not(Normal) ⇒ 1
    rf2 = import_reference_rules(reference_configs / "master/config/rules/Nav/expert/expert_slow.yaml",
                                 ontology("full"))
    assert rf2.program("expert").stratified  # Slow == Not(Or(Fast, Stop)) would be a cycle as a definition


def _rules_yaml(formula: str, section: str | None = None) -> str:
    body = "      formula: |\n" + "".join(f"        {ln}\n" for ln in formula.splitlines())
    if section:
        return f"Rules:\n  {section}:\n    - name: R\n      reward: -1\n      dead: true\n{body.replace('      ', '      ', 1)}"
    return f"Rules:\n  - R:\n{body}"


@pytest.mark.parametrize("formula,msg", [
    ('__import__("os").system("touch /tmp/logicity_pwned")', "only plain function names"),
    ("Stop(entity) == Exists([dummyA], IsCar(dummyA).real)", "unsupported construct Attribute"),
    ("Stop(entity) == (lambda: 1)()", "only plain function names"),
    ("Stop(entity) == ForAll([dummyA], IsCar(dummyA))", "ForAll is not supported"),
    ("Stop(entity) == Not(Exists([dummyA], IsCar(dummyA)))", "negated Exists"),
    ("Stop(entity) == IsCar(other)", "unbound variable 'other'"),
    ("Stop(entity) == IsCarr(entity)", "unknown predicate or function 'IsCarr'"),
    ("Stop(entity) == IsClose(entity)", "arity mismatch"),
    ("Stop(entity) == And(IsCar(entity), Slow(dummyA))", "unbound variable"),
    ("Stop(entity) == Exists([x], IsCar(x))", "must be names starting with 'dummy'"),
    ("Stop(entity) == IsCar(entity", "formula syntax error"),
    ("Stop(entity) == IsCar(entity, key=1)", "keyword arguments"),
    ("Stop(entity) < IsCar(entity)", "single '==' comparison"),
])
def test_importer_rejects_everything_else(formula, msg, tmp_path):
    f = tmp_path / "r.yaml"
    f.write_text(_rules_yaml(formula))
    with pytest.raises(RuleError) as e:
        import_reference_rules(f, ontology("full"))
    assert msg in e.value.message, str(e.value)
    assert e.value.file == str(f) and e.value.line is not None and e.value.line >= 3
    assert not Path("/tmp/logicity_pwned").exists()


def test_importer_error_position_points_into_the_formula(tmp_path):
    f = tmp_path / "r.yaml"
    f.write_text(_rules_yaml("Stop(entity) == Exists(\n  [dummyA],\n  IsCarr(dummyA)\n)"))
    with pytest.raises(RuleError) as e:
        import_reference_rules(f, ontology("full"))
    assert (e.value.line, e.value.col) == (6, 3)


def test_task_formula_shape_is_checked():
    data = loads_yaml("Rules:\n  Task:\n    - name: T\n      reward: -1\n      formula: Stop(entity) == IsCar(entity)\n")
    with pytest.raises(RuleError, match="Implies"):
        reference_rules_from_data(data, ontology("full"))
    data = loads_yaml("Rules:\n  Task:\n    - name: T\n      formula: Implies(IsCar(entity), Stop(entity))\n")
    with pytest.raises(ConfigError, match="needs a 'reward'"):
        reference_rules_from_data(data, ontology("full"))


def test_reference_ontology_never_imports_functions(tmp_path):
    f = tmp_path / "ontology_x.yaml"
    f.write_text("Predicates:\n  - Boom:\n      arity: 1\n      function: os.system\n")
    with pytest.raises(ConfigError, match="unknown grounding function 'os.system'") as e:
        import_reference_ontology(f)
    assert e.value.line == 4
    f.write_text("Predicates:\n  - Jump:\n      arity: 1\n      function: None\n")
    with pytest.raises(LogiCityError, match="not an action"):
        import_reference_ontology(f)
