"""The rule and ontology editors, rule analysis (F7), Apply and Load as scene."""
