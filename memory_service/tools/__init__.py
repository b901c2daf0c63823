"""The MCP surface: one module per tool category, each a list of ToolSpecs."""

from memory_service.tools.consistency import CONSISTENCY_TOOLS
from memory_service.tools.explain import EXPLAIN_TOOLS
from memory_service.tools.feedback import FEEDBACK_TOOLS
from memory_service.tools.graph import GRAPH_TOOLS
from memory_service.tools.index import INDEX_TOOLS
from memory_service.tools.memory import MEMORY_TOOLS
from memory_service.tools.normalize import NORMALIZE_TOOLS
from memory_service.tools.portability import PORTABILITY_TOOLS
from memory_service.tools.search import SEARCH_TOOLS
from memory_service.tools.statistics import STATISTICS_TOOLS
from memory_service.tools.trace import TRACE_TOOLS

ALL_TOOLS = [*MEMORY_TOOLS, *SEARCH_TOOLS, *INDEX_TOOLS]
ALL_TOOLS += [*EXPLAIN_TOOLS, *FEEDBACK_TOOLS, *GRAPH_TOOLS, *TRACE_TOOLS, *CONSISTENCY_TOOLS]
ALL_TOOLS += [*STATISTICS_TOOLS]
ALL_TOOLS += [*NORMALIZE_TOOLS]
ALL_TOOLS += [*PORTABILITY_TOOLS]

__all__ = ["ALL_TOOLS"]
