"""The answer loop guard: what counts as a loop, where the answer string is, and that it
forces the closing quote on the real model's vocabulary (and leaves other steps alone)."""
from __future__ import annotations

import numpy as np

from app.worker.llama.loop_guard import AnswerLoopGuard, answer_body, looping
from tests.support.llama_inproc import new_llama

LOOP = "The document has 5 pages. The document is 5 pages long. The document is 5 pages long. "


def test_a_sentence_said_again_or_a_phrase_come_three_times_is_a_loop():
    assert looping(LOOP)
    assert not looping(LOOP.rstrip(". ") )                       # the copy is not finished yet
    assert looping("It may be ended by either party by either party by either party by either party "
                   "by either party by either party")
    assert looping("合同自双方签字之日起生效。合同自双方签字之日起生效。")
    assert looping("1." * 50) and not looping("1." * 40)             # 90 characters before it counts
    assert not looping("Yes. Yes. ")                              # too short to call a loop
    assert not looping("The Provider notifies within 48 hours. The Customer may audit once a year. ")


def test_only_the_answer_string_is_watched():
    assert answer_body('{"answer": "It says \\"no\\" twice') == 'It says \\"no\\" twice'
    assert answer_body('{"answer": "Done.", "citations": [{"doc": 1') is None
    assert answer_body('{"answ') is None


def test_the_guard_forces_the_closing_quote_once_the_answer_loops(model_path):  # noqa: F811
    llm = new_llama(model_path, n_ctx=512)
    prompt = llm.tokenize(b"Answer in JSON.", add_bos=True)
    guard = AnswerLoopGuard(llm, len(prompt))
    scores = np.random.default_rng(0).normal(size=llm.n_vocab()).astype(np.float32)

    fine = np.array(prompt + llm.tokenize(b'{"answer": "The document is 5 pages long.', add_bos=False))
    assert np.array_equal(guard(fine, scores.copy()), scores)      # no loop: untouched

    looped = np.array(prompt + llm.tokenize(('{"answer": "' + LOOP).encode(), add_bos=False))
    forced = guard(looped, scores.copy())
    assert int(np.argmax(forced)) == guard.quote and np.isinf(forced).sum() == llm.n_vocab() - 1
    assert llm.detokenize([guard.quote]) == b'"' and guard.fired
    llm.close()
