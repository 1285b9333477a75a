"""`python -m sdods_rules engine`: the engine protocol on standard input and output."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "engine":
        from .protocol import main as engine

        return engine()
    if len(argv) >= 1 and argv[0] == "version":
        from . import __version__

        print(__version__)
        return 0
    sys.stderr.write("usage: python -m sdods_rules engine | version\n")
    return 2


def entry() -> int:
    """The console script `sdods-rules` (same commands as python -m sdods_rules)."""
    return main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
