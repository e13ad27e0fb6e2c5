#!/bin/bash
# Container health check (deploy/Dockerfile's HEALTHCHECK): exit 0 when this container's Tessera process answers
# GET /livez with 200. Plain bash (its /dev/tcp), no Node process: a check every 10 s costs a shell, not a ~100 MB
# runtime start, and the slim image needs no curl or wget. A container runs one role and the check cannot see which,
# so it asks each port the image's configuration gives a role (front door PORT, router TESSERA_ROUTER_PORT, subgraph
# TESSERA_SUBGRAPH_PORT) and passes if one answers.
set -u
for port in "${PORT:-8080}" "${TESSERA_ROUTER_PORT:-4100}" "${TESSERA_SUBGRAPH_PORT:-4000}"; do
  [[ "$port" =~ ^[0-9]+$ && "$port" -gt 0 ]] || continue
  # A subshell per port: its descriptor closes with it, and `timeout` bounds a peer that accepts but never answers.
  if timeout 2 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "GET /livez HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" >&3
    IFS= read -r status <&3 || exit 1
    [[ "$status" =~ ^HTTP/1\.[01]\ 200[\ $'"'"'\r'"'"'] ]]
  ' probe "$port" 2>/dev/null; then
    exit 0
  fi
done
exit 1
