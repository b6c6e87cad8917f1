"""argparse types shared by the commands."""
import argparse


def positive_int(text):
    """An integer >= 1 (0 rounds, slices or kills would measure or prove nothing)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v} must be at least 1")
    return v
