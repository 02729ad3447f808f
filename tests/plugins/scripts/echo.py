# Test plugin: gives every chunk back; with config {"report": true}, on_end gives the request as JSON.
import json

request = {}

def on_start(req):
    request.update(req)

def on_text(chunk):
    return chunk

def on_end():
    return json.dumps(request, sort_keys=True) if request.get("config", {}).get("report") else ""
