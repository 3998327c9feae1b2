"""Argument types shared by the commands: each turns a word into a value or
raises argparse.ArgumentTypeError with a one-line reason. (And plural, for
the counts the commands report.)"""
import argparse
import math


def file_name(text):
    """A file or folder name: not empty (an unset shell variable, --record "$LOG", had
    given '' and the run went on writing nothing)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty name")
    return text


file_name.__name__ = "name"


# the most frames a headless run steps or writes (a typo of a few digits too many had run
# until killed), and physics steps between two written frames (28 minutes of a 60 Hz scene)
MAX_FRAMES = 1_000_000
MAX_EVERY = 100_000


def count(lo, hi=None):
    """An integer >= lo (and <= hi if given: a typo of a few digits too many is refused,
    not run for days)."""
    def conv(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"must be >= {lo}, not {v}")
        if hi is not None and v > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi:,}, not {v}")
        return v
    conv.__name__ = "int"
    return conv


def positive(kind, hi=None, least=None):
    """A finite number of type kind (int or float) > 0 (and <= hi, >= least if given:
    a scene file's bounds, where the option stands for a scene's key)."""
    def conv(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not {'an integer' if kind is int else 'a number'}: {text!r}") from None
        if not (v > 0 and math.isfinite(v)):
            raise argparse.ArgumentTypeError(f"must be positive, not {text}")
        if least is not None and v < least:
            raise argparse.ArgumentTypeError(f"must be at least {least:g}, not {text}")
        if hi is not None and v > hi:
            most = f"{hi:,}" if isinstance(hi, int) else f"{hi:g}"
            raise argparse.ArgumentTypeError(f"must be at most {most}, not {text}")
        return v
    conv.__name__ = kind.__name__
    return conv


def image_size(text):
    """WIDTHxHEIGHT in whole pixels, for windows and frames."""
    from abound.render.style import parse_size
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def box_size(text):
    """WIDTHxHEIGHT in px (positive numbers, at most MAX_MAGNITUDE), for a window and the box it shows."""
    from abound.defaults import MAX_MAGNITUDE
    try:
        w, h = text.lower().split("x")
        w, h = float(w), float(h)
        if not (w > 0 and h > 0 and math.isfinite(w) and math.isfinite(h)):
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must be WIDTHxHEIGHT, e.g. 1920x1080, not {text!r}") from None
    if max(w, h) > MAX_MAGNITUDE:  # (the box's limit: checked here, whether or not the scene takes the size)
        raise argparse.ArgumentTypeError(f"a side is at most {MAX_MAGNITUDE:g} px, not {text!r}")
    return (w, h)


def plural(n, word):
    """'1 ball', '2 balls'."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def given(options):
    """The names of the (name, given) options that were given: what a mode that takes
    none of them names for the user to drop."""
    return [name for name, was_given in options if was_given]
