"""Analyses of the uop IR, shared by passes, the planner and the printer; they never rewrite."""
