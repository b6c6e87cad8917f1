"""argparse types shared by the commands."""
import argparse


def _int_at_least(text, least, what):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    if v < least:
        raise argparse.ArgumentTypeError(f"{v} must be {what}")
    return v


def positive_int(text):
    """An integer >= 1 (0 rounds, slices or kills would measure or prove nothing)."""
    return _int_at_least(text, 1, "at least 1")


def non_negative_int(text):
    """An integer >= 0 (where 0 means "no limit")."""
    return _int_at_least(text, 0, "0 or more")
