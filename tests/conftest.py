"""Cross-cutting tests: make the shared helpers in this folder importable (importlib import mode)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
