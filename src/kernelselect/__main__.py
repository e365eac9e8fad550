"""``python -m kernelselect``: the ``kernelselect`` command."""

import sys

from .cli import main

sys.exit(main())
