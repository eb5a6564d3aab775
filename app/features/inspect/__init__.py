"""Inspecting agents: selection, the Agents and Compare panels, labels and the witness ring, the gridlock cycle."""
