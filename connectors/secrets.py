"""Connectors' stored secrets, encrypted at rest: `Connector.secrets` holds each secret
option's name in the clear (the API lists the names) and its value as a Fernet token
(AES-128-CBC with an HMAC-SHA256: a changed or foreign token is refused, never misread).

Keys: DBSPWEB_SECRETS_KEY, Fernet keys separated by commas; the first encrypts, every one
decrypts (MultiFernet), so a key is rotated by putting the new one first, running
`manage.py rotate_connector_secrets`, then dropping the old one. Unset, one key is derived
from Django's SECRET_KEY (HKDF-SHA256), so changing SECRET_KEY then makes the stored
secrets unreadable: their connectors fail with a ConfigError saying so."""
from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

from .errors import ConfigError

_INFO = b"dbspweb connector secrets"


def derived_key(secret_key: str) -> bytes:
    """A Fernet key derived from Django's SECRET_KEY (when DBSPWEB_SECRETS_KEY is unset)."""
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(secret_key.encode())
    return base64.urlsafe_b64encode(raw)


def keys() -> MultiFernet:
    configured = settings.SECRETS_KEYS or [derived_key(settings.SECRET_KEY)]
    try:
        return MultiFernet([Fernet(k) for k in configured])
    except (ValueError, TypeError) as e:
        raise ConfigError(f"DBSPWEB_SECRETS_KEY: not a list of Fernet keys (32 url-safe base64 bytes each): {e}") from None


def seal(secrets: dict | None) -> dict:
    """option -> its value encrypted (a Fernet token, text)."""
    if not secrets:
        return {}
    box = keys()
    return {option: box.encrypt(str(value).encode()).decode() for option, value in secrets.items()}


def unseal(sealed: dict | None) -> dict:
    """option -> its value; a ConfigError naming the option when no key opens it."""
    if not sealed:
        return {}
    box = keys()
    opened = {}
    for option, token in sealed.items():
        try:
            opened[option] = box.decrypt(str(token).encode()).decode()
        except InvalidToken:
            raise ConfigError(f"secret {option!r} cannot be decrypted with DBSPWEB_SECRETS_KEY (set the key it was "
                              f"stored with, or declare the connector again with its secrets)") from None
    return opened


def rotate(sealed: dict | None) -> dict:
    """The same secrets encrypted again with the first key (InvalidToken as ConfigError)."""
    if not sealed:
        return {}
    box = keys()
    try:
        return {option: box.rotate(str(token).encode()).decode() for option, token in sealed.items()}
    except InvalidToken:
        raise ConfigError("a stored secret cannot be decrypted with any key of DBSPWEB_SECRETS_KEY") from None
