"""The change cues of a statement (pure): the words people use to say a fact changed, and the vetoes that
bound them (a hypothetical or plan, a question, a quote or report, a negation, "still", someone else).

:func:`cues` reads a text sentence by sentence: a cue that names the old value ("replaced X with Y", "X → Y",
"X is no more", "X has been deprecated in favour of Y"), a change word that does not ("from now on", "as of
June 1", "effective Monday", "going forward"), a weak one that only ties a differing slot ("these days"), or a
"now" of a state. A veto counts up to the end of the cue's clause: what follows is a reason or a caveat
("..., which should make retries easier"). :mod:`hela_cli.facts.rules` decides with them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from hela_cli.text.keywords import STOP_WORDS, stem, tokens


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

