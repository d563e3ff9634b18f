"""`@username` in a comment's body, resolved server-side.

A mention names a user by their exact username (letters, digits and `@.+-_`, as Django's
usernames; a trailing `.` is punctuation, not part of the name). `@` inside a word (an
e-mail address: `ada@example.com`) is not a mention. A name that is no user, or a user who
cannot read the circuit, refuses the comment (400 naming the name): the author learns at
once that the person would never see it, instead of a silent plain-text `@name`.
"""
from __future__ import annotations

import re

from django.contrib.auth import get_user_model

from ..models import Circuit
from ..services import ServiceError

MENTION = re.compile(r"(?<![\w@.+-])@([\w.@+-]+)")
MAX_MENTIONS = 20


def names_in(body: str) -> list[str]:
    """The usernames a body mentions, in order, each once."""
    names = (m.group(1).rstrip(".") for m in MENTION.finditer(body))
    return list(dict.fromkeys(n for n in names if n))


def resolve(circuit: Circuit, body: str) -> list:
    """The users a body mentions (each may read `circuit`); ServiceError (400) naming every
    name that is no user or a user without read access."""
    names = names_in(body)
    if len(names) > MAX_MENTIONS:
        raise ServiceError(f"A comment may mention at most {MAX_MENTIONS} people ({len(names)} here).", 400,
                           [{"field": "body", "message": f"more than {MAX_MENTIONS} mentions"}])
    if not names:
        return []
    users = {u.username: u for u in get_user_model().objects.filter(username__in=names, is_active=True)}
    problems = []
    for name in names:
        user = users.get(name)
        if user is None:
            problems.append({"field": "body", "mention": name, "message": f"@{name}: there is no user named {name!r}"})
        elif not Circuit.visible_to(user).filter(pk=circuit.pk).exists():
            problems.append({"field": "body", "mention": name,
                             "message": f"@{name} cannot read this circuit (share it with them first)"})
    if problems:
        raise ServiceError(f"The comment mentions {', '.join('@' + p['mention'] for p in problems)}: "
                           + "; ".join(p["message"] for p in problems) + ".", 400, problems)
    return [users[name] for name in names]
