// Package redistest starts a real redis-server for a test: on a free
// loopback port, in a temporary directory, without persistence unless
// asked, stopped when the test ends. The fault tests use it to kill the
// server (-9), restart it on the same port, and pause it.
//
// Without the redis-server binary a test is skipped with a loud message,
// unless the environment has CI=true: then it fails, because CI must run
// against a real server (.ci/run installs Debian's redis-server).
package redistest
