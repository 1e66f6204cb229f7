"""Command line: python -m model {list,translate,inspect,train,...}; the commands live in model/cli/."""

import sys

from .cli.main import main

if __name__ == "__main__":
    sys.exit(main())
