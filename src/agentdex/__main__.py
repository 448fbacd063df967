"""``python -m agentdex`` runs the CLI."""

from agentdex.cli import main

if __name__ == "__main__":
    main()
