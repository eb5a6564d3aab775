"""LogiCity Studio core: pure-Python simulation, logic, tasks, rendering.

Nothing under ``core`` may import Qt, pyqtgraph, ``app`` or ``widgets``, and ``core`` has no import cycles
(enforced by tests/test_architecture.py).
"""
