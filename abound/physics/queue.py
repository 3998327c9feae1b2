"""The event queue: a calendar of time buckets whose current bucket is a binary heap.

Part of the event-driven engine (engine.py gathers it; docs/physics.md explains it).
"""
import numpy as np

from ._jit import allocating, inlined, kernel


# --------------------------------------------------------------------------
# event queue: a calendar of buckets in time, the earliest one in a heap.
# H = (time (cap,) and ints (cap, 7) of each event slot, meta (4,), next
#      slot (cap,) in a bucket's list or in the free list, first slot of each
#      bucket (buckets,), the heap's slots (cap,), buckets per second (1,)).
# A part's time is cut into equal buckets (about one per two balls); an
# event goes onto the list of its bucket, in any order, and only the current
# bucket's events are kept in a binary heap, ordered by (time, tie key of a,
# kind, tie key of b). When it runs empty the next bucket's list moves into
# it. With an event or two per bucket a push costs a store and a pop a short
# heap: a heap of all events (thousands deep) spent a tenth of a hot gas's
# step comparing times. Many events at one time (a pile's resting contacts)
# share a bucket and its heap, which keeps them in order at log cost.
# meta: events queued, first free slot, current bucket, events in the heap.
# ints columns: tie key of a, kind, tie key of b, a, b, count of a, count of b.
# Tie keys are the balls' public indices (the step works on a spatially
# sorted copy, see step), so ties resolve in the documented order. A bucket's
# index only grows with the time, so events leave in that order exactly.
# --------------------------------------------------------------------------
@kernel
def _sooner(H, s, r):
    """Does the event in slot s come before the one in slot r?"""
    ht, ev = H[0], H[1]
    if ht[s] != ht[r]:
        return ht[s] < ht[r]
    for c in range(3):
        if ev[s, c] != ev[r, c]:
            return ev[s, c] < ev[r, c]
    return False


@allocating
def heap_new(cap, buckets, horizon):
    """An empty queue with room for cap events, for times in [0, horizon] s."""
    nxt = np.arange(1, cap + 1, dtype=np.int64)
    nxt[cap - 1] = -1  # the free slots, in a list
    scale = np.zeros(1, dtype=np.float64)
    if horizon > 0.0:
        scale[0] = buckets / horizon
    meta = np.zeros(4, dtype=np.int64)
    meta[2] = -1  # no bucket in the heap yet
    return (np.empty(cap, dtype=np.float64), np.empty((cap, 7), dtype=np.int64), meta, nxt,
            np.full(buckets, -1, dtype=np.int64), np.empty(cap, dtype=np.int64), scale)


@allocating
def heap_reserve(H, extra):
    """H with room for extra more events (larger copies when needed)."""
    ht, ev, meta, nxt, head, heap, scale = H
    cap = len(ht)
    if meta[0] + extra <= cap:
        return H
    cap2 = max(2 * cap, meta[0] + extra)
    ht2 = np.empty(cap2, dtype=np.float64)
    ev2 = np.empty((cap2, 7), dtype=np.int64)
    nxt2 = np.empty(cap2, dtype=np.int64)
    heap2 = np.empty(cap2, dtype=np.int64)
    ht2[:cap] = ht
    ev2[:cap] = ev
    nxt2[:cap] = nxt
    heap2[:meta[3]] = heap[:meta[3]]
    for s in range(cap, cap2 - 1):
        nxt2[s] = s + 1
    nxt2[cap2 - 1] = meta[1]
    meta[1] = cap
    return ht2, ev2, meta, nxt2, head, heap2, scale


@kernel
def _heap_up(H, s):
    """Put slot s into the current bucket's heap."""
    meta, heap = H[2], H[5]
    k = meta[3]
    meta[3] = k + 1
    while k > 0:
        parent = (k - 1) >> 1
        if not _sooner(H, s, heap[parent]):
            break
        heap[k] = heap[parent]
        k = parent
    heap[k] = s


@kernel
def heap_push(H, t, a, kind, b, ca, cb, key_a, key_b):
    """Insert an event; the caller has reserved room (heap_reserve)."""
    ht, ev, meta, nxt, head, heap, scale = H
    s = meta[1]
    meta[1] = nxt[s]
    meta[0] += 1
    ht[s] = t
    ev[s, 0] = key_a
    ev[s, 1] = kind
    ev[s, 2] = key_b
    ev[s, 3] = a
    ev[s, 4] = b
    ev[s, 5] = ca
    ev[s, 6] = cb
    x = t * scale[0]
    last = len(head) - 1
    if not x < last:  # (also nan)
        bucket = last
    elif x > 0.0:
        bucket = int(x)
    else:
        bucket = 0
    if bucket <= meta[2]:
        _heap_up(H, s)  # the current bucket (or, by round-off, before it)
    else:
        nxt[s] = head[bucket]
        head[bucket] = s


@inlined
def heap_pop(H):
    """Remove the first event (the queue holds one); returns (t, a, kind, b, ca, cb)."""
    ht, ev, meta, nxt, head, heap, scale = H
    while meta[3] == 0:  # the next bucket that holds events goes into the heap
        meta[2] += 1
        s = head[meta[2]]
        head[meta[2]] = -1
        while s >= 0:
            following = nxt[s]
            _heap_up(H, s)
            s = following
    s = heap[0]
    last = meta[3] - 1
    meta[3] = last
    if last > 0:  # the heap's last slot moves into the hole at the root and down
        r = heap[last]
        k = 0
        while True:
            child = 2 * k + 1
            if child >= last:
                break
            if child + 1 < last and _sooner(H, heap[child + 1], heap[child]):
                child += 1
            if not _sooner(H, heap[child], r):
                break
            heap[k] = heap[child]
            k = child
        heap[k] = r
    meta[0] -= 1
    nxt[s] = meta[1]
    meta[1] = s
    return ht[s], ev[s, 3], ev[s, 1], ev[s, 4], ev[s, 5], ev[s, 6]
