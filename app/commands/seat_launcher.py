"""The first program of one browser's app process under `ridge serve`.

textual-serve starts a browser's process from a command line, through a shell, with the server's
whole environment. The server hands it `exec python -I <this file> <folder> <server pid> -- <app
argv>` (every word quoted), so the shell becomes this launcher, which becomes the app: it takes
the environment the server wrote to `<folder>/env.json` (and deletes that file), never what it
inherited; works in `<folder>/home`, an empty private home; asks the kernel to end it when the
server ends (Linux); and replaces itself with the app, so no shell or launcher stays between the
server and the app. The server removes the folder when the browser leaves.

Standard library only, run with `-I`, so it starts fast and nothing in the host's environment
steers it.
"""
from __future__ import annotations

import json
import os
import shlex
import signal
import sys
from pathlib import Path

ENV_FILE = "env.json"
HOME = "home"


def player_command(argv: list[str], env: dict[str, str], folder: Path) -> str:
    """The command line textual-serve runs for one browser (on the server's side): the shell
    only reads it and becomes this launcher, which becomes the app `argv` with `env` and an
    empty home in `folder` (a private folder the server made and removes)."""
    home = folder / HOME
    home.mkdir(mode=0o700)
    descriptor = os.open(folder / ENV_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        json.dump({**env, "HOME": str(home)}, out)
    words = [sys.executable, "-I", str(Path(__file__).resolve()), str(folder), str(os.getpid()), "--", *argv]
    return "exec " + " ".join(shlex.quote(word) for word in words)


def die_with_parent() -> None:
    """End when the parent (the server) ends, even when it is killed (Linux; elsewhere the
    server's shutdown stops its players). The setting outlives exec."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main(args: list[str]) -> int:
    if len(args) < 4 or args[2] != "--":
        sys.stderr.write("seat_launcher: usage: FOLDER SERVER_PID -- APP_ARGV...\n")
        return 2
    folder, server_pid, argv = Path(args[0]), int(args[1]), args[3:]
    env_file = folder / ENV_FILE
    env = json.loads(env_file.read_text(encoding="utf-8"))
    env_file.unlink()
    die_with_parent()
    if os.getppid() != server_pid:  # the server ended before the setting above took hold
        return 1
    os.chdir(env["HOME"])
    os.execve(argv[0], argv, env)
    return 1  # pragma: no cover - execve does not return


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
