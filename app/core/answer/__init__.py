"""Answering: context building, prompts and schema, verified citations, reading memory, streamed-answer parsing."""
