"""When two player names are the same name: one key for every place that compares them.

A live room, a match file and a board all meet names typed by people, on phones and keyboards
with other layouts. 'Ana', 'ANA', 'Ａｎａ' (full-width) and 'Аna' (a Cyrillic А) read as the same
player on a projector, so they must count as one: otherwise a look-alike can sit beside a real
player, or re-sign their results. The key folds compatibility forms (NFKC), case, and the letters
of other scripts that are drawn like Latin ones; it is for comparing only, never for display.
"""
from __future__ import annotations

import unicodedata

# Letters drawn like a Latin letter in common fonts, mapped to that letter (after casefold, so only
# lower-case forms are needed). Cyrillic and Greek cover the look-alikes a keyboard offers; the
# list is Unicode's confusables table cut to single letters that fold to ASCII.
_CONFUSABLE = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "с": "c", "е": "e", "һ": "h", "і": "i", "ј": "j", "к": "k", "м": "m",
    "н": "h", "о": "o", "р": "p", "ԛ": "q", "ѕ": "s", "т": "t", "ս": "u", "ԝ": "w", "х": "x",
    "у": "y", "ё": "e", "ї": "i", "ӏ": "l", "ԁ": "d", "ɡ": "g",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ϲ": "c", "ζ": "z",
    # Latin letters that look like others
    "ı": "i", "ℓ": "l", "ſ": "s",
})


def name_key(name: str) -> str:
    """The form two names are compared in: NFKC, case-folded, look-alike letters made Latin,
    marks dropped and runs of spaces made one. 'Аna' (Cyrillic А) and 'ana' share a key."""
    text = unicodedata.normalize("NFKC", name).casefold().translate(_CONFUSABLE)
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.split())
