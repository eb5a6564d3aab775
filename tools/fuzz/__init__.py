"""Loader fuzzing (``make fuzz``): mutation fuzzing of every loader family with crash/hang reports.

tools/fuzz/mutate.py makes inputs, tools/fuzz/families.py holds the seeds and loader calls, tools/fuzz/runner.py
runs them and reports; docs/fuzzing.md has the figures.
"""
