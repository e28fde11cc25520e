"""The words the CLI, the window and the exports use for evidence first (one copy)."""

NOT_BACKED = "The model's summary is not backed by these passages"
NOT_ADDRESSED = "The document does not appear to address this question; the nearest passages:"
# The passages are on the question's topic but set no figure, period or place of the kind it asks for
# (addressed.value_missing): what a lawyer asking "how many days?" needs to hear.
NO_FIGURE = "The passages on this set no figure, period or place for what is asked; the nearest passages:"


def not_addressed(no_figure: bool) -> str:
    return NO_FIGURE if no_figure else NOT_ADDRESSED
