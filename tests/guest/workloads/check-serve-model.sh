#!/bin/sh
# SPDX-License-Identifier: MIT
# In the guest: serves each compiled model of MODELS_DIR (mlp, cnn: written on the host by
# tests/compiler, vm_tpumodel_models) on the card with tpu-serve --model x.tpumodel, runs
# test_serve_model against it, stops it with SIGTERM and requires a clean exit.
#   check-serve-model.sh GUEST_BUILD_DIR MODELS_DIR
set -eu
. tests/guest/workloads/serve-ready.sh
b=$1
models=$2
port=8510
for name in mlp cnn; do
	model=$models/$name.tpumodel
	echo "== tpu-serve --model $model"
	"$b/workloads/serve/tpu-serve" --model "$model" --port $port --max-batch 8 \
		--queue-delay-us 20000 &
	pid=$!
	serve_wait_ready $port $pid 120 || { kill $pid; exit 1; }
	SERVE_PORT=$port SERVE_MODEL=$model SERVE_NAME=$name \
		"$b/tests/guest/test_serve_model" --durations yes --use-colour no || { kill $pid; exit 1; }
	kill -TERM $pid
	rc=0
	wait $pid || rc=$?
	[ $rc -eq 0 ] || { echo "check-serve-model: tpu-serve exited with $rc after SIGTERM"; exit 1; }
done
echo "check-serve-model: passed"
