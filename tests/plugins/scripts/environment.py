# Test plugin: answers with the environment it sees, as JSON.
import json
import os

def on_text(chunk):
    return json.dumps(dict(os.environ))
