"""devstack.llm: the local model server's launch settings (no server is started here)."""

from __future__ import annotations

from pathlib import Path

from devstack.llm import ServerConfig, server_env


def test_the_servers_port_and_host_win_over_variables_meant_for_our_api() -> None:
    # Given an environment where PORT and HOST are set for the project's own HTTP API (as CI does)
    config = ServerConfig(port=42467)
    # When the model server's environment is built
    env = server_env(config, Path("/models/smol.gguf"),
                     base={"PORT": "8091", "HOST": "0.0.0.0", "PATH": "/bin"})
    # Then llama_cpp.server, which reads those unprefixed variables, gets the configured ones
    assert (env["PORT"], env["HOST"]) == ("42467", config.host)
    assert env["MODEL"] == "/models/smol.gguf" and env["MODEL_ALIAS"] == config.alias
    # and the rest of the environment is kept
    assert env["PATH"] == "/bin"
