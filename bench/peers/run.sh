#!/usr/bin/env bash
# Runs contextasm and the peer prompt renderers on the same workloads and
# prints the ratio table (see README.md in this folder).
#
#   bash bench/peers/run.sh [--runs N] [--sizes 2000,20000] [--budgets 8192,16384]
#                           [--peers prompt-tsx,priompt,priompt-isolate]
#                           [--max-seconds S] [--keep]
#                           [--contextasm-bin PATH | --contextasm-json DIR]
#
# contextasm is built from ./cmd/contextasm unless --contextasm-bin names a
# binary; --contextasm-json DIR reads DIR/contextasm-<size>-<budget>.json
# (or DIR/contextasm-<size>.json) instead of running `contextasm bench` (to
# re-print a table, or to test this script).
# Needs go, node (20+) and npm; the only network use is installing the
# locked peers when node_modules is missing.
set -euo pipefail

runs=5
sizes=2000,20000
budgets=8192,16384
peers=prompt-tsx,priompt,priompt-isolate
max_seconds=60
keep=0
ca_json=
ca_bin=

usage() {
	sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs=${2:?}; shift 2 ;;
	--sizes) sizes=${2:?}; shift 2 ;;
	--budgets) budgets=${2:?}; shift 2 ;;
	--peers) peers=${2:?}; shift 2 ;;
	--max-seconds) max_seconds=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	--contextasm-json) ca_json=$(cd "${2:?}" && pwd); shift 2 ;;
	--contextasm-bin) ca_bin=$(cd "$(dirname "${2:?}")" && pwd)/$(basename "$2"); shift 2 ;;
	-h | --help) usage ;;
	*) echo "run.sh: unknown argument $1" >&2; usage ;;
	esac
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/contextasm-peers.XXXXXX")
if [ "$keep" = 1 ]; then
	echo "run.sh: keeping $tmp" >&2
else
	trap 'rm -rf "$tmp"' EXIT
fi

# `npm ci` refuses this lockfile: @anysphere/tiktoken-node (priompt's
# tokenizer) lists per-platform packages of which only linux-x64-gnu was
# ever published, so npm cannot record the others and ci calls the lock out
# of sync. `npm install --no-save` installs exactly the locked versions,
# checked against the lock's integrity hashes, and writes nothing back.
if [ ! -d "$here/node_modules" ]; then
	echo "run.sh: installing the peers from package-lock.json" >&2
	(cd "$here" && npm install --no-save --ignore-scripts --no-audit --no-fund >&2)
fi

cd "$root"
echo "run.sh: building the workload generator and the token counter" >&2
go build -o "$tmp/count" ./bench/peers/count
go build -o "$tmp/genworkload" ./bench/genworkload

# The workload's request: its "now" and the session and user its blocks are
# for (bench/workload.go); render.mjs assumes the same by default. Pass them
# to contextasm bench where it takes them (see docs/cli.md).
now=2026-11-30T09:00:00Z
bench_flags=()
if [ -z "$ca_json" ]; then
	if [ -z "$ca_bin" ]; then
		echo "run.sh: building contextasm" >&2
		go build -o "$tmp/contextasm" ./cmd/contextasm
		ca_bin=$tmp/contextasm
	fi
	bench_help=$("$ca_bin" bench -h 2>&1 || true)
	for f in now session user; do
		if grep -q -- "-$f\b" <<<"$bench_help"; then
			case $f in
			now) bench_flags+=(--now "$now") ;;
			session) bench_flags+=(--session s-bench) ;;
			user) bench_flags+=(--user u-bench) ;;
			esac
		fi
	done
fi

# Each budget gets the workload's template for that budget (genworkload
# -budget B: section caps B/4, B/3, B/4, B/2, together more than B), so the
# caps and the budget cut both bind at every budget. The blocks are the
# same for every budget (same seed).
ca_files=()
peer_files=()
count_files=()
IFS=, read -r -a size_list <<<"$sizes"
IFS=, read -r -a budget_list <<<"$budgets"
IFS=, read -r -a peer_list <<<"$peers"
for n in "${size_list[@]}"; do
	for b in "${budget_list[@]}"; do
		wl="$tmp/wl-$n-$b"
		"$tmp/genworkload" -n "$n" -budget "$b" -o "$wl"

		if [ -n "$ca_json" ]; then
			f="$ca_json/contextasm-$n-$b.json"
			[ -f "$f" ] || f="$ca_json/contextasm-$n.json"
			ca_files+=(--contextasm "$f")
		else
			echo "run.sh: contextasm bench, $n blocks, budget $b" >&2
			if ! "$ca_bin" bench -t "$wl/template.json" -m "$wl/memories.jsonl" \
				--budgets "$b" --runs "$runs" ${bench_flags[@]+"${bench_flags[@]}"} \
				--format json >"$tmp/contextasm-$n-$b.json"; then
				echo "run.sh: contextasm bench failed (see above)" >&2
				exit 1
			fi
			ca_files+=(--contextasm "$tmp/contextasm-$n-$b.json")
		fi

		# One process per peer, so that one peer's garbage does not slow the next.
		for p in "${peer_list[@]}"; do
			echo "run.sh: $p, $n blocks, budget $b" >&2
			node "$here/render.mjs" -w "$wl" --budgets "$b" --runs "$runs" --now "$now" \
				--peers "$p" --max-seconds "$max_seconds" --out "$tmp/out-$n" >"$tmp/peers-$n-$b-$p.json"
			peer_files+=(--peers "$tmp/peers-$n-$b-$p.json")
		done
	done
	"$tmp/count" "$tmp/out-$n"/*.txt >"$tmp/counts-$n.tsv"
	count_files+=(--counts "$tmp/counts-$n.tsv")
done

echo "run.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(node --version), $(go version | cut -d' ' -f3)"
node "$here/table.mjs" "${ca_files[@]}" "${peer_files[@]}" "${count_files[@]}" --json "$tmp/table.json"
