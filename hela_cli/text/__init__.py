"""Reading text: keywords, dates in files and answers, time expressions in questions (pure functions)."""
