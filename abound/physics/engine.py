"""The event-driven step: every contact in time order, exact parabolas between.

One source, two speeds: the reference backend runs the engine as plain
Python, the fast backend compiles it with numba (see backends.py), so it is
written in numba's subset: numpy arrays, scalars, tuples, no Python objects.

The engine is one module per concept (docs/physics.md explains how they work
together): constants, motion (clocks, modes), queue (events in time order),
grid (broad phase), predict (a ball's next events), rest (sliding, sleep,
waking, collapse), resolve (impulses), contact_solver and clusters (lasting
contacts solved together at ticks), contact_log, strips (the sorted working
copy, split steps), settle (the box guard, overlaps after edits) and loop (a
step: parts, the event loop, budgets). This module gathers them into the one
namespace a backend hands out (step, settle_overlaps, ...).
"""
from .kernels import (ANALYTIC, TOUCH_REL, V_EPS, level_exit_time, line_toi,  # noqa: F401
                      mix_restitution, normal_impulse, pair_toi)
from .roots import INF  # noqa: F401
from .constants import (  # noqa: F401
    ASLEEP, BALL_INT, BOX_LINE, CELL_SWEEPS, CLUSTER, COLLAPSE_CONTACTS, EVENTS_PER_MEETING,
    EVENT_CANDIDATE_COST, EV_BALL, EV_LEAVE, EV_TICK, EV_WALL, FREE, FROZEN, GRID_INT, HOP_GAP,
    MAX_BALL_EVENTS, MAX_CELLS_PER_BALL, MAX_EVENTS_BASE, MAX_EVENTS_PER_BALL, MAX_SUBSTEPS,
    MAX_WORK_BASE, MAX_WORK_PER_BALL, N_STATS, ORDER_TILE, PART_CANDIDATE_COST, PINNED, P_BALL_TOI,
    P_FRICTION, P_GX, P_GY, P_HEIGHT, P_MIX, P_REST_SPEED, P_WIDTH, REST_COS, ROLLING, SEGMENT,
    SLEEP_TOUCH, SLIDING, SUP_BALL, SUP_END, SUP_FACE, SUP_NONE, SWEEP_SAMPLE, S_ALL, S_BALL,
    S_COLLAPSED, S_EVENTS, S_FROZEN, S_STOPPED, S_WALL, S_WORK, TC_TIME, WATCH_AXIS, WATCH_SLOTS,
)
from .motion import (  # noqa: F401
    effective_motion, is_fixed, lasting, motion_at, roll, set_free, stop_rolling, sync,
)
from .queue import heap_new, heap_pop, heap_push, heap_reserve  # noqa: F401
from .grid import (  # noqa: F401
    boxes_meet, grid_candidates, grid_cell_balls, grid_count, grid_enter, grid_fill, grid_new,
    grid_reserve, grid_shape, keep_box, kept_box, mean_sweep, sweep_length, swept_box,
)
from .predict import (  # noqa: F401
    first_pass, has_room, predict_ball, predict_leave, predict_pair, predict_stop, predict_walls,
    reserve,
)
from .rest import (  # noqa: F401
    after_contact, collapse, fall_asleep, fixed_contacts, segment_closest, try_sleep, wake,
)
from .resolve import contact_restitution, resolve_pair, resolve_wall  # noqa: F401
from .contact_solver import solve_impulses, speculative_min_speed  # noqa: F401
from .clusters import cluster_scratch, clusters_wanted, tick, ticks_per_part  # noqa: F401
from .contact_log import LOG_FIELDS, contact_log, log_contact  # noqa: F401
from .strips import (  # noqa: F401
    gather, inner_bands_agree, scatter, spatial_order, split_band, split_histogram, strip_members,
)
from .settle import (  # noqa: F401
    clamp_ball_into_box, clamp_into_box, push_off_segments, settle_overlaps,
)
from .loop import (  # noqa: F401
    event_budget, event_loop, finish, run_events, run_parts, step, step_logged, substeps,
    work_budget,
)
