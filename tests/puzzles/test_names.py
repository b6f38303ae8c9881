"""Player names compare by one key: case, full-width forms and look-alike letters fold together."""
from puzzles.live import fold
from puzzles.names import name_key


def test_look_alike_names_share_a_key():
    assert name_key("Ana") == name_key("ana") == name_key("ＡＮＡ") == name_key("\u0410na")
    assert name_key("  Ana   Lee ") == name_key("ana lee")
    assert name_key("Аlice") == name_key("alice")          # Cyrillic А
    assert name_key("Bob") != name_key("Rob")


def test_the_room_folds_names_with_the_same_key():
    assert fold("\u0410na") == fold("Ana")
