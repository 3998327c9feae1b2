"""The ``kernel`` decorator: identity for the reference backend, numba for the fast one.

The engine's modules import ``kernel`` from here with a relative import. The
fast backend imports the same files a second time as the package
``abound.physics._compiled`` (see backends.py); in that copy this module's name
says so and ``kernel`` compiles with numba. One source, two speeds.
"""
if __name__.split(".")[-2] == "_compiled":
    from numba import njit

    def kernel(func):
        return njit(cache=True, nogil=True, error_model="numpy")(func)
    COMPILED = True
else:
    def kernel(func):
        return func
    COMPILED = False
