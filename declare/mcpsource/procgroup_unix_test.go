//go:build unix

package mcpsource_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/contextasm/contextasm/declare/mcpsource"
)

// Close ends what a stdio server spawned, as launchers such as npx do: the
// whole process group goes, not only the process started.
func TestCloseKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := "sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > '" + pidFile + "'; exec '" + testServerBin + "' -name g"
	sink := newSink(t)
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "g", Command: []string{"sh", "-c", script}})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	if st := col.Status()[0]; st.State != mcpsource.Ready {
		t.Fatalf("status %+v", st)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !alive(pid) {
		t.Fatal("the grandchild is not running")
	}
	col.Close()
	eventually(t, "the grandchild to die", func() bool { return !alive(pid) })
}

// alive reports whether pid runs (a zombie waiting for its reaper is dead).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}
