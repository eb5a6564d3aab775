"""``python -m tools.fuzz`` (``make fuzz``): see tools/fuzz/runner.py."""
import sys

from tools.fuzz.runner import main

sys.exit(main())
