"""Errors a user can cause, reported as one clear line."""


class SceneError(ValueError):
    """A scene (file, dict or argument) that abound cannot run.

    ``str(err)`` is one line naming the file, the key and the reason, e.g.
    ``configs/x.toml: [[spawn]] 1: unknown key 'restitusion' - did you mean 'restitution'?``
    """


def read_user_file(path, name, kind, error=SceneError):
    """The bytes of a file the user named, or ``error`` with one line saying why
    not (``<name>: no such file``, ``is a directory, not a <kind>``, ``cannot read``)."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise error(f"{name}: no such file") from None
    except IsADirectoryError:
        raise error(f"{name}: is a directory, not a {kind}") from None
    except OSError as exc:
        raise error(f"{name}: cannot read: {exc.strerror or exc}") from None
