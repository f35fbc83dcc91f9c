"""A threaded loopback web server for the scraping tests: scripted routes, hit counts, slow replies, TLS."""

from __future__ import annotations

import contextlib
import datetime
import socket
import ssl
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

HTML = "text/html; charset=utf-8"


@dataclass
class Reply:
    """One scripted response. ``delay`` waits before the status line; ``trickle`` sends the body one
    byte per ``trickle`` seconds, repeating it until the server stops. ``meet`` holds the request
    until as many requests wait at the barrier as it has parties (then ``delay`` applies); a barrier
    that breaks (its timeout) answers 503."""

    status: int = 200
    body: bytes = b""
    content_type: str | None = HTML
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    trickle: float | None = None
    meet: threading.Barrier | None = None


@dataclass(frozen=True)
class SeenRequest:
    path: str
    host: str | None
    user_agent: str | None


class WebFarm:
    """Routes by path (query ignored). A list of replies is served in order, the last one repeating."""

    def __init__(self, server: ThreadingHTTPServer, scheme: str) -> None:
        self._server = server
        self.scheme = scheme
        self.port = int(server.server_address[1])
        self.routes: dict[str, list[Reply]] = {}
        self.hits: Counter[str] = Counter()
        self.requests: list[SeenRequest] = []
        self.sni_names: list[str | None] = []
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        # Requests received and not yet answered, and the most there ever were at once.
        self.in_flight = 0
        self.peak_in_flight = 0

    def route(self, path: str, *replies: Reply) -> None:
        self.routes[path] = list(replies) or [Reply()]

    def html(self, path: str, html: str | bytes, status: int = 200, content_type: str = HTML) -> None:
        body = html.encode() if isinstance(html, str) else html
        self.route(path, Reply(status=status, body=body, content_type=content_type))

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.route(path, Reply(status=status, headers={"Location": location}, content_type=None))

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def total_hits(self) -> int:
        return sum(self.hits.values())

    def next_reply(self, path: str) -> Reply:
        with self.lock:
            self.hits[path] += 1
            replies = self.routes.get(path)
            if not replies:
                return Reply(status=404, body=b"<html><body>not found</body></html>")
            return replies[min(self.hits[path], len(replies)) - 1]


def _handler_for(farm: WebFarm) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            with farm.lock:
                farm.requests.append(
                    SeenRequest(path, self.headers.get("Host"), self.headers.get("User-Agent"))
                )
            reply = farm.next_reply(path)
            with farm.lock:
                farm.in_flight += 1
                farm.peak_in_flight = max(farm.peak_in_flight, farm.in_flight)
            try:
                reply = self._met(reply)
                if reply.delay and farm.stopping.wait(reply.delay):
                    return
            finally:
                # Before the answer goes out: the client cannot send its next request any earlier.
                with farm.lock:
                    farm.in_flight -= 1
            try:
                self._send(reply)
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                return

        def _met(self, reply: Reply) -> Reply:
            if reply.meet is None:
                return reply
            try:
                reply.meet.wait()
            except threading.BrokenBarrierError:
                return Reply(status=503, body=b"<html><body>not met</body></html>")
            return reply

        def _send(self, reply: Reply) -> None:
            self.send_response(reply.status)
            if reply.content_type is not None:
                self.send_header("Content-Type", reply.content_type)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.trickle is None:
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
                return
            self.end_headers()
            body = reply.body or b"x"
            position = 0
            while not farm.stopping.wait(reply.trickle):
                self.wfile.write(body[position : position + 1])
                self.wfile.flush()
                position = (position + 1) % len(body)

        def log_message(self, format: str, *args: object) -> None:
            return None

    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        return None


@contextlib.contextmanager
def running_farm(tls: ssl.SSLContext | None = None) -> Iterator[WebFarm]:
    server = _QuietServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    farm = WebFarm(server, "https" if tls else "http")
    server.RequestHandlerClass = _handler_for(farm)
    if tls is not None:

        def remember_sni(sock: ssl.SSLObject | ssl.SSLSocket, name: str | None, ctx: ssl.SSLContext) -> None:
            farm.sni_names.append(name)

        tls.sni_callback = remember_sni
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield farm
    finally:
        farm.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def unused_port() -> int:
    """A loopback port nobody listens on (bound once, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class CertificateAuthority:
    """A private certificate authority and one server certificate it signed."""

    ca_pem: bytes
    cert_file: Path
    key_file: Path

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cadata=self.ca_pem.decode("ascii"))

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context


def issue_certificate(directory: Path, server_name: str) -> CertificateAuthority:
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "scraping tests CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, server_name)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(server_name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    cert_file = directory / "server.pem"
    key_file = directory / "server.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return CertificateAuthority(
        ca_pem=ca_cert.public_bytes(serialization.Encoding.PEM), cert_file=cert_file, key_file=key_file
    )
