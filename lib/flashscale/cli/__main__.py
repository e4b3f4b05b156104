"""``python -m flashscale.cli``: the flashscale command (how the VM lab starts its guest half)."""
import sys

from . import main

sys.exit(main())
