"""The worker's progress comment, as the child writes it and the parent reads it (app.worker.protocol)."""
from app.worker import protocol


def test_progress_comment_reads_back():
    line = protocol.progress_comment(1234, 5000).decode().strip()
    assert line.startswith(":")                  # an SSE comment: OpenAI clients skip it
    assert protocol.PROGRESS_COMMENT.match(line).groups() == ("1234", "5000")


def test_metric_names_carry_the_prefix():
    names = (protocol.KV_CACHE_USAGE, protocol.KV_CACHE_USED_CELLS, protocol.PREFILL_TOKENS_PER_S,
             protocol.PROMPT_PROGRESS_TOKENS, protocol.PROMPT_PROGRESS_TOTAL)
    assert all(name.startswith(protocol.METRIC_PREFIX) for name in names)
