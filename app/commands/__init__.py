"""One module per `ridge` subcommand, each with `build(parser)` and `run(args) -> int`."""
