"""The application layer: what the command line and the window both ask of Pagewise.

One `Assistant` asks, reads, reviews and compares over the library; it owns the engine's
runtime, the evidence search, the documents' locks, the conversations and the stored
exchanges, and tells its listeners (typed events) when the engine's state or plan changes.
The front-ends only parse and print (app.cli) or bind widgets (app.qt)."""
from app.service.assistant import Assistant, answers_under_way
from app.service.documents import DocRef, doc_refs
from app.service.events import EngineState, PlanChanged
from app.service.following import LibraryChanged

__all__ = ["Assistant", "answers_under_way", "DocRef", "doc_refs", "EngineState", "LibraryChanged", "PlanChanged"]
