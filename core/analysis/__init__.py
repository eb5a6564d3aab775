"""Rule analysis above the simulator: static checks (stratification, conflicts, dead clauses), located diagnostics,
conflict witnesses and deadlock search as scenes, clause coverage, and the report Analyze shows."""
