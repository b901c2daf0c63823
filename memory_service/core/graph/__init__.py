"""Graph tools and analysis: graph_query, get_related, traceability, design context, consistency."""
