"""LogiCity Studio core: pure-Python simulation, logic, tasks, rendering.

Nothing under ``core`` may import Qt or pyqtgraph (enforced by tests/test_layering.py).
"""
