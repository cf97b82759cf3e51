"""The one exception type users see.

Every user-facing failure (bad model file, unsupported operator, toolchain error) is raised as a
`ZantError`; the command-line tools print its message and exit non-zero without a traceback.
"""


class ZantError(Exception):
    """An error caused by the user's input or environment, reported as one clear message."""
