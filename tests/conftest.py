import sys
from pathlib import Path

# Test helpers (`e2e.py`) import as plain modules from this folder.
sys.path.insert(0, str(Path(__file__).parent))
