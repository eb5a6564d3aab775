"""Logic core: ontologies, the rule language, grounding, the two engines, explanations, task checks, analysis.

Typical use::

    onto = load_ontology("configs/ontologies/full.yaml")
    rules = load_rules("configs/rules/sim_expert.rules", onto)
    grounder = Grounder(city, onto)
    engine = CompiledEngine(rules.program())          # or Z3Engine(...), same answers
    g = grounder.ground(snapshot, rng)                 # one step, every agent's own view
    d = engine.decide(g)                               # d.holds bool [N, 4] (core.base.codes.Action order)
    print(d.explain(3))                                # "Stop ← clause 2: ..."

The rule language and file formats are documented in ``docs/rules.md``.
"""
