# Test plugin: sleeps far past any timeout on "sleep", else gives the chunk back.
import time

def on_text(chunk):
    if chunk == "sleep":
        time.sleep(30)
    return chunk
