"""Shared test helpers: test inputs (cities, scenes, truth tables), the studio's headless helpers, the tiny offline
image model and the scripts run in a fresh interpreter (``*_probe.py``).

Test files import from here (``from tests.support.maps import reference_city``), never from another test file;
fixtures that many test folders use live in the ``conftest.py`` files.
"""
