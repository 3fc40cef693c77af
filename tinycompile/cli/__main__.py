"""``python -m tinycompile.cli``."""

import sys

from . import main

sys.exit(main())
