"""Balls placed at random, none closer than a given distance: what the drop tests start from."""
import numpy as np


def scattered(count, lo, hi, apart, seed, to_box=None):
    """count points (count, 2) drawn uniformly from the box lo..hi (2-sequences),
    every two more than apart px from each other, in the order drawn; to_box
    maps a draw to the point it stands for (e.g. along and above a slope)."""
    rng = np.random.default_rng(seed)
    placed = []
    while len(placed) < count:
        p = rng.uniform(lo, hi)
        p = p if to_box is None else to_box(p)
        if all(np.hypot(*(p - q)) > apart for q in placed):
            placed.append(p)
    return np.array(placed)
