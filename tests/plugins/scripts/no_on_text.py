# Test plugin: defines no on_text, so it cannot run.
def on_start(request):
    pass
