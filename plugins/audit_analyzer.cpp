// The audit's analyser: Python's own ast module, embedded, run in the plugin sandbox.
#include "plugins/audit.h"

#include "plugins/python_host.h"
#include "plugins/script_process.h"

namespace mb::plugins::detail {

namespace {

// Reads {"source_base64"}; answers {"parsed", "imports", "calls", "findings", "functions"}
// or {"parsed": false, "error", "line"}. Parses, never runs, the script.
const char* const kAnalyzer = R"PY(
import ast, base64, fnmatch, json, sys

RULES = [
    ("os.system", "process", "high", "runs a shell command"),
    ("os.popen", "process", "high", "runs a shell command"),
    ("os.fork*", "process", "high", "forks a process"),
    ("os.exec*", "process", "high", "replaces the process with a program"),
    ("os.spawn*", "process", "high", "starts a process"),
    ("os.posix_spawn*", "process", "high", "starts a process"),
    ("os.kill*", "process", "high", "signals a process"),
    ("subprocess.*", "process", "high", "starts a process"),
    ("pty.*", "process", "high", "starts a process on a terminal"),
    ("multiprocessing.*", "process", "high", "starts processes"),
    ("socket.*", "network", "high", "uses sockets"),
    ("urllib.*", "network", "high", "opens URLs"),
    ("http.client.*", "network", "high", "makes HTTP requests"),
    ("requests.*", "network", "high", "makes HTTP requests"),
    ("ftplib.*", "network", "high", "uses FTP"),
    ("smtplib.*", "network", "high", "sends mail"),
    ("asyncio.open_connection", "network", "high", "opens a network connection"),
    ("asyncio.start_server", "network", "high", "listens on the network"),
    ("os.remove", "filesystem", "medium", "deletes a file"),
    ("os.unlink", "filesystem", "medium", "deletes a file"),
    ("os.rename", "filesystem", "medium", "renames a file"),
    ("os.replace", "filesystem", "medium", "renames a file"),
    ("os.mkdir", "filesystem", "medium", "creates a folder"),
    ("os.makedirs", "filesystem", "medium", "creates folders"),
    ("os.rmdir", "filesystem", "medium", "deletes a folder"),
    ("os.removedirs", "filesystem", "medium", "deletes folders"),
    ("os.open", "filesystem", "medium", "opens a file"),
    ("os.chmod", "filesystem", "medium", "changes permissions"),
    ("os.chown", "filesystem", "medium", "changes ownership"),
    ("os.symlink", "filesystem", "medium", "creates a link"),
    ("os.link", "filesystem", "medium", "creates a link"),
    ("os.truncate", "filesystem", "medium", "truncates a file"),
    ("os.listdir", "filesystem", "low", "lists a folder"),
    ("os.scandir", "filesystem", "low", "lists a folder"),
    ("os.walk", "filesystem", "low", "walks folders"),
    ("shutil.*", "filesystem", "medium", "copies, moves or deletes files"),
    ("*.write_text", "filesystem", "medium", "writes a file (pathlib)"),
    ("*.write_bytes", "filesystem", "medium", "writes a file (pathlib)"),
    ("*.unlink", "filesystem", "medium", "deletes a file (pathlib)"),
    ("*.rmdir", "filesystem", "medium", "deletes a folder (pathlib)"),
    ("*.touch", "filesystem", "medium", "creates a file (pathlib)"),
    ("os.environ*", "environment", "medium", "reads or changes the environment"),
    ("os.getenv", "environment", "medium", "reads the environment"),
    ("os.getenvb", "environment", "medium", "reads the environment"),
    ("os.putenv", "environment", "medium", "changes the environment"),
    ("os.unsetenv", "environment", "medium", "changes the environment"),
    ("eval", "dynamic", "high", "evaluates code from a string"),
    ("exec", "dynamic", "high", "executes code from a string"),
    ("compile", "dynamic", "high", "compiles code from a string"),
    ("__import__", "dynamic", "high", "imports a module by name"),
    ("importlib.*", "dynamic", "high", "imports a module by name"),
    ("globals", "dynamic", "medium", "reaches the module's namespace"),
    ("locals", "dynamic", "medium", "reaches a frame's namespace"),
    ("vars", "dynamic", "medium", "reaches a namespace"),
    ("sys._getframe", "dynamic", "medium", "inspects frames"),
    ("sys.modules*", "dynamic", "medium", "reaches loaded modules"),
    ("ctypes.*", "native", "high", "calls native code"),
    ("cffi.*", "native", "high", "calls native code"),
    ("mmap.*", "native", "high", "maps memory"),
]
IMPORTS = {
    "os": ("import", "low", "imports os (processes, files, environment)"),
    "sys": ("import", "low", "imports sys"),
    "subprocess": ("process", "high", "imports subprocess"),
    "pty": ("process", "high", "imports pty"),
    "multiprocessing": ("process", "high", "imports multiprocessing"),
    "signal": ("process", "medium", "imports signal"),
    "socket": ("network", "high", "imports socket"),
    "urllib": ("network", "high", "imports urllib"),
    "http": ("network", "high", "imports http"),
    "requests": ("network", "high", "imports requests"),
    "ftplib": ("network", "high", "imports ftplib"),
    "smtplib": ("network", "high", "imports smtplib"),
    "asyncio": ("network", "medium", "imports asyncio"),
    "shutil": ("filesystem", "medium", "imports shutil"),
    "pathlib": ("filesystem", "low", "imports pathlib"),
    "importlib": ("dynamic", "high", "imports importlib"),
    "ctypes": ("native", "high", "imports ctypes"),
    "cffi": ("native", "high", "imports cffi"),
    "mmap": ("native", "high", "imports mmap"),
}
ESCAPES = {"__globals__", "__builtins__", "__subclasses__", "__code__", "__bases__", "__mro__", "__getattribute__"}
INTROSPECTION = {"__class__", "__dict__"}

class Analyzer(ast.NodeVisitor):
    def __init__(self):
        self.aliases, self.imports, self.calls, self.findings, self.seen = {}, [], [], [], set()

    def find(self, category, severity, what, line, rule=None):
        key = (category, rule or what, line)
        if key not in self.seen:
            self.seen.add(key)
            self.findings.append({"category": category, "severity": severity, "what": what, "line": line})

    def imported(self, module, line):
        self.imports.append({"module": module, "line": line})
        top = module.split(".")[0]
        if top in IMPORTS:
            category, severity, what = IMPORTS[top]
            self.find(category, severity, what, line)

    def visit_Import(self, node):
        for a in node.names:
            self.imported(a.name, node.lineno)
            if a.asname:
                self.aliases[a.asname] = a.name
            else:
                self.aliases[a.name.split(".")[0]] = a.name.split(".")[0]

    def visit_ImportFrom(self, node):
        module = ("." * node.level) + (node.module or "")
        self.imported(module, node.lineno)
        for a in node.names:
            self.aliases[a.asname or a.name] = module + "." + a.name
            self.match(module + "." + a.name, node.lineno, "")

    def dotted(self, node):
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return (base if base else "<expr>") + "." + node.attr
        return None

    def match(self, name, line, suffix):
        for pattern, category, severity, what in RULES:
            if fnmatch.fnmatchcase(name, pattern) or (pattern.endswith(".*") and name == pattern[:-2]):
                self.find(category, severity, name + suffix + " " + what, line, pattern)
                return

    def visit_Attribute(self, node):
        if node.attr in ESCAPES:
            self.find("dynamic", "high", "reaches " + node.attr + " (a classic sandbox escape)", node.lineno)
        elif node.attr in INTROSPECTION:
            self.find("dynamic", "medium", "reaches " + node.attr, node.lineno)
        name = self.dotted(node)
        if name and not isinstance(getattr(node, "_mb_parent", None), ast.Call):
            self.match(name, node.lineno, "")
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id == "__builtins__":
            self.find("dynamic", "high", "reaches __builtins__", node.lineno)

    def visit_Call(self, node):
        name = self.dotted(node.func) or "<expr>"
        self.calls.append({"name": name, "line": node.lineno})
        node.func._mb_parent = node
        self.match(name, node.lineno, "(...)")
        if name in ("open", "io.open", "builtins.open", "codecs.open"):
            self.check_open(node)
        if name == "getattr" and len(node.args) >= 2 and not isinstance(node.args[1], ast.Constant):
            self.find("dynamic", "medium", "getattr with a computed name", node.lineno)
        if name in ("__import__", "importlib.import_module") and node.args and isinstance(node.args[0], ast.Constant):
            self.imported(str(node.args[0].value), node.lineno)
        self.generic_visit(node)

    def check_open(self, node):
        mode = node.args[1] if len(node.args) >= 2 else next((k.value for k in node.keywords if k.arg == "mode"), None)
        if mode is None:
            self.find("filesystem", "low", "open(...) reads a file", node.lineno)
        elif isinstance(mode, ast.Constant) and isinstance(mode.value, str):
            if any(c in mode.value for c in "wax+"):
                self.find("filesystem", "medium", "open(..., %r) writes a file" % mode.value, node.lineno)
            else:
                self.find("filesystem", "low", "open(...) reads a file", node.lineno)
        else:
            self.find("filesystem", "medium", "open(...) with a computed mode", node.lineno)

def analyze(source):
    try:
        tree = ast.parse(source, "<plugin>")
    except SyntaxError as exc:
        return {"parsed": False, "message": exc.msg, "line": exc.lineno or 0}
    except ValueError as exc:
        return {"parsed": False, "message": str(exc), "line": 0}
    a = Analyzer()
    a.visit(tree)
    functions = {}
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[n.name] = True
    out = {n: n in functions for n in ("on_start", "on_text", "on_end")}
    if not out["on_text"]:
        a.find("interface", "high", "no top-level on_text(chunk) function: the plugin cannot run", 0)
    return {"parsed": True, "imports": a.imports, "calls": a.calls, "findings": a.findings, "functions": out}

hello = json.loads(sys.stdin.buffer.readline())
sys.stdout.write(json.dumps(analyze(base64.b64decode(hello["source_base64"]))) + "\n")
sys.stdout.flush()
)PY";

} // namespace

nlohmann::json analyzeSource(const std::string& source, const std::string& name, const ChainOptions& options,
                             const SandboxLimits& limits) {
    const SandboxSpec spec = pythonSandboxSpec(resolvePython(options), kAnalyzer, limits, options.allowUnsandboxed);
    ScriptProcess proc(spec, "the audit of " + name);
    return proc.call({{"name", name}, {"source_base64", base64(source)}}, "the analysis", 30000, "parsed");
}

} // namespace mb::plugins::detail
