"""What kind of failure happened: one enum that the downgrade ladder, the restart policy and the
messages shown to people are keyed by. Every error the app raises on purpose carries a `kind`
(a class attribute); nothing is matched by class name."""
from __future__ import annotations

from enum import Enum


class FailureKind(str, Enum):
    # an engine did not start (the ladder decides the next rung from these)
    KV_TOO_SMALL = "kv_too_small"          # the context does not fit the KV cache
    FREE_MEMORY = "free_memory"            # other programs hold the (V)RAM the plan counted on
    NO_KV_MEMORY = "no_kv_memory"          # weights leave nothing for the KV cache
    OUT_OF_MEMORY = "oom"
    UNSUPPORTED = "unsupported"            # GPU, quantisation or engine not usable here
    MODEL_MISSING = "model_missing"
    MODEL_BROKEN = "model_broken"          # the file is there but the engine cannot read it
    KV_DTYPE = "kv_dtype"                  # fp8 KV cache not supported
    NEXT_MODEL = "next_model"              # too many failed starts of one model
    PORT_IN_USE = "port_in_use"            # a race for a free port: retry, never a downgrade
    START_TIMEOUT = "start_timeout"
    START_FAILED = "other"                 # a start failed for a reason not recognised
    # a running engine, or the connection to it
    WORKER_DIED = "worker_died"
    UNAVAILABLE = "unavailable"            # nothing answers at the address
    AUTH = "auth"
    REQUEST_TIMEOUT = "request_timeout"
    CANCELLED = "cancelled"
    BAD_REQUEST = "bad_request"            # the endpoint refused the request (4xx)
    SERVER_ERROR = "server_error"          # the endpoint failed (5xx) or broke the protocol
    # the user's input or files
    USER_INPUT = "user_input"              # a command-line value, a missing file, a bad setting
    DOCUMENT = "document"                  # a PDF that cannot be read as asked (password, no text, …)
    CATALOGUE = "catalogue"                # models.toml is invalid
    MODEL_NOT_AVAILABLE = "model_not_available"
    NO_KEYRING = "no_keyring"              # the OS has no keyring service for a secret
    # anything else is a bug: its message points to the log
    INTERNAL = "internal"

    @property
    def is_start_failure(self) -> bool:
        return self in _START

    @property
    def ends_the_request(self) -> bool:
        """The user stopped it, or no engine is there to answer: a step before the answer
        (reranking, judging the cards) gives up as the answer would, instead of going on without it."""
        return self in _GONE

    @property
    def explains_itself(self) -> bool:
        """Its message alone tells the user what happened and what to do (no log needed)."""
        return self is not FailureKind.INTERNAL

    @property
    def restarts_engine(self) -> bool:
        """Starting the same plan again may cure it (a crash, a hang, a port race); a missing or
        broken model, too little memory or an unsupported GPU need the ladder instead."""
        return self in (FailureKind.WORKER_DIED, FailureKind.UNAVAILABLE, FailureKind.SERVER_ERROR,
                        FailureKind.REQUEST_TIMEOUT, FailureKind.PORT_IN_USE, FailureKind.START_TIMEOUT,
                        FailureKind.START_FAILED)


_GONE = frozenset({FailureKind.CANCELLED, FailureKind.WORKER_DIED, FailureKind.UNAVAILABLE,
                   FailureKind.REQUEST_TIMEOUT})
_START = frozenset({FailureKind.KV_TOO_SMALL, FailureKind.FREE_MEMORY, FailureKind.NO_KV_MEMORY,
                    FailureKind.OUT_OF_MEMORY, FailureKind.UNSUPPORTED, FailureKind.MODEL_MISSING,
                    FailureKind.MODEL_BROKEN, FailureKind.KV_DTYPE, FailureKind.NEXT_MODEL,
                    FailureKind.PORT_IN_USE, FailureKind.START_TIMEOUT, FailureKind.START_FAILED})


def kind_of(exc: BaseException | None) -> FailureKind:
    """The kind an exception carries; INTERNAL for one that carries none (a bug)."""
    kind = getattr(exc, "kind", None)
    return kind if isinstance(kind, FailureKind) else FailureKind.INTERNAL


class BadInput(Exception):
    """Input the user can correct (an empty question, a setting out of range); one line."""
    kind = FailureKind.USER_INPUT
