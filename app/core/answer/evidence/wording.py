"""The words the CLI, the window and the exports use for evidence first (one copy)."""

NOT_BACKED = "The model's summary is not backed by these passages"
NOT_ADDRESSED = "The document does not appear to address this question; the nearest passages:"
