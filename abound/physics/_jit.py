"""The kernel decorators: identity for the reference backend, numba for the fast one.

The engine's modules import them from here with a relative import. The fast
backend imports the same files a second time as the package
``abound.physics._compiled`` (see backends.py); in that copy this module's name
says so and the decorators compile with numba. One source, two speeds.

``kernel`` is for functions that allocate nothing: they are compiled without
numba's reference counting (``_nrt=False``). With it, every array a function
receives or takes out of a tuple costs an atomic increment and decrement on
each call - several times the cost of the arithmetic in the engine's small
hot functions (a contact test costs 3 ns without, 80 ns with). Numba refuses
to compile an allocation in such a function, so a mistake cannot slip by.
``allocating`` is for the few functions that create arrays (the step, the
queue and grid set-up and growth).

``inlined`` is a ``kernel`` that numba pastes into its callers. numba passes
a tuple of arrays by value, every array as seven to nine machine words, so a
call that takes the ball state, the walls and the grid (about 35 arrays)
copies some 300 words before doing anything: the handful of functions an
event runs through (predict a ball, its walls, its grid cells, resolve the
contact, pop the queue) spent most of their time on that. Inlined, the step
of a 10,000-ball hot gas takes 16 ms instead of 25. Not for functions with
several hot call sites and a loop of their own (heap_push: the copies crowd
the first pass's loop and it gets slower).
"""
if __name__.split(".")[-2] == "_compiled":
    from numba import njit

    def kernel(func):
        return njit(cache=True, nogil=True, error_model="numpy", _nrt=False)(func)

    def allocating(func):
        return njit(cache=True, nogil=True, error_model="numpy")(func)

    def inlined(func):  # a kernel pasted into its callers (see above)
        return njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")(func)
    COMPILED = True
else:
    def kernel(func):
        return func

    allocating = kernel
    inlined = kernel
    COMPILED = False
