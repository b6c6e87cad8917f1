"""cairn command-line tools."""
__version__ = "0.1.0"
