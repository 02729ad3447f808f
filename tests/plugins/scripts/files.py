# Test plugin: writes where the chunk says (a path, or "scratch" for its cwd); answers "ok" or the exception's name.
def on_text(chunk):
    try:
        path = "scratch.txt" if chunk == "scratch" else chunk
        with open(path, "w") as f:
            f.write("written by a plugin")
        with open(path) as f:
            return "ok" if f.read() == "written by a plugin" else "mismatch"
    except Exception as exc:
        return type(exc).__name__
