"""The physics core: exact event-driven collisions under gravity.

- :mod:`~abound.physics.world`: the state arrays.
- :mod:`~abound.physics.roots`: polynomial root isolation (plain Python, numba-compilable).
- :mod:`~abound.physics.kernels`: scalar time-of-impact and response kernels.
- :mod:`~abound.physics.engine`: the event-driven step (queue, broad phase, rest).
- :mod:`~abound.physics.backends`: the registry; ``reference`` runs the engine as
  plain Python, ``fast`` runs the very same source compiled by numba.
"""
