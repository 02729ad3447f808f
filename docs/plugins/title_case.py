# Sample script plugin: capitalises the first letter of every sentence, holding back nothing
# but the state it needs (whether the next letter starts a sentence). docs/PLUGINS.md.
start = True


def on_start(request):
    global start
    start = True


def on_text(chunk):
    global start
    out = []
    for ch in chunk:
        if start and ch.isalpha():
            out.append(ch.upper())
            start = False
        else:
            out.append(ch)
            if ch in ".!?":
                start = True
    return "".join(out)


def on_end():
    return ""
