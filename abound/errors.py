"""Errors a user can cause, reported as one clear line."""


class SceneError(ValueError):
    """A scene (file, dict or argument) that abound cannot run.

    ``str(err)`` is one line naming the file, the key and the reason, e.g.
    ``configs/x.toml: [[spawn]] 1: unknown key 'restitusion' - did you mean 'restitution'?``
    """
