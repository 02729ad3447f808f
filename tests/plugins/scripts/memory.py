# Test plugin: allocates 2 GB, past the sandbox's memory limit.
def on_text(chunk):
    block = bytearray(2 * 1024 * 1024 * 1024)
    return str(len(block))
