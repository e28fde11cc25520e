"""A page's sentences as the cards quote them: the splitter lives with the search, which
embeds the same sentences at index time (app/core/search/sentences.py)."""
from app.core.search.sentences import MAX_WORDS, Sentence, clause_name, last_clause, page_sentences

__all__ = ["MAX_WORDS", "Sentence", "clause_name", "last_clause", "page_sentences"]
