"""The HTTP edge: FastAPI routes, authentication, error mapping. Thin: it calls the service."""
