# Sourced by bench/service/run.sh and bench/multi-gpu/run.sh: a Redis of their own on a free port, with the
# append-only file on as the service expects (docs/service.md), and the service's token. Not scripts/redis:
# that one installs the packages first (scripts/deps), which a carried GPU host cannot.
#   free_port                  a free TCP port on 127.0.0.1
#   start_redis DIR            redis-server in the background, data and log in DIR; sets redis_port and redis
#                              (its URL); stop_redis DIR stops it
#   new_service_token          exports PTXBENCH_SERVICE_TOKEN, random
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_redis() {
  command -v redis-server >/dev/null || { echo "redis-server missing: scripts/deps installs it"; exit 2; }
  mkdir -p "$1"
  redis_port=$(free_port)
  redis=redis://127.0.0.1:$redis_port
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$1" --appendonly yes --appendfsync always \
    --save "" --logfile redis.log --daemonize yes --pidfile "$1/redis.pid"
}

stop_redis() {
  kill "$(cat "$1/redis.pid")" 2>/dev/null
}

new_service_token() {
  PTXBENCH_SERVICE_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(24))')
  export PTXBENCH_SERVICE_TOKEN
}
