"""``python -m abound`` is the ``abound`` command."""
import sys

from abound.cli import main

sys.exit(main())
