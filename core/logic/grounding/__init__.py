"""Grounding: the truth of every ontology predicate in every agent's field of view for one world state."""
