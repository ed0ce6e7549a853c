"""Background prompts: what people ask a coding agent that is about no project in particular. The prompt
hook's relevance decision (:mod:`hela_cli.mechanics.relevance`) scores a space's memories against these to
learn how close "nothing to do with this space" comes in that space; a memory is topical evidence for a
prompt only when the prompt comes closer to it than these do.

Written for this purpose (issue 52), apart from the benchmark's prompts (``benchmarks/agents/relevance``),
which no entry here repeats or paraphrases. Pure data."""

from __future__ import annotations

BACKGROUND: tuple[str, ...] = (
    # far from software
    "What is the tallest mountain in Africa?",
    "How do bees make honey?",
    "Give me a quick recipe for tomato soup.",
    "Who wrote Pride and Prejudice?",
    "What's the time difference between Tokyo and London?",
    "Explain photosynthesis to a ten-year-old.",
    "How many grams are in a pound?",
    "Write a short poem about autumn leaves.",
    "What are the rules of chess castling?",
    "Why do cats purr?",
    "What is the population of Canada?",
    "Tell me about the history of the printing press.",
    # coding, no project
    "How do I reverse a list in Python?",
    "What is a closure in JavaScript?",
    "Write a function that checks whether a number is prime.",
    "Explain recursion with a simple example.",
    "What is the difference between a process and a thread?",
    "How do I parse JSON in Java?",
    "What is dependency injection?",
    "How does a hash map work internally?",
    "Write a binary search in C.",
    "What are the SOLID principles?",
    "How do I make an HTTP request in Go?",
    "Explain big O notation.",
    "What is the difference between SQL and NoSQL databases?",
    "How do I write a regular expression for an email address?",
    "What is a race condition and how do I avoid it?",
    "How do promises work in JavaScript?",
    "How do I sort a dictionary by value in Python?",
    "What is the difference between an interface and an abstract class in Java?",
    # shell, git, tools
    "How do I create a new git branch and switch to it?",
    "How do I see the commit history of a repository?",
    "How do I revert a pushed commit?",
    "How do I resolve a merge conflict?",
    "How do I list running processes on Linux?",
    "How do I find a file by name from the command line?",
    "How do I make a shell script executable?",
    "How do I check my IP address in the terminal?",
    "How do I install a package with apt?",
    "What does the pipe operator do in bash?",
    "How do I create a virtual machine with Vagrant?",
    "How do I push a Docker image to a registry?",
    # small talk
    "Hello, how's it going?",
    "Thank you, you're very kind.",
    "I'm feeling a bit stressed today.",
    "What's up?",
    "Do you have a favorite movie?",
    "Good night, talk to you later.",
    "That's funny, tell me another one.",
    "I love sunny days like this.",
    # chores
    "Write an email inviting my team to lunch on Friday.",
    "Help me write a thank-you card for my teacher.",
    "Make a grocery list for a barbecue.",
    "Draft a message to reschedule my doctor's appointment.",
    "Write a short introduction of myself for a new job.",
    "Plan a weekend trip to the mountains.",
    "Summarize the pros and cons of renting versus buying a home.",
    "Write a polite follow-up email after a job interview.",
    "Create a workout plan for three days a week.",
    "Help me name my new puppy.",
)
