# Test plugin: upper-cases the text; ends the response (with a reason) when it sees STOP.
def on_text(chunk):
    if "STOP" in chunk:
        return {"text": chunk.split("STOP")[0].upper(), "end": True, "reason": "saw STOP"}
    return chunk.upper()
