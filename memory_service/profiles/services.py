"""What the seed profiles use of the services: the core services they call, not the whole bundle
the app wires (``app.Services`` has these and more, and satisfies this by its shape)."""

from __future__ import annotations

from typing import Protocol

from memory_service.core.memory.archive import ArchiveService
from memory_service.core.memory.feedback import FeedbackService
from memory_service.core.memory.service import MemoryService
from memory_service.core.memory.supersede import SupersedeService
from memory_service.core.records import Stores
from memory_service.core.search.service import SearchService
from memory_service.settings import Settings


class ProfileServices(Protocol):
    @property
    def settings(self) -> Settings: ...
    @property
    def stores(self) -> Stores: ...
    @property
    def memory(self) -> MemoryService: ...
    @property
    def search(self) -> SearchService: ...
    @property
    def feedback(self) -> FeedbackService: ...
    @property
    def supersede(self) -> SupersedeService: ...
    @property
    def archive(self) -> ArchiveService: ...
