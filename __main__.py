"""`python -m chainrule serve`: the same command line as the `chainrule` script."""

import sys

from chainrule.app.cli import main

sys.exit(main())
