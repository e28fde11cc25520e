"""Search: FTS5 tokens, query building, BM25 index, dense vectors, fusion, document names."""
