"""The ``offsetlake`` program: the product's commands (jobs.cli) and the tools' (``demo``, ``bench``).

It sits above everything else, so that the product never imports a tool: the tools add their
commands here.
"""

from __future__ import annotations

import sys

from jobs.cli.main import COMMANDS
from jobs.cli.main import main as cli_main
from jobs.tools import bench, demo

PROGRAM_COMMANDS = (*COMMANDS, demo.COMMAND, bench.COMMAND)


def main(argv: list[str] | None = None) -> int:
    return cli_main(argv, PROGRAM_COMMANDS)


if __name__ == "__main__":
    sys.exit(main())
