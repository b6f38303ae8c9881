"""Profiles, attempts and their durable TOML files. Imports no Textual.

A player's history is the one thing Ridge cannot recompute, so this package guards it.

Layout of a save folder (see `saves.locations` for where it is):

    settings.toml                  folder-wide: the profile used last
    alice.toml                     alice's header: id, created, where her history ends (last_seq,
                                   last_hash), [settings], [review.*]
    alice.attempts/000001.toml     her attempts 1-32, oldest first, as [[attempts]] tables
    alice.attempts/000002.toml     attempts 33-64 ... (only the last file is ever rewritten)
    .alice.lock                    taken while a write to alice is in progress

Why segments: recording rewrites only the last segment file, which holds at most
`store.SEGMENT_SIZE` attempts, so the cost of a write does not grow with the history; loading
reads every file once and validates each with one pydantic call, close to what tomllib alone costs.
Every file is plain TOML (tomli-w writes, tomllib reads), starts with `ridge = "<kind>"` (a file
without it is someone else's and is never rewritten) and carries `schema_version`.

Guarantees:
- Atomic writes (`saves.atomic`): temporary file, fsync, rename, fsync of the folder. A crash or
  kill at any instant leaves the old file or the new one.
- One writer at a time per profile (`FileLock` on `.NAME.lock`), held only for the
  read-modify-write; the tail is re-read under the lock, so two processes never lose each other's
  attempts and the hash chain stays linear.
- Damage is never overwritten: a file that does not parse or validate raises `SaveError` (one line
  naming the file, and the line and field where known) and stays as it is. Only an explicit
  `SaveStore.quarantine(name)` moves it aside as `NAME.damaged-<UTC time>.toml`.
- Older files are upgraded once (`saves.migrate`), the originals kept as `NAME.v1-backup.toml`
  or `NAME.v2-backup.*`.
- Tamper evidence (`saves.chain`): each attempt's `hash` covers its fields and the previous
  attempt's hash, the first hangs from the profile's identity and the header records the last;
  `SaveStore.check()` / `ridge saves check` report edits, deletions, reorders, copied histories
  and attempts folders without a profile.
- No trusted totals: points, score, mastery and streaks are derived (`puzzles.stats`) every time,
  from outcomes graded again from each attempt's prediction and recorded key (`Profile.counted_attempts`).
- New files are 0600; a rewrite keeps the mode of the file it replaces.
"""
