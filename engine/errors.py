"""The one error type every layer raises for bad input, so callers can show a clear line."""


class RidgeError(Exception):
    """Bad input or data, described in one line that names the file, field or value at fault."""
