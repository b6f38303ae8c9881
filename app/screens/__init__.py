"""The game's screens: home, campaign map and briefings, puzzle, reveal, stats, help, dialogs."""
