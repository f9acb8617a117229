"""Rendering: the Jinja environment and the board mail layout (plain text, stable for tools)."""
