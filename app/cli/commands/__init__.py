"""Every `pagewise` command, one module each: the command's name → the function that runs it,
which returns (data for --json, text for people), or (None, "") when it printed nothing."""
from app.cli.commands import ask, compare, diff, doctor, gui, index, library, models, plan, read, retrieve, review, settings

COMMANDS = {
    "gui": gui.run,
    "ask": ask.run,
    "read": read.run,
    "retrieve": retrieve.run,
    "compare": compare.run,      # clauses side by side, evidence first
    "diff": diff.run,            # what changed between two versions
    "index": index.run,
    "doctor": doctor.run,
    "plan": plan.run,
    "models": models.run,        # list|pull|verify|import|remove
    "settings": settings.run,    # get|set|set-secret
    "review": review.run,
    "library": library.run,      # list|remove
}
