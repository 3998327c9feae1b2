"""Other engines on abound's scenes, for comparison (optional: ``pip install "abound[compare]"``).

``pymunk_world.PymunkWorld`` rebuilds a :class:`abound.Simulation`'s balls,
walls, gravity and restitution in a pymunk space; ``bench`` is
``abound bench --compare pymunk``. Nothing here is imported by ``import abound``.
"""
