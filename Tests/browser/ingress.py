"""A reverse proxy that behaves as Home Assistant's ingress does towards an add-on: the browser asks for
`/api/hassio_ingress/<token>/…`, the proxy strips that prefix, adds `X-Ingress-Path: /api/hassio_ingress/<token>`
and forwards the request to the add-on's port; an Upgrade (the WebSocket) is piped both ways as bytes once the
add-on answers. A request for any other path is answered 404 here and recorded in `strays`: a link or a socket URL
the page built absolute, which would miss the add-on behind a real ingress.

One request per connection towards the add-on (`Connection: close` is added to plain requests), so each request's
head is rewritten without parsing a keep-alive stream.
"""

import socket
import threading

PREFIX = "/api/hassio_ingress/k7Qx2ZbT"


class IngressProxy:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}{PREFIX}/"
        self.paths = []
        self.strays = []
        self.upgrades = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def close(self):
        self.listener.close()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        try:
            head, rest = self._read_head(client)
            if head is None:
                return
            lines = head.split("\r\n")
            method, target, version = lines[0].split(" ", 2)
            with self.lock:
                self.paths.append(target)
            if target != PREFIX and not target.startswith(PREFIX + "/"):
                with self.lock:
                    self.strays.append(f"{method} {target}")
                client.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            headers = [line for line in lines[1:] if line and not line.lower().startswith(("connection:", "x-ingress-path:"))]
            upgrade = any(line.lower().startswith("upgrade:") for line in lines[1:])
            headers.append(f"X-Ingress-Path: {PREFIX}")
            headers.append("Connection: Upgrade" if upgrade else "Connection: close")
            if upgrade:
                with self.lock:
                    self.upgrades += 1
            forwarded = f"{method} {target[len(PREFIX):] or '/'} {version}\r\n" + "\r\n".join(headers) + "\r\n\r\n"
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            upstream.sendall(forwarded.encode("latin-1") + rest)
            done = threading.Event()
            threading.Thread(target=self._pipe, args=(client, upstream, done), daemon=True).start()
            self._pipe(upstream, client, done)
            done.wait(5)
            upstream.close()
        except OSError:
            pass
        finally:
            client.close()

    @staticmethod
    def _read_head(sock):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return None, b""
            data += chunk
        head, rest = data.split(b"\r\n\r\n", 1)
        return head.decode("latin-1"), rest

    @staticmethod
    def _pipe(source, target, done):
        try:
            while True:
                chunk = source.recv(65536)
                if not chunk:
                    break
                target.sendall(chunk)
        except OSError:
            pass
        finally:
            try:
                target.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            done.set()
