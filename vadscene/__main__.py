"""``python -m vadscene``: the ``vadscene`` command, for an environment whose scripts folder is
not on PATH."""

from vadscene.cli import main

if __name__ == "__main__":
    main()
