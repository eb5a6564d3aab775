"""The decision engines over a grounded step: the compiled numpy engine (with its clause machinery and joins), the z3
engine, and the decisions both return."""
