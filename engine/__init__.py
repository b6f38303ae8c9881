"""The physics of LLM serving: catalogs, the deployment analysis, levers. Imports no Textual."""
