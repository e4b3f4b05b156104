"""Print the script that completes flashscale's commands, options and their choices in your shell.

Load it from your shell's start-up file: bash (~/.bashrc) and zsh (~/.zshrc): eval "$(flashscale completion bash)"
(or zsh); fish: flashscale completion fish | source (in ~/.config/fish/config.fish). The script asks flashscale
itself what comes next (argcomplete), so it follows every command and option as they are. Guide:
docs/reference/commands.md#shell-completion.
"""
from __future__ import annotations

import argparse

SHELLS = ("bash", "zsh", "fish")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, metavar="SHELL", help="the shell to complete in: bash, zsh or fish")


def main(args: argparse.Namespace) -> int:
    import argcomplete

    print(argcomplete.shellcode(["flashscale"], shell=args.shell), end="")
    return 0


def complete(parser: argparse.ArgumentParser) -> None:
    """Answer the shell's completion request and exit, where the shell's script made one (``_ARGCOMPLETE`` in the
    environment); argcomplete is imported only then, so nothing else pays for it."""
    import os

    if "_ARGCOMPLETE" in os.environ:
        import argcomplete

        argcomplete.autocomplete(parser)
