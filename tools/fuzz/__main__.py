"""``python -m tools.fuzz`` (``make fuzz``): see tools/fuzz/runner.py."""
import sys

from .runner import main

sys.exit(main())
