"""abound: balls bouncing under constant gravity, resolved exactly.

The physics core (:mod:`abound.physics`, :class:`Simulation`) knows nothing of
screens: ``import abound`` never imports pyglet. The front end lives in
:mod:`abound.render` and only reads the state.
"""
from abound.errors import BlackHoleWarning, EscapeWarning, JamWarning, SceneError
from abound.physics.backends import CompileNotice
from abound.simulation import Simulation, StepStats
import abound.scene  # noqa: F401,E402  (gives Simulation.from_config its scene builder)
import abound.resources  # noqa: F401,E402  (abound.resources.config_path(...), as docs/api.md shows it)

__all__ = ["Simulation", "StepStats", "SceneError", "CompileNotice", "BlackHoleWarning", "EscapeWarning", "JamWarning", "__version__"]
__version__ = "0.1.0"
