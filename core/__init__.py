"""LogiCity Studio core: pure-Python simulation, logic, tasks, rendering.

Nothing under ``core`` may import Qt, pyqtgraph, ``app`` or ``widgets``, and ``core`` has no import cycles
(enforced by tests/test_architecture.py).
"""
from core.base.torchvision_compat import install as _install_torchvision_finder

# diffusers and transformers import torchvision when it is installed; the PyPI build here needs a shim to import
# beside CPU torch (core/base/torchvision_compat.py). Nothing heavy is imported here.
_install_torchvision_finder()
