"""QA pipeline: context building, mode choice, reply parsing, and a real llama.cpp round trip."""
from __future__ import annotations


import pytest

from app.core.answer import prompts, qa
from app.core.library import Library


@pytest.fixture
def lib_with(corpus):
    lib = Library()
    yield lambda rel: lib.add(corpus / rel), lib
    lib.close()


def test_whole_context_has_every_page_marker(lib_with):
    add, lib = lib_with
    info = add("contracts-en/common-paper-mnda.pdf")
    ctx = qa.whole_context(lib, [qa.DocRef(1, info.id, "mnda.pdf")])
    for n in range(1, info.page_count + 1):
        assert f"[doc 1, p. {n}]" in ctx


def test_retrieval_context_gives_both_documents_a_share(lib_with):
    add, lib = lib_with
    a = add("contracts-en/bonterms-dpa-v1.0.pdf")
    b = add("contracts-en/common-paper-dpa.pdf")
    refs = [qa.DocRef(1, a.id, "a.pdf"), qa.DocRef(2, b.id, "b.pdf")]
    ctx = qa.retrieval_context(lib, refs, "How quickly must a security breach be notified?", 3000)
    assert "[doc 1, p." in ctx and "[doc 2, p." in ctx
    assert qa.estimate_tokens(ctx) <= 3000


def test_the_best_passage_comes_first_marked_and_its_mark_is_never_a_quote(lib_with):
    from app.core.answer.citations import quotable
    add, lib = lib_with
    info = add("contracts-en/bonterms-psa-v1.2.pdf")
    refs = [qa.DocRef(1, info.id, "psa.pdf")]
    question = "Can either party terminate for convenience?"
    ranked = qa.ranked_hits(lib, refs, question)
    passages = qa.pick_passages(lib, ranked, 3000)
    assert len(passages) >= 2 and passages[0].page == ranked[0][1].page
    assert [p.best for p in passages] == [True] + [False] * (len(passages) - 1)
    ctx = qa.retrieval_context(lib, refs, question, 3000)
    assert ctx.startswith(f"[doc 1, p. {ranked[0][1].page}] (best match)\n") and ctx.count("(best match)") == 1
    assert not any("best match" in q for q in quotable(ctx))
    # follow-ups add passages unmarked: the first question's best stays the one marked
    assert not any(p.best for p in qa.pick_passages(lib, ranked, 3000, at_least_one=False))


def test_choose_mode_budgets_by_time():
    # (document tokens, context room, time budget, read already)
    assert qa.choose_mode(3000, 7000, 7000, cached=False) == "whole-document"
    assert qa.choose_mode(9000, 7000, 7000, cached=True) == "retrieval"      # does not fit
    assert qa.choose_mode(6000, 7000, 500, cached=False) == "retrieval"      # 6,000 tokens at 50 tok/s
    assert qa.choose_mode(6000, 7000, 500, cached=True) == "whole-document"  # KV state kept


def test_time_budget_comes_from_the_measured_speed():
    from app.core.answer.budget import time_budget_tokens
    assert time_budget_tokens(10, 215, 8192) == int(10 * 215 * 0.8)         # 2 cores, embedded model
    assert time_budget_tokens(10, 20, 8192) == 256                          # a 7B on a laptop: the floor
    assert time_budget_tokens(10, 5000, 8192) == 8192 - qa.ANSWER_TOKENS    # a GPU: the context is the limit
    assert time_budget_tokens(None, 215, 8192) == 8192 - qa.ANSWER_TOKENS   # no target: the context


class _Counting:
    """Sizes prompts like a tokenizer would (for the budget loop) and answers nothing."""
    def count_tokens(self, msgs):
        return sum(qa.estimate_tokens(m["content"]) for m in msgs) + 16


def test_retrieval_prompt_stays_within_the_time_budget_and_keeps_the_best_passage(lib_with):
    add, lib = lib_with
    info = add("contracts-en/bonterms-psa-v1.2.pdf")
    refs = [qa.DocRef(1, info.id, "psa.pdf")]
    conv = qa.Conversation()
    conv.begin([info.id], "retrieval", 600)
    q = "Can either party terminate for convenience?"
    msgs, new, used, _ = qa._build(lib, refs, q, _Counting(), conv, 7792, 600)
    assert new and used <= 600 + 200           # the best passage, cut to the budget if it must be
    best = lib.search(q, doc_ids=[info.id], k=1)[0]
    assert new[0].page == best.page
    msgs2, new2, used2, _ = qa._build(lib, refs, q, _Counting(), conv, 7792, 3000)
    assert used2 >= used


def test_follow_up_appends_to_the_prefix(lib_with):
    add, lib = lib_with
    info = add("contracts-en/bonterms-psa-v1.2.pdf")
    refs = [qa.DocRef(1, info.id, "psa.pdf")]
    conv = qa.Conversation()
    conv.begin([info.id], "retrieval", 2000)
    msgs, new, used, _ = qa._build(lib, refs, "How can the agreement be terminated?", _Counting(), conv, 7792, 2000)
    conv.add(new, "How can the agreement be terminated?", '{"answer": "x", "citations": []}', used, 10)
    msgs2, new2, used2, _ = qa._build(lib, refs, "Which law governs it?", _Counting(), conv, 7792, 2000)
    assert msgs2[:len(msgs)][:-1] == msgs[:-1] and msgs2[len(msgs) - 1] == msgs[-1]   # the prefix, unchanged
    assert msgs2[len(msgs)] == {"role": "assistant", "content": '{"answer": "x", "citations": []}'}
    added = sum(qa.estimate_tokens(p.text) for p in new2)
    assert added <= 2000 * 0.25                # at most a quarter of the first budget
    assert not {(p.page, p.text) for p in new2} & {(p.page, p.text) for p in new}


def test_parse_reply_tolerates_junk():
    assert qa.parse_reply('{"answer": "Yes.", "citations": [{"doc": 1, "page": 2, "quote": "q"}]}') == \
        ("Yes.", [{"doc": 1, "page": 2, "quote": "q"}])
    assert qa.parse_reply("no json here") == ("no json here", [])
    assert qa.parse_reply('{"answer": "x", "citations": ["bad", {"doc": 1}]}')[1] == [{"doc": 1}]


def test_parse_reply_salvages_a_reply_cut_at_the_token_limit():
    cut = '{"answer": "The term is \\"two years\\".", "citations": [{"doc": 1, "page": 3, "quote": "two years"}, {"doc": 1, "pa'
    answer, cites = qa.parse_reply(cut)
    assert answer.startswith('The term is "two years".') and cites == [{"doc": 1, "page": 3, "quote": "two years"}]


def test_question_language_and_templates():
    zh = prompts.messages("CTX", "定金有没有上限？", whole=True)
    en = prompts.messages("CTX", "Is there a cap?", whole=True)
    assert "中文" in zh[1]["content"] and "English" in en[1]["content"]
    assert zh[0] == en[0]            # same system prompt: follow-ups in either language share the prefix
    assert zh[1]["content"].startswith(en[1]["content"].split("\n\n")[0])


def test_answer_schema_offers_the_context_sentences_as_quotes(lib_with):
    add, lib = lib_with
    info = add("contracts-en/common-paper-mnda.pdf")
    context = qa.whole_context(lib, [qa.DocRef(1, info.id, "mnda.pdf")])
    schema = qa.answer_schema(context, "Who are the parties?")
    quotes = schema["properties"]["citations"]["items"]["properties"]["quote"]["enum"]
    assert len(quotes) > 20
    assert "Neither party has an obligation under this MNDA to disclose Confidential Information to the " \
           "other or proceed with any proposed transaction." in quotes
    assert prompts.answer_bound(schema) == prompts.answer_chars("en", qa.ANSWER_TOKENS)
    # the prompt's own characters per token, when it is in the question's language
    msgs = prompts.messages(context, "Who are the parties?", whole=True)
    measured = qa.answer_schema(context, "Who are the parties?", msgs, 2400)
    measured = prompts.answer_bound(measured)
    assert measured == int(qa.ANSWER_TOKENS * prompts.ANSWER_SHARE * sum(len(m["content"]) for m in msgs) / 2400) // 50 * 50
    zh = prompts.answer_bound(qa.answer_schema(context, "双方是谁？", msgs, 2400))
    assert zh == prompts.answer_chars("zh", qa.ANSWER_TOKENS) < 150     # an English prompt says nothing of Chinese
    assert prompts.ANSWER_SCHEMA["properties"]["citations"]["items"]["properties"]["quote"] == {"type": "string"}


def test_the_answer_schema_holds_the_questions_language():
    """Issue 33: the answer's first letter in the question's script (the pattern the grammar
    follows); before it only a few opening marks — figures only in English, where "30 days" is an
    answer, not in Chinese, where they let the small model invent a date on its way to a Han letter."""
    import re
    zh = re.compile(prompts.answer_pattern("zh", 100))
    en = re.compile(prompts.answer_pattern("en", 100))
    assert all(zh.fullmatch(a) for a in ("本法自2005年4月1日起施行。", "“可以”，须书面通知。", "文件没有规定。", "可以：Delaware law."))
    assert not any(zh.fullmatch(a) for a in ("The document does not say.", "2017-01-赵东", "", "可" * 101, '可"x"'))
    assert all(en.fullmatch(a) for a in ("The laws of Delaware.", "30 days' notice.", "$5,000 a month.", "(a) either party"))
    assert not any(en.fullmatch(a) for a in ("文件没有规定。", "可以。Yes", "", "a\nb"))
    schema = qa.answer_schema("[doc 1, p. 1] Some text.", "合同可以解除吗？")
    assert schema["properties"]["answer"]["pattern"] == prompts.answer_pattern("zh", prompts.answer_bound(schema))
    assert prompts.answer_schema([], 100)["properties"]["answer"].get("pattern") is None   # no language: as before


def test_a_quote_cited_to_the_wrong_document_moves_to_the_one_that_has_it(lib_with):
    add, lib = lib_with
    a = add("contracts-en/common-paper-mnda.pdf")
    b = add("contracts-en/bonterms-dpa-v1.0.pdf")
    refs = [qa.DocRef(1, a.id, "mnda.pdf"), qa.DocRef(2, b.id, "dpa.pdf")]
    quote = "Neither party has an obligation under this MNDA to disclose Confidential Information"
    [cit] = qa._verify_all(lib, refs, [{"doc": 2, "page": 4, "quote": quote}])
    assert cit.verified and cit.doc == "mnda.pdf" and cit.page == 4
    assert "document corrected from 2" in cit.note
    [bad] = qa._verify_all(lib, refs, [{"doc": 2, "page": 1, "quote": "words in neither document at all"}])
    assert not bad.verified and bad.doc == "dpa.pdf"


def test_a_sentence_said_again_is_dropped_from_the_answer():
    from app.core.answer.qa import parse_reply, without_repeats
    text, _ = parse_reply('{"answer": "It lasts one year. It lasts one year. It lasts one year.", "citations": []}')
    assert text == "It lasts one year."
    assert without_repeats("合同自双方签字之日起生效。合同自双方签字之日起生效。违约金为百分之五。") == \
        "合同自双方签字之日起生效。违约金为百分之五。"
    assert without_repeats("Yes. Yes. It lasts\ntwo years.") == "Yes. Yes. It lasts\ntwo years."   # unchanged


def test_an_answer_that_ends_in_a_loop_keeps_one_copy():
    """What the guard or the token limit cut mid-loop (real SmolLM2 answers from the quality
    benchmark) is shown as one copy; short or legitimate repeats stay."""
    from app.core.answer.qa import without_repeats
    assert without_repeats("99.9% availability target is missed, " * 2 + "99.9% availability target is missed") \
        == "99.9% availability target is missed"
    assert without_repeats("The answer is: " * 6 + "The") == "The answer is"
    assert without_repeats("It ends " + "by either party " * 5 + "by eit") == "It ends by either party"
    assert without_repeats("1.1" + ".1" * 44) == "1."
    for kept in ("Section 1.1.1 applies.", "The fees are 0 0 0 0.", "Yes. Yes. It lasts two years."):
        assert without_repeats(kept) == kept
    # the run starts mid-sentence ("the" ≠ "The"): cut at the first copy's sentence end, not mid-word
    assert without_repeats("It has 1 page, and the document is 5 pages long." + " The document is 5 pages long." * 2 +
                           " T") == "It has 1 page, and the document is 5 pages long."


def test_a_question_that_cannot_be_asked_is_refused_before_the_engine_hears_of_it(lib_with):
    """The window asks through qa.ask, not the CLI's dispatch (issue 32.12): bytes that are not
    UTF-8 (lone surrogates) and a pasted file are refused before any request."""
    from app.core.answer.question_check import BadQuestion
    add, lib = lib_with
    info = add("contracts-en/common-paper-mnda.pdf")
    refs = [qa.DocRef(1, info.id, "mnda.pdf")]

    class Silent:                       # any request at all fails the test
        def chat(self, *a, **k):
            raise AssertionError("the engine was asked")
        count_tokens = chat

    for question in ("Who signs\udcff?", "x" * 9000):
        with pytest.raises(BadQuestion):
            qa.ask(qa.Question(lib, refs, question, 8192), Silent(), qa.AskOptions(mode="retrieval"))
