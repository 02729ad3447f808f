# Test plugin: tries the network; on_text answers "ok" or the exception's name.
import socket

def on_text(chunk):
    try:
        if chunk == "socket":
            socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        elif chunk == "connect":
            socket.create_connection(("127.0.0.1", 22), timeout=1)
        elif chunk == "unix":
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        return "ok"
    except Exception as exc:
        return type(exc).__name__
