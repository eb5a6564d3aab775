"""The rule editor's views: the code editor with its highlighter, the ontology editor and the analysis panel."""
