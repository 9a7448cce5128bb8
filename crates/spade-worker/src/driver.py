# spade sandbox driver, embedded in the `spade-sandbox-worker` binary.
#
# Two roles, one file:
# * `worker_main` is the fork server. It owns no model and no output; it reads
#   spawn/reap requests from the library over a SOCK_SEQPACKET control socket
#   and forks one child per job.
# * `child_main` runs in the forked child: it detaches, applies the hardening
#   layers (implemented in Rust, passed in as `harden`), then serves
#   load/reset/step/close/call requests as JSON lines over its own channel
#   socket. Its stdout/stderr go to a capped pipe read by the library, never to
#   the channel.
import builtins
import collections
import copy
import functools
import heapq
import inspect
import io
import itertools
import json
import math
import operator
import os
import random
import re
import shutil
import signal
import socket
import statistics
import string
import sys
import time
import traceback
import types
import typing

# Modules an environment commonly imports; loading them once in the fork server
# makes each job's start cheap (the child shares them copy-on-write).
PRELOAD = [
    "abc", "array", "bisect", "base64", "dataclasses", "datetime", "decimal",
    "enum", "fractions", "hashlib", "numbers", "struct", "textwrap", "unicodedata",
    "uuid", "zlib", "ast", "tempfile",
]
for _name in PRELOAD:
    try:
        __import__(_name)
    except Exception:  # pragma: no cover - optional module
        pass
# Packages the stage asks for (SandboxConfig::preload: what foreign environments' adapters
# import), trusted code loaded once here instead of once per episode.
for _name in filter(None, os.environ.pop("SPADE_SANDBOX_PRELOAD", "").split(",")):
    try:
        __import__(_name)
    except Exception:  # the episode's own import then says what is wrong
        pass

try:  # numpy is optional; the reference injects it when present
    import numpy as _np  # type: ignore
except Exception:
    _np = None

MAX_STR = 1 << 20
# Bound once: environment code may monkeypatch the json module in its own process.
_dumps = json.dumps
_loads = json.loads


def _fix_str(s):
    s = str(s)
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "replace").decode("utf-8")


def sanitize(value, depth=0):
    """Reduce a value to plain JSON data; anything else becomes a short repr."""
    if depth > 24:
        return "<too deep>"
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -(1 << 63) <= value < (1 << 63):
            return int(value)
        return str(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return _fix_str(value)
    if isinstance(value, (list, tuple)):
        return [sanitize(v, depth + 1) for v in value[:10000]]
    if isinstance(value, dict):
        out = {}
        for i, (k, v) in enumerate(value.items()):
            if i >= 10000:
                break
            out[_fix_str(k) if isinstance(k, str) else _safe_repr(k)] = sanitize(v, depth + 1)
        return out
    if _np is not None:
        try:
            if isinstance(value, _np.generic):
                return sanitize(value.item(), depth + 1)
            if isinstance(value, _np.ndarray):
                return sanitize(value.tolist(), depth + 1)
        except Exception:
            pass
    return _safe_repr(value)


def _safe_repr(value):
    try:
        r = repr(value)
    except BaseException:
        r = "<unrepresentable %s>" % type(value).__name__
    return _fix_str(r[:1000])


class InvalidResult(Exception):
    pass


def _as_number(x, what):
    if _np is not None and isinstance(x, _np.generic):
        x = x.item()
    if isinstance(x, bool):
        return float(x)
    if isinstance(x, (int, float)):
        # the value itself, not what a subclass's __float__ or __int__ says it is
        x = float.__float__(x) if isinstance(x, float) else int.__int__(x)
        try:
            f = float(x)
        except OverflowError:
            raise InvalidResult("%s is too large: %s" % (what, _safe_repr(x)))
        if not math.isfinite(f):
            raise InvalidResult("%s is not finite: %r" % (what, f))
        return f
    raise InvalidResult("%s must be a number, got %s" % (what, type(x).__name__))


def _as_bool(x, what):
    if _np is not None and isinstance(x, _np.generic):
        x = x.item()
    if isinstance(x, bool):
        return x
    if isinstance(x, int) and x in (0, 1):
        return bool(x)
    raise InvalidResult("%s must be a bool, got %s" % (what, type(x).__name__))


def _as_obs(x, what):
    if isinstance(x, str):
        return _fix_str(x)
    raise InvalidResult("%s must be a string (text observation), got %s" % (what, type(x).__name__))


def _as_info(x, what):
    if x is None:
        return {}
    if not isinstance(x, dict):
        raise InvalidResult("%s must be a dict, got %s" % (what, type(x).__name__))
    return sanitize(x)


# Names made available to environment code that forgets an import (as the
# reference does); explicit imports simply rebind them.
def _injections():
    inj = {
        "itertools": itertools, "math": math, "random": random, "re": re, "json": json,
        "collections": collections, "functools": functools, "string": string,
        "copy": copy, "heapq": heapq, "operator": operator, "statistics": statistics,
        "deque": collections.deque, "defaultdict": collections.defaultdict,
        "Counter": collections.Counter, "OrderedDict": collections.OrderedDict,
        "namedtuple": collections.namedtuple,
        "combinations": itertools.combinations, "permutations": itertools.permutations,
        "product": itertools.product, "chain": itertools.chain,
        "accumulate": itertools.accumulate, "reduce": functools.reduce,
        "lru_cache": functools.lru_cache, "deepcopy": copy.deepcopy,
        "heappush": heapq.heappush, "heappop": heapq.heappop,
    }
    for n in ("Any", "Callable", "Dict", "FrozenSet", "Iterable", "List", "Mapping",
              "Optional", "Sequence", "Set", "Tuple", "Union"):
        inj[n] = getattr(typing, n)
    if _np is not None:
        inj["np"] = _np
        inj["numpy"] = _np
    return inj


def _accepts(fn, name):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    for p in sig.parameters.values():
        if p.kind == p.VAR_KEYWORD:
            return True
        if p.name == name and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            return True
    return False


def _find_env_class(mod, wanted):
    cands = []
    for name, obj in list(vars(mod).items()):
        if not isinstance(obj, type) or getattr(obj, "__module__", None) != mod.__name__:
            continue
        if callable(getattr(obj, "reset", None)) and callable(getattr(obj, "step", None)):
            cands.append(obj)
    if wanted:
        c = [k for k in cands if k.__name__ == wanted]
        if not c:
            raise InvalidResult("no environment class named %s" % wanted)
        return c[0], len(cands)
    # keep only the most derived classes
    leaves = [k for k in cands if not any(o is not k and issubclass(o, k) for o in cands)]
    if len(leaves) > 1:
        ended = [k for k in leaves if k.__name__.endswith("Env")]
        if ended:
            leaves = ended
    if not leaves:
        raise InvalidResult("no environment class (a class defining reset and step)")
    if len(leaves) > 1:
        raise InvalidResult("%d environment classes (%s); expected exactly one"
                            % (len(leaves), ", ".join(sorted(k.__name__ for k in leaves))))
    return leaves[0], len(cands)


# The tool-environment contract (setting tool-use). An environment class that defines
# `get_tools()` and `execute_tool(name, arguments)` is a tool environment:
#   get_tools() -> [{"name": str, "description": str, "parameters": JSON schema}, ...]
#   execute_tool(name, arguments: dict) -> str      the tool's result, the next observation
#   step(answer: str) -> (obs, reward, terminated, truncated, info)   the final answer
# The episode speaks JSON calls {"name": ..., "arguments": {...}}: a call of a tool goes to
# execute_tool (reward 0, one turn), the reserved call `answer` ({"answer": "..."}) to step, and a
# reply that is no call of a known tool gets an error observation naming the tools (one turn);
# after max_turns turns without an answer the episode is truncated. reset()'s info carries the
# tools' schemas as info["tools"], so the agent's prompt can list them.
ANSWER_TOOL = {"name": "answer", "description": "Submit the final answer; this ends the task.",
               "parameters": {"type": "object", "properties": {"answer": {"type": "string"}},
                              "required": ["answer"]}}


def _is_tool_env(env):
    return callable(getattr(env, "get_tools", None)) and callable(getattr(env, "execute_tool", None))


# What a tool environment may declare: its schemas go into the agent's first prompt, so they are
# bounded like an observation's text, and a tool's name is a plain identifier.
MAX_TOOLS = 64
MAX_TOOL_DESCRIPTION = 4096
MAX_TOOL_SCHEMA = 16384
MAX_SCHEMA_DEPTH = 12
_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


def _depth(value, limit):
    """Nesting depth of plain data, stopping once past `limit` (a value that contains itself)."""
    stack, deepest, seen = [(value, 0)], 0, 0
    while stack:
        v, d = stack.pop()
        deepest = max(deepest, d)
        seen += 1
        if deepest > limit or seen > 100000:
            return limit + 1
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend((x, d + 1) for x in v)
    return deepest


def _tool_schemas(env):
    tools = env.get_tools()
    if not isinstance(tools, (list, tuple)) or not tools:
        raise InvalidResult("get_tools() must return a non-empty list of tool schemas, got %s" % _describe(tools))
    if len(tools) > MAX_TOOLS:
        raise InvalidResult("get_tools(): %d tools (at most %d)" % (len(tools), MAX_TOOLS))
    out, names = [], set()
    for t in tools:
        if isinstance(t, dict) and isinstance(t.get("function"), dict):
            t = t["function"]  # the OpenAI wrapper {"type": "function", "function": {...}}
        if not (isinstance(t, dict) and type(t.get("name")) is str and t["name"]):
            raise InvalidResult("get_tools(): each tool must be a dict with a name, got %s" % _describe(t))
        name = t["name"]
        if not _TOOL_NAME.fullmatch(name):
            raise InvalidResult("get_tools(): tool name %s is not an identifier (letters, digits, _ . -; at most 64)"
                                % _safe_repr(name[:80]))
        if name == "answer":
            raise InvalidResult("get_tools(): `answer` is reserved for the final answer")
        if name in names:
            raise InvalidResult("get_tools(): two tools named %s" % name)
        names.add(name)
        desc = t.get("description", "")
        if type(desc) is not str or len(desc) > MAX_TOOL_DESCRIPTION:
            raise InvalidResult("get_tools(): the description of %s must be a string of at most %d characters"
                                % (name, MAX_TOOL_DESCRIPTION))
        params = t.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(params, dict):
            raise InvalidResult("get_tools(): the parameters of %s must be a JSON schema (dict)" % name)
        if _depth(params, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH:
            raise InvalidResult("get_tools(): the parameters of %s nest deeper than %d" % (name, MAX_SCHEMA_DEPTH))
        params = sanitize(params)
        if len(_dumps(params)) > MAX_TOOL_SCHEMA:
            raise InvalidResult("get_tools(): the parameters of %s exceed %d characters of JSON" % (name, MAX_TOOL_SCHEMA))
        out.append({"name": name, "description": _fix_str(desc), "parameters": params})
    return out + [ANSWER_TOOL]


def _tool_call(text):
    """The first JSON object with a name in `text`: (name, arguments) or None."""
    text = str(text)
    for start in [i for i, c in enumerate(text) if c == "{"][:64]:
        depth = 0
        for end in range(start, min(len(text), start + 20000)):
            if text[end] == "{":
                depth += 1
            elif text[end] == "}":
                depth -= 1
                if depth == 0:
                    try:
                        v = _loads(text[start:end + 1])
                    except ValueError:
                        break
                    if isinstance(v, dict) and isinstance(v.get("name"), str):
                        args = v.get("arguments", v.get("parameters", {}))
                        if isinstance(args, str):
                            try:
                                args = _loads(args)
                            except ValueError:
                                args = {}
                        return v["name"], args if isinstance(args, dict) else {}
                    break
    return None


class Session:
    def __init__(self):
        self.env = None
        self.mod = None
        self.tools = None
        self.max_turns = 8
        self.turns = 0

    def _exec_module(self, code, filename):
        try:
            compiled = compile(code, filename, "exec")
        except (SyntaxError, ValueError) as e:
            return None, {"status": "exception", "phase": "syntax",
                          "error": "%s: %s" % (type(e).__name__, e),
                          "traceback": "".join(traceback.format_exception_only(type(e), e))}
        mod = types.ModuleType("spade_env")
        mod.__file__ = filename
        for k, v in _injections().items():
            mod.__dict__.setdefault(k, v)
        sys.modules["spade_env"] = mod
        try:
            exec(compiled, mod.__dict__)
        except BaseException as e:
            return None, _exc_resp(e, "load")
        return mod, None

    def load(self, req):
        t = time.perf_counter()
        mod, err = self._exec_module(req["code"], req.get("filename") or "<env>")
        if err:
            return err
        self.mod = mod
        try:
            cls, n = _find_env_class(mod, req.get("class"))
        except InvalidResult as e:
            return {"status": "invalid_result", "phase": "interface", "error": str(e)}
        max_turns = req.get("max_turns")
        try:
            if max_turns is not None and _accepts(cls, "max_turns"):
                self.env = cls(max_turns=max_turns)
            else:
                self.env = cls()
        except BaseException as e:
            return _exc_resp(e, "init")
        self.timings["load_ms"] = (time.perf_counter() - t) * 1e3
        self.max_turns = int(max_turns) if max_turns else 8
        self.tools = None
        return {"status": "ok", "class": cls.__name__, "n_classes": n, "timings": self.timings,
                "reset_takes_seed": _accepts(self.env.reset, "seed"),
                "tool_env": _is_tool_env(self.env),
                "has_close": callable(getattr(self.env, "close", None))}

    def reset(self, req):
        if self.env is None:
            return {"status": "invalid_result", "error": "reset before a successful load"}
        seed = req.get("seed")
        random.seed(seed)
        if _np is not None:
            try:
                _np.random.seed(None if seed is None else seed % (1 << 32))
            except Exception:
                pass
        if _accepts(self.env.reset, "seed"):
            res = self.env.reset(seed=seed)
        else:
            res = self.env.reset()
        if isinstance(res, tuple) and len(res) == 2:
            obs, info = res
        elif isinstance(res, str):
            obs, info = res, {}
        else:
            raise InvalidResult("reset() must return (observation, info), got %s"
                                % _describe(res))
        info = _as_info(info, "reset() info")
        if _is_tool_env(self.env):
            self.tools = _tool_schemas(self.env)
            self.turns = 0
            info["tools"] = self.tools
        return {"status": "ok", "obs": _as_obs(obs, "reset() observation"), "info": info}

    def _tool_step(self, action):
        """A step of a tool environment: a tool call, the answer, or an error observation."""
        self.turns += 1
        over = self.turns >= self.max_turns
        names = [t["name"] for t in self.tools]
        call = _tool_call(action)
        if call is not None and call[0] == "answer":
            answer = call[1].get("answer", "")
            return self.env.step(answer if isinstance(answer, str) else _dumps(answer))
        if call is None or call[0] not in names:
            what = "no JSON tool call" if call is None else "no tool named %r" % call[0][:80]
            obs = "Error: %s. Call one of %s as {\"name\": ..., \"arguments\": {...}}." % (what, ", ".join(names))
            return obs, 0.0, False, over, {"error": what}
        out = self.env.execute_tool(call[0], call[1])
        if not isinstance(out, str):
            out = _dumps(sanitize(out))
        return out, 0.0, False, over, {"tool": call[0]}

    def step(self, req):
        if self.env is None:
            return {"status": "invalid_result", "error": "step before a successful load"}
        if self.tools is not None:
            res = self._tool_step(req["action"])
        else:
            res = self.env.step(req["action"])
        if not (isinstance(res, tuple) and len(res) == 5):
            raise InvalidResult("step() must return (observation, reward, terminated, "
                                "truncated, info), got %s" % _describe(res))
        obs, reward, term, trunc, info = res
        return {"status": "ok", "obs": _as_obs(obs, "step() observation"),
                "reward": _as_number(reward, "step() reward"),
                "terminated": _as_bool(term, "step() terminated"),
                "truncated": _as_bool(trunc, "step() truncated"),
                "info": _as_info(info, "step() info")}

    def close(self, req):
        if self.env is not None and callable(getattr(self.env, "close", None)):
            self.env.close()
        return {"status": "ok"}

    def state(self, req):
        """The environment's plain attributes (int, float, str; not bool) as short strings: what
        validation tries as answers when it looks for one that the observation does not fix."""
        if self.env is None:
            return {"status": "invalid_result", "error": "state before a successful load"}
        d = getattr(self.env, "__dict__", None)
        values = []
        if isinstance(d, dict):
            for v in list(d.values()):
                if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                    continue
                s = v if isinstance(v, str) else repr(v)
                s = s.strip()
                if 0 < len(s) <= 40 and "\n" not in s and s not in values:
                    values.append(s)
                if len(values) >= 32:
                    break
        return {"status": "ok", "values": values}

    def call(self, req):
        mod, err = self._exec_module(req["code"], req.get("filename") or "<snippet>")
        if err:
            return err
        fn = getattr(mod, req["function"], None)
        if not callable(fn):
            return {"status": "invalid_result", "phase": "interface",
                    "error": "no callable named %s" % req["function"]}
        value = fn(*req.get("args", []), **req.get("kwargs", {}))
        return {"status": "ok", "value": sanitize(value)}


def _describe(x):
    if isinstance(x, tuple):
        return "a tuple of %d" % len(x)
    return type(x).__name__


def _exc_resp(e, phase):
    if isinstance(e, MemoryError):
        status = "memory"
    elif isinstance(e, InvalidResult):
        return {"status": "invalid_result", "phase": phase, "error": str(e)}
    else:
        status = "exception"
    try:
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))[-8000:]
        msg = "%s: %s" % (type(e).__name__, _safe_repr_str(e))
    except BaseException:
        tb, msg = "", type(e).__name__
    return {"status": status, "phase": phase, "error": _fix_str(msg[:2000]), "traceback": _fix_str(tb)}


def _safe_repr_str(e):
    try:
        return str(e)
    except BaseException:
        return "<unprintable>"


def serve(chan, timings):
    session = Session()
    session.timings = timings
    rf = chan.makefile("rb")
    ops = {"load": session.load, "reset": session.reset, "step": session.step,
           "close": session.close, "call": session.call, "state": session.state}
    while True:
        line = rf.readline()
        if not line:
            return
        try:
            req = _loads(line)
            op = req.get("op")
            try:
                resp = ops[op](req)
            except BaseException as e:
                resp = _exc_resp(e, op)
            try:
                data = _dumps(resp, ensure_ascii=True, allow_nan=False).encode()
            except BaseException as e:
                data = _dumps({"status": "invalid_result", "phase": op,
                                   "error": "result not serialisable: %s" % type(e).__name__}).encode()
        except MemoryError:
            data = b'{"status": "memory", "error": "MemoryError"}'
        chan.sendall(data + b"\n")
        if op == "close":
            return


def child_main(ctrl, chan_fd, out_fd, scratch, cfg, harden, ro_paths):
    # exit codes: 70 = the sandbox could not be set up (infrastructure), 72 = the episode
    # server itself failed after the environment code ran (the environment's doing).
    code = 70
    t0 = time.perf_counter()
    try:
        ctrl.close()
        os.setsid()
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        keep = {0, 1, 2, chan_fd}
        for fd in _open_fds():
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.chdir(scratch)
        os.environ.clear()
        os.environ.update({"HOME": scratch, "TMPDIR": scratch, "LANG": "C.UTF-8"})
        import tempfile
        tempfile.tempdir = scratch
        cfg = dict(cfg)
        cfg["scratch"] = scratch
        cfg["ro_paths"] = ro_paths
        t1 = time.perf_counter()
        harden(json.dumps(cfg))
        t2 = time.perf_counter()
        chan = socket.socket(fileno=chan_fd)
        code = 72
        serve(chan, {"prepare_ms": (t1 - t0) * 1e3, "harden_ms": (t2 - t1) * 1e3})
        code = 0
    except BaseException:
        try:
            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:
            pass
    finally:
        os._exit(code)


def _open_fds():
    try:
        return [int(x) for x in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 1024))


def _ro_paths():
    """Read-only paths a child may use under landlock: the interpreter and system libraries."""
    paths = set()
    for p in list(sys.path) + [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]:
        if p and os.path.exists(p):
            paths.add(os.path.realpath(p))
    for p in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/etc/localtime", "/etc/ld.so.cache",
              "/dev/urandom", "/dev/zero", "/dev/random", "/proc/self"):
        if os.path.exists(p):
            paths.add(os.path.realpath(p) if p != "/proc/self" else p)
    return sorted(paths)


def worker_main(ctrl_fd, harden, hello_json, private_view):
    hello = json.loads(hello_json)
    ro_paths = _ro_paths()
    hello["ro_paths"] = ro_paths
    ns = hello["layers"]["netns"]
    if "+mnt (" in ns:
        # the file-system view, keeping (read-only) what this Python reads
        view = private_view(hello["scratch_root"], ro_paths)
        hello["layers"]["netns"] = ns[:-1] + "; " + view + ")"
    hello["python"] = sys.version.split()[0]
    ctrl = socket.socket(fileno=ctrl_fd)
    # Keep the preloaded heap out of the collector's reach so children do not dirty
    # (copy) its pages; the fork server itself allocates little.
    import gc
    gc.collect()
    gc.freeze()
    children = {}
    seq = 0
    # 1 when this is the init of the sandbox's own PID namespace
    server_pid = os.getpid()
    base = hello["scratch_root"]
    os.makedirs(base, exist_ok=True)
    ctrl.send(json.dumps({"op": "hello", **hello}).encode())
    while True:
        try:
            msg, fds, _flags, _addr = socket.recv_fds(ctrl, 1 << 16, 4)
        except OSError:
            msg, fds = b"", []
        if not msg:
            break
        req = json.loads(msg)
        op = req.get("op")
        if op == "spawn":
            seq += 1
            scratch = os.path.join(base, "job-%d" % seq)
            try:
                os.mkdir(scratch, 0o700)
                pid = os.fork()
            except OSError as e:
                for fd in fds:
                    os.close(fd)
                ctrl.send(json.dumps({"error": "spawn failed: %s" % e}).encode())
                continue
            if pid == 0:
                child_main(ctrl, fds[0], fds[1], scratch, dict(req.get("config", {}), parent_pid=server_pid), harden, ro_paths)
            for fd in fds:
                os.close(fd)
            children[pid] = scratch
            # A pidfd names the child to the library, whose PID namespace is not ours.
            try:
                pidfd = os.pidfd_open(pid)
            except (OSError, AttributeError):
                pidfd = None
            reply = json.dumps({"pid": pid, "scratch": scratch, "pidfd": pidfd is not None}).encode()
            if pidfd is None:
                ctrl.send(reply)
            else:
                try:
                    socket.send_fds(ctrl, [reply], [pidfd])
                finally:
                    os.close(pidfd)
        elif op == "reap":
            pid = req["pid"]
            scratch = children.pop(pid, None)
            if scratch is None:
                ctrl.send(json.dumps({"error": "unknown pid %d" % pid}).encode())
                continue
            ctrl.send(json.dumps(_reap(pid, req.get("grace_ms", 0))).encode())
            shutil.rmtree(scratch, ignore_errors=True)
            if server_pid == 1:
                _reap_orphans(children)
        elif op == "ping":
            ctrl.send(b'{"pong": true}')
        else:
            ctrl.send(json.dumps({"error": "unknown op"}).encode())
    for pid in list(children):
        _reap(pid, 0)
        shutil.rmtree(children.pop(pid), ignore_errors=True)
    shutil.rmtree(base, ignore_errors=True)


def _reap_orphans(children):
    """As the PID namespace's init, collect the exited processes it inherited: the descendants of
    episodes that ended before them (killed with their episode's process group)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    for name in names:
        if name.isdigit() and int(name) != 1 and int(name) not in children:
            try:
                os.waitpid(int(name), os.WNOHANG)
            except ChildProcessError:
                pass


def _reap(pid, grace_ms):
    deadline = time.monotonic() + grace_ms / 1000.0
    killed = False
    while True:
        try:
            wpid, st = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return {"pid": pid, "code": None, "signal": None, "killed": killed}
        if wpid == pid:
            break
        if killed or time.monotonic() >= deadline:
            if not killed:
                for target in (-pid, pid):
                    try:
                        os.kill(target, signal.SIGKILL)
                    except OSError:
                        pass
                killed = True
                _, st = os.waitpid(pid, 0)
                break
        time.sleep(0.0005)
    # the child's process group should be empty; make sure of it
    try:
        os.kill(-pid, signal.SIGKILL)
    except OSError:
        pass
    if os.WIFSIGNALED(st):
        return {"pid": pid, "code": None, "signal": os.WTERMSIG(st), "killed": killed}
    return {"pid": pid, "code": os.WEXITSTATUS(st), "signal": None, "killed": killed}
