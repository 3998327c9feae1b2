"""The engine's constants: the parameter vector's layout, ball modes, event kinds, the
rest model's thresholds, budgets and the cost model's tuning, the stats vector.

Part of the event-driven engine (engine.py gathers it; docs/physics.md explains it).
"""
import math

import numpy as np


# parameter vector (backends.make_params)
P_GX, P_GY, P_REST_SPEED, P_MIX, P_BALL_TOI, P_WIDTH, P_HEIGHT, P_FRICTION, P_CLUSTERS, P_TICK, P_WARM = range(11)

# ball modes (world.py)
FREE, SLIDING, ASLEEP, PINNED, FROZEN, ROLLING, CLUSTER = 0, 1, 2, 3, 4, 5, 6
# wall kinds (world.py); walls 0..3 are the box
BOX_LINE, SEGMENT = 0, 1
# what a sliding ball slides on
SUP_NONE, SUP_FACE, SUP_BALL, SUP_END = -1, 0, 1, 2
# event kinds, in tie order (a tick sorts first at its time: its tie key is -1)
EV_WALL, EV_BALL, EV_LEAVE, EV_TICK = 0, 1, 2, 3

TC_TIME = 1e-5  # s: contacts this soon after a ball's previous one are elastic
HOP_GAP = 1e-3  # x radius: a ball sliding on a round support leaves it at this gap
SLEEP_TOUCH = 1e-5  # x radius: contacts closer than this hold a ball when it falls asleep
# x radius: a slow cluster ball falls asleep where fixed things this close
# hold it (a solve that has not converged leaves gaps of this order, where
# a lone ball's exact contacts leave none: SLEEP_TOUCH)
SLEEP_TOUCH_CLUSTER = 1e-3
# REST_ANGLE = 1e-6 rad: a single contact holds a ball only where its normal
# is that close to straight up (a level floor). Any steeper, a frictionless
# ball must slide: on a slope, or off the top of a peg (an unstable balance).
# (It was 0.1 rad, and a lone ball slept on a 2 degree slope.)
REST_COS = math.cos(1e-6)
# contact clusters (clusters.py, contact_solver.py)
TICK = 0.002  # s: the longest sub-step between two solves of the clusters' contacts
# shorter ones (ticks.py): level k is TICK x TICK_FACTOR^k, k up to
# TICK_LEVELS (0.52 ms), one level shorter after a step whose solves took
# more than TICK_BUSY updates a contact, one longer after one with fewer
# than TICK_IDLE (or none)
TICK_FACTOR = 0.8
TICK_LEVELS = 6
TICK_BUSY = 5.0
TICK_IDLE = 2.0
# the share of its last impulse a slow contact's solve starts from at ticks
# of TICK (clusters.py says why; ticks.warm_share, for shorter ones)
WARM_SETTLING = 0.7
# x radius: a moving ball this close to a cluster ball, and slow, joins it;
# a cluster ball LEAVE_GAP close to no other moving one leaves
CLUSTER_SLOP = 1e-3
LEAVE_GAP = 0.05
# x the smaller radius: the most two balls of a cluster, or asleep, may overlap
# (a solve that has not converged leaves this much at worst: the next ticks
# push it out); balls in flight overlap by rounding at most (TOUCH_REL)
CLUSTER_OVERLAP = 1e-3
# x the smaller radius: contacts this close are listed in a tick's solve (the
# others cannot close before the next tick: a cluster ball that could move
# half this far in a tick is set free, events then watching its every contact)
CLUSTER_REACH = 1.0
# s: an island of cluster balls that has been slower than rest_speed this
# long, at every tick, and leans on something fixed, falls asleep as a whole
# (Box2D's islands use 0.5 s too): any force left unbalanced would have sped
# some ball past rest_speed long before
ISLAND_SLEEP_TIME = 0.5
MAX_BALL_EVENTS = 256
COLLAPSE_CONTACTS = 8
MAX_EVENTS_BASE = 100000
MAX_EVENTS_PER_BALL = 400
MAX_WORK_BASE = 1000000  # candidates a step may examine in its predictions ...
MAX_WORK_PER_BALL = 1000  # ... plus this many per ball
MAX_CELLS_PER_BALL = 64
MAX_SUBSTEPS = 8
SWEEP_SAMPLE = 256  # balls sampled for the mean sweep (mean_sweep)
ORDER_TILE = 8  # cells per side of the tiles the working copy is ordered by
# a grid cell's side, in typical swept boxes (mean sweep plus mean diameter):
# wider cells hold more balls but fewer per ball, and fewer cells to visit.
# Paired in one process and in both orders: against cells of one sweep, 1.6
# stepped the hot gas 7.5% faster at 10,000 balls on one thread and 11% at
# 1,000, the Galton board, rain, pool break and default scenes within 2%
# either way; against 1.6, 2.0 stepped the gas 2-3% faster at 10,000 balls
# on two threads, 6% at 1,000, 1.5% at 10,000 on one thread (two runs: 0.95
# and 1.02), the Galton board and a settling pile within 2%; 1.3 and 2.5 less
CELL_SWEEPS = 2.0
# what a split step watches (gather): a ball's watch code is high | low << 2 |
# axis << WATCH_AXIS, high and low its slots (0 to WATCH_SLOTS - 1) in reach
WATCH_SLOTS, WATCH_AXIS = 3, 4
GRID_INT = np.int32  # the grid's entry indices (below 2^31, -1 for none): half the memory of int64
# ball indices read from the grid are unsigned: numba wraps a negative index
# around the array's end, and for every signed index it reads an array with,
# it tests for that (a shift, a conditional move, the shape kept at hand);
# an unsigned index needs none (uint32: mixed with int64 it stays an integer)
BALL_INT = np.uint32
# the cost model of substeps, in units of the fixed cost of predicting one ball in a part
PART_CANDIDATE_COST = 1.3  # a candidate met by the first pass
EVENT_CANDIDATE_COST = 3.4  # a candidate met by the predictions after an event (two balls)
EVENTS_PER_MEETING = 1.6  # events per step / (N x density x diameter x reach)

# stats vector: contacts, events and freezes of the balls the run owns (all of
# them, unless the step is split: split.py), whether the budget stopped it,
# every event the run resolved and every candidate it examined (what its
# budgets count), and the clusters' solves: contact updates and contacts
# solved (ticks.next_level reads them); and of the collapsed balls, those
# put to sleep stuck on a slope or a peg (rest.collapse)
S_BALL, S_WALL, S_EVENTS, S_FROZEN, S_STOPPED, S_ALL, S_WORK, S_COLLAPSED, S_UPDATES, S_SOLVED, S_STUCK = range(11)
N_STATS = 11
