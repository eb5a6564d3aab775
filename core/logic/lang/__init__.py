"""The rule language: lexer and parser, syntax tree, ontologies and the grounding registry, validated programs, the
editor's token classes and the reference rule importer."""
