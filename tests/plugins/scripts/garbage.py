# Test plugin: prints something that is not JSON to stdout before answering.
def on_text(chunk):
    print("hello there")
    return chunk
