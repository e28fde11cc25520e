"""A team's OpenAI-compatible server (vLLM, our worker, any /v1 endpoint) used instead of a
local engine: the endpoint from the settings, its API key from the keyring, and a health check
at start that turns every way it can fail into one line (unreachable, 401, unknown model, stall)."""
from __future__ import annotations

import logging

from app.core import settings
from app.core.failures import BadInput
from app.core.plan.types import RemoteEndpoint
from app.worker import engine_errors as errors
from app.worker.client import ChatClient

log = logging.getLogger(__name__)

CONNECT_S = 5.0          # a team server on the LAN connects in milliseconds; 5 s means it is not there
HEALTH_S = 10.0          # /v1/models must answer this soon at start
ANSWER_S = 1800.0        # one answer from another machine, reading included: never an open-ended wait


def endpoint_from_settings(s: settings.Settings | None = None) -> RemoteEndpoint | None:
    """The remote endpoint when the settings say engine = remote; None for a local engine."""
    s = s or settings.load()
    if not s.uses_remote:
        return None
    if not s.remote_url or not s.remote_model:
        raise BadInput("engine is remote but remote_url or remote_model is not set "
                       "(`pagewise settings set remote_url URL`, `… set remote_model NAME`)")
    return RemoteEndpoint(base_url=s.remote_url, model=s.remote_model,
                          context=s.context_cap or RemoteEndpoint.context)


def capped(plan, s: settings.Settings | None = None):
    """The plan with the user's context cap (settings context_cap) applied; vLLM keeps its 8K floor."""
    import dataclasses

    from app.core.plan.types import MIN_LLAMA_CONTEXT, MIN_VLLM_CONTEXT, EngineName
    cap = (s or settings.load()).context_cap
    if not cap or plan.max_model_len <= cap:
        return plan
    cap = max(cap, MIN_VLLM_CONTEXT if plan.engine is EngineName.VLLM else MIN_LLAMA_CONTEXT)
    return dataclasses.replace(plan, max_model_len=cap, kv_tokens=min(plan.kv_tokens or cap, cap),
                               reasons=plan.reasons + (f"context capped at {cap // 1024}K by the settings "
                                                       f"(context_cap)",))


def plan_for(endpoint: RemoteEndpoint, catalogue) -> tuple:
    """The plan for a team's server and its client: the context capped by what the server says
    the model has (vLLM and our worker report max_model_len); the health check's failures are one line."""
    import dataclasses

    from app.core.plan import planner
    client, served_context = connect(endpoint.base_url, endpoint.model)
    if served_context:
        endpoint = dataclasses.replace(endpoint, context=min(endpoint.context, served_context))
    return planner.make_plan(None, catalogue, remote=endpoint), client


def api_key() -> str:
    """The remote API key from the OS keyring; none stored (or no keyring): no key is sent."""
    try:
        return settings.get_secret("remote_api_key") or ""
    except settings.NoKeyring:
        log.warning("no keyring service: the remote endpoint is asked without an API key")
        return ""


def connect(base_url: str, model: str) -> tuple[ChatClient, int | None]:
    """A client for the endpoint after its health check; returns it with the context the server
    says the model has (vLLM and our worker report max_model_len), or None."""
    client = ChatClient(base_url, api_key(), model, connect_timeout_s=CONNECT_S, total_s=ANSWER_S)
    where = f"remote: {base_url}"
    try:
        entries = client.model_list(timeout_s=HEALTH_S)
    except errors.RequestTimeout:
        raise errors.RequestTimeout(f"{where} accepted the connection but sent nothing for "
                                    f"{HEALTH_S:.0f} s (the server stalled)") from None
    except errors.AuthFailed:
        raise errors.AuthFailed(f"{where} refused the API key (HTTP 401/403): "
                                "`pagewise settings set-secret remote_api_key`") from None
    except errors.WorkerError as exc:       # unreachable, 5xx, …: which server, then what happened
        raise _reworded(exc, where) from None
    except (ValueError, AttributeError, TypeError, RecursionError):
        raise errors.ServerError(f"{where}: /models did not answer OpenAI-style JSON") from None
    served = {m.get("id"): m for m in entries}
    if model not in served:
        names = ", ".join(sorted(str(n) for n in served)) or "none"
        raise errors.BadRequest(f"{where} does not serve model {model!r} (it serves: {names}); "
                                f"`pagewise settings set remote_model NAME`", 404)
    context = served[model].get("max_model_len")
    return client, int(context) if isinstance(context, int) and context > 0 else None


def _reworded(exc: errors.WorkerError, where: str) -> errors.WorkerError:
    import copy
    out = copy.copy(exc)
    out.args = (f"{where}: {' '.join(str(exc).split())}",)
    return out
