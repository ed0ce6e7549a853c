"""``locomo``: the LoCoMo benchmark's JSON (docs/formats.md)."""

from __future__ import annotations

import re
from typing import Any

from hela_cli.text.dates import parse_date
from hela_cli.formats.base import (Conversation, Source, Turn, _Bad, _get_str, _keyed_objects, _show, _type_name,
                                   _want_dict, _want_list)

CAPTION_TEMPLATE = " [shares an image: {}]"

_SESSION_KEY = re.compile(r"session_(\d+)")


def parse(src: Source) -> list[Conversation]:
    return _parse_locomo(src.document(), src.name)


def _parse_locomo(obj: Any, name: str) -> list[Conversation]:
    out: list[Conversation] = []
    for sample, sid, place in _keyed_objects(obj, "sample", "a sample object", "sample_id"):
        if "conversation" not in sample:
            raise _Bad(place, "missing 'conversation'")
        conv = _want_dict(sample["conversation"], place + " conversation")
        _get_str(conv, "speaker_a", place + " conversation")
        _get_str(conv, "speaker_b", place + " conversation")
        sessions: dict[int, str] = {}
        for key in conv:
            m = _SESSION_KEY.fullmatch(key)
            if m:
                n = int(m.group(1))
                if n in sessions:
                    raise _Bad(place, f"duplicate session number {n} ({sessions[n]!r} and {key!r})")
                sessions[n] = key
        if not sessions:
            raise _Bad(place + " conversation", "no 'session_N' turn lists")
        turns: list[Turn] = []
        seen_dia: dict[str, str] = {}
        for n in sorted(sessions):
            key = sessions[n]
            splace = f"{place} {key}"
            lst = _want_list(conv[key], place, key)
            dkey = f"{key}_date_time"
            if dkey not in conv or conv[dkey] is None:
                raise _Bad(splace, f"missing {dkey!r}")
            date = conv[dkey]
            if not isinstance(date, str):
                raise _Bad(splace, f"{dkey!r} must be a string, got {_type_name(date)}")
            try:
                ts = parse_date(date)
            except ValueError as e:
                raise _Bad(splace, f"{dkey!r}: {e}") from None
            session_id = f"session_{n}"
            for ti, t in enumerate(lst, start=1):
                tplace = f"{splace} turn {ti}"
                _want_dict(t, tplace, "a turn object")
                dia = t.get("dia_id")
                if isinstance(dia, str) and dia.strip():
                    tplace = f"{tplace} ({_show(dia, 20).strip(chr(34))})"
                speaker = _get_str(t, "speaker", tplace)
                dia = _get_str(t, "dia_id", tplace)
                text = _get_str(t, "text", tplace, allow_empty=True)
                caption = _get_str(t, "blip_caption", tplace, required=False, allow_empty=True)
                for opt in ("query",):
                    _get_str(t, opt, tplace, required=False, allow_empty=True)
                if "img_url" in t and t["img_url"] is not None:
                    iu = t["img_url"]
                    if not (isinstance(iu, str) or (isinstance(iu, list) and all(isinstance(x, str) for x in iu))):
                        raise _Bad(tplace, f"'img_url' must be a string or an array of strings, got {_type_name(iu)}")
                body = text.strip()
                if caption is not None and caption.strip():
                    body = (body + CAPTION_TEMPLATE.format(caption.strip())).strip()
                if not body:
                    raise _Bad(tplace, "empty 'text' and no 'blip_caption'")
                if dia in seen_dia:
                    raise _Bad(tplace, f"duplicate dia_id {_show(dia)} (first in {seen_dia[dia]})")
                seen_dia[dia] = f"{key} turn {ti}"
                turns.append(Turn(speaker.strip(), body, ts, date, session_id, dia, None))
        if not turns:
            raise _Bad(place, "conversation has no turns")
        qa = sample.get("qa", [])
        if qa is None:
            qa = []
        qa = _want_list(qa, place, "qa")
        for qi, q in enumerate(qa, start=1):
            _want_dict(q, f"{place} qa {qi}", "a qa object")
        out.append(Conversation(sid, turns, name, qa))
    return out
