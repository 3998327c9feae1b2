"""The defaults and choices a Simulation and a scene file share.

One small module both read (abound/simulation.py, abound/scene/schema.py),
so that neither imports the other for them.
"""
DEFAULT_REST_SPEED = 10.0  # px/s: slower contacts are inelastic and may put a ball to sleep
DEFAULT_DENSITY = 1.0  # mass per px^2 when a ball's mass is not given
# Numbers beyond this are mistakes (a unit gone wrong, a typo'd exponent) and
# would take the physics out of what float64 resolves: scene files and the
# Simulation API alike refuse them
MAX_MAGNITUDE = 1e9
MIN_POSITIVE = 1e-9  # the smallest value of a number that must be positive (a mass, a radius in a scene)
# px^3/s^2: the strongest black hole (GM) a scene file or the API takes. GM is
# large by nature (a saver's hole on a 4K screen pulls with 2e9, past
# MAX_MAGNITUDE), but 1e300 from the API threw balls at 1e150 px/s, their
# energies 1e303 and climbing to overflow; at 1e20 a ball of the least radius
# through an unsoftened centre (its radius stands in for the distance) stays
# below 1e15 px/s, its energy far from overflow
MAX_STRENGTH = 1e20
# every ball's predictions look at every wall, and every free ball feels every black hole
# (a scene of 10,000 walls took 15 s to check and crawled; 2,000 holes took 0.5 s a step
# for 100 balls): beyond these a scene or a program is a typo or a generator gone wrong
MAX_WALLS = 1_000
MAX_BLACK_HOLES = 64
RESTITUTION_MIX = ("product", "min", "max", "mean")
BALL_TOI = ("analytic", "bisection")
# px/s^2: the weight per mass pressing a ball onto a level table, which
# rolling friction is a fraction of (the default gravity's strength)
TABLE_GRAVITY = 980.0
# the colours of balls given none, in turn
DEFAULT_PALETTE = ("#e6194b", "#3cb44b", "#ffe119", "#4363d8", "#f58231",
                   "#911eb4", "#46f0f0", "#f032e6", "#bcf60c", "#fabebe")
