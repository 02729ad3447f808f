# Test plugin: holds text back until a word is complete, then gives out whole words in brackets.
held = ""

def on_text(chunk):
    global held
    held += chunk
    cut = held.rfind(" ")
    if cut < 0:
        return ""
    out, held = held[:cut + 1], held[cut + 1:]
    return "".join("[" + w + "] " for w in out.split())

def on_end():
    return "[" + held + "]" if held else ""
