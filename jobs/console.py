"""The ``offsetlake`` program: the product's commands (jobs.cli) and the tools' (``demo``, ``bench``).

It sits above everything else, so that the product never imports a tool: the tools add their
commands here. A stage command on a lake that a shared session serves (jobs.cli.shared_session)
is handed to it before anything heavy is imported, and so are the words to a running session.
"""

from __future__ import annotations

import sys

from jobs.cli.shared_session import delegate, quick


def program_commands() -> tuple:
    from jobs.cli.main import COMMANDS
    from jobs.tools import bench, demo

    return (*COMMANDS, demo.COMMAND, bench.COMMAND)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    served = quick(argv)
    if served is None:
        served = delegate(argv)
    if served is not None:
        return served
    from jobs.cli.main import main as cli_main

    return cli_main(argv, program_commands())


if __name__ == "__main__":
    sys.exit(main())
