"""A tiny immutable record, used instead of dataclasses because importing `dataclasses` (and the
`inspect` module it pulls in) costs more than a whole `ridge solve` is allowed to take.

A subclass lists its fields and defaults in FIELDS (REQUIRED marks the ones with no default);
instances compare and hash by value, and `replace(**changes)` returns a modified copy.
"""
from __future__ import annotations

REQUIRED = object()


class Record:
    FIELDS: dict = {}
    CACHES: tuple = ()   # names of values cached on an instance after it is built, which a copy drops

    def __init__(self, **values) -> None:
        fields = self.FIELDS
        if not values.keys() <= fields.keys():
            unknown = sorted(values.keys() - fields.keys())[0]
            raise TypeError(f"{type(self).__name__} has no field '{unknown}'")
        merged = dict(fields)
        merged.update(values)
        for k, v in merged.items():
            if v is REQUIRED:
                raise TypeError(f"{type(self).__name__} needs field '{k}'")
        self.__dict__.update(merged)
        self._derive()

    def _derive(self) -> None:
        """Fill derived attributes (with `_set`); records without any leave this empty."""

    def _set(self, name: str, value) -> None:
        self.__dict__[name] = value

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable; use replace()")

    def replace(self, **changes):
        """A copy with `changes` applied (derived attributes are derived afresh)."""
        fields = self.FIELDS
        if not changes.keys() <= fields.keys():
            unknown = sorted(changes.keys() - fields.keys())[0]
            raise TypeError(f"{type(self).__name__} has no field '{unknown}'")
        values = self.__dict__.copy()
        for key in self.CACHES:
            values.pop(key, None)
        if len(values) != len(fields):   # derived attributes too: keep the fields only
            values = {k: values[k] for k in fields}
        values.update(changes)
        new = object.__new__(type(self))
        object.__setattr__(new, "__dict__", values)
        new._derive()
        return new

    def _key(self) -> tuple:
        return tuple(self.__dict__[k] if not isinstance(self.__dict__[k], dict)
                     else tuple(sorted(self.__dict__[k].items())) for k in self.FIELDS)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={self.__dict__[k]!r}" for k in self.FIELDS)
        return f"{type(self).__name__}({inner})"
