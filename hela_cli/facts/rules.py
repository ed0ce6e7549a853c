"""Does a new statement replace an earlier one? Pure, model-free decision helpers for supersession
(:mod:`hela_cli.facts.detect` finds the candidates and writes the marks).

Two kinds of evidence, surest first:

* a **change cue** whose object the earlier memory names: "we replaced vLLM with SGLang" against "our
  model server is vLLM 0.6"; "switched from X to Y", "X instead of Y", "no longer X", "moved X to Y";
* a **slot** both texts fill with different values: a version of the same named thing ("Postgres 14" ->
  "Postgres 16"), a port, a host, a ``key=value`` setting, an owner, a count of the same thing ("four
  short stories" -> "seven short stories").

What vetoes a cue: a hypothetical or plan ("if we switched", "thinking about moving", a question), a
quoted or reported old message ("you said", "> ..."), someone else's life ("my sister moved to ..."),
and for slots without a cue additive words ("another", "a second", "also").

Over-invalidation is the failure to fear, so :func:`decide` says "superseded" only with a cue tied to the
earlier text (or a differing slot together with a cue) and "possible" (which hides nothing) otherwise.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass

from hela_cli.facts.vocab import (EXCLUSIVE, LIFE_ANCHORS, LIFE_EXCLUSIVE, VOCAB, life_changes, life_states,
                                  other_subject, typed_values, vocab_values)
from hela_cli.text.keywords import STOP_WORDS, keywords, stem, tokens

# ----------------------------------------------------------------------------------------------- cues

_TOK = r"[\w@.+/#$€£-]+(?::[\w@.+/#$€£-]+)*"   # a token; a colon only inside it (host:port), not "3.0:"
_VAL = r"[\w@.+:/#&-]+(?:,?\s+[\w@.+:/#&-]+){0,3}?"   # a value: up to four word-ish tokens, lazily
_NEW = r"(?P<new>[\w@.+:/#$€£~-]+(?:\s+[\w@.+:/#$€£~-]+){0,2})"   # the new value: its first words
_END = r"(?=\s*(?:[,;:!?)]|\.(?:\s|$)|\s(?:because|since|after|last|this|yesterday|today|and|but|so|as|which|"\
       r"now|instead|anymore|any\s+more)\b|$))"
_END_OBJ = r"(?=\s*(?:[,;:!?)]|\.(?:\s|$)|$)|\s(?:because|since|after|last|this|yesterday|today|and|but|so|as|" \
           r"which|now|instead|anymore|for|with|to|from|at|in|on|by|onto|into)\b)"   # an object ends at a preposition too

#: explicit changes that name the old value (group ``old``) and often the new one (``new``)
_LINKED = [
    ("replace", re.compile(r"\b(?:replac(?:e|ed|ing)|swap(?:ped|ping)?(?:\s+out)?|ditch(?:ed|ing)?|dropp(?:ed|ing)|"
                           r"trad(?:ed|ing)(?:\s+in)?)\s+(?:our\s+|the\s+|my\s+)?(?P<old>" + _VAL + r")\s+"
                           r"(?:with|for|by|in\s+favou?r\s+of)\s+" + _NEW, re.I)),
    ("from_to", re.compile(r"\b(?:switch(?:over)?|move|migration|transition|upgrade|port|rewrite|cut-?over|jump|"
                           r"switch(?:ed|ing)?|mov(?:ed|ing)|migrat(?:e|ed|ing)|chang(?:e|ed|ing)|upgrad(?:ed|ing)|"
                           r"downgrad(?:ed|ing)|went|go(?:ne)?|transition(?:ed|ing)|port(?:ed|ing)|bump(?:ed|ing)|"
                           r"relocat(?:ed|ing)|renam(?:ed|ing)|convert(?:ed|ing)|rewr(?:ote|itten)|shift(?:ed|ing)|"
                           r"transferr(?:ed|ing)|lower(?:ed|ing)|rais(?:ed|ing)|reduc(?:ed|ing)|increas(?:ed|ing)|decreas(?:ed|ing)|"
                           r"cut|dropp(?:ed|ing)|extend(?:ed|ing)|shorten(?:ed|ing)|doubl(?:ed|ing)|halv(?:ed|ing)|"
                           r"updat(?:ed|ing)|tun(?:ed|ing)|adjust(?:ed|ing)|rerout(?:ed|ing)|redirect(?:ed|ing)|scal(?:ed|ing)|resiz(?:ed|ing)|"
                           r"grew|grown|shr[au]nk|expand(?:ed|ing)|lift(?:ed|ing)|capp(?:ed|ing)|trimm(?:ed|ing)|push(?:ed|ing)|"
                           r"pull(?:ed|ing)|brought|restor(?:ed|ing)|revert(?:ed|ing)|roll(?:ed|ing)\s+back)\b"
                           r"(?:\s+[\w'-]+){0,4}?\s+from\s+(?P<old>" + _VAL + r")\s+"
                           r"(?:to|over\s+to|into|onto)\s+" + _NEW, re.I)),
    ("from_to", re.compile(r"(?P<old>\b" + _TOK + r"(?:\s+" + _TOK + r")?)\s*(?:->|→|=>|⇒|-->|—>)\s*" + _NEW, re.I)),
    # "Pool size: from 10 to 25", "timeout from 30s to 10s" (no verb; the old value holds a number)
    ("from_to", re.compile(r"(?:^|[:(,;-]\s*|\b(?:is|are|was|now|size|limit|timeout|count|number|rate|interval|"
                           r"retention|default|ttl)\s+)from\s+(?P<old>[\w@.+/#$€£-]*\d[\w@.+/#$€£-]*(?:\s+[a-z]+)?)\s+"
                           r"(?:to|→|->)\s+" + _NEW, re.I)),
    # "SQLAlchemy was 1.4, now 2.0"; "used to be X, now Y"
    ("from_to", re.compile(r"\b(?:was|were|used\s+to\s+be)\s+(?P<old>" + _VAL + r")\s*[,;]\s*(?:and\s+|but\s+)?(?:it's\s+|is\s+|"
                           r"it\s+is\s+|they're\s+|are\s+)?now\s+(?:on\s+|at\s+)?" + _NEW, re.I)),
    # "the Jenkins to GitHub Actions migration is done"
    ("from_to", re.compile(r"\b(?P<old>[\w@.+-]+(?:\s+[\w@.+-]+)?)\s+to\s+(?P<new>[\w@.+-]+(?:\s+[\w@.+-]+)?)\s+"
                           r"(?:migration|move|switch|switchover|upgrade|cut-?over|port|transition)\b", re.I)),
    # "Linear is the new Jira"
    ("replace", re.compile(r"(?P<new>\b[\w@.+-]+(?:\s+[\w@.+-]+)?)\s+is\s+the\s+new\s+(?P<old>[\w@.+-]+)" + _END_OBJ, re.I)),
    # "X's out, Y's in"; "out with X, in with Y"
    ("from_to", re.compile(r"(?P<old>\b[\w@.+-]+(?:\s+[\w@.+-]+)?)(?:'s|\s+is|\s+are)?\s+out\s*[,;/]\s*(?:and\s+)?"
                           r"(?P<new>[\w@.+-]+(?:\s+[\w@.+-]+)?)(?:'s|\s+is|\s+are)?\s+in\b|\bout\s+with\s+(?:the\s+)?"
                           r"(?P<old2>[\w@.+-]+(?:\s+[\w@.+-]+)?)\s*[,;]\s*in\s+with\s+(?:the\s+)?(?P<new2>[\w@.+-]+)", re.I)),
    ("from_to", re.compile(r"(?P<new>[\w@.+:/#$€£-]+)\s*,?\s*\(?\b(?:up|down)\s+from\s+(?P<old>" + _VAL + r")" + _END_OBJ,
                           re.I)),
    ("from_to", re.compile(r"\((?:was|previously|formerly|before:?|used\s+to\s+be)\s+(?P<old>[^()]{1,40})\)", re.I)),
    # "..., previously X" / "... - formerly X" (no parentheses)
    ("from_to", re.compile(r"(?:,|\s[-–—])\s*(?:previously|formerly|was\s+previously|before\s+that|until\s+now)\s+(?P<old>" + _VAL + r")"
                           + _END_OBJ, re.I)),
    # "we went with Y over X", "opted for Y over X"
    ("instead", re.compile(r"\b(?:went\s+with|go(?:ing)?\s+with|chose|picked|opted\s+for|settled\s+on|standardi[sz]ed\s+on|"
                           r"prefer(?:red)?)\s+(?:the\s+)?(?P<new>[\w@.+-]+(?:\s+[\w@.+-]+)?)\s+over\s+(?:the\s+|our\s+)?"
                           r"(?P<old>" + _VAL + r")" + _END_OBJ, re.I)),
    # "goodbye X, hello Y" (the hello said: "Bye Joanna! Take care!" ends a chat, it retires nothing)
    ("from_to", re.compile(r"(?:^|[,;:!.]\s*)(?:good-?bye|bye(?:\s+bye)?|farewell(?:\s+to)?|so\s+long)\s*,?\s+(?:the\s+|our\s+)?"
                           r"(?P<old>[\w@.+-]+(?:\s+[\w@.+-]+)?)\s*[,;.!]+\s*(?:and\s+)?(?:hello|hi|welcome)\s*,?\s+(?:to\s+)?"
                           + _NEW, re.I)),
    ("retire", re.compile(r"\b(?:mov(?:ed|ing)|migrat(?:ed|ing)|switch(?:ed|ing)|port(?:ed|ing)|took|taken|get(?:ting)?|got)\s+"
                          r"(?:[\w'-]+\s+){0,4}?(?:off(?:\s+of)?|away\s+from|out\s+of)\s+(?:our\s+|the\s+)?(?P<old>" + _VAL + r")" + _END_OBJ,
                          re.I)),
    ("retire", re.compile(r"\b(?:we|we've|we\s+have|the\s+team|everyone|everybody)\s+(?:all\s+|finally\s+|fully\s+)?"
                          r"(?:moved|migrated|switched|transitioned|ported)\s+(?:away\s+)?from\s+(?:our\s+|the\s+)?"
                          r"(?P<old>" + _VAL + r")(?=\s*(?:[,;:!)]|\.(?:\s|$)|$)|\s(?:because|since|after|last|this|yesterday|"
                          r"today|and|but|so|as|which|now|in|on|at|by|over)\b)(?![^.;]*\bto\b)", re.I)),
    ("replace", re.compile(r"\brenam(?:ed|ing)\s+(?:the\s+|our\s+)?(?P<old>" + _VAL + r")\s+(?:to|as)\s+" + _NEW, re.I)),
    ("replace", re.compile(r"(?P<new>\b[\w@.+-]+(?:\s+[\w@.+-]+)?)\s+(?:now\s+)?(?:replaces|replaced|supersedes|superseded|"
                           r"took\s+over\s+from|takes\s+over\s+from|succeeds|succeeded)\s+(?:our\s+|the\s+|my\s+)?"
                           r"(?P<old>" + _VAL + r")" + _END_OBJ, re.I)),
    ("instead", re.compile(r"(?P<new>[\w@.+:/#-]+)(?:\s+now)?\s+(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?P<old>" + _VAL + r")" + _END_OBJ,
                           re.I)),
    ("instead", re.compile(r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?P<old>" + _VAL + r")\s*,\s*"
                           r"[a-z]+\b", re.I)),
    ("drop", re.compile(r"(?P<new>[\w@.+:/#-]+)\s*,\s*not\s+(?P<old>" + _VAL + r")\s*(?:[,;.!]|$)", re.I)),
    ("drop", re.compile(r"(?:^|[,:;.!]\s*|\b(?:actually|so|ok|okay|then|and)\s*,?\s+)no\s+(?!(?:worries|worry|problems?|prob|idea|way|thanks|need|"
                        r"doubt|rush|pressure|big\s+deal|clue|offen[cs]e|kidding|sweat|matter|one|time|wonder|luck|chance|"
                        r"longer|change|changes)\b)(?:more\s+)?(?P<old>"
                          r"[\w@.+-]+(?:\s+[\w@.+-]+)??)\s*(?:please|at\s+all|after\s+all|anymore|for\s+now)?\s*"
                          r"(?:[,;.!]|$)", re.I)),
    ("no_longer", re.compile(r"\b(?:no\s+longer|not\s+(?:anymore|any\s+more))\s+(?P<old>" + _VAL + r")" + _END, re.I)),
    ("no_longer", re.compile(r"\b(?:don't|do\s+not|doesn't|does\s+not|aren't|isn't|am\s+not|'m\s+not|are\s+not|"
                             r"is\s+not|stopped|quit)\s+(?P<old>" + _VAL + r")\s+(?:anymore|any\s+more)\b", re.I)),
    ("retire", re.compile(r"\b(?:retired|decommissioned|deprecated|removed|killed|dropped|shut\s+down|"
                          r"got\s+rid\s+of|left|quit|sold|reverted|rolled\s+back|backed\s+out|switched\s+off|"
                          r"turned\s+off|shut\s+off|archived|sunsett(?:ed|ing)|disabled|scrapp(?:ed)?|scrap|ditched|"
                          r"abandoned|phased\s+out|ripped\s+out|swapped\s+out|torn\s+out|stopped\s+using|uninstalled|"
                          r"dropped\s+support\s+for|moved\s+(?:off|away\s+from)|"
                          r"migrated\s+(?:off|away\s+from)|forget\s+about|gave\s+up|"
                          r"(?:don't|do\s+not|stop)\s+(?:use|using)|"
                          r"no\s+longer\s+(?:use|using|need|want)|(?:won't|will\s+not|aren't|are\s+not|not)\s+(?:be\s+)?"
                          r"(?:using|going\s+with|keeping)|moved\s+on\s+from)\s+(?:of\s+|on\s+)?"
                          r"(?:our\s+|the\s+|my\s+)?(?P<old>" + _VAL + r")" + _END_OBJ, re.I)),
    # what a person tells an agent to do (kind "drop": a decision only when the user says it)
    ("drop", re.compile(r"(?:(?:let's|let\s+us)\s+not\s+(?:use|do|keep|go\s+with)|(?:^|[^\w\s]\s*|\b(?:please|just|and|then|"
                        r"so|actually|ok|okay|now|let's|we\s+should|you\s+can)\s+)(?:drop|remove|ditch|kill|scrap|revert|"
                        r"rip\s+out|get\s+rid\s+of|undo|delete|disable|turn\s+off|skip)|(?:don't|do\s+not)\s+(?:want|need)\s+"
                        r"(?:to\s+use\s+)?)\s+(?:of\s+|on\s+)?(?:our\s+|the\s+|my\s+)?(?P<old>" + _VAL + r")" + _END_OBJ, re.I)),
    ("retire", re.compile(r"(?P<old>\b[\w@.+-]+(?:\s+[\w@.+-]+)?)(?:'s|\s+(?:is|was|has\s+been|have\s+been|got|gets|are|were|"
                          r"will\s+be|is\s+being|are\s+being|gets\s+to\s+be))\s+"
                          r"(?:now\s+)?(?:officially\s+)?(?:gone|retired|cancell?ed|closed|terminated|killed|deprecated|no\s+more|"
                          r"replaced|superseded|swapped\s+out|ripped\s+out|taken\s+(?:down|offline)|uninstalled|unplugged|"
                          r"legacy|eol|"
                          r"history|a\s+thing\s+of\s+the\s+past|out\s+of\s+the\s+picture|on\s+its\s+way\s+out|phased\s+out|removed|shut\s+down|decommissioned|"
                          r"dropped|read[\s-]only|switched\s+off|turned\s+off|shut\s+off|archived|sunset(?:ted)?|"
                          r"frozen|disabled|deleted|offline|obsolete|unnecessary|off\s+the\s+table|a\s+no-go|not\s+an\s+option|"
                          r"out\s+of\s+scope|not\s+happening|(?:no\s+longer\s+|not\s+)needed|end[\s-]of[\s-]lifed?|"
                          r"being\s+(?:retired|decommissioned|sunset|phased\s+out|"
                          r"shut\s+down|turned\s+off|closed|cancell?ed)|going\s+away)\b", re.I)),
    # "X removed / dropped / deprecated in favour of Y" (a changelog's words)
    ("replace", re.compile(r"(?P<old>\b[\w@.+-]+(?:\s+[\w@.+-]+)?)\s+(?:(?:is|was|has\s+been|have\s+been|got|gets|are|were)\s+)?"
                           r"(?:now\s+)?(?:removed|dropped|deprecated|retired|replaced|abandoned|phased\s+out|ditched|sunset|"
                           r"swapped\s+out|deleted)\s+in\s+favou?r\s+of\s+" + _NEW, re.I)),
    ("replace", re.compile(r"(?P<old>\b[\w@.+-]+(?:\s+[\w@.+-]+)?)\s+(?:was|is|has\s+been|got|were|are|have\s+been|"
                           r"is\s+being|are\s+being)\s+(?:now\s+)?(?:replaced|swapped\s+out|superseded|succeeded)\s+(?:by|with|for)\s+" + _NEW, re.I)),
    ("reverse", re.compile(r"\b(?:scratch|scrap|drop|forget|revers(?:e|ed|ing)|undo|overturn(?:ed)?|revisit(?:ed)?|"
                           r"back\s+out\s+of|walk(?:ed|ing)?\s+back)\s+(?:the\s+|our\s+|that\s+|my\s+|your\s+)?"
                           r"(?P<old>[\w.+-]+(?:\s+[\w.+-]+)?)\s+(?:decision|plan|idea|rule|approach|choice|design)\b", re.I)),
    ("reverse", re.compile(r"\b(?:changed\s+my\s+mind|second\s+thoughts|reconsidered)\s+(?:about|on)?\s*(?:the\s+|our\s+)?"
                           r"(?P<old>" + _VAL + r")" + _END_OBJ, re.I)),
    ("reverse", re.compile(r"\bthe\s+(?P<old>[\w.+-]+(?:\s+[\w.+-]+)?)\s+(?:decision|plan|idea|rule|approach|choice)\s+"
                           r"(?:no\s+longer\s+(?:holds|applies|stands)|is\s+(?:off|reversed|dead|void|cancell?ed|withdrawn))",
                           re.I)),
    ("handover", re.compile(r"\b(?P<old>[A-Z][a-z]+)\s+(?:stepped\s+down|left|moved\s+on|is\s+on\s+leave|had\s+to\s+leave|"
                            r"retired|quit|handed|passed|died|moved\s+to\s+(?:the\s+)?\w+\s+team)\b")),
    ("no_longer", re.compile(r"\bno\s+more\s+(?P<old>" + _VAL + r")" + _END, re.I)),
    # "Hugo no longer leads on-call", "Sam is no longer reviewing docs": a person who no longer holds a role
    ("handover", re.compile(r"\b(?P<old>[A-Z][a-z]+)\s+(?:is\s+|has\s+)?no\s+longer\s+(?:leads?|leading|owns?|owning|"
                            r"runs?|running|manages?|"
                            r"managing|maintains?|maintaining|reviews?|reviewing|handles?|handling|chairs?|facilitates?|"
                            r"in\s+charge|responsible|on[\s-]call|the\s+(?:owner|lead|maintainer|reviewer))\b")),
    ("retire", re.compile(r"(?P<old>\b[\w@.+-]+(?:\s+[\w@.+-]+)?)\s+(?:is|are|was|were|has\s+been|have\s+been)\s*(?:n't|\s+not|"
                          r"\s+no\s+longer)\s+(?:used|needed|in\s+use|supported|maintained|running|deployed|active)"
                          r"(?:\s+any\s*more)?\b", re.I)),
    ("retire", re.compile(r"\b(?:turned|switched|shut|phased|ripped|pulled|killed|torn|tore)\s+(?:our\s+|the\s+)?"
                          r"(?P<old>[\w@.+-]+(?:\s+[\w@.+-]+)?)\s+(?:off|down|out|offline)\b", re.I)),
    # "secrets now live in Vault, not in the repository settings"
    ("instead", re.compile(r"\bnow\b[^.;!?]{0,60}?,?\s+not\s+(?:in\s+|on\s+|at\s+|with\s+|via\s+|through\s+)?(?:the\s+|our\s+)?"
                           r"(?P<old>" + _VAL + r")\s*(?:[,;.!]|$)", re.I)),
    ("moved_to", re.compile(r"\b(?:switch(?:ed)?|mov(?:ed)|migrat(?:ed)|chang(?:ed)|upgrad(?:ed)|downgrad(?:ed)|"
                            r"bump(?:ed)|pinn(?:ed)|renam(?:ed)|relocat(?:ed)|point(?:ed)|repoint(?:ed)|raised|lowered|increased|"
                            r"transferr(?:ed)|handed|reassign(?:ed)|ported|set|rewr(?:ote|itten)|converted|rebuilt|"
                            r"cut\s+over|reduced|decreased|shortened|extended)\s+(?P<obj>(?:[\w'.-]+\s+){0,4}?)"
                            r"(?:over\s+)?to\s+" + _NEW, re.I)),
]

#: change words without a named old value (weaker: a slot or the similarity must tie them to the old text)
_PLAIN = re.compile(   # strong: a change said outright
    r"\b(?:no\s+longer|from\s+now\s+on|from\s+here\s+on(?:\s+out)?|henceforth|moving\s+forward|until\s+further\s+notice|"
    r"as\s+of\s+(?:today|now|this\s+\w+|yesterday|(?:mon|tues|wednes|thurs|fri|satur|sun)day|(?:release|version)\s+\S+|"
    r"v?\d+(?:\.\d+)+|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?:\s+\d{1,2}(?:st|nd|rd|th)?)?|"
    r"the\s+\d{1,2}(?:st|nd|rd|th)|the\s+(?:latest|new|last|\d[\w.]*)\s+(?:release|version|deploy))|"
    r"effective\s+(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|tomorrow|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
    r"\.?(?:\s+\d{1,2}(?:st|nd|rd|th)?)?|the\s+\d{1,2}(?:st|nd|rd|th)|this\s+\w+|with\s+(?:this|the\s+next)\s+release)|"
    r"(?:starting|beginning)\s+(?:with\s+)?(?:v?\d+(?:\.\d+)+|(?:release|version)\s+\S+|this\s+(?:release|version))|"
    r"switched|replaced|migrated|upgraded|downgraded|relocated|renamed|reassigned|took\s+over|"
    r"(?:got|started|accepted|landed|took)\s+(?:a\s+|my\s+)?new\s+(?:job|role|position)|"
    r"promoted\s+to|updated\s+to|bumped\s+to|pinned\s+to|reverted|rolled\s+back|"
    r"(?:is|are|was)\s+gone|retired|stepped\s+down|handed\s+over|took\s+it\s+over|reversal|"
    r"scratch\s+that|update:|going\s+forward|change\s+of\s+plans?|changed\s+my\s+mind|on\s+second\s+thought|"
    r"rewr(?:ote|itten)|ported|rebuilt|from\s+(?:today|(?:mon|tues|wednes|thurs|fri|satur|sun)day|this\s+\w+|"
    r"(?:release|version)\s+\S+|v?\d+(?:\.\d+)+)\s+on(?:wards?)?|"
    r"starting\s+(?:today|now|this\s+week|(?:this\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day)|"
    r"effective\s+(?:today|immediately|now)|cut\s*-?\s*over|cutover|went\s+live|is\s+live|"
    r"switched\s+off|turned\s+off|shut\s+off|read[\s-]only|sunsett(?:ed|ing)|decommissioned|"
    r"new\s+(?:rule|policy|process|convention)|(?:everyone|everybody|all\s+of\s+us|the\s+whole\s+team)\s+(?:is|are)\s+"
    r"(?:now\s+)?(?:on|using)|since\s+(?:last\s+\w+|yesterday|this\s+morning|(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"the\s+(?:migration|upgrade|move|switch|switchover|cutover|cut-over|rename|merger|relaunch|redesign|release|"
    r"reorg|outage|incident|rewrite|launch))|rewrite\s+(?:is\s+)?(?:done|finished|complete|shipped|merged|live)|"
    r"(?:finished|completed|done\s+with|wrapped\s+up)\s+(?:the\s+|our\s+)?(?:migration|rewrite|port|move|switch|cut-?over)|"
    r"(?:migration|rewrite|port|move|switch|cut-?over)\b[^.;!?]{0,40}\b(?:is|was|are)\s+(?:now\s+)?(?:done|finished|complete|"
    r"completed|live|over)|migration\s+to|"
    r"fully\s+(?:on|migrated|moved)|all\s+(?:moved|migrated)|(?:quit|left)\s+my\s+job|laid\s+off|broke\s+up|"
    r"split\s+up|went\s+(?:vegan|vegetarian)|moved\s+out)\b", re.I)
_WEAK = re.compile(   # weak: change words that chat uses for much else; they only tie a differing slot value
    r"\b(?:anymore|any\s+more|these\s+days|nowadays|(?:is|are)\s+(?:now\s+)?(?:our|the)\s+new|moved|changed|raised|lowered|no\s+more|instead\s+of|"
    r"new\s+(?:job|role|position|address|apartment|house|home|place|team|owner|lead|host|port|version|"
    r"name|url|endpoint|domain|manager|boss|default)|correction|actually,|after\s+all|used\s+to|instead|"
    r"rather\s+than)\b", re.I)

#: "now" as a state change: "now uses", "is now", "we're now on"; not "right now", "now that", "just now"
_NOW = re.compile(r"(?<!right\s)(?<!just\s)(?<!for\s)(?<!by\s)(?<!until\s)(?<!till\s)\bnow\b(?!\s+that\b)"
                  r"(?!\s+and\s+then\b)(?!\s+and\s+again\b)(?!\s+on\b)(?!,?\s+(?:i\s+)?(?:want|wanna|need|let|let's|"
                  r"what|where|how|why|who|come|look|listen|tell|go|get|about|if|then|so|ok|okay|i\s+know|"
                  r"i\s+see|i'm\s+(?:gonna|going))\b)", re.I)
_NOW_OPENER = re.compile(r"^\W*now\b\s*,", re.I)   # "Now, about the onboarding screens": a discourse marker
_NOW_STATE = re.compile(r"\b(?:is|are|am|'s|'re|'m|was|were|runs?|lives?|uses?|using|works?|working|sits?|"
                        r"points?|listens?|hosts?|hosted|owned|handled|maintained|served|called|named|on|at|in|"
                        r"have|has|having|got|set|pinned|requires?|needs?|defaults?|living|running|located)\b",
                        re.I)

# ----------------------------------------------------------------------------------------------- vetoes

_HEDGE = re.compile(
    r"\b(?:if|whether|would|could|might|(?-i:may)|maybe|perhaps|should|shall|consider(?:ing|ed)?|thinking\s+(?:about|of)|"
    r"think\s+about|(?:we|i|they)(?:'re|\s+are|\s+am|'m)?\s+plan(?:ning)?\s+to|going\s+to|gonna|want\s+to|wanna|wish|hope|what\s+if|in\s+case|"
    r"suppose|imagine|unless|you\s+can|you\s+could|try\s+(?:to|using)|let\s+me\s+know|"
    r"someday|some\s+day|eventually|propos(?:e|ed|al)|suggest(?:ed|ion)?|idea|"
    r"evaluat(?:e|ing)|experimenting|(?:an?|one)\s+experiment\b|experiment\s+with|trying\s+out|try\s+out|tempted|debating|will\s+we|"
    r"proof\s+of\s+concept|poc|prototype|spike|investigat(?:e|ing)|explor(?:e|ing)|look(?:ing)?\s+into|estimated?|"
    r"draft|next\s+(?:week|month|year|quarter|sprint))\b", re.I)
_QUOTE = re.compile(
    r"(?:^\s*>|\b(?:you\s+said|i\s+said|he\s+said|she\s+said|they\s+said|wrote|quote|quoting|remember\s+when|"
    r"back\s+when|back\s+then|at\s+the\s+time|old\s+message|earlier\s+you|as\s+of\s+last\s+year|"
    r"in\s+the\s+old\s+docs|the\s+old\s+(?:readme|wiki|docs?|runbook|change\s?log)|"
    r"(?:the|an?\s+old)\s+change\s?log\s+(?:says|said|still|entry\s+from|from)|years?\s+ago)\b|"
    r"(?:^|(?<=[\s(\[:]))\"(?=\S)[^\"]*\s[^\"]{0,200}\")",   # a quote holds words: a name in quotes ("new_checkout") is none
    re.I)
_OTHER = re.compile(
    r"\b(?:he|she|his|her|him|my\s+(?:(?:best|old|close)\s+)?(?:friend|friends|sister|brother|mom|mum|dad|mother|father|"
    r"parents|colleague|coworker|co-worker|boss|buddy|cousin|partner|wife|husband|son|daughter|kid|kids|neighbou?rs?|"
    r"aunt|uncle|grandma|grandpa|grandmother|grandfather|grandparents|roommate|flatmate|housemate|teammate|"
    r"friend's|boyfriend|girlfriend|fianc[eé]e?|niece|nephew|in-laws|sibling|siblings|twin|stepmom|stepdad|"
    r"stepmother|stepfather|manager|landlord|classmate)|a\s+(?:friend|buddy|colleague|coworker|former\s+colleague)|"
    r"(?:another|other|their|a\s+different|the\s+other)\s+(?:team|company|project|customer|client|repo)|"
    r"the\s+(?!whole\b|entire\b|same\b|core\b|dev\b|product\b)[a-z]+\s+team\b(?!\s+(?:chat|channel|meeting|call))|"
    r"upstream|downstream|some\s+people|everyone\s+else|somebody|someone|contributor(?:'s)?|fork|competitor(?:'s)?|partner(?:'s)?|"
    r"a\s+paper|other\s+(?:studios|teams|companies|people)|vendor(?:'s)?)\b", re.I)
_ADDITIVE = re.compile(r"\b(?:another|second|also|too(?=\s*[.!,]?\s*$)|as\s+well|in\s+addition|one\s+more|additional|extra|"
                       r"both|alongside|besides|added|adding|next\s+to)\b", re.I)
_CONTINUITY = re.compile(r"\b(?:still|nothing\s+(?:has\s+)?changed|unchanged|same\s+as\s+before|as\s+before|"
                         r"stays?|remains?)\b", re.I)
_WE_DID_NOT = re.compile(r"\b(?:we|i)\s+(?:did\s+not|didn't|have\s+not|haven't|won't|will\s+not)\s*[.!]?\s*$", re.I)
_NEGATED_CHANGE = re.compile(r"\b(?:didn't|did\s+not|haven't|have\s+not|never|not|won't|isn't|no|nothing)\s+"
                             r"(?:\w+\s+){0,2}?(?:switch|move|migrate|change|replace|upgrade|moving|switching|"
                             r"changing|replacing|upgrading|changed|moved|switched|replaced|upgraded|quit|quitting|"
                             r"leave|leaving|drop|give\s+up|giving\s+up|stop|stopping)\b|"
                             r"\b(?:don't|do\s+not|never|won't)\s+(?:\w+\s+){0,2}?quit\b", re.I)

_ME = re.compile(r"\b(?:i|i'm|i've|i'd|we|we're|we've)\b", re.I)


def _own(text: str) -> bool:
    """Is ``text`` about the speaker: no one else named, or the speaker named first ("I live with my parents";
    not "my sister works at a bank")?"""
    o = _OTHER.search(text)
    if not o:
        return True
    me = _ME.search(text)
    return bool(me) and me.start() < o.start()


_SENT = re.compile(r"(?<=[.!?;])\s+|\n+")


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (and lines)."""
    return [s for s in _SENT.split(text) if s.strip()]


# ----------------------------------------------------------------------------------------------- slots

_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                      "ninety": 90, "hundred": 100, "a dozen": 12, "dozen": 12})
_DURATION = {"second", "minut", "hour", "day", "week", "month", "year", "decad", "min", "sec", "hr", "yr",
             "am", "pm", "percent", "%", "ms", "kb", "mb", "gb", "tb", "x", "th", "st", "nd", "rd", "k", "m"}
_TECH = frozenset("""python node nodejs postgres postgresql pg mysql mariadb redis memcached kafka rabbitmq elasticsearch
opensearch kubernetes k8s terraform ansible docker java jdk go golang ruby rails php laravel react vue angular svelte
next nextjs nuxt django flask fastapi spring dotnet net ubuntu debian centos alpine fedora rhel macos ios android
windows gcc clang llvm cuda torch pytorch tensorflow jax numpy pandas scipy sklearn vllm sglang nginx traefik envoy
haproxy webpack vite rollup esbuild babel typescript ts eslint prettier jest vitest pytest mocha cypress playwright
sqlite duckdb mongo mongodb cassandra clickhouse snowflake airflow dagster prefect celery sidekiq grpc protobuf
openssl tls http kotlin swift scala rust cargo npm pnpm yarn pip poetry uv conda helm istio grafana prometheus
loki jaeger sentry datadog jenkins gitlab circleci buildkite bazel gradle maven cmake make llama mistral gpt claude
gemini qwen phi bert minilm e5 lambda ec2 rds s3 gke eks aks""".split())

_VERSION = re.compile(r"\b(?P<name>[A-Za-z][\w.+-]*?)(?:\s+(?:is|was|are|now|to|from|on|at|version|v|upgraded|bumped|updated|moved|pinned|downgraded|"
                      r"went|goes|runs|uses|requires)){0,3}?"
                      r"(?:\s+version|\s+v|\s|@|-|==|>=|~=|\^)\s*"
                      r"(?P<ver>v?\d+(?:\.\d+){1,3}(?:[-+.]?[a-z]+\d*)?|v\d+)\b")
_BARE_VERSION = re.compile(r"\b(?P<name>[A-Za-z][\w+-]*)\s+(?:(?:is|was|are|now|to|from|on|at)\s+){0,2}"
                           r"(?P<ver>\d{1,3})\b(?!\.\d|\d)(?!\s*%)")
_PATH = re.compile(r"(?P<v>\b[a-z][a-z0-9+]*://[\w.-]+(?:/[\w.-]*)*|(?<![\w/])~?/[\w.-]+(?:/[\w.-]+)+)", re.I)
_API_VERSION = re.compile(r"(?<![\w/])/v(?P<ver>\d+)\b")
_MONEY = re.compile(r"(?P<v>[$€£]\s?\d[\d,]*(?:\.\d+)?k?|\d[\d,]*(?:\.\d+)?\s?(?:dollars|euros|usd|eur))", re.I)
_PORT = re.compile(r"\bport\s*(?:number\s*)?(?:is\s+|=\s*|:\s*|to\s+|of\s+)?(?P<v>\d{2,5})\b|"
                   r"(?:localhost|\b[\w-]+\.[\w.-]+|\b\d{1,3}(?:\.\d{1,3}){3}|\b[a-z][\w-]*):(?P<v2>\d{2,5})\b", re.I)
_HOST = re.compile(r"\b(?P<v>(?:[a-z0-9-]+\.)+(?:internal|local|lan|corp|com|net|org|io|dev|cloud|app|sh|co|"
                   r"ai|prod|staging)|\d{1,3}(?:\.\d{1,3}){3})\b|\b(?:box|server|host|machine|node|vm|instance)"
                   r"\s+(?:is\s+)?(?:called|named)\s+(?P<v2>[\w-]+)|\b(?:mini|computer|laptop|cluster)\s+(?:called|named)\s+(?P<v4>[\w-]+)|\b(?:hosted|runs|running|lives|deployed)\s+on\s+"
                   r"(?:a\s+box\s+called\s+)?(?P<v3>[a-z][\w-]*\d[\w-]*)\b", re.I)
_KV_EQ = re.compile(r"(?<![\w.])(?P<k>[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)\s*=\s*(?P<v>[\w./+-]+)", re.I)
# the key's parts are atomic (matched once, never given back): "_" is both a separator and a part of a part, and a long snake_case
# word not followed by ":" backtracked exponentially (a BookMinder transcript line hung a capture); the same
# matches, since a key cut shorter is followed by a key character, never by ":"
_KV_COLON = re.compile(r"(?<![\w.])(?P<k>[a-z_][a-z0-9]*(?=(?P<kt>(?:[_.][a-z0-9_]+)+))(?P=kt))\s*:\s*(?P<v>[\w./+-]+)",
                       re.I)   # (?=(X))(?P=kt): X atomic, as a possessive X++ (Python 3.11+ only) would be
_CHANNEL = re.compile(r"(?<![\w&])#(?P<v>[a-z][\w-]+)", re.I)
_OWNER = re.compile(r"\b(?:owner|lead|maintainer|manager|boss|on-?call|point\s+of\s+contact|reviewer|approver)\b"
                    r"(?:\s+[\w'-]+){0,3}?\s+(?:is|:|=|will\s+be)\s+(?:now\s+)?(?P<v>[A-Z][a-z]+)\b|"
                    r"\b(?P<v2>[A-Z][a-z]+)\s+(?:now\s+)?(?:owns|leads|maintains|manages|is\s+on-?call)\b|"
                    r"\b(?:owned|maintained|led|run|managed|handled|reviewed)\s+by\s+(?P<v3>[A-Z][a-z]+)\b")
_USE_FOR = re.compile(r"\b(?:use|uses|using|run|runs|running|with|on|via)\s+(?P<v>[A-Za-z][\w.+-]*)\s+"
                      r"(?:for|as)\s+(?:the\s+|our\s+|my\s+|a\s+|an\s+)?(?P<k>[a-z]+(?:\s+[a-z]+)?)\b")
#: "the VPN is WireGuard", "DNS now lives in Cloudflare", "Celery's broker is RabbitMQ": what a named thing of a project
#: is (the subject's words are the slot's key, the name its value)
_NAME_VALUE = r"(?P<v>(?-i:[A-Z0-9])[\w.+-]*(?:\s+(?-i:[A-Z])[\w.+-]*){0,2}|[a-z][\w+]*[.-][\w.+-]*[a-z0-9])"
_NAMED = re.compile(r"(?:^|\b(?:the|our)\s+)(?:[\w-]+'s\s+)?(?P<k>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)\s+(?:now\s+)?"
                    r"(?:is|are|'s|lives?|runs?|goes?|go|sits?|moved|switched|migrated)(?:\s+(?:now|all|entirely|fully|"
                    r"officially|currently|over))*(?:\s+(?:[a-z]+ed|built|run|done|kept|sent|written|made|held|led|taken|"
                    r"driven|given|chosen|shown|drawn|known))?"
                    r"(?:\s+(?:on|in|at|through|via|with|by|to|into|onto|under|from))?\s+(?:now\s+)?"
                    r"(?:(?:the|our|an?)\s+)?(?:[a-z]+\s+){0,2}?" + _NAME_VALUE, re.I)
#: the name first: "Adyen handles payments", "Outline is our new wiki", "Lena is in charge of planning"
_NAMED_FIRST = re.compile(r"(?:^|[,;:]\s*|\b(?:now|and)\s+)" + _NAME_VALUE + r"\s+(?:now\s+)?(?:(?:handles|powers|runs|hosts|"
                          r"serves|stores|manages|routes|issues|builds|facilitates|chairs|leads|owns|does|takes\s+care\s+of|"
                          r"looks\s+after)\s+|is\s+(?:now\s+)?(?:in\s+charge\s+of\s+|responsible\s+for\s+|(?:our|the)\s+(?:new\s+)?))"
                          r"(?:the\s+|our\s+)?(?P<k>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)(?=\s*(?:[,;.!?]|$)|\s+(?:now|from|since|"
                          r"as|going|starting|effective|for|at|in|on|after|because|too|again|this|today)\b)", re.I)
_NAMED_SKIP = frozenset("""it this that there he she they we i you what which who everything everyone nothing something
one name plan idea answer problem point reason question thing result""".split())
_COUNT = re.compile(r"(?<![\d.$€£])\b(?P<n>\d+|" + "|".join(sorted((w for w in _NUMBER_WORDS if w != "zero"), key=len, reverse=True))
                    + r")\s+(?:[a-z][\w-]*\s+){0,2}?(?P<noun>[a-z]{3,}s|times|people|children|kids|feet|"
                    r"approvals?|day|week|month|year|hour|minute|second)\b", re.I)
_ORDINAL = re.compile(r"\b(?P<n>first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))\s+"
                      r"(?:[a-z][\w-]*\s+){0,2}(?P<noun>[a-z]{3,})\b", re.I)
_ORDINAL_SKIP = {"time", "place", "day", "week", "month", "year", "thing", "step", "date", "impress", "sight", "half",
                 "round", "floor", "grade", "person", "hand", "chanc", "look", "try", "attempt", "choic", "one"}
_KV_SKIP = {"http", "https", "note", "update", "correction", "todo", "re", "fyi", "edit", "ps", "question",
            "answer", "step", "example", "error", "warning", "info", "debug", "tip", "summary", "q", "a"}


@dataclass(frozen=True)
class Slot:
    key: tuple[str, str]   # (kind, what): ("version", "postgr"), ("port", ""), ("count", "stori")
    value: str


def _norm(v: str) -> str:
    """A version as compared: trimmed, lower-cased, a leading ``v`` dropped (``v2.1`` -> ``2.1``)."""
    v = v.strip()
    out = v.strip(".,;:'\"()").lower()
    return out.removeprefix("v") if re.fullmatch(r"v\d.*", v, re.I) else out


_HAS_NUMBER = re.compile(r"\d|\b(?:" + "|".join(w for w in _NUMBER_WORDS if " " not in w) + r")\b", re.I)
_HAS_OWNER = re.compile(r"\b(?:owner|lead|maintainer|manager|boss|on-?call|contact|reviewer|approver|owns|leads|"
                        r"maintains|manages|by)\b", re.I)


@functools.lru_cache(maxsize=4096)
def slots(text: str) -> frozenset[Slot]:
    """The slot values ``text`` states: versions of named things, ports, hosts, paths, prices, ``key=value``
    settings, channels, owners, "X for PURPOSE" tools, counts and durations. Cheap guards first: most
    turns have no digit, no ``=`` and no owner word, and skip most of the expressions."""
    out: set[Slot] = set()
    text = _CAPTION.sub(" ", text)
    digits = bool(_HAS_NUMBER.search(text))
    if digits:
        _numbered_slots(text, out)
    for m in _ORDINAL.finditer(text):   # "my second tournament" -> "my fourth tournament"
        noun = stem(m.group("noun").lower())
        if noun not in _ORDINAL_SKIP and noun not in STOP_WORDS:
            out.add(Slot(("ordinal", noun), m.group("n").lower()))
    if "/" in text:
        for m in _PATH.finditer(text):
            if not m.group("v").lower().startswith(("http://", "https://")):
                out.add(Slot(("path", ""), m.group("v").lower().rstrip("./")))
    if "." in text or "called" in text or "named" in text or " on " in text:
        for m in _HOST.finditer(text):
            v = m.group("v") or m.group("v2") or m.group("v3") or m.group("v4")
            if v and not re.fullmatch(r"\d+(?:\.\d+){1,2}", v):   # a version is not a host
                out.add(Slot(("host", ""), v.lower()))
    if "=" in text or ":" in text:
        for rx in (_KV_EQ, _KV_COLON):   # settings look like settings: k=v, or snake_case / dotted k: v
            for m in rx.finditer(text):
                k = m.group("k").lower()
                if k not in _KV_SKIP and k not in STOP_WORDS and len(k) >= 2:
                    out.add(Slot(("setting", k), m.group("v").lower().rstrip(".")))
    if "#" in text:
        for m in _CHANNEL.finditer(text):
            out.add(Slot(("channel", ""), m.group("v").lower()))
    if _HAS_OWNER.search(text):
        for m in _OWNER.finditer(text):
            out.add(Slot(("owner", ""), (m.group("v") or m.group("v2") or m.group("v3")).lower()))
    if " for " in text or " as " in text:
        for m in _USE_FOR.finditer(text):
            purpose = " ".join(stem(w) for w in m.group("k").split() if w not in STOP_WORDS)
            if purpose and m.group("v").lower() not in STOP_WORDS:
                out.add(Slot(("tool", purpose), m.group("v").lower()))
                out.add(Slot(("named", purpose), m.group("v").lower()))   # "Redis as the broker": the broker is Redis
    for sent in sentences(text):
        for m in itertools.chain(_NAMED.finditer(sent), _NAMED_FIRST.finditer(sent)):
            words = [w.lower() for w in m.group("k").split()]
            key = " ".join(stem(w) for w in words if w not in STOP_WORDS)
            if key and not set(words) & _NAMED_SKIP and m.group("v").split()[0].lower() not in STOP_WORDS:
                out.add(Slot(("named", key), _norm(m.group("v"))))
    out.update(Slot(("vocab", cls), name) for cls, name in vocab_values(text))   # Slack, Teams: one chat tool
    out.update(Slot((kind, ""), v) for kind, v in typed_values(text))             # weekday, time of day, size
    for sent in sentences(text):   # the speaker's own life, sentence by sentence (not a relative's)
        if _own(sent):
            out.update(Slot(("life", cat), v) for cat, v in life_states(sent) if v)
    return frozenset(out)


def _numbered_slots(text: str, out: set[Slot]) -> None:
    """The slots whose value is a number: versions, API path versions, prices, ports, counts, durations."""
    for m in _VERSION.finditer(text):
        name = m.group("name").lower().rstrip(".-")
        if name in STOP_WORDS or len(name) < 2 or name.isdigit():
            continue
        out.add(Slot(("version", stem(name)), _norm(m.group("ver"))))
    for m in _BARE_VERSION.finditer(text):
        name = m.group("name").lower()
        if name in _TECH:
            out.add(Slot(("version", stem(name)), m.group("ver")))
    for m in _API_VERSION.finditer(text):
        out.add(Slot(("version", "api path"), m.group("ver")))
    for m in _MONEY.finditer(text):
        out.add(Slot(("price", ""), re.sub(r"[\s,]", "", m.group("v").lower())))
    for m in _PORT.finditer(text):
        out.add(Slot(("port", ""), m.group("v") or m.group("v2")))
    for m in _COUNT.finditer(text):
        noun = stem(m.group("noun").lower())
        n = m.group("n").lower()
        out.add(Slot(("duration" if noun in _DURATION else "count", noun), str(_NUMBER_WORDS.get(n, n))))


def _by_key(slots_: frozenset[Slot]) -> dict[tuple[str, str], set[str]]:
    """The values of ``slots_`` grouped by slot key."""
    by: dict[tuple[str, str], set[str]] = {}
    for s in slots_:
        by.setdefault(s.key, set()).add(s.value)
    return by


def differing_slots(old: frozenset[Slot], new: frozenset[Slot]) -> list[tuple[Slot, Slot]]:
    """Pairs (old, new) of the same slot key with different values, where the new text does not also
    state the old value for that key (a list of versions is not a change)."""
    old_by, new_by = _by_key(old), _by_key(new)
    for key in [k for k in new_by if k[0] == "named" and k not in old_by]:   # "the ingress controller" is "our
        words = key[1].split()                                               # Kubernetes ingress controller"
        same = [k for k in old_by if k[0] == "named" and k[1].split()[-1] == words[-1]
                and min(len(words), len(k[1].split())) >= 2   # "limit" alone may be any limit
                and (set(words) <= set(k[1].split()) or set(k[1].split()) <= set(words))]
        if len(same) == 1:
            new_by.setdefault(same[0], set()).update(new_by[key])
    out = []
    for key, nvals in new_by.items():
        ovals = old_by.get(key)
        if not ovals or ovals & nvals:
            continue
        if key[0] == "host" and {v.split(".")[0] for v in ovals} & {v.split(".")[0] for v in nvals}:
            continue   # "db1" and "db1.internal": one host
        if len(nvals) > 1 and key[0] in ("count", "port", "host", "vocab", "weekday", "time", "size", "life", "cadence",
                                         "named"):
            continue   # several values at once: a list, not a replacement
        out.append((Slot(key, sorted(ovals)[0]), Slot(key, sorted(nvals)[0])))
    return out


# ----------------------------------------------------------------------------------------------- cues


@dataclass(frozen=True)
class Cue:
    kind: str              # replace, from_to, instead, no_longer, retire, handover, moved_to, plain, weak, now
    old: str | None        # the old value the cue names ("vLLM"), if any
    new: str | None        # the new value, if any
    obj: str | None        # what moved ("the CI" in "moved the CI to Buildkite"), if any
    sentence: str


_GENERIC = frozenset("""use uses using used work works working worked live lives living lived run runs running ran
have has having go went gone be been being get got keep kept stay stayed play plays playing playing need needs
the our my a an their its it this that them there here over off back out up down""".split())


#: a unit's short forms, read as the word ("10 min" names "10 minutes")
_UNITS = {"min": "minutes", "mins": "minutes", "sec": "seconds", "secs": "seconds", "hr": "hours", "hrs": "hours",
          "wk": "weeks", "wks": "weeks", "mo": "months", "yr": "years", "yrs": "years"}


def content_tokens(text: str) -> set[str]:
    """Stems of the content words of ``text`` (no stop words, no generic verbs)."""
    return {stem(_UNITS.get(t, t)) for t in tokens(text) if t not in STOP_WORDS and t not in _GENERIC
            and (len(t) >= 2 or t.isdigit())}


#: where the clause of a cue ends: what follows is a reason, a caveat or a second fact ("..., which should make
#: retries easier", "; the old name still works until June", ", since we kept running out", ", nothing else changed")
_CLAUSE_END = re.compile(r"\s*(?:[;—–]|:\s|\s-\s|,\s*(?:which|who|so|because|since|as|and|but|though|although|while|"
                         r"whereas|the|it|its|it's|they|we|we're|she|he|our|this|that|these|those|everything|nothing|"
                         r"everyone|v?\d)\b|\s(?:because|since|so\s+that|as\s+the|after\s+the)\s)", re.I)
#: a condition after the clause still makes the change hypothetical ("..., but only if the pilot works")
_CONDITION = re.compile(r"\b(?:if|unless|whether|pending|provided)\b", re.I)


def _clause_scope(sentence: str, end: int) -> tuple[str, str]:
    """``sentence`` up to the end of the clause that holds position ``end``, and the rest."""
    m = _CLAUSE_END.search(sentence, end)
    return (sentence, "") if m is None else (sentence[:m.start()], sentence[m.start():])


def _vetoed(sentence: str, at: int | None = None, end: int | None = None) -> str | None:
    """Why a cue in ``sentence`` does not count (None: it does). Someone else's life is looked for before
    the cue (``at``: its position; the subject): "my friend moved ..." vetoes, "Oskar handed ranking over
    to Yara, he is on the ads team" does not. With ``end`` (where the cue ends), hedges, negations and
    "still" count up to the end of the cue's clause only: "moved from cron to Temporal, which should make
    retries easier" and "renamed the flag; the old name still works" are changes; a condition after it
    ("..., but only if ...") still vetoes."""
    scope, rest = (sentence, "") if end is None else _clause_scope(sentence, end)
    if _QUOTE.search(sentence):
        return "quoted"
    if _HEDGE.search(scope) or sentence.rstrip().endswith("?") or _CONDITION.search(rest):
        return "hedged"
    if _NEGATED_CHANGE.search(scope) or _WE_DID_NOT.search(scope):
        return "negated"
    if _CONTINUITY.search(scope) and not any(rx.search(scope) for _, rx in _LINKED[:3]):
        return "unchanged"
    if _OTHER.search(sentence if at is None else sentence[:at]):
        return "someone else"
    return None


_CAPTION = re.compile(r"\[shares an image:[^\]]*\]")
_NAME_QUOTES = re.compile(r"[\"`'](?<!\w')([\w@.+:/#-]+)[\"`'](?!\w)")   # "new_checkout", `assets-prod`: a name, read without its quotes   # what the LoCoMo parser appends: not the speaker's words


@functools.lru_cache(maxsize=4096)
def cues(text: str) -> tuple[Cue, ...]:
    """The change cues of ``text`` that survive the vetoes (a hypothetical, a question, a quoted or
    reported message, a negated change, someone else's life), sentence by sentence."""
    out: list[Cue] = []
    for sent in sentences(_NAME_QUOTES.sub(r"\1", _CAPTION.sub(" ", text))):
        if sent.rstrip().endswith("?") or _QUOTE.search(sent):
            continue   # every cue of a question or a quote is vetoed (:func:`_vetoed`): none is looked for
        if (_OTHER.search(sent) and not any(rx.search(sent) for _, rx in _LINKED)
                                and not _PLAIN.search(sent) and not _NOW.search(sent)):
            continue
        linked = False
        for kind, rx in _LINKED:
            for m in rx.finditer(sent):
                g = m.groupdict()
                g["old"], g["new"] = g.get("old") or g.get("old2"), g.get("new") or g.get("new2")
                if _vetoed(sent, m.start(), m.end()):
                    continue
                if (g.get("old") or "").split(" ")[0].lower().endswith("ing"):
                    continue   # "instead of giving up", "quit smoking": an activity, not a value
                if kind == "moved_to" and " from " in f" {g.get('obj') or ''} ":
                    continue   # "moved the docs from X to Y": the from_to cue
                if kind == "moved_to" and not (g.get("obj") or "").strip():
                    # "the dataset moved to /mnt/data/v2": the object is the subject before the verb
                    subj = " ".join(sent[:m.start()].split()[-3:]) or None
                    out.append(Cue("moved_to", None, g.get("new"), subj, sent))
                else:
                    out.append(Cue(kind, g.get("old"), g.get("new"), (g.get("obj") or "").strip() or None, sent))
                linked = True
        if not linked:
            if (m := _PLAIN.search(sent)) and not _vetoed(sent, m.start(), m.end()):
                out.append(Cue("plain", None, None, None, sent))
            elif (m := _WEAK.search(sent)) and not _vetoed(sent, m.start(), m.end()):
                out.append(Cue("weak", None, None, None, sent))
            elif (m := _NOW.search(sent)) and not _NOW_OPENER.search(sent) and not _vetoed(sent, m.start(), m.end()):
                out.append(Cue("now", None, None, None, sent))
    return tuple(out)


def anchors(text: str) -> set[str]:
    """The keywords to look up the earlier memories a change in ``text`` may replace: the words of the old
    value a cue names (a long plan that says it ranks low by vector and by all of the turn's words), the
    other names of a vocabulary class it names ("everyone is on Teams": slack, discord, ...) and the words of a
    part of life it tells a change of ("I quit my job": work, company, ...). Empty without a change cue."""
    if not cues(text) and not life_changes(text):
        return set()
    words: set[str] = set()
    for c in cues(text):   # "drop the header versioning": the memories that say "header", "version"
        if c.kind in LINKED_KINDS and c.old:
            words.update(keywords(c.old))
    for cls, _ in vocab_values(text):
        if cls in EXCLUSIVE:   # a team has one chat tool; it may have several databases
            words.update(keywords(" ".join(VOCAB[cls])))
    for cat, *_ in life_changes(text):
        words.update(keywords(" ".join(LIFE_ANCHORS[cat])))
    return words


def has_signal(text: str) -> bool:
    """Cheap gate before any candidate search: does ``text`` hold a change cue or a slot value at all?"""
    if cues(text) or life_changes(text):
        return True
    # a vocabulary name, a weekday, a time or a life fact alone is no sign of a change (most chat turns
    # have one: "I live in Boston", "on Zoom"); with a change word they are (the cues above)
    return any(sl.key[0] not in _NO_SIGNAL for sl in slots(text))


# ----------------------------------------------------------------------------------------------- decision


@dataclass(frozen=True)
class Verdict:
    status: str | None      # "superseded", "possible", or None (no change)
    confidence: float
    detector: str           # "cue" (a change word tied to the old text) or "slot" (a differing value)
    reason: str
    project: bool = False   # a fact of a project (a tool, a version, a port, a setting), not of a person's life:
                            # a team's members speak for it (another member's change replaces it)


NO_CHANGE = Verdict(None, 0.0, "", "")
#: the slots that hold a project's facts (a person's counts, durations, ordinals and life are their own)
PROJECT_SLOTS = frozenset({"version", "port", "host", "path", "setting", "channel", "owner", "vocab", "tool", "time",
                           "weekday", "size", "price", "cadence"})
#: the slots that change only with a change word in the sentence that states the new value (no ``possible`` without
#: one): what a named thing is and how often something recurs are said of many things in passing
CUE_ONLY = frozenset({"named", "cadence"})
#: slots that are no sign of a change alone (the gate): most chat turns have one ("I live in Boston", "on Zoom")
_NO_SIGNAL = frozenset({"vocab", "weekday", "time", "size", "life", "named", "cadence"})
_SINGULAR = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|mine)\b", re.I)
_CODE_LIKE = re.compile(r"\d|[a-z][A-Z]|\w[._/:-]\w|^[A-Z]{2,}")


def _techish(value: str | None) -> bool:
    """Does a cue's old value name a thing of a project: a tool of the vocabularies, a technical name, a
    version, a path or a setting ("vLLM", "Postgres 14", "/v1", "ingress-nginx"); not "the bank"."""
    v = (value or "").strip()
    return bool(v) and (bool(vocab_values(v)) or any(t in _TECH for t in tokens(v.lower())) or
                        any(_CODE_LIKE.search(w) for w in v.split()))
#: cue kinds that name the old value
LINKED_KINDS = ("replace", "from_to", "instead", "no_longer", "retire", "handover", "reverse", "drop")


#: words that name what kind of thing a value is, not which: "the old Jenkins box", "the Redis instance"
_KIND_WORDS = frozenset("""old legacy former previous current instance instances box server servers host machine
cluster bucket service repo account setup stack one logic approach thing stuff step part code layer feature support
option mode idea plan decision bit piece handling integration config configuration module whole entire workspace
org organisation organization tenant project""".split())


def _head(value: str | None, n: int = 1) -> list[str]:
    """The first ``n`` content words of a cue's value (stems)."""
    return [stem(_UNITS.get(x, x)) for x in tokens(value or "") if x not in STOP_WORDS and x not in _GENERIC
            and x not in _KIND_WORDS][:n]


_VERSION_TOKEN = re.compile(r"\d+(?:\.\d+)+")


def _names_in(value: str | None, old_toks: set[str], n: int = 2, any_of: bool = False,
              old_text: str | None = None) -> bool:
    """The old text has the value's first content words (its first ``n``; all of them, or one with
    ``any_of``): "vLLM" in "we replaced vLLM with SGLang"; not "docs" in "no longer reviewing docs"
    against "we moved the docs", not "GitHub Pages" against "GitHub Discussions"."""
    head = _head(value, n)
    if not head or not (any if any_of else all)(t in old_toks for t in head):
        return False
    versions = _VERSION_TOKEN.findall(value or "")   # "Python 3.11" is not "Python 3.13"
    return not versions or old_text is None or all(re.search(r"(?<![\w.])" + re.escape(v) + r"(?![\w.]*\d)", old_text)
                                                   for v in versions)


def _first_word_in(value: str, text: str) -> bool:
    """The value's first word, as written ("date-fns", "moment.js"), is a word of ``text``: a name joined by
    a hyphen or a dot is one name, not its parts ("date-fns" is not named by "Date handling")."""
    first = next((w.strip(".,;:!?()'\"") for w in value.split() if w.lower() not in STOP_WORDS), "")
    if not re.search(r"\w[.-]\w", first):
        return True
    return re.search(r"(?<![\w.-])" + re.escape(first.lower()) + r"(?![\w-])", text.lower()) is not None


def _same_sentence_subject(old_text: str, new_text: str, o: Slot, n: Slot, values: set[str]) -> bool:
    """The sentence that states the old value and the one that states the new value share a content word
    besides the values (a version of a named thing carries its subject in the slot). In a long answer a
    price, a count or a port of something else is there by chance ("$109,000" for an IRA, "$15" for a set
    of coasters)."""
    if (o.key[0] in ("version", "named") and o.key[1]) or (o.key[0] == "vocab" and o.key[1] in EXCLUSIVE) \
            or (o.key[0] == "life" and o.key[1] in LIFE_EXCLUSIVE):
        return True
    if o.key[0] == "vocab" and any(_MOVE.search(x) for x in sentences(new_text) if n in slots(x)):
        return True   # "the migration to Postgres is done": a database a project has several of, moved off   # the subject is in the slot: a version of a named thing, the team's one chat tool, my home
    olds = [x for x in sentences(old_text) if o in slots(x)] or [old_text]
    news = [x for x in sentences(new_text) if n in slots(x)] or [new_text]
    return any(_shared_beyond(a, b, values) for a in olds for b in news)


def _shared_beyond(old_text: str, new_text: str, values: set[str]) -> bool:
    """The two texts share a content word that is not part of a slot value (the same subject)."""
    skip = {stem(t) for v in values for t in tokens(v)}
    return bool((set(keywords(old_text)) & set(keywords(new_text))) - skip)


#: the words of a move from one thing to another of its kind (a migration, a cut-over, a rewrite, a port)
_MOVE = re.compile(r"\b(?:migrat\w*|cut\s*-?\s*over|cutover|switch(?:ed|ing)?\s+(?:[\w'-]+\s+){0,3}?(?:over\s+)?to|"
                   r"switchover|mov(?:e|ed|ing)\s+(?:[\w'-]+\s+){0,3}?(?:over\s+)?to|the\s+move|port(?:ed|ing)?\s+to|rewr(?:ote|itten)|rewrite|rebuil[dt]|"
                   r"transition(?:ed)?\s+to)\b", re.I)
_PASSING = re.compile(r"\b(?:been|past|last|ago|almost|nearly|already|old|since)\b", re.I)


def _setting_duration(n: Slot, sentence: str) -> bool:
    """A duration that is a setting ("retention is 90 days now", "tokens expire after 8 hours"), not time
    passing ("I've been running for five years now"): hours, days, weeks, not said with "for", "been", "ago"."""
    return n.key[1] in ("second", "minut", "hour", "day", "week", "min", "sec", "hr", "ms") \
        and not _PASSING.search(sentence)


def _slot_change(o: Slot, n: Slot) -> str:
    """A verdict's reason for a differing slot: ``version postgr: 14 -> 16``."""
    return f"{o.key[0]}{' ' + o.key[1] if o.key[1] else ''}: {o.value} -> {n.value}"


_CLAUSE = re.compile(r"[,;:()]|\s(?:and|but|while|whereas|except)\s", re.I)


def _clauses_with(text: str, words: list[str]) -> list[str]:
    """The clauses of ``text`` that say one of ``words`` (stems or values; all of ``text`` if none does)."""
    out = []
    for sent in sentences(text):
        for cl in _CLAUSE.split(sent):
            low = cl.lower()
            if any(w and (w in low or w in content_tokens(cl)) for w in words):
                out.append(cl)
    return out or [text]


def _elsewhere(old_text: str, new_sentence: str, words: list[str]) -> bool:
    """Is the old text's statement of ``words`` about another thing than the new sentence (another
    environment, region, database role, part of the system; a personal machine)? Precision first: the
    JDK of the Android build is not the backend's."""
    return all(other_subject(cl, new_sentence) for cl in _clauses_with(old_text, words))


def _states(sentence: str, n: Slot) -> bool:
    """Does ``sentence`` state the slot value ``n`` (a named thing's value under a shorter or longer name of the
    thing: "the ingress controller" for "our Kubernetes ingress controller")?"""
    got = slots(sentence)
    return n in got or (n.key[0] == "named" and any(x.key[0] == "named" and x.value == n.value for x in got))


def _only_unsaid(old_text: str, o: Slot) -> bool:
    """The old text states the old value only in a question, a hypothetical or plan, a quote or a negated
    change ("We're thinking about Quay instead of Docker Hub", "the old wiki still says ..."): no fact to replace."""
    said = [x for x in sentences(old_text) if o in slots(x)]
    return bool(said) and all(x.rstrip().endswith("?") or _QUOTE.search(x) or _HEDGE.search(x) or
                              _NEGATED_CHANGE.search(x) or _WE_DID_NOT.search(x) or _OTHER.search(x[:max(0, x.lower().find(o.value))])
                              for x in said)   # ... or said of someone else ("A competitor's search runs on Algolia")


def _slot_elsewhere(old_text: str, new_text: str, o: Slot, n: Slot) -> bool:
    news = [x for x in sentences(new_text) if n in slots(x)] or [new_text]
    # the clause that states the new value ("The prod cluster has six nodes, staging is unchanged": prod's)
    news = [next((cl for cl in _CLAUSE.split(x) if n in slots(cl)), x) for x in news]
    return all(_elsewhere(old_text, x, [o.value]) for x in news)


_LIFE_CLAUSE = re.compile(r"[,;:()]|\s(?:and|but|so|because|while|whereas)\s", re.I)


def _life_of(text: str) -> set[tuple[str, str]]:
    """The speaker's own life facts in ``text``, clause by clause: a clause about someone else says nothing
    of the speaker's but who their partner is ("my dad is a butcher"; "my boyfriend Dev")."""
    out = set()
    for sent in sentences(text):
        for cl in _LIFE_CLAUSE.split(sent):
            out.update(cs for cs in life_states(cl) if _own(cl) or cs[0] == "partner")
    return out


def _life_change(old_text: str, new_text: str) -> Verdict | None:
    """A life change told by its own words ("quit my job", "moved out of", "sold my car", "went vegan",
    "broke up", "gave up tennis") against an earlier fact of the same part of the speaker's life: superseded
    when the old value is named, or the part is one a person has one of (a job, a home) and the earlier
    fact names it; possible otherwise."""
    olds = _life_of(old_text)
    if not olds:
        return None
    low = old_text.lower()
    best: Verdict | None = None
    for sent in sentences(new_text):
        if _vetoed(sent, 0) or _ADDITIVE.search(sent):
            continue
        for cat, old_v, new_v, at in life_changes(sent):
            if _OTHER.search(sent[:at]):
                continue   # "my sister quit her job"
            if any(c == cat for c, *_ in life_changes(old_text)):
                continue   # the old text tells the same change ("since I lost my job"): nothing new
            vals = {v for c, v in olds if c == cat}
            if not vals or (new_v and (new_v in vals or new_v in low)):
                continue   # nothing of this part of life before, or the old text already says the new value
            if old_v and (old_v in vals or re.search(r"\b" + re.escape(old_v) + r"\b", low)):
                return Verdict("superseded", 0.85, "life", f"{cat}: '{old_v}' ended")
            if cat in LIFE_EXCLUSIVE and vals - {""}:
                return Verdict("superseded", 0.75, "life", f"{cat}: {sorted(vals - {''})[0]} -> {new_v or '?'}")
            best = best or Verdict("possible", 0.5, "life", f"{cat} changed")
    return best


def decide(old_text: str, new_text: str, *, similarity: float = 0.0, told: bool = True) -> Verdict:
    """Does ``new_text`` (said later, by the same speaker) replace ``old_text``?

    * superseded 0.9 (cue): a change cue names something the old text says ("replaced vLLM ...", "from
      5432 to 6432", "no longer at the bank") and the new value is not already in the old text;
    * superseded 0.8 (slot): the same slot has another value and the new text has a change cue;
    * possible 0.5 (slot): the same slot has another value, no cue (unless an additive word: a second pet);
    * possible 0.4 (cue): "moved X to Y" with X in the old text and Y not;
    * else no change (a change word alone, however similar the texts, ties nothing: on LoCoMo that rule
      marked 2.5 % of all memories, nearly all wrongly). ``similarity`` is kept for the record.

    ``told``: the new text is what a user tells an agent, so its short orders count ("drop the header
    versioning", "no Redis", "Postgres, not SQLite"; cue kind ``drop``); in chat ("No worries, John!") and
    in the assistant's narration ("Let's remove the old venv") they do not."""
    if all(x.rstrip().endswith("?") for x in sentences(old_text)):
        return NO_CHANGE   # a question states no fact to replace
    old_toks = content_tokens(old_text)
    found = cues(new_text)
    for c in found:
        if c.kind == "drop" and not told:
            continue
        if c.kind in LINKED_KINDS and (_names_in(c.old, old_toks, old_text=old_text)
                                       or (not _VERSION_TOKEN.search(c.old or "")   # "W&B" names "Weights & Biases"
                                           and vocab_values(c.old or "") & vocab_values(old_text))):
            if c.new and _names_in(c.new, old_toks, 1) and _first_word_in(c.new, old_text) \
                    and c.kind not in ("no_longer", "from_to") \
                    and not _names_in(c.new, content_tokens(c.old or ""), 1):
                continue   # the old text already names the new value too: a comparison, not this change
            if _elsewhere(old_text, c.sentence, _head(c.old)):
                continue   # the same name, another thing: the EU region's, the Android build's
            said = [x for x in sentences(old_text) if set(_head(c.old)) & content_tokens(x)]
            if said and all(x.rstrip().endswith("?") or _HEDGE.search(x) for x in said):
                continue   # the old text only asked or wondered about it ("What if we replaced Amplitude?")
            return Verdict("superseded", 0.9, "cue", f"{c.kind}: '{c.old}' -> '{c.new or ''}'".strip(),
                           _techish(c.old) or (c.kind == "handover" and not (_SINGULAR.search(old_text)
                                                                              or _SINGULAR.search(c.sentence))))
    sold, snew = slots(old_text), slots(new_text)
    # the values that differ are not the shared subject (a name of a vocabulary is: "Postgres moved to db2")
    values = {s.value for s in sold | snew if s.key[0] not in ("vocab", "life", "weekday", "time", "size", "named")}
    shared = _shared_beyond(old_text, new_text, values)
    pairs = differing_slots(sold, snew)
    # the new value in a sentence's first clause, the old one named again after it ("Trials are 7 days now, the 14
    # day ones converted worse"; "The API is /v2 now; /v1 answers with a deprecation header"): the first clause says it
    lead = frozenset(x for sent in sentences(new_text) for x in slots(_clause_scope(sent, 0)[0]))
    pairs += [(o, n) for o, n in differing_slots(sold, lead) if o.key not in {p[0].key for p in pairs}]
    diffs = [(o, n) for o, n in pairs
             if (shared or o.key[1]) and _same_sentence_subject(old_text, new_text, o, n, values)
             and not _slot_elsewhere(old_text, new_text, o, n) and not _only_unsaid(old_text, o)]
    strong = [c for c in found if c.kind not in ("now", "weak")]
    for o, n in diffs:
        what = _slot_change(o, n)
        tied = [c for c in found if _states(c.sentence, n)
                and (o.key[0] != "duration" or c in strong or _setting_duration(n, c.sentence))
                and (c.kind not in ("now", "weak", "plain") or not _ADDITIVE.search(c.sentence))]
        if tied:   # a duration ("five years" -> "seven years now") changes by itself: only a strong cue ties it
            return Verdict("superseded", 0.8, "slot", what + f" ({tied[0].kind})", o.key[0] in PROJECT_SLOTS or (
                o.key[0] in ("count", "named") and not _SINGULAR.search(old_text) and not _SINGULAR.search(new_text)))
    if (v := _life_change(old_text, new_text)) is not None:
        return v
    for o, n in diffs:
        if o.key[0] == "duration" or o.key[0] in CUE_ONLY:
            continue   # "three months" -> "four months": time passing, not a change, unless a cue says so
        what = _slot_change(o, n)
        if (o.key[0] == "ordinal" or not _ADDITIVE.search(new_text)) and not any(_vetoed(s) for s in sentences(new_text)
                                                      if n.value in s.lower()):
            return Verdict("possible", 0.5, "slot", what, o.key[0] in PROJECT_SLOTS)
    for c in strong:
        if c.kind == "moved_to" and c.obj and _names_in(c.obj, old_toks) and c.new \
                and not _names_in(c.new, old_toks):
            return Verdict("possible", 0.4, "cue", f"moved '{c.obj}' -> '{c.new}'")
    return NO_CHANGE
