"""``longmemeval``: the LongMemEval benchmark's JSON (docs/formats.md)."""

from __future__ import annotations

from typing import Any

from hela_cli.text.dates import parse_date
from hela_cli.formats.base import (Conversation, Source, Turn, _Bad, _check_encodable, _get_str, _keyed_objects,
                                   _show, _type_name, _want_dict, _want_list)


def parse(src: Source) -> list[Conversation]:
    return _parse_longmemeval(src.document(), src.name)


def _parse_longmemeval(obj: Any, name: str) -> list[Conversation]:
    out: list[Conversation] = []
    for item, qid, place in _keyed_objects(obj, "item", "an item object", "question_id"):
        if "haystack_sessions" not in item:
            raise _Bad(place, "missing 'haystack_sessions'")
        sessions = _want_list(item["haystack_sessions"], place, "haystack_sessions")
        if "haystack_dates" not in item:
            raise _Bad(place, "missing 'haystack_dates'")
        dates = _want_list(item["haystack_dates"], place, "haystack_dates")
        if len(dates) != len(sessions):
            raise _Bad(place, f"{len(sessions)} haystack_sessions but {len(dates)} haystack_dates")
        ids = item.get("haystack_session_ids")
        if ids is not None:
            ids = _want_list(ids, place, "haystack_session_ids")
            if len(ids) != len(sessions):
                raise _Bad(place, f"{len(sessions)} haystack_sessions but {len(ids)} haystack_session_ids")
        turns: list[Turn] = []
        seen_sid: set[str] = set()
        for k, sess in enumerate(sessions):
            splace = f"{place} session {k + 1}"
            if ids is not None:
                sid = ids[k]
                if not isinstance(sid, str) or not sid.strip():
                    raise _Bad(splace, f"haystack_session_ids entry must be a non-empty string, got {_show(sid)}")
                _check_encodable(sid, splace, "haystack_session_ids")
                splace = f"{splace} ({_show(sid, 30).strip(chr(34))})"
            else:
                sid = f"session_{k + 1}"
            if sid in seen_sid:
                # LongMemEval-S repeats a few filler sessions under the same id (same
                # content, another date); keep both, the later one as "<id>#<n>".
                n = 2
                while f"{sid}#{n}" in seen_sid:
                    n += 1
                sid = f"{sid}#{n}"
            seen_sid.add(sid)
            date = dates[k]
            if not isinstance(date, str):
                raise _Bad(splace, f"haystack_dates entry must be a string, got {_type_name(date)}")
            try:
                ts = parse_date(date)
            except ValueError as e:
                raise _Bad(splace, f"haystack_dates: {e}") from None
            if not isinstance(sess, list):
                raise _Bad(splace, f"session must be an array of turns, got {_type_name(sess)}")
            for ti, t in enumerate(sess):
                tplace = f"{splace} turn {ti + 1}"
                _want_dict(t, tplace, "a turn object")
                role = _get_str(t, "role", tplace).strip()
                content = _get_str(t, "content", tplace, allow_empty=True).strip()
                if not content:  # LongMemEval-S has a few empty turns: skipped, later turns keep their index
                    continue
                turns.append(Turn(role, content, ts, date, sid, f"{sid}:{ti}", role))
        if not turns:
            raise _Bad(place, "no turns in haystack_sessions")
        qa: list[dict] = []
        if item.get("question") is not None:
            q = _get_str(item, "question", place, allow_empty=True)
            qd = item.get("question_date")
            if qd is not None:
                if not isinstance(qd, str):
                    raise _Bad(place, f"'question_date' must be a string, got {_type_name(qd)}")
                try:
                    parse_date(qd)
                except ValueError as e:
                    raise _Bad(place, f"question_date: {e}") from None
            entry = {"question": q, "answer": item.get("answer"), "question_date": qd}
            if "question_type" in item:
                entry["question_type"] = item["question_type"]
            qa.append(entry)
        out.append(Conversation(qid, turns, name, qa))
    return out
