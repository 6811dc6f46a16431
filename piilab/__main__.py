"""`python -m piilab` runs the command line."""

import sys

from piilab.cli import main

sys.exit(main())
