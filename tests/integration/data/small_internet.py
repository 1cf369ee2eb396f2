#!/usr/bin/env python3
"""The servers of the network allowlist's tests (small_internet.h), run as root inside their
network namespace (or, with --host, on the host's addresses). Every connection and datagram is
logged to LOG as "tcp ADDR:PORT" or "udp ADDR:PORT", so that a test can tell what reached whom.

  small_internet.py LOG CERT KEY          the internet: HTTP on .2:80 and .3:80, HTTPS on
                                          .2:443, plain TCP on .2:8080, UDP on .2:9999
  small_internet.py --host LOG ADDR:PORT...   plain TCP listeners on the host (rebinding targets)
"""
import socket
import ssl
import sys
import threading

lock = threading.Lock()


def log(path, line):
    with lock, open(path, "a") as out:
        out.write(line + "\n")


def serve_tcp(path, address, port, answer, context=None):
    listener = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address, port))
    listener.listen(64)

    def one(connection):
        with connection:
            log(path, f"tcp {address}:{port}")
            try:
                if context is not None:
                    connection = context.wrap_socket(connection, server_side=True)
                    log(path, f"tls {address}:{port} {connection.server_hostname if hasattr(connection, 'server_hostname') else ''}")
                connection.settimeout(10)
                request = connection.recv(65536)
                first = request.split(b"\r\n", 1)[0].decode("latin-1")
                log(path, f"request {address}:{port} {first}")
                body = answer.encode()
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
            except Exception as error:  # a refused handshake, a client gone
                log(path, f"error {address}:{port} {error}")

    def loop():
        while True:
            connection, _ = listener.accept()
            threading.Thread(target=one, args=(connection,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()


def serve_udp(path, address, port):
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind((address, port))

    def loop():
        while True:
            udp.recvfrom(65536)
            log(path, f"udp {address}:{port}")

    threading.Thread(target=loop, daemon=True).start()


def main():
    if sys.argv[1] == "--host":
        path = sys.argv[2]
        for item in sys.argv[3:]:
            address, port = item.rsplit(":", 1)
            serve_tcp(path, address, int(port), "host\n")
    else:
        path, cert, key = sys.argv[1:4]
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        serve_tcp(path, "10.231.77.2", 80, "web\n")
        serve_tcp(path, "10.231.77.3", 80, "other\n")
        serve_tcp(path, "10.231.77.2", 443, "secure\n", context)
        serve_tcp(path, "10.231.77.2", 8080, "port8080\n")
        serve_tcp(path, "fd77::2", 80, "web6\n")
        serve_udp(path, "10.231.77.2", 9999)
    log(path, "ready")
    threading.Event().wait()


main()
