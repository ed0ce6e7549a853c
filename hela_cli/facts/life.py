"""What a person says of their own life (pure): employer and job, home, vehicle, diet, partner, course of study,
sport, commute (:func:`life_states`), and the words people use when one of them ends or changes ("quit",
"moved out of", "sold", "went vegan", "broke up", "dropped", "gave up": :func:`life_changes`).

Written from general knowledge and the dev half of the changed-facts suite only (benchmarks/quality/changed_facts/).
"""

from __future__ import annotations

import functools
import re


# ----------------------------------------------------------------------------------------------- life

#: category -> what states it (group ``v``: the value, when the pattern has one)
_LIFE_STATE: dict[str, re.Pattern[str]] = {
    "job": re.compile(r"\b(?:i|we)\s+(?:now\s+)?(?:work|am\s+working|'m\s+working)\s+as\s+(?:a|an)\s+"
                      r"(?P<v3>[\w-]+(?:\s+[\w-]+)?)|"
                      r"\b(?:i|we)\s+(?:now\s+)?(?:work|am\s+working|'m\s+working)\s+(?:at|for|in)\s+(?P<v>[\w&'.-]+(?:\s+(?-i:[A-Z])[\w&'.-]*){0,3})|"
                      r"\b(?:i'm|i\s+am|im)\s+(?:now\s+)?(?:a|an)\s+(?:[\w-]+\s+){0,2}?(?:engineer|developer|nurse|teacher|"
                      r"manager|designer|analyst|consultant|accountant|doctor|lawyer|chef|barista|writer|scientist|"
                      r"intern|assistant|officer|technician|mechanic|librarian|pharmacist|architect|"
                      r"freelancer|cashier|driver|electrician|plumber|researcher|lead|director)\b(?:\s+(?:at|for)\s+"
                      r"(?P<v2>[\w&'.-]+(?:\s+(?-i:[A-Z])[\w&'.-]*){0,3}))?|"
                      r"\bmy\s+(?:job|employer|company|office|workplace|boss|manager|team\s+lead|coworkers?|colleagues?)\b|"
                      r"\b(?:new|old|current|first|day)\s+job\b|\bjob\s+(?:at|as)\b|\bi\s+(?:teach|nurse|code)\b|"
                      r"\bi(?:'ve|\s+have)\s+been\s+(?:working\s+)?at\s+(?P<v4>(?-i:[A-Z])[\w&'.-]*(?:\s+(?-i:[A-Z])[\w&'.-]*){0,3})",
                      re.I),
    "home": re.compile(r"\b(?:i|we)\s+(?:now\s+)?(?:live|am\s+living|'m\s+living|'re\s+living|are\s+living|"
                       r"am\s+based|'m\s+based|rent|'re\s+renting|'m\s+renting)\s+(?:with\s+[\w\s]{0,20}?\s+)?"
                       r"(?:in|at|near|on)\s+"
                       r"(?P<v>(?:the\s+)?[\w'.-]+(?:\s+(?-i:[A-Z])[\w'.-]*){0,2})|"
                       r"\b(?:i|we)\s+(?:now\s+)?(?:live|rent|own|have|share)\s+(?:a|an|the|our|my)\s+(?:[\w-]+\s+){0,2}?"
                       r"(?:apartment|flat|house|place|condo|two-bedroom|one-bedroom|studio|loft|bungalow)\b|"
                       r"\b(?:i|we)\s+live\s+(?P<v5>downtown|uptown|nearby|in\s+town|out\s+of\s+town|by\s+the\s+\w+)\b|"
                       r"\b(?:my|our)\s+(?:apartment|flat|house|place|home|neighbou?rhood|landlord|roommates?|flatmates?|"
                       r"commute)\b|\b(?:new|old)\s+(?:apartment|flat|house|place|neighbou?rhood)\b", re.I),
    "vehicle": re.compile(r"\b(?:i|we)\s+(?:now\s+)?(?:drive|ride|own|have)\s+(?:a|an|my|our)\s+(?P<v>(?:[\w-]+\s+){0,2}?"
                          r"(?:car|truck|van|suv|motorcycle|motorbike|scooter|bike|e-bike|(?-i:[A-Z])[\w-]+))\b|"
                          r"\bmy\s+(?:old\s+|new\s+)?(?P<v2>car|truck|van|suv|motorcycle|motorbike|scooter|"
                          r"(?:civic|corolla|prius|tesla|jeep|golf|camry|accord|mustang|beetle|model\s+\w))\b", re.I),
    "diet": re.compile(r"\b(?:i'm|i\s+am|im|i've\s+been|i\s+have\s+been|we're|we\s+are|i\s+went|i\s+eat|i\s+stay|"
                       r"i\s+keep|i\s+follow\s+a|(?:on|follow)\s+a|my)\s+(?:a\s+|an\s+|strict\s+|fully\s+|mostly\s+)?"
                       r"(?P<v>vegan|vegetarian|pescatarian|keto|paleo|gluten[\s-]free|dairy[\s-]free|plant[\s-]based|"
                       r"carnivore|omnivore)\b|\b(?:i|we)\s+(?:eat|love|cook)\s+(?P<v2>meat|fish|steak|"
                       r"chicken|burgers?)\b", re.I),
    "partner": re.compile(r"\bmy\s+(?P<v>boyfriend|girlfriend|partner|husband|wife|fianc[eé]e?|spouse|bf|gf)\b|"
                          r"\b(?:i|we)\s+(?:now\s+)?(?:have|got)\s+a\s+(?:new\s+)?(?P<v3>boyfriend|girlfriend|partner|"
                          r"husband|wife)\b|"
                          r"\b(?:i'm|i\s+am|im)\s+(?P<v2>single|married|engaged|divorced|dating)\b", re.I),
    "study": re.compile(r"\b(?:i'm|i\s+am|im)\s+(?:now\s+)?(?:a|an)\s+(?:[\w-]+\s+){0,2}?(?P<v3>[\w-]+)\s+"
                        r"(?:student|major)\b|\b(?:i|i'm|i\s+am|im)\s+(?:now\s+)?(?:study(?:ing)?|major(?:ing)?\s+in|doing\s+(?:a|my)\s+"
                        r"(?:degree|masters?|phd|bachelor'?s?)\s+in|enrolled\s+in)\s+(?P<v>[\w-]+(?:\s+[\w-]+)?)|"
                        r"\bmy\s+(?:major|degree|course|program(?:me)?|thesis|classes|studies)\b", re.I),
    "sport": re.compile(r"\b(?:i|we)\s+(?:now\s+)?(?:play|do|practice|practise|train|go)\s+(?:(?:a\s+lot\s+of|some)\s+)?"
                        r"(?P<v>tennis|soccer|football|basketball|volleyball|badminton|hockey|rugby|golf|squash|"
                        r"pickleball|cricket|baseball|handball|climbing|bouldering|swimming|running|cycling|yoga|"
                        r"pilates|crossfit|boxing|judo|karate|jiu[\s-]?jitsu|fencing|rowing|skiing|surfing|"
                        r"skating|dancing|hiking|table\s+tennis|ping\s+pong|martial\s+arts|triathlons?|marathons?)\b|"
                        r"\bmy\s+(?P<v2>tennis|soccer|football|basketball|volleyball|hockey|rugby|golf|climbing|"
                        r"swimming|running|cycling|yoga|boxing)\s+(?:club|team|league|coach|class|group|practice)\b|"
                        r"\b(?:i|we)\s+(?P<v3>run|swim|climb|cycle|box|row|ski|surf|skate)\b", re.I),
    "commute": re.compile(r"\b(?:i|we)\s+(?:now\s+)?(?:usually\s+)?(?P<v>drive|bike|cycle|walk|ride\s+(?:my|a|the)\s+\w+|"
                          r"take\s+the\s+\w+|get\s+the\s+\w+)\s+(?:\w+\s+)?(?:to|into)\s+(?:work|the\s+office|campus|school|the\s+city|"
                          r"town|downtown)\b|"
                          r"\bcommute\s+(?:\w+\s+){0,3}?by\s+(?P<v2>car|bike|bicycle|train|bus|tram|subway|metro|ferry|"
                          r"scooter|motorbike)\b|\bmy\s+commute\b|\b(?:i|we)\s+(?:now\s+)?(?:work|am\s+working|'m\s+working)\s+"
                          r"(?P<v3>from\s+home|remotely|remote|fully\s+remote|hybrid)\b|\b(?:i|we)(?:'ve|\s+have)\s+been\s+working\s+"
                          r"(?P<v4>from\s+home|remotely|remote)\b", re.I),
}

#: category -> what ends or changes it (group ``v``: the value named, if any)
_LIFE_CHANGE: dict[str, re.Pattern[str]] = {
    "job": re.compile(r"\b(?:quit|left|resigned\s+from|lost|leaving|handed\s+in\s+my\s+notice\s+at)\s+(?:my\s+)?"
                      r"(?:job|position|role|work|gig)\b|\b(?:got|was|been|were)\s+(?:laid\s+off|let\s+go|fired|made\s+redundant)\b|"
                      r"\b(?:started|start|starting|landed|got|accepted|took|begin|began|signed)\s+(?:a\s+|my\s+|the\s+|an\s+)?"
                      r"(?:new\s+)?(?:job|position|role|gig|offer|contract)\b(?:\s+(?:at|with|as|from)\s+(?P<v>[\w&'.-]+(?:\s+(?-i:[A-Z])[\w&'.-]*){0,3}))?|"
                      r"\b(?:joined|started\s+at|now\s+(?:work(?:ing)?\s+)?at|hired\s+(?:at|by))\s+"
                      r"(?P<v2>(?-i:[A-Z])[\w&'.-]*(?:\s+(?-i:[A-Z])[\w&'.-]*){0,3})|\b(?:retired|unemployed|between\s+jobs|"
                      r"job\s+hunting|first\s+day\s+at)\b|\bpromoted\s+to\b|\bgot\s+hired\b|\b(?:my\s+)?last\s+day\s+(?:at|was)\b|"
                      r"\bleft\s+(?:teaching|nursing|academia|retail|consulting|the\s+company|my\s+company|the\s+firm|"
                      r"the\s+agency|the\s+startup|my\s+old\s+job|the\s+industry)\b|\bjoined\s+(?:a|an)\s+[\w-]+(?:\s+[\w-]+)?\s+"
                      r"(?:company|startup|firm|agency|team|studio|lab)\b", re.I),
    "home": re.compile(r"\b(?:moved|moving|relocated|relocating)\s+(?:out\s+of|away\s+from|from)\s+(?:my\s+|our\s+|the\s+)?"
                       r"(?P<old>[\w'.-]+(?:\s+(?-i:[A-Z])[\w'.-]*){0,2})|\b(?:moved|relocated|move|moved\s+back|settled)\s+(?:in\s+)?(?:to|into|in)\s+"
                       r"(?P<v>(?:a\s+|the\s+|my\s+)?[\w'.-]+(?:\s+(?-i:[A-Z])[\w'.-]*){0,2})|"
                       r"\b(?:new|bought\s+a|closed\s+on\s+a|signed\s+a\s+lease\s+on\s+a|our\s+new|my\s+new)\s+(?:apartment|flat|house|"
                       r"place|condo|home)\b|\bmoved\s+(?:out|away|back|abroad|upstate|downstate|overseas|house|"
                       r"across\s+(?:town|the\s+country)|in\s+with)\b|"
                       r"\b(?:sold|left)\s+(?:my|our|the)\s+(?:apartment|flat|house|place|condo)\b", re.I),
    "vehicle": re.compile(r"\b(?:sold|sell|selling|traded\s+in|totaled|totalled|scrapped|got\s+rid\s+of|gave\s+away)\s+"
                          r"(?:my|our|the)\s+(?:old\s+)?(?P<old>[\w-]+(?:\s+[\w-]+)?)|"
                          r"\b(?:bought|got|leased|picked\s+up)\s+(?:a|an|my|our)\s+(?:new\s+|used\s+)?(?P<v>(?:[\w-]+\s+){0,2}?"
                          r"(?:car|truck|van|suv|motorcycle|motorbike|scooter|e-bike|(?-i:[A-Z])[\w-]+))\b|"
                          r"\b(?:(?:no\s+longer|don't|do\s+not)\s+(?:have|own)\s+a\s+car|car[\s-]free|without\s+a\s+car)\b", re.I),
    "diet": re.compile(r"\b(?:went|gone|going|turned|became|become|been|am|'m|i\s+am|now)\s+(?:fully\s+|completely\s+|"
                       r"strictly\s+)?(?P<v>vegan|vegetarian|"
                       r"pescatarian|keto|paleo|gluten[\s-]free|plant[\s-]based)\b|\b(?:gave\s+up|quit|stopped\s+eating|"
                       r"cut\s+out|no\s+more|don't\s+eat|do\s+not\s+eat)\s+(?P<old>meat|dairy|fish|sugar|gluten|"
                       r"red\s+meat|carbs|alcohol|eggs)\b|\b(?:started|start)\s+eating\s+(?P<v2>meat|fish|dairy|eggs)\b|"
                       r"\beating\s+(?:meat|fish)\s+again\b|\b(?:no\s+longer|not)\s+(?:vegan|vegetarian)(?:\s+anymore)?\b", re.I),
    "partner": re.compile(r"\b(?:broke\s+up|split\s+up|we\s+split|separated|divorced|got\s+divorced|ended\s+things|"
                          r"called\s+it\s+off|got\s+engaged|got\s+married|new\s+(?:boyfriend|girlfriend|partner)|my\s+ex\b|"
                          r"seeing\s+someone|single\s+again|(?:not|no\s+longer)\s+together|ended\s+(?:it|things)|we're\s+done|"
                          r"dumped|getting\s+divorced|"
                          r"started\s+dating|moved\s+in\s+together)\b", re.I),
    "study": re.compile(r"\b(?:switched|changed|moved)\s+to\s+(?:a|an)\s+(?P<v3>[\w-]+)\s+(?:degree|major|course|program(?:me)?)\b|"
                        r"\b(?:switched|changed|transferred)\s+(?:my\s+)?(?:major|degree|course|program(?:me)?|studies)"
                        r"(?:\s+(?:from\s+[\w-]+(?:\s+[\w-]+)?\s+)?to\s+(?P<v>[\w-]+(?:\s+[\w-]+)?))?|"
                        r"\b(?:dropped\s+out|graduated|deferred|withdrew)\b|\b(?:dropped|quit)\s+(?:my\s+)?"
                        r"(?:the\s+)?(?P<old>[\w-]+)\s+(?:degree|course|major|program|classes)\b|"
                        r"\b(?:now|started)\s+(?:studying|majoring\s+in)\s+(?P<v2>[\w-]+(?:\s+[\w-]+)?)", re.I),
    "sport": re.compile(r"\b(?:gave\s+up|quit|stopped|dropped|retired\s+from|hung\s+up)\s+(?:on\s+|playing\s+|doing\s+|my\s+)?"
                        r"(?P<old>tennis|soccer|football|basketball|volleyball|badminton|hockey|rugby|golf|squash|"
                        r"pickleball|cricket|baseball|climbing|bouldering|swimming|running|cycling|yoga|pilates|"
                        r"crossfit|boxing|judo|karate|fencing|rowing|skiing|surfing|skating|dancing|hiking|"
                        r"(?:my\s+)?(?:boots|racket|cleats|gloves))\b|\b(?:took\s+up|picked\s+up|started|switched\s+to|"
                        r"got\s+into)\s+(?:playing\s+|doing\s+)?(?P<v>tennis|soccer|football|basketball|volleyball|"
                        r"badminton|hockey|rugby|golf|squash|pickleball|cricket|climbing|bouldering|swimming|running|"
                        r"cycling|yoga|pilates|crossfit|boxing|judo|karate|fencing|rowing|skiing|surfing|skating)\b",
                        re.I),
    "commute": re.compile(r"\b(?:now|these\s+days|nowadays)\s+(?:i\s+)?(?P<v>bike|cycle|walk|drive|take\s+the\s+\w+|ride|"
                          r"work\s+from\s+home|work\s+remotely)\b|\b(?:started|switched\s+to)\s+(?:biking|cycling|"
                          r"walking|driving|taking\s+the\s+\w+|commuting\s+by\s+\w+|working\s+from\s+home)\b|"
                          r"\bonly\s+(?:go|come|commute)\s+(?:in(?:to)?\s+)?(?:the\s+office\s+)?(?:on\s+)?\w+\b|"
                          r"\bno\s+(?:more|longer)\s+(?:driving|commuting|the\s+\w+\s+commute)\b|"
                          r"\b(?:i|we)\s+(?:bike|cycle|walk|ride\s+my\s+bike|drive)\s+everywhere\b", re.I),
}
#: life categories a person has one of at a time (a change of one replaces the earlier without naming it)
LIFE_EXCLUSIVE = frozenset({"job", "home", "diet", "partner", "study", "commute"})
#: who the sentence is about: first person (a life slot is the speaker's own)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|im|me|my|mine|myself|we|we're|we've|our|us)\b", re.I)


_VALUE_NORM = {"cycle": "bike", "bicycle": "bike", "take the": "", "get the": "", "ride my": "", "ride a": "",
               "ride the": "", "remotely": "home", "remote": "home", "fully remote": "home", "from home": "home"}


def _value(m: re.Match[str], *groups: str) -> str:
    for g in groups:
        try:
            v = m.group(g)
        except IndexError:
            continue
        if v:
            v = " ".join(v.lower().split()).strip(".,;:!?'\"")
            for a, b in _VALUE_NORM.items():
                v = b if v == a else (b + v[len(a):]).strip() if v.startswith(a + " ") else v
            return v
    return ""


@functools.lru_cache(maxsize=8192)
def life_states(text: str) -> frozenset[tuple[str, str]]:
    """(category, value) of what a first-person ``text`` says of the speaker's life (value "" when the
    category is named without one: "my boss")."""
    if not _FIRST_PERSON.search(text):
        return frozenset()
    out = set()
    for cat, rx in _LIFE_STATE.items():
        for m in rx.finditer(text):
            out.add((cat, _value(m, "v", "v2", "v3", "v4", "v5")))
    return frozenset(out)


@functools.lru_cache(maxsize=8192)
def life_changes(text: str) -> frozenset[tuple[str, str, str, int]]:
    """(category, old value, new value, where) of the changes a first-person ``text`` tells ("quit my job",
    "moved out of Leeds", "sold my Civic", "went vegan"); values "" when not named; ``where``: the offset of
    the words that tell it."""
    if not _FIRST_PERSON.search(text):
        return frozenset()
    out = set()
    for cat, rx in _LIFE_CHANGE.items():
        for m in rx.finditer(text):
            out.add((cat, _value(m, "old"), _value(m, "v", "v2", "v3"), m.start()))
    return frozenset(out)


#: the words to look up earlier memories of a category by (a keyword search, besides the vector search)
LIFE_ANCHORS: dict[str, tuple[str, ...]] = {
    "job": ("work", "job", "company", "office", "boss", "manager", "engineer", "employer", "colleague", "nurse",
            "teacher", "developer", "designer", "analyst", "consultant", "shift", "team", "career", "startup"),
    "home": ("live", "apartment", "flat", "house", "place", "neighborhood", "rent", "city"),
    "vehicle": ("car", "drive", "truck", "bike", "motorcycle"),
    "diet": ("eat", "vegan", "vegetarian", "meat", "diet", "food"),
    "partner": ("boyfriend", "girlfriend", "partner", "husband", "wife", "date", "relationship"),
    "study": ("study", "major", "degree", "course", "class", "university", "college"),
    "sport": ("play", "tennis", "football", "soccer", "climbing", "running", "team", "club", "yoga"),
    "commute": ("commute", "drive", "train", "bus", "bike", "office", "remote"),
}
