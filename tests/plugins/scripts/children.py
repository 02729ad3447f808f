# Test plugin: tries to start a process (os.fork, subprocess.run); answers "ok" or the exception's name.
import os
import subprocess

def on_text(chunk):
    try:
        if chunk == "fork":
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
        elif chunk == "subprocess":
            subprocess.run(["true"], check=True)
        return "ok"
    except Exception as exc:
        return type(exc).__name__
