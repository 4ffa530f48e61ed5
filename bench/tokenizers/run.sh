#!/usr/bin/env bash
# Counting throughput and load cost of the tokenizer.json families, in one
# run: internal/hftok (Go) beside the JS port @lenml/tokenizers and the Rust
# library's Node binding, on the same corpus. Prints a Markdown table.
#
#   bash bench/tokenizers/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
ref=internal/hftok/testdata/ref
[ -d "$ref/node_modules/tokenizers" ] || (cd "$ref" && npm ci --no-audit --no-fund)
go_out=$(mktemp)
node_out=$(mktemp)
trap 'rm -f "$go_out" "$node_out"' EXIT
go test -run '^$' -bench 'Count|Load' -benchtime 2s ./internal/hftok > "$go_out"
(cd "$ref" && node --expose-gc bench.js) > "$node_out"
node bench/tokenizers/table.js "$go_out" "$node_out"
