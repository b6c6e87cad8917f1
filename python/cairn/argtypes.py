"""argparse types shared by the commands: every whole number the CLI reads
is parsed here (whole_number), so each refusal reads the same."""
import argparse


def whole_number(text):
    """An integer, or argparse's error naming the text."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")


def _int_at_least(text, least, what):
    v = whole_number(text)
    if v < least:
        raise argparse.ArgumentTypeError(f"{v} must be {what}")
    return v


def positive_int(text):
    """An integer >= 1 (0 rounds, slices or kills would measure or prove nothing)."""
    return _int_at_least(text, 1, "at least 1")


def non_negative_int(text):
    """An integer >= 0 (where 0 means "no limit")."""
    return _int_at_least(text, 0, "0 or more")
