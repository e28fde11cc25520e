"""A team's OpenAI-compatible server as an engine: nothing to launch, a client after a health check."""
from __future__ import annotations

from app.core.plan.types import EngineName, Plan
from app.worker import remote
from app.worker.client import ChatClient
from app.worker.engines.base import EngineAdapter


class RemoteAdapter(EngineAdapter):
    name = EngineName.REMOTE
    runs_locally = False

    def connect(self, plan: Plan) -> ChatClient:
        """A client for the endpoint (its health check turns every failure into one line)."""
        client, _context = remote.connect(plan.base_url, plan.model_id)
        return client
