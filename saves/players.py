"""Who may play: a name that can be a profile, and the hot seat's list of players, each checked
by the saves' own profile-name rule, so a round never starts for a name it cannot save under."""
from __future__ import annotations

from saves.errors import SaveError
from saves.model import check_profile_name

MIN_PLAYERS, MAX_PLAYERS = 2, 8  # the hot seat's table


def check_player(name: str) -> str | None:
    """None when `name` can be a profile, else one line saying why not."""
    try:
        check_profile_name(name)
    except SaveError as error:
        return str(error)
    return None


def parse_players(text: str) -> tuple[list[str], str | None]:
    """Names from 'Ada, Grace, Linus': (names, None), or ([], what is wrong)."""
    names = [n.strip() for n in text.replace(";", ",").split(",") if n.strip()]
    if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
        return [], f"Name {MIN_PLAYERS} to {MAX_PLAYERS} players, separated by commas (you named {len(names)})."
    seen: set[str] = set()
    for name in names:
        problem = check_player(name)
        if problem:
            return [], problem
        if name.casefold() in seen:
            return [], f"{name} is named twice: each player needs their own name."
        seen.add(name.casefold())
    return names, None
