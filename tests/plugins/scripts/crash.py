# Test plugin: fails in the way the chunk names: raise, exit (status 3), abort (SIGABRT).
import os
import sys

def on_text(chunk):
    if chunk == "raise":
        raise ValueError("bad chunk")
    if chunk == "exit":
        sys.exit(3)
    if chunk == "abort":
        os.abort()
    return chunk
