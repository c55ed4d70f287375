# SPDX-License-Identifier: MIT
# Sourced by the guest's serving checks: serve_wait_ready PORT PID SECONDS waits until the
# tpu-serve of process PID on 127.0.0.1:PORT answers /v2/health/ready with 200; it fails, saying
# why, if the server exits or SECONDS pass first.
serve_wait_ready() {
	_tries=0
	until wget -q -O /dev/null "http://127.0.0.1:$1/v2/health/ready"; do
		_tries=$((_tries + 1))
		[ $_tries -lt "$3" ] || { echo "tpu-serve on port $1 is not ready after $3 s"; return 1; }
		kill -0 "$2" 2>/dev/null || { echo "tpu-serve on port $1 exited"; return 1; }
		sleep 1
	done
}
