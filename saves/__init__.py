"""Profiles, attempts and their durable TOML files. Imports no Textual."""
