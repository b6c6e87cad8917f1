"""One module per `cairn` subcommand; each defines register(subparsers)."""
