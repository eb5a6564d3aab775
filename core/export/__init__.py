"""Dataset export: one registry of exporters (:mod:`core.export.registry`), a resumable runner with a manifest
(:mod:`core.export.runner`), backends (in-process, local process pool, Ray; :mod:`core.export.backends`), the
exporters themselves (episodes, SPF demonstrations as Minari, Parquet, videos, PDDL, and wrappers of the study and
VAP generators), and the safe importer of the reference simulator's ``.pkl`` caches (:mod:`core.export.logicity_pkl`).
docs/export.md describes formats, options and the multi-node Ray set-up. Nothing heavy is imported here.
"""
