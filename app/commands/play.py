"""`ridge play` (and plain `ridge`): open the game."""
from __future__ import annotations

import argparse
import os


def build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--save-dir", metavar="DIR", default=None,
                        help="folder for profiles and logs (default: your data folder, or $RIDGE_SAVE_DIR)")
    parser.add_argument("--profile", metavar="NAME", default=None,
                        help="play as this player (created if new)")
    parser.add_argument("--ask-name", action="store_true", help=argparse.SUPPRESS)  # `ridge serve`: each browser names itself


def check(args: argparse.Namespace) -> None:
    """Refuse, in one line on the command line, what the game could only report in a notice after
    opening: a --profile that is no profile name, and a save folder that is a file (nothing could
    be saved there, yet the game opened and asked for a name)."""
    from saves.errors import SaveError
    from saves.locations import data_dir
    from saves.model import check_profile_name

    if args.profile is not None:
        check_profile_name(args.profile)
    folder = data_dir(args.save_dir)
    if folder.exists() and not folder.is_dir():
        raise SaveError(f"could not open the save folder {folder}: it is a file, not a folder")


def run(args: argparse.Namespace) -> int:
    import gc

    # Starting allocates a great deal (modules, styles, widgets) and frees next to nothing, so
    # collecting meanwhile only costs time: the app resumes collection after its first frame.
    # Paused before the arguments are checked, whose imports (the save model) allocate as much.
    gc.disable()
    try:
        check(args)
    except BaseException:
        gc.enable()  # no app to resume it: the command line reports the refusal
        raise
    # Ridge's saves want no pydantic plugins, and looking for them reads the metadata of every
    # installed package before the first save is opened.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from app.game import make_app

    # The simulator is built behind the home screen, so its first opening is a screen switch; not
    # for `ridge serve`, whose browsers' games all share one machine's cores as they start.
    app = make_app(save_dir=args.save_dir, profile=args.profile, warm=not args.ask_name)
    app.ask_name = args.ask_name
    app.run()
    return int(app.return_code or 0)
