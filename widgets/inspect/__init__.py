"""Views of the inspect feature: the inspector, its summary document, the Agents and Compare panels."""
