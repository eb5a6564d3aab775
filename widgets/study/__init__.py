"""Study views: the designer, the participant runner, the LLM dialog and the results."""
