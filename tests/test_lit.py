"""Runs the lit/FileCheck suite (tests/filecheck) as part of pytest."""

import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).parent / "filecheck"


def test_filecheck_suite():
    result = subprocess.run(
        [sys.executable, "-c", "from lit.main import main; main()", "-q", str(SUITE)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
