"""The frozen app's entry script: the `moka` command.

The same executable is also the bundled demo server (`moka demo-server`) and every
other stdio helper Moka starts, because a frozen app has no `python -m`.
"""

from moka_shell.cli.main import entry

if __name__ == "__main__":
    entry()
