"""Facts that change: the rules that decide whether a later statement replaces an earlier one
(:mod:`~hela_cli.facts.rules`), their detection at write time (:mod:`~hela_cli.facts.detect`) and what recall
does with the marks (:mod:`~hela_cli.facts.recall`). The marks are stored by :mod:`hela_cli.store.supersession`."""
