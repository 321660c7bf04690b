"""One TLS context for every client the tests point at a loopback server. httpx (and the OpenAI SDK through it) reads
the CA bundle again for each client it makes, ~25 ms, and a file of fifty tests makes a client or more in each; the
servers are plain http, so the context is never used, and it still verifies like httpx's default."""
import httpx

TLS = httpx.create_ssl_context()
