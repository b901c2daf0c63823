"""Operations surface: Prometheus metrics, store and model timing, the HTTP side server.

Everything here sits outside ``core``: core records tool calls through a small port
(:mod:`memory_service.core.ports.metrics`); prometheus_client is imported only in this package.
"""
