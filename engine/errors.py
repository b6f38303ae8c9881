"""The one error type every layer raises for bad input, so callers can show a clear line."""


class RidgeError(Exception):
    """Bad input or data, described in one line that names the file, field or value at fault.

    Every layer's refusal is held here to what a player is shown (`engine.text.refusal`): one
    line of at most 300 characters, control characters written out, a long echoed value shortened."""

    def __init__(self, *args: object) -> None:
        if len(args) == 1 and isinstance(args[0], str):
            from engine.text import refusal

            args = (refusal(args[0]),)
        super().__init__(*args)
