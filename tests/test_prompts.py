"""Prompt A.2 as the paper wrote it, hela's optional departures, and the answer post-processing."""

from hela_cli.answering.prompts import (ABSTAIN_SENTENCE, GUARD_SENTENCE, AnswerPrompt, answer_messages, clean_answer)

MEMS = [{"timestamp": 1683504000.0, "speaker": "Jonas", "text": "My dog is called Tofu."},
        {"timestamp": 1684540800.0, "speaker": "Maya", "text": "Oma looked after Tofu."}]

PAPER_SYSTEM = ('You are an AI assistant with access to conversation history. Answer questions concisely using '
                'the provided context. For dates, use format "15 July 2023".')
PAPER_INSTRUCTION = ("Provide an extremely concise answer using concrete entities. Output only the answer "
                     "content, without labels.")


def test_paper_text_verbatim():
    msgs = answer_messages("What is the dog's name?", MEMS, [], AnswerPrompt())
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert msgs[0]["content"] == PAPER_SYSTEM
    body = msgs[1]["content"]
    # the blocks, then the question, then the paper's instruction, last
    assert body.endswith("Question: What is the dog's name?\n\n" + PAPER_INSTRUCTION)
    assert body.index("<EPISODIC MEMORIES>") < body.index("[8 May 2023] Jonas: My dog is called Tofu.")
    assert "(none)" not in body and "<SEMANTIC KNOWLEDGE>" not in body  # empty blocks are left out


def test_departures_are_switches():
    msgs = answer_messages("Q?", MEMS, [], AnswerPrompt(guard=True, abstain=True, few_words=True, example=True))
    assert msgs[0]["content"] == PAPER_SYSTEM + " " + GUARD_SENTENCE
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[2]["content"] == "Miso"
    assert msgs[3]["content"].endswith("(a few words) using concrete entities. Output only the answer content, "
                                       "without labels. " + ABSTAIN_SENTENCE)


def test_clean_answer():
    assert clean_answer("\nAnswer: Tofu\nQuestion: more", tidy=False) == "Tofu"
    assert clean_answer("Jonas: Tofu", MEMS, tidy=True) == "Tofu"
    assert clean_answer("[8 May 2023] Maya: Oma", MEMS, tidy=True) == "Oma"
    assert clean_answer("Paris: the capital", MEMS, tidy=True) == "Paris: the capital"  # not a speaker
    assert clean_answer("Jonas:", MEMS, tidy=True) == "Jonas:"  # nothing else left
    assert clean_answer("Jonas: Tofu", MEMS, tidy=False) == "Jonas: Tofu"
    assert clean_answer("Tofu, 15 July 2023", MEMS, tidy=True, drop_example_date=True) == "Tofu"
    assert clean_answer("15 July 2023", MEMS, tidy=True, drop_example_date=True) == "15 July 2023"
    july = [{"timestamp": 1689379200.0, "speaker": "Maya", "text": "x"}]
    assert clean_answer("Tofu, 15 July 2023", july, drop_example_date=True) == "Tofu, 15 July 2023"
