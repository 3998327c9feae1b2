"""How long the contact clusters' ticks are: a level chosen between steps.

The clusters' ticks (clusters.py) are at most TICK x TICK_FACTOR^level s
apart (params[P_TICK]). The Simulation keeps the level and moves it after
each call of the engine's step (next_level) from what that step's solves
did (stats S_UPDATES, S_SOLVED): plain Python between steps, so both
engines take the same ticks, and a replay the same.

Why it adapts. Each tick lists its contacts, at a cost per contact, and
solves them, at a cost per update. A shorter tick takes fewer updates a
contact: the velocity tolerance (a gap over h) is looser, and the
change to undo (a tick's kick of gravity, a tick's worth of flow)
smaller. Measured from the same states (2 cores, November 2026), the
updates a contact fell about as h^1.75, and a contact's listing cost
about as much as 2 to 3 updates, so a frame costs least where a solve
takes about 3 to 4 updates a contact: the 10,000-ball Galton board's
funnel heap, about 85 balls tall, took 21 at 2 ms and 4.3 at 0.8 ms
(frames 0.66x the time; 0.6 ms: 2.5, 0.71x); the hourglass 6.4 at 2 ms
and 2.7 at 1.2 ms (0.92x); the rain 5.1 at 2 ms and 3.6 at 1.6 ms
(0.96x; 1.2 ms: 2.4, 1.02x); the 1,000-ball board 2.3 at 2 ms, where
1.2 ms took 1.03x and 0.8 ms 1.3x the time. So a step whose solves
took more than TICK_BUSY updates a contact makes the next one's ticks
TICK_FACTOR as long (a level up, at most TICK_LEVELS: 0.52 ms), and
one with fewer than TICK_IDLE, or with no solve at all (a heap asleep or
gone), makes them longer again, up to TICK; between the two it keeps
them (a solve that ran out of its budget counts its whole budget).
Shorter ticks change no bound: a tick still keeps every gap open to
the next, and the hover its tolerance allows is the same gap.
"""
from .constants import TICK, TICK_BUSY, TICK_FACTOR, TICK_IDLE, TICK_LEVELS, WARM_SETTLING


def next_level(level, updates, solved, busy=TICK_BUSY, idle=TICK_IDLE):
    """The next step's tick level (0: TICK, up to TICK_LEVELS), given this
    step's level and its solves' updates and contacts solved (busy, idle:
    the thresholds, updates a contact; other ones only to compare rules,
    benchmarks/tick_rules.py)."""
    if solved > 0 and updates > busy * solved:
        return min(level + 1, TICK_LEVELS)
    if solved == 0 or updates < idle * solved:
        return max(level - 1, 0)
    return level


def tick_length(level):
    """params[P_TICK]: the longest tick (s) at a level."""
    return TICK * TICK_FACTOR ** level


def warm_share(level):
    """params[P_WARM]: the share of its last impulse a slow contact's solve
    starts from at a level (clusters.py, WARM_SETTLING): WARM_SETTLING a
    TICK, so about the same share a second whatever the tick (the actual
    tick, an equal division of a part, may be shorter than the level's).
    At 0.8 ms it took the 10,000-ball Galton board's solves from 4.5 to 4.2
    updates a contact (frames 0.92-0.97x) against WARM_SETTLING a tick.
    (Here, not in a kernel: a kernel may not raise to a power, see
    tests/physics/test_one_source.py.)"""
    return WARM_SETTLING ** (TICK_FACTOR ** level)
