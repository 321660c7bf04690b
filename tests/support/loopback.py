"""TLS for the tests on loopback. `TLS` is the package's one TLS context (`tls_context`), for every client the tests
point at a loopback server: httpx (and the OpenAI SDK through it) would read the CA bundle again for each client it
makes, ~25 ms, and a file of fifty tests makes a client or more in each. `https_server` serves a handler over TLS, with
a certificate of its own that only the CA file it yields trusts."""
import contextlib, datetime, ipaddress, ssl, threading
from http.server import ThreadingHTTPServer
from pathlib import Path

from gaia_mas.core.model_server import tls_context

TLS = tls_context()


def _self_signed(folder:Path) -> tuple[Path, Path]:
    "A certificate for 127.0.0.1 that signs itself, and its key: (cert file, key file) in `folder`."
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "loopback")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    (folder/"cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder/"key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                     serialization.NoEncryption()))
    return folder/"cert.pem", folder/"key.pem"


@contextlib.contextmanager
def https_server(handler, # a BaseHTTPRequestHandler class
                 folder:Path, # where the certificate and its key are written
                ):
    "Serve `handler` over TLS on a free loopback port; yield (its https:// base URL, the CA file that trusts it)."
    cert, key = _self_signed(folder)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(cert, key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try: yield f"https://127.0.0.1:{server.server_port}", cert
    finally: server.shutdown(); server.server_close()
