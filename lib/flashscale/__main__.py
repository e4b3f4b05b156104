"""``python -m flashscale``: the flashscale command, as ``flashscale`` (``cli.main``)."""
import sys

from . import cli

sys.exit(cli.main())
