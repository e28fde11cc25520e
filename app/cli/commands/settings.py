"""`pagewise settings get [KEY] | set KEY VALUE | set-secret NAME`: settings.toml through
app.core.settings; secrets read from stdin and kept only in the OS keyring."""
from __future__ import annotations

import sys

from app.failure_messages import UserError


def _shown(value) -> str:
    if value is None:
        return "auto"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _keyring_status() -> str | None:
    from app.core import settings
    try:
        return settings.keyring_name()
    except settings.NoKeyring:
        return None


def _get(args):
    from dataclasses import asdict

    from app.core import settings
    if args.key:
        value = settings.get(args.key)
        return {"key": args.key, "value": value}, _shown(value)
    values = asdict(settings.load())
    keyring = _keyring_status()
    lines = [f"{k} = {_shown(v)}" for k, v in values.items()]
    lines.append(f"secrets: {'in ' + keyring if keyring else 'no keyring service on this system: none can be stored'}")
    lines.append(f"(file: {settings.settings_path()})")
    return {"settings": values, "path": str(settings.settings_path()), "keyring": keyring}, "\n".join(lines)


def _set(args):
    from app.core import settings
    if args.key in settings.SECRETS:
        raise UserError(f"{args.key} is a secret: `pagewise settings set-secret {args.key}` reads it from stdin")
    value = getattr(settings.set_value(args.key, args.value), args.key)
    return {"key": args.key, "value": value}, f"{args.key} = {_shown(value)}"


def _read_secret(name: str) -> str:
    if sys.stdin.isatty():
        import getpass
        return getpass.getpass(f"{name}: ")
    return sys.stdin.readline().rstrip("\r\n")


def _set_secret(args):
    from app.core import settings
    name = settings.check_secret_name(args.name)
    backend = settings.keyring_name()          # NoKeyring before asking for the secret
    value = _read_secret(name)
    if not value:
        raise UserError(f"no {name} given on stdin: nothing stored")
    settings.set_secret(name, value)
    return {"name": name, "stored": True, "keyring": backend}, f"{name} stored in the OS keyring ({backend})"


def run(args):
    sub = args.settings_command
    if sub == "get":
        return _get(args)
    if sub == "set":
        return _set(args)
    if sub == "set-secret":
        return _set_secret(args)
    raise UserError(f"unknown settings command {sub}")
