"""`zant lit-config [DIR]`: a lit configuration for FileCheck tests kept outside Zant's tree.

A researcher's own pass wants tests like Zant's (`// RUN: zant-opt %s -p my-pass | filecheck %s`)
in their own repository; lit needs a `lit.cfg` beside them that finds `zant-opt` and
`filecheck`. The template below finds both in the Python environment that runs lit, else in the
one that wrote the file, and offers `%python` and `%load-passes` (the `--load-passes` of every
`.py` file in the suite's `passes/` folder, when there is one).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from zant.errors import ZantError

TEMPLATE = '''\
# -*- Python -*-
# lit configuration for FileCheck tests of Zant passes, written by `zant lit-config`.
# Run the suite with `lit -v {folder}` (lit and filecheck: `pip install lit filecheck`).
#
# A test is a .mlir file whose first line says how to run it, e.g.
#   // RUN: zant-opt %s %load-passes -p my-fusion | filecheck %s
#   // RUN: zant-opt %s --split-input-file --verify-diagnostics
import glob
import os
import sys

import lit.formats

config.name = {name!r}
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "passes", "lit.cfg"]
config.test_source_root = os.path.dirname(__file__)

# zant-opt and filecheck: from the Python environment running lit, else from the one with Zant
# when this file was written.
_candidates = [os.path.dirname(sys.executable), {bin_dir!r}]
_bin = next((d for d in _candidates if os.path.exists(os.path.join(d, "zant-opt"))), _candidates[-1])
config.environment["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")
_python = os.path.join(_bin, "python")
config.substitutions.append(("%python", _python if os.path.exists(_python) else sys.executable))

# %load-passes: `--load-passes FILE` for every .py file in the suite's passes/ folder.
_passes = sorted(glob.glob(os.path.join(config.test_source_root, "passes", "*.py")))
config.substitutions.append(("%load-passes", " ".join(f"--load-passes {{p}}" for p in _passes)))
'''


def lit_config_text(folder: str, name: str) -> str:
    """The lit.cfg for a suite in `folder` named `name`, pointing at this environment's tools."""
    return TEMPLATE.format(folder=folder, name=name, bin_dir=os.path.dirname(sys.executable))


def add_lit_config_command(commands) -> None:
    parser = commands.add_parser(
        "lit-config", help="write a lit.cfg for FileCheck tests of your passes outside Zant's tree"
    )
    parser.add_argument("folder", nargs="?", help="the suite's folder: writes FOLDER/lit.cfg (default: print it)")
    parser.add_argument("--name", help="the suite's name in lit's reports (default: the folder's name)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing lit.cfg")


def cmd_lit_config(args: argparse.Namespace) -> int:
    if args.folder is None:
        print(lit_config_text("FOLDER", args.name or "zant-tests"), end="")
        return 0
    folder = Path(args.folder)
    if folder.exists() and not folder.is_dir():
        raise ZantError(f"{folder} is a file, not a folder for tests")
    target = folder / "lit.cfg"
    if target.exists() and not args.force:
        raise ZantError(f"{target} exists (--force overwrites it)")
    folder.mkdir(parents=True, exist_ok=True)
    target.write_text(lit_config_text(str(folder), args.name or folder.resolve().name), encoding="utf-8")
    print(f"wrote {target}; run the suite with: lit -v {folder}")
    return 0
