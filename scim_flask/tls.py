"""HTTPS for the service itself: the one TLS context every listening worker uses.

TLS 1.2 is the floor and TLS 1.3 is offered; TLS 1.2 negotiates only forward-secret (ECDHE)
suites with AEAD ciphers (TLS 1.3's suites all are). With a client CA, every client must present
a certificate it issued. The files are read when the context is built, at start-up and again on
each graceful reload (``SIGHUP`` to the gunicorn master), so a renewed certificate is served by
the new workers while the old ones finish their requests.
"""

from __future__ import annotations

import ssl

__all__ = ["FORWARD_SECRET_CIPHERS", "server_context"]

#: The TLS 1.2 suites offered: ECDHE key exchange, AES-GCM or ChaCha20-Poly1305 (OpenSSL names).
FORWARD_SECRET_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20"


def server_context(
    cert_file: str, key_file: str | None = None, client_ca_file: str | None = None
) -> ssl.SSLContext:
    """A server-side TLS context for the service's listener.

    :param cert_file: the certificate chain (PEM), the server's certificate first.
    :param key_file: its private key (PEM); ``None`` when ``cert_file`` holds it too.
    :param client_ca_file: CA certificates (PEM) whose clients are accepted; when given, a
        client without a certificate from one of them fails the handshake.
    :raises OSError: a file cannot be read.
    :raises ssl.SSLError: a file is not a certificate or key, or the key does not match.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_ciphers(FORWARD_SECRET_CIPHERS)
    context.options |= ssl.OP_NO_COMPRESSION | ssl.OP_CIPHER_SERVER_PREFERENCE
    context.load_cert_chain(cert_file, key_file)
    if client_ca_file:
        context.load_verify_locations(cafile=client_ca_file)
        context.verify_mode = ssl.CERT_REQUIRED
    return context
