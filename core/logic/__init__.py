"""Logic core: ontologies, the rule language, grounding, the two engines, explanations, task checks, analysis.

Typical use::

    onto = load_ontology("configs/ontologies/full.yaml")
    rules = load_rules("configs/rules/sim_expert.rules", onto)
    grounder = Grounder(city, onto)
    engine = CompiledEngine(rules.program())          # or Z3Engine(...), same answers
    g = grounder.ground(snapshot, rng)                 # one step, every agent's own view
    d = engine.decide(g)                               # d.holds bool [N, 4] (core.codes.Action order)
    print(d.explain(3))                                # "Stop ← clause 2: ..."

The rule language and file formats are documented in ``docs/rules.md``.
"""
from .analysis import (AnalysisReport, ConflictResult, DeadClause, StratificationReport, UndefinedUse,
                       WitnessScene, analyze, conflicts, dead_clauses, stratification, undefined_predicates)
from .compiled import CompiledEngine, TaskChecker, check_task
from .decisions import Decisions, Explanation, Firing, TaskCheck, Violation
from .grounding import PLACEHOLDER, EgoView, EntityRow, Grounder, Grounding, Interpretation, TableInterpretation
from .ontology import Ontology, Predicate, load_ontology, loads_ontology
from .program import (TASK_SECTION, Program, RuleFile, TaskRule, TaskSection, load_rules, parse_program,
                      parse_rules)
from .reference import import_reference_ontology, import_reference_rules, parse_reference_formula
from .registry import REGISTRY, GroundingSpec
from .syntax import EGO, Atom, Clause, Literal
from .z3engine import Z3Engine

__all__ = [
    "AnalysisReport", "ConflictResult", "DeadClause", "StratificationReport", "UndefinedUse", "WitnessScene",
    "analyze", "conflicts", "dead_clauses", "stratification", "undefined_predicates",
    "CompiledEngine", "TaskChecker", "check_task", "Decisions", "Explanation", "Firing", "TaskCheck", "Violation",
    "PLACEHOLDER", "EgoView", "EntityRow", "Grounder", "Grounding", "Interpretation", "TableInterpretation",
    "Ontology", "Predicate", "load_ontology", "loads_ontology",
    "TASK_SECTION", "Program", "RuleFile", "TaskRule", "TaskSection", "load_rules", "parse_program", "parse_rules",
    "import_reference_ontology", "import_reference_rules", "parse_reference_formula",
    "REGISTRY", "GroundingSpec", "EGO", "Atom", "Clause", "Literal", "Z3Engine",
]
