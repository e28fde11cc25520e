"""Several conversations per document set (issue 33), and a v3 library's history kept as the
first conversation of each set."""
from __future__ import annotations

import sqlite3

from app.core.library import Library, schema

NDA = "contracts-en/common-paper-mnda.pdf"
CSA = "contracts-en/common-paper-csa.pdf"


def test_conversations_of_a_set_are_listed_and_kept_apart(corpus, lib):
    a = lib.add(corpus / NDA).id
    b = lib.add(corpus / CSA).id
    lib.add_exchange([a], "Who are the parties?", "{}")
    first = lib.exchanges([a])[0].conversation_id
    second = lib.new_conversation([a])
    assert lib.exchanges([a], conversation=second) == []
    lib.add_exchange([a], "How long?", "{}")                      # the set's latest: the new one
    lib.add_exchange([a], "And the notice period?", "{}", conversation=first)
    lib.add_exchange([b, a], "Compare", "{}")
    listed = lib.conversations([a])
    assert [c.id for c in listed] == [first, second]              # the most recently used first
    assert [(c.first_question, c.exchanges) for c in listed] == [("Who are the parties?", 2), ("How long?", 1)]
    assert [e.question for e in lib.exchanges([a], conversation=first)] == [
        "Who are the parties?", "And the notice period?"]
    assert [c.first_question for c in lib.conversations([b, a])] == ["Compare"]
    lib.remove(b)
    assert lib.conversations([a, b]) == [] and len(lib.conversations([a])) == 2


def test_a_conversation_of_another_set_is_not_written_into(corpus, lib):
    a = lib.add(corpus / NDA).id
    b = lib.add(corpus / CSA).id
    other = lib.new_conversation([b])
    lib.add_exchange([a], "q", "{}", conversation=other)
    assert lib.exchanges([b]) == [] and lib.exchanges([a])[0].conversation_id != other


def test_a_v3_library_keeps_its_history_as_one_conversation_per_set(corpus, tmp_path):
    db = tmp_path / "lib.sqlite"
    con = sqlite3.connect(db, isolation_level=None)
    for script in schema.MIGRATIONS[:3]:
        for statement in schema._statements(script):
            con.execute(statement)
    con.execute("PRAGMA user_version=3")
    con.close()
    lib = Library(tmp_path / "filler.sqlite")
    a = lib.add(corpus / NDA).id
    lib.close()
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("ATTACH ? AS src", (str(tmp_path / "filler.sqlite"),))
    con.execute("INSERT INTO documents SELECT * FROM src.documents")
    con.executemany("INSERT INTO exchanges(doc_key, question, answer_json, created_at) VALUES (?,?,?,?)",
                    [(str(a), "first?", "{}", 1.0), (str(a), "second?", "{}", 2.0)])
    con.executemany("INSERT INTO exchange_docs VALUES (?,?)", [(1, a), (2, a)])
    con.execute("DETACH src")
    con.close()
    lib = Library(db)
    try:
        [conv] = lib.conversations([a])
        assert (conv.exchanges, conv.first_question) == (2, "first?")
        assert [e.conversation_id for e in lib.exchanges([a])] == [conv.id, conv.id]
        lib.add_exchange([a], "third?", "{}")                   # goes on in that conversation
        assert [e.question for e in lib.exchanges([a], conversation=conv.id)][-1] == "third?"
    finally:
        lib.close()
