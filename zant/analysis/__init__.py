"""Analyses of the uop IR, shared by passes, the planner and the printer; they never rewrite.
`rounding` is arithmetic they share with the interpreter: integer forms of exact rounding."""
