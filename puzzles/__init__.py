"""Puzzle schema, built-in packs, the generator, answer keys and grading. Imports no Textual."""
