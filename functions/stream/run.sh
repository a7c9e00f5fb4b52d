#!/bin/bash
# The stream function's "handler": the Lambda Web Adapter layer's wrapper (/opt/bootstrap, set by
# AWS_LAMBDA_EXEC_WRAPPER) runs this script, waits until the app answers on 127.0.0.1:8080 (its
# default port) and turns each Function URL invocation into an HTTP request; with
# AWS_LWA_INVOKE_MODE=response_stream every event is passed on as uvicorn writes it.
# Layers (core, deps) are in /opt/python; the function's own code (app.py) in $LAMBDA_TASK_ROOT.
set -euo pipefail
export PYTHONPATH="/opt/python:${LAMBDA_TASK_ROOT}:${PYTHONPATH:-}"
exec python -m uvicorn --app-dir "${LAMBDA_TASK_ROOT}" --host 127.0.0.1 --port 8080 \
  --no-access-log --timeout-graceful-shutdown 2 app:app
