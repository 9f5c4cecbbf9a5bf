"""Hostile inputs: generated files that once gave a silently wrong number or a crash."""
