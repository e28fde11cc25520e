"""A review part's reply schema, through the worker's own grammar converter and the real
llama.cpp grammar parser: quotes come before notes, at least one quote from the part's own
pages (page numbers limited to them) or the fixed "nothing" reply; a reply cut off in its
notes keeps the quotes it chose first."""
from __future__ import annotations

import json

import pytest
from llama_cpp import Llama
from llama_cpp.llama_grammar import LlamaGrammar

from app.core.answer import qa, review
from app.core.models.catalogue import load_catalogue, local_path
from app.worker.llama.chat import grammar_compiles, schema_to_gbnf


def _part():
    return review.Part(3, qa.DocRef(2, 7, "bundle.pdf"), 11, 15)


def test_part_schema_compiles_and_puts_quotes_first():
    context = ("[doc 2, p. 11]\nThe Provider will deliver the report within thirty days of the "
               "Effective Date.\n\n[doc 2, p. 12]\nEither party may terminate this Agreement on "
               "sixty days written notice to the other party.")
    schema = review.part_schema(context, "List every deadline.", _part(), "en")
    cited, nothing = schema["anyOf"]
    assert list(cited["properties"]) == ["citations", "answer"] == list(nothing["properties"])
    cites = cited["properties"]["citations"]
    assert cites["minItems"] == 1
    assert cites["items"]["properties"]["page"] == {"enum": [11, 12, 13, 14, 15]}
    assert cites["items"]["properties"]["doc"] == {"enum": [2]}
    assert any("thirty days" in q for q in cites["items"]["properties"]["quote"]["enum"])
    assert nothing["properties"]["answer"] == {"enum": [review.NOTHING["en"]]}
    gbnf = schema_to_gbnf(schema)
    assert '"11" | "12" | "13" | "14" | "15"' in gbnf
    llm = Llama(str(local_path(load_catalogue().default)), n_ctx=256, verbose=False, vocab_only=True)
    assert grammar_compiles(llm, LlamaGrammar.from_string(gbnf, verbose=False))   # llama.cpp's own parser


@pytest.mark.parametrize("cut", [40, 80])
def test_a_part_reply_cut_in_its_notes_keeps_its_quotes(cut):
    quote = "Either party may terminate this Agreement on sixty days written notice"
    reply = json.dumps({"citations": [{"doc": 2, "page": 12, "quote": quote}],
                        "answer": "13.14.13.15.17.18.19.20.21.22.23.24.25.26.27.28.29.30.31.32.33.34"})
    text, cites = qa.parse_reply(reply[: reply.index('"answer"') + cut])
    assert cites == [{"doc": 2, "page": 12, "quote": quote}]
    assert text.startswith("13.14")


def test_a_part_reply_cut_before_its_notes_keeps_its_quotes():
    # seen on pp. 9-10 of the 49-page bundle: the embedded model chose one long quote four
    # times and the reply ended inside the fourth, before its answer began
    quote = ('The Cloud Service and Software are deemed "commercial items" or "commercial computer '
             'software" according to FAR section 12.212 and DFAR section 227.7202.')
    item = json.dumps({"doc": 1, "page": 10, "quote": quote})
    reply = '{ "citations": [' + ", ".join([item] * 3) + ', { "doc": 1, "page": 10, "quote": "The Cloud Serv'
    text, cites = qa.parse_reply(reply)
    assert text == "" and cites == [{"doc": 1, "page": 10, "quote": quote}] * 3
    assert qa.parse_reply("no json here") == ("no json here", [])
