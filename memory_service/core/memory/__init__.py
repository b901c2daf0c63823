"""Memory CRUD and lifecycle: add, get, update, delete, archive, feedback, supersede, audit."""
