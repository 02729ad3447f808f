// The plugin host program (embedded Python) and how the interpreter is found and sandboxed.
#include "plugins/python_host.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace mb::plugins {

namespace {

bool executable(const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

std::string onPath(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    std::string dir;
    while (std::getline(dirs, dir, ':'))
        if (!dir.empty() && executable(std::filesystem::path(dir) / name))
            return std::filesystem::absolute(std::filesystem::path(dir) / name).string();
    return {};
}

} // namespace

std::string resolvePython(const ChainOptions& options) {
    if (!options.python.empty()) {
        const std::string found = options.python.find('/') == std::string::npos
                                      ? onPath(options.python)
                                      : (executable(options.python) ? std::filesystem::absolute(options.python).string() : "");
        if (found.empty()) throw PluginError("the Python interpreter " + options.python + " was not found or is not executable");
        return found;
    }
    if (executable("/usr/bin/python3")) return "/usr/bin/python3";
    const std::string found = onPath("python3");
    if (found.empty()) throw PluginError("script plugins need Python 3: no /usr/bin/python3 and no python3 on PATH");
    return found;
}

SandboxSpec pythonSandboxSpec(const std::string& python, const char* program, const SandboxLimits& limits,
                              bool allowUnsandboxed) {
    SandboxSpec spec;
    spec.program = python;
    spec.args = {"-I", "-S", "-B", "-c", program};
    spec.limits = limits;
    spec.allowUnsandboxed = allowUnsandboxed;
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(python, ec);
    const std::string prefix = ec ? "" : real.parent_path().parent_path().string();
    if (!prefix.empty() && prefix != "/" && prefix.rfind("/usr", 0) != 0) spec.readable.push_back(prefix);
    return spec;
}

std::string base64(std::string_view bytes) {
    static const char* const kDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
        if (i + 1 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
        if (i + 2 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 2]);
        out += kDigits[(v >> 18) & 63];
        out += kDigits[(v >> 12) & 63];
        out += i + 1 < bytes.size() ? kDigits[(v >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? kDigits[v & 63] : '=';
    }
    return out;
}

const char* const kPluginHost = R"PY(
import base64, json, sys

def _error(exc):
    text = str(exc).strip().splitlines()
    return {"error": type(exc).__name__ + (": " + text[0] if text else "")}

def _reply(value, call):
    if value is None:
        return {"text": ""}
    if isinstance(value, str):
        return {"text": value}
    if isinstance(value, dict):
        text = value.get("text", "")
        if not isinstance(text, str):
            raise TypeError(call + " returned a dict whose text is " + type(text).__name__ + ", not a str")
        out = {"text": text}
        if value.get("end"):
            out["end"] = True
            out["reason"] = str(value.get("reason", ""))
        return out
    raise TypeError(call + " returned " + type(value).__name__ + ", not a str or a dict")

def _main():
    stdin, stdout = sys.stdin.buffer, sys.stdout
    def send(obj):
        stdout.write(json.dumps(obj) + "\n")
        stdout.flush()
    first = stdin.readline()
    if not first:
        return
    hello = json.loads(first)
    plugin = {"__name__": "__plugin__", "__file__": hello["name"], "__builtins__": __builtins__}
    try:
        exec(compile(base64.b64decode(hello["source_base64"]), hello["name"], "exec"), plugin)
    except Exception as exc:
        send(_error(exc))
        return
    on_start, on_text, on_end = (plugin.get(n) for n in ("on_start", "on_text", "on_end"))
    if not callable(on_text):
        send({"error": "NameError: the script defines no on_text(chunk) function"})
        return
    send({"ready": True})
    for line in stdin:
        msg = json.loads(line)
        call = msg.get("call")
        try:
            if call == "start":
                if callable(on_start):
                    on_start(msg.get("request", {}))
                send({"text": ""})
            elif call == "text":
                send(_reply(on_text(msg["chunk"]), "on_text"))
            elif call == "end":
                send(_reply(on_end() if callable(on_end) else None, "on_end"))
            else:
                send({"error": "ValueError: unknown call " + repr(call)})
        except Exception as exc:
            send(_error(exc))

_main()
)PY";

} // namespace mb::plugins
